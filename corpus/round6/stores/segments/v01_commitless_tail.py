"""Variant 01: readers apply every whole frame at once; commit records are only read by writers.

The bug: the reader's parser treats each complete, checksummed frame as a record
in its own right and skips the commit frames, on the reasoning that a frame
whose checksum holds "was written". A batch is therefore visible row by row
while its writer is still inside it, and a writer killed between two rows
leaves the rows it managed to write in the thread for good (the next writer
finds no uncommitted leftovers to cut off, because the parse never reports any).

The situation that shows it: one process appends a batch of several messages
and is held (or killed with SIGKILL) after its first rows; another process
reads the thread and sees part of the batch. In one process nothing shows: a
failed append cuts its own rows off before anyone can read.

Why a team would ship it: the commit record looks redundant next to a per-frame
CRC, the unit tests (single process, failures raised in-process) all pass, and
dropping the pending-row bookkeeping makes the parser half as long.

Rules broken: ST-034, ST-036.
"""

from __future__ import annotations

import json
import zlib

from corpus.round6.stores.segments import base
from memconform.contract import StoreError


def parse_frames(data: bytes, start: int, segment: str) -> tuple[list[base.Txn], int, bool]:
    """Every whole frame from ``start``, each its own transaction."""
    txns: list[base.Txn] = []
    pos = 0
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
            raise StoreError(f"segment {segment} is damaged at offset {start + pos}: bad checksum")
        try:
            record = json.loads(payload)
        except ValueError as exc:
            raise StoreError(f"segment {segment} at offset {start + pos}: {exc}") from None
        # --- the bug ---
        # a whole frame is taken as written; the commit frame is only for writers
        if record.get("k") != "c":
            txns.append([(record, (segment, start + pos))])
        pos = end
    return txns, start + pos, pos != size


class CommitlessLog(base.SegmentLog):
    def parse(self, data: bytes, start: int, segment: str) -> tuple[list[base.Txn], int, bool]:
        return parse_frames(data, start, segment)


class CommitlessStore(base.SegmentStore):
    log_class = CommitlessLog


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> CommitlessStore:
    return CommitlessStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
