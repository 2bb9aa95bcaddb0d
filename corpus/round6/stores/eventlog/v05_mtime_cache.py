"""v05: a thread's projection is caught up only when the database file's mtime changed.

The bug: catching a thread's projection up costs one query per read, so the
store skips it when the SQLite file's modification time is the one seen at the
last catch-up and this instance wrote nothing since. In WAL mode another
process's commit lands in the ``-wal`` file; the main file's mtime changes only
at a checkpoint (about every 1,000 pages). So a long-lived instance that has
read a thread keeps serving that old projection while other processes (or
other instances in the same process) append to it, until a checkpoint happens
or it writes itself.

Situation that shows it: instance A reads a thread; another process or
instance B appends to it; A reads again and does not see B's batch (nor
anything appended after it, until a checkpoint). A fresh instance or process
always reads everything.

Why a team would ship it: in the single-process tests every append goes
through the same instance, which resets the check on its own writes; the mtime
shortcut is a known trick from file-backed caches and was measured to halve
read latency.

Rules broken: ST-033, ST-036
"""

from __future__ import annotations

import os

from corpus.round6.stores.eventlog.base import EventLogStore, ThreadView, stream_of

__all__ = ["MtimeCacheStore", "make"]


class MtimeCacheStore(EventLogStore):
    def __init__(self, path: str, *, timeout: float = 30.0) -> None:
        self._seen_mtime: dict[str, int] = {}
        super().__init__(path, timeout=timeout)

    def _mtime(self) -> int:
        try:
            return os.stat(self.path).st_mtime_ns
        except OSError:
            return -1

    def _tx(self):  # type: ignore[override]
        self._seen_mtime.clear()  # our own writes always make the next read catch up
        return super()._tx()

    def _view(self, thread_id: str) -> ThreadView:
        stream = stream_of("thread", thread_id)
        view = self._views.get(stream)
        mtime = self._mtime()
        # --- the bug ---
        # in WAL mode other writers do not touch the main file's mtime until a checkpoint
        if view is not None and self._seen_mtime.get(stream) == mtime:
            return view
        if view is None:
            view = self._views[stream] = ThreadView()
        self._fold_into(view, self._fetch_new(stream, view))
        self._seen_mtime[stream] = mtime
        return view


def make(path: str | None = None, timeout: str = "30") -> MtimeCacheStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return MtimeCacheStore(path, timeout=float(timeout))
