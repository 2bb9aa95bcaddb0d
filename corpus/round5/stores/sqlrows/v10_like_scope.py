"""v10: fact queries match the scope with ``LIKE``.

Bug: ``get_fact``, ``facts`` and ``forget`` select by ``scope LIKE ?`` (a shared
helper that also serves the admin tool's ``tenant/%`` listings), while
``put_fact`` writes by the exact primary key. ``LIKE`` reads ``_`` and ``%``
in the caller's scope as wildcards and ignores ASCII letter case, so the
scope ``team_a`` also matches ``team-a``, ``team.a`` and ``TEAM_A``: listing it
returns another scope's facts, ``get_fact`` may answer with another scope's
fact, and ``forget`` deletes the subject in every matching scope. Scopes
without ``_``/``%`` and in one letter case behave.

Why a team ships it: one WHERE-clause builder for every facts query; scopes
in production were user ids like ``u42`` and the tests never put two scopes
that differ in case or separator side by side.

Rules broken: ST-031 and PS-030 (scopes are isolated), ST-035 (scopes
differing in case or in a separator/wildcard character are two scopes),
ST-028 (one fact per subject in the scope).
"""

from __future__ import annotations

from corpus.round5.stores.sqlrows.base import _FACT_COLUMNS, SqlRowsStore, encodable
from memconform.values import Fact

__all__ = ["LikeScopeStore", "make"]

# --- the bug: the scope filter is a pattern, not an equality -----------------------
_SCOPE = "scope LIKE ?"


class LikeScopeStore(SqlRowsStore):
    def get_fact(self, scope: str, subject: str) -> Fact | None:
        if not encodable(scope, subject):
            return None
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE {_SCOPE} AND subject = ?",
            (scope, subject),
        )
        return self._fact(rows[0]) if rows else None

    def facts(self, scope: str) -> list[Fact]:
        if not encodable(scope):
            return []
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE {_SCOPE} ORDER BY subject", (scope,)
        )
        return [self._fact(r) for r in rows]

    def forget(self, scope: str, subject: str) -> bool:
        if not encodable(scope, subject):
            return False
        with self._tx() as cur:
            cur.execute(f"DELETE FROM facts WHERE {_SCOPE} AND subject = ?", (scope, subject))
            return cur.rowcount > 0


def make(path: str | None = None, timeout: str = "30") -> LikeScopeStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return LikeScopeStore(path, timeout=float(timeout))
