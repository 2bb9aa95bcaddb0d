"""v05: a large batch is written in chunks of 100 rows, one transaction each.

Bug: ``append`` splits the batch into chunks of ``CHUNK`` (100) rows and commits
each chunk in its own ``BEGIN IMMEDIATE`` transaction, checking each chunk's
ids against the thread just before writing it. A batch of at most 100
messages behaves exactly like the base. A larger one is not atomic: an id in
the second chunk that repeats a stored id raises ``DuplicateIdError`` after
the first 100 messages were committed; a process killed (or failing) in a
later chunk leaves the earlier chunks stored; and another process can read
the thread between two chunks and see part of the batch.

Why a team ships it: one long write transaction on a 10,000-message import
held the file's write lock for seconds and starved the other workers
(``database is locked``); chunking fixed the incident, and the chunk size was
picked well above any batch a normal turn produces.

Rules broken: ST-001 (all of the batch or none), ST-010 (a refused batch
stores nothing), ST-016, ST-034 (a kill mid-batch), ST-036 (a reader sees
part of a batch).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from corpus.round5.stores.sqlrows.base import SqlRowsStore, encodable
from memconform.contract import DuplicateIdError, StoreError, UnsupportedValueError
from memconform.values import Message

__all__ = ["CHUNK", "ChunkedCommitStore", "make"]

CHUNK = 100


class ChunkedCommitStore(SqlRowsStore):
    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        batch = list(batch)
        ids = [m.id for m in batch]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise DuplicateIdError(f"ids {repeated} repeat within the batch")
        if not encodable(thread_id):
            raise UnsupportedValueError("thread id holds a lone surrogate")
        rows = [self._row(m) for m in batch]
        try:
            # --- the bug: one transaction per chunk, not one per batch -------------
            for start in range(0, len(rows), CHUNK):
                chunk_ids = ids[start : start + CHUNK]
                with self._tx() as cur:
                    stored = self._stored_ids(cur, thread_id, chunk_ids)
                    if stored:
                        raise DuplicateIdError(
                            f"ids {stored} are already in thread {thread_id!r}"
                        )
                    self._insert(cur, thread_id, rows[start : start + CHUNK])
        except sqlite3.IntegrityError as exc:
            raise DuplicateIdError(f"append to {thread_id!r} repeats an id: {exc}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"append to {thread_id!r} failed: {exc}") from exc


def make(path: str | None = None, timeout: str = "30") -> ChunkedCommitStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return ChunkedCommitStore(path, timeout=float(timeout))
