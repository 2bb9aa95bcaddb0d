"""v02: ``run_id`` and ``turn_id`` columns declared ``UUID`` (NUMERIC affinity).

Bug: the schema declares ``run_id UUID`` and ``turn_id UUID``. SQLite maps a type
name it does not know to NUMERIC affinity, so an id that reads as a number is
stored as one: ``"007"`` becomes the integer 7, ``"1e3"`` 1000, ``"12.50"`` the
real 12.5, ``" 42"`` 42. The reader turns a non-text value back into ``str``,
so ``"42"`` survives but ``"007"`` comes back as ``"7"`` and ``"1e3"`` as
``"1000"``.

Why a team ships it: run and turn ids are uuids in production, and ``UUID``
documents the column; when a test with run id ``"1"`` came back as ``1`` they
added ``str()`` on read and the test went green.

Rules broken: ST-013 (every field of a stored message comes back exactly) and
ST-032 (a fresh process reads the altered id too). Error and turn records are
JSON documents and keep their ids.
"""

from __future__ import annotations

from typing import Any

from corpus.round5.stores.sqlrows.base import MESSAGES_TABLE, SqlRowsStore
from memconform.values import Message

__all__ = ["UuidAffinityStore", "make"]

# --- the bug: a type name SQLite reads as NUMERIC affinity --------------------------
_UUID_MESSAGES = MESSAGES_TABLE.replace(
    "run_id     TEXT,", "run_id     UUID,"
).replace("turn_id    TEXT,", "turn_id    UUID,")
assert _UUID_MESSAGES.count("UUID") == 2


class UuidAffinityStore(SqlRowsStore):
    schema = (_UUID_MESSAGES, *SqlRowsStore.schema[1:])

    def _message(self, row: tuple[Any, ...]) -> Message:
        message = super()._message(row)
        # the "fix" for numeric ids coming back as int: turn them back into text
        return Message(
            id=message.id,
            role=message.role,
            text=message.text,
            parts=message.parts,
            run_id=None if row[4] is None else str(row[4]),
            round=message.round,
            turn_id=None if row[6] is None else str(row[6]),
            committed=message.committed,
            metadata=message.metadata,
        )


def make(path: str | None = None, timeout: str = "30") -> UuidAffinityStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return UuidAffinityStore(path, timeout=float(timeout))
