"""v07: a state write's new version is the scope stream's revision, not the key's.

The bug: working state lives in one stream per scope, one ``StateWritten``
event per write, with the key in the subject column. The compare-and-set check
correctly compares the caller's expected version with the key's latest event,
but the version given to the new entry is the stream's revision (how many
events the scope's stream holds, plus one), as EventStoreDB's "expected
revision" would be. With one key per scope the two agree; as soon as a scope
holds several keys, a key's first write gets a version above 1 and later writes
jump by more than one.

Situation that shows it: write key ``a`` then key ``b`` in the same scope;
``b`` starts at version 2 instead of 1. Writes to ``a`` after writes to ``b``
skip versions. Conflicts are still detected (the check uses the stored
version).

Why a team would ship it: the stream revision is what the event store hands
back after every append, so using it as the entry's version saved a query; the
first tests wrote one key per scope.

Rules broken: ST-025, PS-026
"""

from __future__ import annotations

import sqlite3

from corpus.round6.stores.eventlog.base import EventLogStore

__all__ = ["StreamRevisionStore", "make"]


class StreamRevisionStore(EventLogStore):
    def _new_version(
        self, cur: sqlite3.Cursor, stream: str, subject: str, stored: int | None
    ) -> int:
        # --- the bug ---
        # the revision of the whole scope stream, not of this key
        (count,) = cur.execute("SELECT COUNT(*) FROM events WHERE stream = ?", (stream,)).fetchone()
        return int(count) + 1


def make(path: str | None = None, timeout: str = "30") -> StreamRevisionStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return StreamRevisionStore(path, timeout=float(timeout))
