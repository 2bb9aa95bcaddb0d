"""v08: the thread projection keeps the newest 1,000 messages; an unlimited read is served from it.

The bug: to bound memory in long-lived workers, each thread's in-process
projection keeps only its newest ``RING`` (1,000) messages. A read whose
window may need more than that (``limit > RING``) refolds the whole stream from
the events table; the test for it is ``limit is not None and limit > RING``,
so a read without a limit, the one that must return everything, is taken to
fit the ring and returns the newest 1,000 messages only.

Situation that shows it: a thread of more than 1,000 messages read with
``messages(thread_id)`` (no limit) returns its newest 1,000 and silently drops
the oldest. Windows of any size, and threads of up to 1,000 messages, are
right.

Why a team would ship it: the runtime they built it for always asks for a
window (50 or 100 messages); the audit export that reads without a limit runs
on threads that rarely pass 1,000 messages.

Rules broken: ST-006
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.eventlog.base import EventLogStore, ThreadView, stream_of
from memconform.contract import check_limit
from memconform.values import Message

__all__ = ["RING", "RingProjectionStore", "make"]

RING = 1000


class RingProjectionStore(EventLogStore):
    def _fold_into(self, view: ThreadView, rows: list[tuple[Any, ...]]) -> None:
        super()._fold_into(view, rows)
        if len(view.entries) > RING:
            for entry in view.entries[:-RING]:
                view.by_subject.pop(entry[0], None)
            del view.entries[:-RING]

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        check_limit(limit)
        if limit == 0:
            return []
        with self._lock:
            # --- the bug ---
            # "no limit" is taken to fit the ring; only an explicit large window refolds
            if limit is not None and limit > RING:
                stream = stream_of("thread", thread_id)
                view = ThreadView()
                EventLogStore._fold_into(self, view, self._fetch_new(stream, view))
            else:
                view = self._view(thread_id)
            chosen = [list(e) for e in self._select(view, limit, include_uncommitted)]
        return [self._message(e) for e in chosen]


def make(path: str | None = None, timeout: str = "30") -> RingProjectionStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return RingProjectionStore(path, timeout=float(timeout))
