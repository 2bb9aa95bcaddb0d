"""v07: the state ``value`` column is declared ``JSON`` (NUMERIC affinity).

Bug: the ``state`` table declares ``value JSON NOT NULL``. ``JSON`` is no type
SQLite knows, so the column gets NUMERIC affinity: JSON text that reads as a
number is stored as a number. A working-state value that is a bare number
changes on the way: ``1.0`` (JSON text ``1.0``) is stored as the integer 1,
``-0.0`` as 0, ``2**64`` as the real 1.8446744073709552e19. The reader takes a
non-text column value as it is. Objects, lists, strings, booleans and null
are stored as text and survive, and ``write_state`` returns the right entry
(it decodes its own JSON text), so only a later read shows the change.

Why a team ships it: ``JSON`` documents the column, SQLite accepts any type
name, and when a test read back the number 3 as an int from the column the
reader was taught to pass numbers through.

Rules broken: ST-025 (the value read back exactly), PS-031 / ST-032 (a fresh
process reads the altered value).
"""

from __future__ import annotations

from typing import Any

from corpus.round5.stores.sqlrows.base import STATE_TABLE, SqlRowsStore
from memconform.values import JSONValue

__all__ = ["JsonAffinityStore", "make"]

# --- the bug (1/2): a column type name that means NUMERIC affinity ------------------
_JSON_STATE = STATE_TABLE.replace("value   TEXT    NOT NULL,", "value   JSON    NOT NULL,")
assert _JSON_STATE != STATE_TABLE


class JsonAffinityStore(SqlRowsStore):
    schema = tuple(_JSON_STATE if s == STATE_TABLE else s for s in SqlRowsStore.schema)

    def _state_value(self, raw: Any) -> JSONValue:
        # --- the bug (2/2): numbers SQLite hands back are taken as the value --------
        if isinstance(raw, int | float):
            return raw
        return super()._state_value(raw)


def make(path: str | None = None, timeout: str = "30") -> JsonAffinityStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return JsonAffinityStore(path, timeout=float(timeout))
