"""Variant 04: the duplicate check of an append looks only at the messages a plain read shows.

The bug: ``append`` collects the ids already in the thread from its committed
rows (the same helper that serves ``messages()``), so an id whose message was
marked uncommitted is free again: a batch repeating it is stored, and the
thread then holds two messages with one id (the later one shadows the earlier
in ``set_committed``).

The situation that shows it: a message is appended, its committed flag is
cleared (a failed run's output hidden, as strict-write does), and a batch
repeating its id is appended, as a retry of that run does. With every message
committed the check is right.

Why a team would ship it: hidden messages feel "gone" to the team that wrote
the flag, the retry looks like it should be allowed, and every duplicate test
repeats an id that is visible.

Rules broken: ST-010.
"""

from __future__ import annotations

from collections.abc import Sequence

from corpus.round6.stores.segments import base
from memconform.contract import DuplicateIdError
from memconform.values import Message


class VisibleIdsStore(base.SegmentStore):
    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        batch = list(batch)
        frames = self._message_frames(batch)
        if not frames:
            return
        log = self._thread_log(thread_id)
        with log.writing():
            fold = log.fold
            assert isinstance(fold, base.ThreadFold)
            # --- the bug ---
            # the ids "in the thread" are those a plain read returns
            present = {row["id"] for row in self._visible(fold.rows, None, False)}
            repeated = [m.id for m in batch if m.id in present]
            if repeated:
                raise DuplicateIdError(
                    f"message ids {repeated[:5]} are already in thread {thread_id!r}"
                )
            log.commit(frames, row_point=True)


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> VisibleIdsStore:
    return VisibleIdsStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
