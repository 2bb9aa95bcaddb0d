"""v10: ``forget`` decides whether a subject had a fact from the event history, not the fold.

The bug: ``forget`` asks the events table whether a ``FactPut`` event for the
subject exists in the scope's stream (one indexed lookup instead of a fold),
and if so appends a ``FactForgotten`` event and answers ``True``. A subject that
was put and then forgotten still has its ``FactPut`` in the history, so
forgetting it again answers ``True`` (and appends another, harmless, forget
event). The fact itself is gone after the first forget; only the answer lies.

Situation that shows it: ``put_fact`` then ``forget`` twice on the same subject:
the second call answers ``True`` instead of ``False``. Forgetting a subject
that never had a fact answers ``False`` as it should.

Why a team would ship it: "has this subject ever been stored" and "is it stored
now" are the same question in a table of rows; in an append-only log they are
not, and the tests only forgot subjects once.

Rules broken: ST-030, PS-029
"""

from __future__ import annotations

import sqlite3
from typing import Any

from corpus.round6.stores.eventlog.base import FACT_PUT, EventLogStore

__all__ = ["ForgetHistoryStore", "make"]


class ForgetHistoryStore(EventLogStore):
    def _forget_applies(
        self, cur: sqlite3.Cursor, stream: str, subject: str, state: dict[str, Any]
    ) -> bool:
        # --- the bug ---
        # "was it ever put" answered from the history instead of the current fold
        row = cur.execute(
            "SELECT 1 FROM events WHERE stream = ? AND subject = ? AND type = ? LIMIT 1",
            (stream, subject, FACT_PUT),
        ).fetchone()
        return row is not None


def make(path: str | None = None, timeout: str = "30") -> ForgetHistoryStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return ForgetHistoryStore(path, timeout=float(timeout))
