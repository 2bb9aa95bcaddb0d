"""v07: WATCH is set after the reads it is meant to protect.

The bug: the append reads the thread's last position and checks the ids with
the plain client, and only then opens the pipeline, WATCHes ``seq`` and runs
``MULTI``/``EXEC`` (retrying on ``WatchError``, but with the values read
before). Two writers appending to the same thread at once both read the same
last position, both get ``EXEC`` through, and write the same scores: equal
scores are ordered by member, so the two batches interleave, and both set the
counter to the same value, so the clash repeats on later batches.

Why a team ships it: a refactor moved the reads out of the retry loop ("they
are plain reads, they need no pipeline"); the WATCH still sits in front of
``MULTI``, so the code looks like the textbook pattern, and a single writer
never sees the difference.

Rules broken: ST-033 (batches of concurrent writers interleave, a writer's
batches lose their order), ST-001/ST-002 under concurrency, ST-010 (two
writers appending one id at once both succeed). Shows with two writers (threads
or processes) appending to one thread at once.
"""

from __future__ import annotations

import redis

from corpus.round5.stores.kvredis.base import (
    DEFAULT_PREFIX,
    DEFAULT_URL,
    KVRedisStore,
    _name,
)
from memconform.contract import DuplicateIdError
from memconform.harness.faults import batch_row_pause

__all__ = ["LateWatchStore", "make"]


class LateWatchStore(KVRedisStore):
    def _write_batch(self, thread_id: str, rows: list[tuple[bytes, str, bool]]) -> None:
        order, msg = self._tkey(thread_id, "order"), self._tkey(thread_id, "msg")
        seq, hidden = self._tkey(thread_id, "seq"), self._tkey(thread_id, "hidden")
        ids = [row[0] for row in rows]
        # --- BUG: the reads happen before WATCH, so EXEC never sees them go stale ---
        taken = self._client.zmscore(order, ids)
        for raw, score in zip(ids, taken, strict=True):
            if score is not None:
                raise DuplicateIdError(
                    f"message id {_name(raw)!r} is already in thread {thread_id!r}"
                )
        last = int(self._client.get(seq) or 0)
        with self._client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(seq)
                    scores = self._scores(last, len(rows))
                    pipe.multi()
                    for (raw, text, committed), score in zip(rows, scores, strict=True):
                        batch_row_pause()
                        pipe.hset(msg, raw, text)
                        pipe.zadd(order, {raw: score})
                        if not committed:
                            pipe.sadd(hidden, raw)
                    pipe.set(seq, last + len(rows))
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue


def make(**kwargs: str) -> LateWatchStore:
    return LateWatchStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
