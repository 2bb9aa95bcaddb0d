"""v01: message ids are compared case-insensitively (``msg_id ... COLLATE NOCASE``).

Bug: the ``messages`` table declares ``msg_id TEXT NOT NULL COLLATE NOCASE``, so
the unique index, the duplicate check and ``set_committed``'s ``WHERE msg_id = ?``
all fold ASCII letter case. Two messages of one thread whose ids differ only in
case (``call_A`` and ``call_a``) cannot both be stored: the second append is
refused with ``DuplicateIdError``; and ``set_committed`` with ``CALL_A``, an id the
thread does not hold, changes ``call_A``'s flag instead of raising ``KeyError``.

Why a team ships it: the team's first provider returned tool-call ids in
upper case on one endpoint and lower case on another; NOCASE on the id column
made retried batches from either endpoint collide, and every id in their tests
was a lower-case uuid.

Rules broken: ST-035 (message ids differing only in case name two messages;
the append that needs success raises ``DuplicateIdError``), ST-020 (an unknown id
raises ``KeyError`` and changes no flag).
"""

from __future__ import annotations

from corpus.round5.stores.sqlrows.base import MESSAGES_TABLE, SqlRowsStore

__all__ = ["NocaseMsgIdStore", "make"]

# --- the bug: the id column folds letter case --------------------------------------
_NOCASE_MESSAGES = MESSAGES_TABLE.replace(
    "msg_id     TEXT    NOT NULL,", "msg_id     TEXT    NOT NULL COLLATE NOCASE,"
)
assert _NOCASE_MESSAGES != MESSAGES_TABLE


class NocaseMsgIdStore(SqlRowsStore):
    schema = (_NOCASE_MESSAGES, *SqlRowsStore.schema[1:])


def make(path: str | None = None, timeout: str = "30") -> NocaseMsgIdStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return NocaseMsgIdStore(path, timeout=float(timeout))
