"""v06: a per-process cache of thread files, validated by whole-second mtimes.

Bug: every process keeps the lines of the thread files it read or wrote in a
module-level cache, and reuses them while ``int(os.stat(path).st_mtime)`` is
the one it cached them with. Writes of this process update the cache, so one
process always sees its own appends; but when another process rewrites the
thread within the same second as this process's last read or write, the file's
whole-second mtime has not moved and this process keeps serving the old lines:
acknowledged batches of other writers are missing from its reads (and from
its duplicate checks, since appends read the same cache), and its next append
writes the stale lines back, dropping theirs.

Why a team ships it: parsing a large transcript on every ``messages()`` call
showed up in profiles; a stat is cheap. The helper that compares mtimes came
from the team's sync tool for an SMB share, whose mtimes have whole-second
resolution, so it rounds them. Single-process tests, and two-process tests a
second or more apart, never see the difference.

Breaks: ST-033 (no acknowledged message of concurrent writers is lost),
ST-036 (a reader shows the batches appended so far), ST-010 (a repeated id
is refused) across processes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from corpus.round5.stores.jsonfiles.base import JsonFilesStore

__all__ = ["MtimeCacheStore", "make"]

_CACHE: dict[str, tuple[int, list[str]]] = {}
"""Per process: path -> (whole-second mtime, message lines)."""


def _stamp(path: Path) -> int | None:
    try:
        # --- BUG: whole seconds (the SMB helper's resolution) ---
        return int(os.stat(path).st_mtime)
    except FileNotFoundError:
        return None


class MtimeCacheStore(JsonFilesStore):
    """The base store with a per-process, mtime-validated cache of thread files."""

    def _thread_lines(self, path: Path) -> list[str]:
        stamp = _stamp(path)
        cached = _CACHE.get(str(path))
        if stamp is not None and cached is not None and cached[0] == stamp:
            return list(cached[1])
        lines = super()._thread_lines(path)
        if stamp is not None:
            _CACHE[str(path)] = (stamp, list(lines))
        return lines

    def _write_thread(self, path: Path, thread_id: str, lines: Sequence[str]) -> None:
        super()._write_thread(path, thread_id, lines)
        stamp = _stamp(path)
        if stamp is not None:
            _CACHE[str(path)] = (stamp, list(lines))  # write-through: own writes always show


def make(**kwargs: str) -> MtimeCacheStore:
    """``...v06_mtime_cache:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return MtimeCacheStore(path)
