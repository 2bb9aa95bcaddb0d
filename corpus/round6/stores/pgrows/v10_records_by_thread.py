"""v10: all turn records are listed thread by thread.

The bug: ``records()`` without a thread orders by ``thread_id, seq`` (the
order of the ``(thread_id, seq)`` index both queries share) instead of by
``seq`` alone.

Situation that shows it: turn records of two or more threads appended
interleaved (two conversations running side by side, a parent turn in one
thread and its child in another), then read without naming a thread: they
come back grouped by thread id rather than in append order. One thread's
records, or records of several threads appended one thread after the
other in thread-id order, come back right.

Why a team would ship it: one query builder served both reads and added
the thread filter only when given; ``ORDER BY thread_id, seq`` let
PostgreSQL walk the index for both, and the per-thread read, the one the
dashboards used, stayed correct.

Rules broken: ST-024, ST-023, TU-030.
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.pgrows.base import DEFAULT_URL, RECORD_COLUMNS, PgRowsStore


class RecordsByThreadStore(PgRowsStore):
    def select_records(self, cur: Any, thread_id: str | None) -> list[tuple[Any, ...]]:
        where = "" if thread_id is None else " WHERE thread_id = %s"
        params = () if thread_id is None else (thread_id,)
        # --- the bug ---
        cur.execute(
            self.q(
                f"SELECT {RECORD_COLUMNS} FROM {{s}}.turn_records{where} "
                "ORDER BY thread_id, seq"
            ),
            params,
        )
        return cur.fetchall()


def make(run: str | None = None, url: str = DEFAULT_URL) -> RecordsByThreadStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return RecordsByThreadStore(run, url)
