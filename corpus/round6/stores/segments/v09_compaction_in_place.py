"""Variant 09: compaction rewrites segments under their old names and keeps the generation.

The bug: compaction writes the folded log into temporary files and renames
them over the segments it replaces, reusing their names (and numbers); since
the manifest's segment list is then the same, the team saw no reason to bump
its generation. But other processes and other handles on the folder cache how
far they parsed each segment by name: with the same list and the same
generation their parse continues at the old offset in a file that is now
shorter and laid out differently. They miss messages appended after the
compaction (until the file grows past the old offset, where they read from
the middle of a frame), keep the committed flags they had seen, and a writer
among them pads the segment with zeros up to its stale offset.

The situation that shows it: two processes (or two store objects) on one
folder; one reads a thread, the other changes committed flags often enough
to compact the thread (32 flag changes by default), and the first reads (or
appends to) the thread again. A single handle resets its own parse and sees
nothing wrong; a fresh process reads correctly.

Why a team would ship it: rename-over is the textbook atomic rewrite, a fresh
reader always sees a consistent log, and the multi-process tests append and
read without ever compacting.

Rules broken: ST-036, ST-033, ST-017.
"""

from __future__ import annotations

import os

from corpus.round6.stores.segments import base


class InPlaceLog(base.SegmentLog):
    def compact(self) -> None:
        assert self.manifest is not None
        old = self.manifest
        names = list(old["segments"])
        number = old["next"]
        chunks: list[bytearray] = []
        for txn in self.fold.compacted():
            if not chunks or len(chunks[-1]) >= self.segment_bytes:
                chunks.append(bytearray())
            chunks[-1] += b"".join(base.frame(r) for r in txn)
            chunks[-1] += base.frame({"k": "c", "n": len(txn)})
        if not chunks:
            chunks.append(bytearray())
        written = []
        for index, data in enumerate(chunks):
            if index < len(names):
                name = names[index]
            else:
                name = base.segment_name(number)
                number += 1
            tmp = self.folder / f".{name}.{os.getpid()}.tmp"
            with open(tmp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.folder / name)
            written.append(name)
        base.fsync_dir(self.folder)
        # --- the bug ---
        # same names, so "nothing changed" for readers: the generation stays
        self.write_manifest({**old, "segments": written, "next": number})
        for name in names[len(written) :]:
            (self.folder / name).unlink(missing_ok=True)
        self.reset()
        self.catch_up()


class InPlaceStore(base.SegmentStore):
    log_class = InPlaceLog


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> InPlaceStore:
    return InPlaceStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
