"""v04: the history window is cut from the newest N message events before commit flags filter it.

The bug: ``messages(limit=N)`` takes the newest N ``MessageAppended`` entries
of the thread's projection and only then leaves out the uncommitted ones, so a
hidden message takes the place of a visible one and the window comes back
shorter than N although older committed messages exist.

Situation that shows it: a thread with an uncommitted message among its newest
N (a failed run's output kept for audit, or a message appended uncommitted),
read with ``limit=N``. Reads without a limit, windows with
``include_uncommitted=True`` and threads where every message is committed are
right.

Why a team would ship it: the window code was written before commit flags
existed, as "tail of the stream", and the flag filter was added after it on the
same list; with every message committed (the usual case) the order of the two
steps makes no difference.

Rules broken: ST-019
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.eventlog.base import EventLogStore, ThreadView

__all__ = ["WindowThenFlagsStore", "make"]


class WindowThenFlagsStore(EventLogStore):
    def _select(
        self, view: ThreadView, limit: int | None, include_uncommitted: bool
    ) -> list[list[Any]]:
        # --- the bug ---
        # the tail of the stream is taken first, the commit flags filter it afterwards
        chosen = list(view.entries) if limit is None else view.entries[-limit:]
        if not include_uncommitted:
            chosen = [e for e in chosen if e[1] is not False]
        return chosen


def make(path: str | None = None, timeout: str = "30") -> WindowThenFlagsStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return WindowThenFlagsStore(path, timeout=float(timeout))
