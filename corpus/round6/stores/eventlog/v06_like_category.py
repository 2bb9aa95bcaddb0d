"""v06: a thread's error records are read with the category matcher, which uses LIKE.

The bug: the store has one helper for reading events by stream pattern, written
for category reads such as "every ``errors:`` stream" (``stream LIKE
'errors:%'``). ``errors(thread_id)`` reuses it with the thread's exact stream
name as the pattern. SQLite's ``LIKE`` treats ``_`` and ``%`` in the thread id
as wildcards and ignores ASCII letter case, so a thread's error records include
those of every thread whose id matches that way.

Situation that shows it: error records in threads ``job_1`` and ``jobX1``, or
``Alpha`` and ``alpha``; ``errors("job_1")`` returns both threads' records and
``errors("alpha")`` returns ``Alpha``'s. Threads whose ids are plain lower-case
words without ``_`` or ``%`` never meet it.

Why a team would ship it: ``LIKE`` with no wildcard looks like ``=``; the test
threads were named ``t1``, ``t2``; messages, turn records and the rest use
their own exact queries, so nothing else showed it.

Rules broken: ST-022, ST-035
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.eventlog.base import ERROR_RECORDED, EventLogStore, stream_of

__all__ = ["LikeCategoryStore", "make"]


class LikeCategoryStore(EventLogStore):
    def _events_matching(self, pattern: str, kind: str) -> list[tuple[Any, ...]]:
        """Payloads of the events of every stream matching ``pattern``, in seq order."""
        with self._lock:
            return self._db.execute(
                "SELECT payload FROM events WHERE stream LIKE ? AND type = ? ORDER BY seq",
                (pattern, kind),
            ).fetchall()

    def _error_rows(self, thread_id: str) -> list[tuple[Any, ...]]:
        # --- the bug ---
        # the exact stream name goes to a LIKE pattern: _ and % match, case is ignored
        return self._events_matching(stream_of("errors", thread_id), ERROR_RECORDED)


def make(path: str | None = None, timeout: str = "30") -> LikeCategoryStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return LikeCategoryStore(path, timeout=float(timeout))
