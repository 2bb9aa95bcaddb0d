"""Variant 02: a segment is read with a bounded buffer of its rotation size plus 64 KiB.

The bug: ``read_segment`` reads at most ``segment_bytes + 64 KiB`` from a
segment, on the belief that a segment never grows much past the size at which
it rotates. But rotation only happens *between* transactions: one batch (a
10,000-message batch, a message of about one megabyte, or any batch that starts
near the rotation size) can carry a segment well past the bound. The frames
beyond it look like a write still in progress, so the acknowledged batch is
invisible, and the next writer "cuts off the unfinished write" and destroys it.

The situation that shows it: a thread whose segment, with the last batch, holds
more than 1 MiB + 64 KiB (default size): a text of about a megabyte that is not
plain ASCII (the ASCII JSON escapes each such code point into 6 or 12 bytes), a
batch of thousands of messages, or a few hundred kilobytes appended to a thread
already near 1 MiB. Small threads and small batches never reach it.

Why a team would ship it: a bounded read looks like memory hygiene, every test
thread is far below a megabyte, and the symptom (a batch missing after a big
append) looks like the caller's fault.

Rules broken: ST-001, ST-006, ST-014.
"""

from __future__ import annotations

from corpus.round6.stores.segments import base

SLACK = 64 * 1024


class BoundedLog(base.SegmentLog):
    def read_segment(self, segment: str, offset: int) -> bytes:
        try:
            with open(self.folder / segment, "rb") as handle:
                handle.seek(offset)
                # --- the bug ---
                # "a segment rotates at segment_bytes, so it never holds much more"
                return handle.read(max(0, self.segment_bytes + SLACK - offset))
        except FileNotFoundError:
            raise base._Vanished(segment) from None


class BoundedStore(base.SegmentStore):
    log_class = BoundedLog


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> BoundedStore:
    return BoundedStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
