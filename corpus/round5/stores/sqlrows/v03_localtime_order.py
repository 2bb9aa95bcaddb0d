"""v03: messages ordered by a local-time ``created_at`` text column.

Bug: each batch is stamped with ``datetime.now().astimezone().isoformat()`` (the
writing process's local time with its offset) and reads ``ORDER BY created_at,
position``. ISO text with different offsets does not sort in time order:
``2026-05-02T04:00+14:00`` sorts after ``2026-05-01T15:00-11:00`` although it is
earlier. When processes in different time zones append to one thread (a
worker fleet across regions, a laptop and a server), a later batch written at
UTC-11 comes back before an earlier one written at UTC+14, and a window of N
picks the wrong messages. Inside one process (one time zone) order is right.

Why a team ships it: "order by creation time" reads naturally in SQL, the
stamp was already there for the audit view, and ``astimezone()`` was added so
people reading the file see their own clock; every test ran on one machine.

Rules broken: ST-002 (order is append order, never a clock), ST-003 (the
newest N), and ST-033/ST-036 across processes.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from corpus.round5.stores.sqlrows.base import _MESSAGE_COLUMNS, SqlRowsStore
from memconform.harness.faults import batch_row_pause

__all__ = ["LocalTimeOrderStore", "make"]


class LocalTimeOrderStore(SqlRowsStore):
    def _insert(self, cur: sqlite3.Cursor, thread_id: str, rows: list[tuple[Any, ...]]) -> None:
        start = self._next_position(cur, thread_id)
        # --- the bug (1/2): the writer's local wall clock, with its offset ---------
        stamp = datetime.now().astimezone().isoformat()
        for offset, row in enumerate(rows):
            batch_row_pause()
            cur.execute(
                "INSERT INTO messages (thread_id, position, msg_id, role, text, parts, run_id,"
                " round, turn_id, committed, metadata, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (thread_id, start + offset, *row, stamp),
            )

    def _select(self, thread_id: str, limit: int | None, include_uncommitted: bool) -> list[tuple]:
        where = "thread_id = ?" if include_uncommitted else "thread_id = ? AND committed = 1"
        # --- the bug (2/2): order by the stamp text, position only breaks ties ------
        if limit is None:
            return self._read(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE {where}"
                " ORDER BY created_at, position",
                (thread_id,),
            )
        rows = self._read(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE {where}"
            " ORDER BY created_at DESC, position DESC LIMIT ?",
            (thread_id, limit),
        )
        rows.reverse()
        return rows


def make(path: str | None = None, timeout: str = "30") -> LocalTimeOrderStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return LocalTimeOrderStore(path, timeout=float(timeout))
