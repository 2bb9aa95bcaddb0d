"""Variant 03: a window read takes the newest segments until they hold N rows, hidden ones counted.

The bug: ``messages(limit=N)`` is served from the tail of the log: it takes
segments newest first until the rows they hold reach N, and only then drops
the uncommitted rows and slices the newest N. The row count per segment
includes messages whose committed flag is cleared, so when hidden messages sit
in the newest segments the window comes back short, although older segments
hold visible messages that belong in it. The team also lowered the default
segment size to 64 KiB, so that a tail read touches little data.

The situation that shows it: a thread spanning more than one segment (a few
hundred messages at 64 KiB segments) with uncommitted messages among the newest
ones, read with a window that is not served by the last segment alone. A thread
in one segment, a read with ``include_uncommitted=True`` and a read without a
limit are all right.

Why a team would ship it: the tail read makes windows on long threads cheap,
the tests of windows use short threads, and the tests of commit flags use
plain reads.

Rules broken: ST-019.
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.segments import base
from memconform.contract import check_limit
from memconform.values import Message

TAIL_SEGMENT_BYTES = 64 * 1024


class TailWindowStore(base.SegmentStore):
    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        check_limit(limit)
        if not limit or include_uncommitted:
            return super().messages(thread_id, limit, include_uncommitted=include_uncommitted)
        log = self._thread_log(thread_id)
        with log.mutex:
            fold = self._thread(thread_id)
            per_segment: dict[str, int] = {}
            for segment, _ in fold.where:
                per_segment[segment] = per_segment.get(segment, 0) + 1
            chosen: set[str] = set()
            rows_seen = 0
            for segment in reversed(log.segments):
                chosen.add(segment)
                # --- the bug ---
                # the rows a segment holds are counted, visible or not
                rows_seen += per_segment.get(segment, 0)
                if rows_seen >= limit:
                    break
            tail: list[dict[str, Any]] = [
                row
                for row, (segment, _) in zip(fold.rows, fold.where, strict=True)
                if segment in chosen and row["committed"]
            ]
            tail = tail[max(0, len(tail) - limit) :]
            return [base._decoded(Message.from_json, row, "message") for row in tail]


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> TailWindowStore:
    return TailWindowStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else TAIL_SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
