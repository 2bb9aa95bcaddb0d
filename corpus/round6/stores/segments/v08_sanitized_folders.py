"""Variant 08: a thread's folder is named by its id with unsafe characters replaced by ``_``.

The bug: to make the data folder browsable, a thread's log folder is the id
itself with every character outside ``A-Z a-z 0-9 . _ -`` replaced by ``_``
(long ids cut at 96 characters plus a hash of the whole id), and the manifest
names the log by that folder name. Two ids that differ only in such a
character (``job:1``, ``job/1``, ``job 1``, ``job_1``, ``café`` and ``caf_``) map to
one folder and share one log: each thread shows the other's messages, and an
id used in both is refused as a duplicate.

The situation that shows it: two thread ids that differ in a separator, a
space, a wildcard or a non-ASCII letter at the same place. Plain ASCII ids,
the ones in every example, are unaffected.

Why a team would ship it: the hex names of the original design made the
folder unreadable for the people debugging it, the sanitising regex is a
well-known idiom, and the hash was added for the length limit only.

Rules broken: ST-035, ST-009.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from corpus.round6.stores.segments import base

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def readable_name(thread_id: str) -> str:
    # --- the bug ---
    # unsafe characters are replaced, so distinct ids can share a name
    name = _UNSAFE.sub("_", thread_id)
    if len(name) > 96:
        digest = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()
        name = name[:96] + "-" + digest[:16]
    return "t-" + name


class SanitizedStore(base.SegmentStore):
    def _thread_folder(self, thread_id: str) -> tuple[Path, str]:
        name = readable_name(thread_id)
        return self.root / "threads" / name, "thread:" + name


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> SanitizedStore:
    return SanitizedStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
