"""v02: retried batches are recognised by an idempotency key that leaves out the thread.

The bug: to make client retries safe, every append records an idempotency key,
the SHA-256 of the batch's message ids, and an append whose key is already
recorded is acknowledged as a replay without writing anything. The key is
computed from the ids alone, not from the thread they go to. So a batch that
repeats ids already stored is silently acknowledged instead of refused with
``DuplicateIdError``, and a batch appended to a second thread with the same ids
as a batch of another thread (ids are unique per thread only) is dropped
while the caller is told it was stored.

Situation that shows it: append ``[m1]`` to thread A, then ``[m1]`` again to A
(no ``DuplicateIdError``), or ``[m1]`` to thread B (B stays empty). A batch
that repeats only some of the ids of an earlier batch is still refused.

Why a team would ship it: the retry path was tested by resending the very same
call, which does look correct; the idempotency table was designed as a global
"have I applied this request" log, like an HTTP idempotency-key cache, and the
thread is not part of the request body there.

Rules broken: ST-009, ST-010
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence

from corpus.round6.stores.eventlog.base import EventLogStore, name, stream_of
from memconform.contract import DuplicateIdError, StoreError
from memconform.values import Message

__all__ = ["ReplayKeyStore", "make"]


class ReplayKeyStore(EventLogStore):
    def __init__(self, path: str, *, timeout: float = 30.0) -> None:
        super().__init__(path, timeout=timeout)
        with self._tx() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, seq INTEGER)"
            )

    @staticmethod
    def _key(ids: list[str]) -> str:
        # --- the bug ---
        # the key covers the ids only: the thread the batch goes to is left out
        return hashlib.sha256("\x1f".join(name(i) for i in ids).encode()).hexdigest()

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        batch = list(batch)
        ids = [m.id for m in batch]
        if len(set(ids)) < len(ids):
            raise DuplicateIdError("ids repeat within the batch")
        if not batch:
            return
        payloads = [self._message_payload(m) for m in batch]
        subjects = [name(i) for i in ids]
        stream = stream_of("thread", thread_id)
        key = self._key(ids)
        try:
            with self._tx() as cur:
                if cur.execute("SELECT 1 FROM idempotency WHERE key = ?", (key,)).fetchone():
                    return  # a retry of a batch already applied: acknowledge it
                self._write_batch(cur, stream, subjects, payloads)
                cur.execute(
                    "INSERT INTO idempotency (key, seq) VALUES (?, ?)", (key, cur.lastrowid)
                )
        except sqlite3.IntegrityError as exc:
            raise DuplicateIdError(f"the batch repeats an id in {thread_id!r}: {exc}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"append to {thread_id!r} failed: {exc}") from exc


def make(path: str | None = None, timeout: str = "30") -> ReplayKeyStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return ReplayKeyStore(path, timeout=float(timeout))
