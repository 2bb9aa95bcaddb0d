"""Variant 10: log recovery skips a frame whose checksum fails and reads on.

The bug: borrowed from the recovery path of a message broker, the parser
treats a frame whose CRC does not match its payload as lost and resynchronises
on the next frame (its header still gives the length), counting the skipped
frame so that the commit record's row count still agrees. A read of a thread
holding a damaged message then returns every other message, without an error:
the history has a hole no caller can see.

The situation that shows it: one stored message of a thread is damaged on
disk (a bad sector, a hand edit of a segment) and the thread is read. With
no damage nothing differs; a frame cut short at the end is still a write in
progress, as in the base.

Why a team would ship it: "one bad record must not make a whole thread
unreadable" is a reasonable-sounding availability goal, there is a log line
for the skip, and no test damages a stored record.

Rules broken: ST-037.
"""

from __future__ import annotations

import json
import logging
import zlib

from corpus.round6.stores.segments import base
from memconform.contract import StoreError

log = logging.getLogger(__name__)


def parse_skipping(data: bytes, start: int, segment: str) -> tuple[list[base.Txn], int, bool]:
    txns: list[base.Txn] = []
    pending: base.Txn = []
    skipped = 0
    pos = 0
    committed = 0
    size = len(data)
    while size - pos >= base.HEADER.size:
        magic, length, crc = base.HEADER.unpack_from(data, pos)
        if magic != base.MAGIC:
            raise StoreError(f"segment {segment} is damaged at offset {start + pos}: no frame")
        end = pos + base.HEADER.size + length
        if end > size:
            break
        payload = data[pos + base.HEADER.size : end]
        if zlib.crc32(payload) != crc:
            # --- the bug ---
            # a bad frame is skipped and counted; the read goes on without it
            log.warning("segment %s: skipping a damaged frame at %d", segment, start + pos)
            skipped += 1
            pos = end
            continue
        try:
            record = json.loads(payload)
        except ValueError as exc:
            raise StoreError(f"segment {segment} at offset {start + pos}: {exc}") from None
        if record.get("k") == "c":
            if record.get("n") != len(pending) + skipped:
                raise StoreError(f"segment {segment} at offset {start + pos}: bad commit")
            txns.append(pending)
            pending = []
            skipped = 0
            committed = end
        else:
            pending.append((record, (segment, start + pos)))
        pos = end
    return txns, start + committed, committed != size


class SkippingLog(base.SegmentLog):
    def parse(self, data: bytes, start: int, segment: str) -> tuple[list[base.Txn], int, bool]:
        return parse_skipping(data, start, segment)


class SkippingStore(base.SegmentStore):
    log_class = SkippingLog


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> SkippingStore:
    return SkippingStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
