"""v08: a client-side cache of each thread, validated by the thread's length.

The bug: reads keep the thread's messages in a per-process cache and check
it with one ``ZCARD``: when the count is unchanged, the cached messages are
served. Appends only ever add, so the count catches every append, but a
commit-flag change made by another process (or another store object) leaves
the count alone, and this process keeps serving the old flags. Its own writes
drop its cache, so a single store object always looks right.

Why a team ships it: window reads dominate the load and a ``ZCARD`` is O(1);
"a thread is append-only, so its length is its version".

Rules broken: SW-004 and ST-017 (a read that includes uncommitted messages
returns a flag other than the one last set; a message hidden elsewhere stays
visible), SW-005, ST-036 (a reader in another process). Shows with two store
objects (or processes) on one prefix: one reads, the other changes a flag,
the first reads again.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence

import redis

from corpus.round5.stores.kvredis.base import DEFAULT_PREFIX, DEFAULT_URL, KVRedisStore
from memconform.contract import StoreError, check_limit
from memconform.values import Message

__all__ = ["CountCachedStore", "make"]


class CountCachedStore(KVRedisStore):
    def __init__(self, url: str = DEFAULT_URL, prefix: str = DEFAULT_PREFIX) -> None:
        super().__init__(url, prefix)
        self._cache: dict[str, tuple[int, list[Message]]] = {}
        self._cache_lock = threading.Lock()

    def _forget(self, thread_id: str) -> None:
        with self._cache_lock:
            self._cache.pop(thread_id, None)

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        check_limit(limit)
        if limit == 0:
            return []
        try:
            count = int(self._client.zcard(self._tkey(thread_id, "order")))
        except redis.RedisError as exc:
            raise StoreError(f"messages failed on Redis: {exc}") from exc
        with self._cache_lock:
            cached = self._cache.get(thread_id)
        # --- BUG: the length says nothing about commit flags changed elsewhere ---
        if cached is None or cached[0] != count:
            everything = super().messages(thread_id, None, include_uncommitted=True)
            cached = (len(everything), everything)
            with self._cache_lock:
                self._cache[thread_id] = cached
        visible = [m for m in cached[1] if include_uncommitted or m.committed]
        if limit is not None:
            visible = visible[-limit:]
        return copy.deepcopy(visible)

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self._forget(thread_id)
        try:
            super().append(thread_id, batch)
        finally:
            self._forget(thread_id)

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        try:
            super().set_committed(thread_id, message_ids, committed)
        finally:
            self._forget(thread_id)

    def damage(self, thread_id: str) -> None:
        super().damage(thread_id)
        self._forget(thread_id)


def make(**kwargs: str) -> CountCachedStore:
    return CountCachedStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
