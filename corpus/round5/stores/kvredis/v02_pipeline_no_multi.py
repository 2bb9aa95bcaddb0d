"""v02: the rows of a batch go out in a pipeline without MULTI.

The bug: the append reserves its positions with one ``INCRBY`` and then sends
the rows in ``pipeline(transaction=False)``. A plain pipeline is only batching
on the wire: the server runs its commands one after another and serves other
clients in between (a large pipeline arrives in several reads), so a reader
in another process or thread can see the first rows of a batch without the
rest. The duplicate check (``ZMSCORE``) is also no longer tied to the write.

Why a team ships it: "INCRBY hands every writer its own range of positions,
so nothing can interleave and no WATCH/retry is needed; transaction=False is
faster". Every single-process test passes, and a fault before the send still
leaves nothing, because nothing is sent until ``execute()``.

Rules broken: ST-036 (a read shows part of a batch while another process
appends), ST-033/ST-010 (two writers appending the same id at once both
succeed). Shows with a reader polling a thread while large batches are
appended.
"""

from __future__ import annotations

from corpus.round5.stores.kvredis.base import (
    DEFAULT_PREFIX,
    DEFAULT_URL,
    KVRedisStore,
    _name,
)
from memconform.contract import DuplicateIdError
from memconform.harness.faults import batch_row_pause

__all__ = ["PlainPipelineStore", "make"]


class PlainPipelineStore(KVRedisStore):
    def _write_batch(self, thread_id: str, rows: list[tuple[bytes, str, bool]]) -> None:
        order, msg = self._tkey(thread_id, "order"), self._tkey(thread_id, "msg")
        seq, hidden = self._tkey(thread_id, "seq"), self._tkey(thread_id, "hidden")
        ids = [row[0] for row in rows]
        taken = self._client.zmscore(order, ids)
        for raw, score in zip(ids, taken, strict=True):
            if score is not None:
                raise DuplicateIdError(
                    f"message id {_name(raw)!r} is already in thread {thread_id!r}"
                )
        end = int(self._client.incrby(seq, len(rows)))
        scores = range(end - len(rows) + 1, end + 1)
        # --- BUG: a pipeline without MULTI/EXEC: other clients run between its commands ---
        with self._client.pipeline(transaction=False) as pipe:
            for (raw, text, committed), score in zip(rows, scores, strict=True):
                batch_row_pause()
                pipe.hset(msg, raw, text)
                pipe.zadd(order, {raw: score})
                if not committed:
                    pipe.sadd(hidden, raw)
            pipe.execute()



def make(**kwargs: str) -> PlainPipelineStore:
    return PlainPipelineStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
