"""v07: message ids are kept in a ``bpchar`` column.

The bug: ``messages.msg_id`` is ``bpchar`` (blank-padded character, no
length) instead of ``text``. The value is stored and printed as given, but
PostgreSQL compares ``bpchar`` values with trailing spaces ignored, so the
``UNIQUE (thread_id, msg_id)`` constraint and every ``msg_id = ...`` lookup
treat ``"m1"`` and ``"m1 "`` as one id.

Situation that shows it: two message ids of one thread that differ only in
trailing spaces (``"m1"`` stored, then ``"m1 "`` appended, or the other way
round). The second append is refused with ``DuplicateIdError`` although the
thread does not hold that id, so the batch carrying it is lost to the
caller's retry logic. Ids without trailing spaces, and the same id in two
threads, behave exactly as before.

Why a team would ship it: the first schema kept 40-character SHA-1 hex ids
in ``char(40)``; when runtimes started sending their own ids the length was
dropped with ``ALTER COLUMN msg_id TYPE bpchar`` (the smallest change that
kept the existing index), and ids with trailing spaces never appeared in
the team's data.

Rules broken: ST-035.
"""

from __future__ import annotations

from corpus.round6.stores.pgrows.base import DDL, DEFAULT_URL, PgRowsStore


class BpcharIdStore(PgRowsStore):
    # --- the bug ---
    ddl = DDL.replace("    msg_id text NOT NULL,\n", "    msg_id bpchar NOT NULL,\n")


def make(run: str | None = None, url: str = DEFAULT_URL) -> BpcharIdStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return BpcharIdStore(run, url)
