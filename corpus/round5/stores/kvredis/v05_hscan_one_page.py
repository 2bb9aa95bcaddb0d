"""v05: listing facts takes one HSCAN page as the whole hash.

The bug: ``facts()`` calls ``HSCAN key 0 COUNT 100`` once and ignores the
cursor it returns. ``COUNT`` is a hint of work per call, not a page size the
server fills; for a small hash the first call returns everything (cursor 0),
for a larger one (a hashtable: more than about a hundred facts, or any fact
longer than 64 bytes once the hash has grown) it returns only part of it.

Why a team ships it: the ops rule "no HGETALL on hashes" led to HSCAN, and
every test scope has a handful of facts, which the first call returns whole.

Rules broken: ST-028 and PS-027 (listing the facts gives one per subject:
here subjects are missing). Shows with a scope of a few hundred facts.
"""

from __future__ import annotations

from corpus.round5.stores.kvredis.base import (
    DEFAULT_PREFIX,
    DEFAULT_URL,
    SCAN_COUNT,
    KVRedisStore,
)

__all__ = ["OnePageScanStore", "make"]


class OnePageScanStore(KVRedisStore):
    def _scan_facts(self, key: str) -> dict[bytes, bytes]:
        # --- BUG: the cursor is ignored; the first HSCAN page is taken as complete ---
        _cursor, page = self._client.hscan(key, 0, count=SCAN_COUNT)
        return dict(page)


def make(**kwargs: str) -> OnePageScanStore:
    return OnePageScanStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
