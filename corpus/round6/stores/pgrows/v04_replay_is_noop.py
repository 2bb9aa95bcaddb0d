"""v04: a batch whose ids are all stored already is taken for a retry and accepted.

The bug: when every id of a batch is already in the thread, ``append``
returns quietly instead of raising ``DuplicateIdError``. A batch that
repeats only some stored ids is still refused.

Situation that shows it: appending again a batch (or a single message)
whose ids the thread already holds, for example a runtime re-sending a
round, or two different messages that happen to reuse a stored id. The
caller is told the append succeeded; nothing new is stored, and a batch
with new content under old ids is silently dropped.

Why a team would ship it: a lost acknowledgement (the commit landed, the
connection dropped before the reply) made the runtime's retry fail with
``DuplicateIdError`` and abort an otherwise finished run. Treating "every id
is already there" as "my earlier attempt landed" made retries idempotent
and the incident went away; nobody compared the stored content with the
new one.

Rules broken: ST-010.
"""

from __future__ import annotations

from corpus.round6.stores.pgrows.base import DEFAULT_URL, PgRowsStore
from memconform.contract import DuplicateIdError


class ReplayNoopStore(PgRowsStore):
    def admit(self, thread_id: str, ids: list[str], taken: list[str]) -> bool:
        # --- the bug ---
        if taken and set(taken) == set(ids):
            return False  # every id landed already: an earlier attempt of this batch committed
        if taken:
            raise DuplicateIdError(f"thread {thread_id!r} already holds ids {taken}")
        return True


def make(run: str | None = None, url: str = DEFAULT_URL) -> ReplayNoopStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return ReplayNoopStore(run, url)
