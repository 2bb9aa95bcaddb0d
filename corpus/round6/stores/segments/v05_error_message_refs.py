"""Variant 05: an error record keeps only the ids of messages the thread already holds.

The bug: to keep the error log small, ``record_error`` replaces every message of
the record that is already stored in the thread by a reference (its id), and
``errors()`` fills the references in from the thread when it reads. Messages
the thread does not hold (the ones whose append failed) are kept whole, so the
obvious case works; but a referenced message comes back as the thread holds it
*now*, not as it was recorded: with the committed flag the runtime set after
the failure, or as the stored message of that id when the record's copy
differed.

The situation that shows it: a run's first batch is stored, a later one fails,
the error record carries all of the run's messages, and afterwards the stored
ones are marked uncommitted (or recommitted): ``errors()`` returns them with the
new flag. Recording a failure whose messages were never stored shows nothing.

Why a team would ship it: it halves the error log for the "turn" policy, where
most of a failed run's messages are stored, and a test that records a failure
of unstored messages and reads it back passes.

Rules broken: ST-022.
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.segments import base
from memconform.values import ErrorRecord


class MessageRefsStore(base.SegmentStore):
    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        data = record.to_json()
        stored = self._thread(thread_id).index
        kept: list[dict[str, Any]] = []
        for message in data["messages"]:
            # --- the bug ---
            # a message the thread holds is kept as a reference to it
            if message["id"] in stored:
                kept.append({"ref": message["id"]})
            else:
                kept.append(message)
        data["messages"] = kept
        frame = base.frame({"k": "v", "v": {"thread": thread_id, "record": data}})
        with self._errors.writing() as log:
            log.commit([frame])

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        with self._errors.mutex:
            fold = self._errors.refresh()
            assert isinstance(fold, base.ListFold)
            items = [item["record"] for item in fold.items if item["thread"] == thread_id]
        thread = self._thread(thread_id)
        out = []
        for item in items:
            messages = []
            for message in item["messages"]:
                if "ref" in message:
                    position = thread.index.get(message["ref"])
                    if position is None:
                        continue
                    messages.append(thread.rows[position])
                else:
                    messages.append(message)
            out.append(
                base._decoded(ErrorRecord.from_json, {**item, "messages": messages}, "error record")
            )
        return out


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> MessageRefsStore:
    return MessageRefsStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
