"""v01: working state is read through ``lower(scope) = lower(%s)``.

The bug: ``read_state`` finds its row with ``lower(scope) = lower(%s)``
instead of ``scope = %s``; writes still go through the exact primary key.

Situation that shows it: two scopes that differ only in letter case
(``Job-7`` and ``job-7``). A key written in one reads back from the other,
and when both hold the key, a read of one may answer with the other's value
and version, which then makes the next compare-and-set fail or succeed
against the wrong entry.

Why a team would ship it: scopes were e-mail addresses in the first product
that used the store, and e-mail addresses compare without case; the
support team kept finding "lost" state written under ``Alice@Example.com``.
The fix went into the one read query that support used, every test used
lower-case scopes, and ``lower()`` on an indexed column looked harmless.

Rules broken: ST-027, ST-035, PS-030.
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.pgrows.base import DEFAULT_URL, PgRowsStore, storable
from memconform.values import StateEntry


class LowerScopeStore(PgRowsStore):
    def read_state(self, scope: str, key: str) -> StateEntry | None:
        if not (storable(scope) and storable(key)):
            return None

        def work(cur: Any) -> StateEntry | None:
            # --- the bug ---
            cur.execute(
                self.q(
                    "SELECT value, version FROM {s}.work_state "
                    "WHERE lower(scope) = lower(%s) AND key = %s"
                ),
                (scope, key),
            )
            row = cur.fetchone()
            return None if row is None else StateEntry(key, row[0], int(row[1]))

        return self.run_tx("read_state", work)


def make(run: str | None = None, url: str = DEFAULT_URL) -> LowerScopeStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return LowerScopeStore(run, url)
