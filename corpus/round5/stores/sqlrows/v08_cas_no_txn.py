"""v08: compare-and-set checks the version outside the write transaction.

Bug: ``write_state`` reads the stored version with a plain ``SELECT`` (its own
autocommit snapshot), compares it with ``expected_version`` in Python, and only
then opens the write transaction and writes with ``INSERT OR REPLACE``. In one
process every call is serialised by the store's lock, so it behaves. Two
processes that read the same version at the same moment both pass the check
and both write: each is told it wrote version ``v + 1``, one value silently
overwrites the other, and no ``ConflictError`` is raised (also for two
first writes that both expect no version).

Why a team ships it: the read was moved out of ``BEGIN IMMEDIATE`` so that a
stale writer gets its ``ConflictError`` without queueing for the write lock
behind a long import; the single-process tests of conflicts all still pass.

Rules broken: ST-026 and PS-026 (a write naming a version other than the
stored one raises ConflictError and changes nothing), ST-025 (version plus
one) under concurrent writers.
"""

from __future__ import annotations

import json

from corpus.round5.stores.sqlrows.base import SqlRowsStore, encodable, to_json_text
from memconform.contract import ConflictError, UnsupportedValueError
from memconform.values import JSONValue, StateEntry

__all__ = ["CasNoTxnStore", "make"]


class CasNoTxnStore(SqlRowsStore):
    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        if not encodable(scope, key):
            raise UnsupportedValueError("state scope or key holds a lone surrogate")
        data = to_json_text(value)
        # --- the bug: check in one snapshot, write in another transaction ------------
        rows = self._read("SELECT version FROM state WHERE scope = ? AND key = ?", (scope, key))
        stored = int(rows[0][0]) if rows else None
        if stored != expected_version:
            raise ConflictError(
                f"state {scope!r}/{key!r}: expected version {expected_version}, stored {stored}"
            )
        version = 1 if stored is None else stored + 1
        with self._tx() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO state (scope, key, value, version) VALUES (?, ?, ?, ?)",
                (scope, key, data, version),
            )
        return StateEntry(key, json.loads(data), version)


def make(path: str | None = None, timeout: str = "30") -> CasNoTxnStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return CasNoTxnStore(path, timeout=float(timeout))
