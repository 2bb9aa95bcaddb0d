"""v08: compare-and-set reads the version, compares in Python, then writes.

The bug: ``write_state`` runs ``SELECT version`` (no ``FOR UPDATE``),
compares it with ``expected_version`` in Python and then writes with an
upsert keyed on ``(scope, key)`` only. Under READ COMMITTED nothing stops a
second transaction from doing the same between the read and the write.

Situation that shows it: two writers (threads of one process, which take
separate pooled connections, or two processes) that read the same version
and both write it back at once. Both are told they succeeded with the same
new version, and one value is lost. A first write raced by two creators
(``expected_version=None``) also lets both through. One writer at a time
gets every conflict right.

Why a team would ship it: the code reads like the rule ("if the stored
version is not the expected one, raise"), each statement runs inside one
transaction (which the team took for isolation), and every test of the
conflict path ran in one thread.

Rules broken: ST-026, PS-026.
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.pgrows.base import DEFAULT_URL, PgRowsStore


class ReadThenWriteStore(PgRowsStore):
    def cas_state(
        self, cur: Any, scope: str, key: str, text: str, expected_version: int | None
    ) -> int | None:
        # --- the bug ---
        cur.execute(
            self.q("SELECT version FROM {s}.work_state WHERE scope = %s AND key = %s"),
            (scope, key),
        )
        row = cur.fetchone()
        stored = None if row is None else int(row[0])
        if stored != expected_version:
            return None
        new_version = 1 if stored is None else stored + 1
        cur.execute(
            self.q(
                "INSERT INTO {s}.work_state (scope, key, value, version) "
                "VALUES (%s, %s, %s::json, %s) ON CONFLICT (scope, key) DO UPDATE "
                "SET value = EXCLUDED.value, version = EXCLUDED.version"
            ),
            (scope, key, text, new_version),
        )
        return new_version


def make(run: str | None = None, url: str = DEFAULT_URL) -> ReadThenWriteStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return ReadThenWriteStore(run, url)
