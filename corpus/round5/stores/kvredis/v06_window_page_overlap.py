"""v06: the backwards page scan of a committed-only read overlaps by one.

The bug: when a thread holds uncommitted messages, the read script walks the
sorted set backwards in pages, ``ZREVRANGE key offset offset+PAGE``, then
moves ``offset`` on by ``PAGE``. ``ZREVRANGE``'s stop is inclusive, so each
page is PAGE+1 long and its last member is the next page's first: a message
at every page boundary (every 256th from the newest) is returned twice.

Why a team ships it: the Python habit of half-open ranges; the fast path (no
uncommitted message) uses ``ZRANGE -N -1`` and is right, and tests of hidden
messages use threads of a few messages, which fit in one page.

Rules broken: ST-006 and ST-019 (a committed read returns a message twice,
more than the thread holds), ST-003 (a window of N holds a duplicate in place
of the Nth newest), SW-005. Shows on a thread of more than 256 messages with
at least one uncommitted, read without a limit or with a limit over 256.
"""

from __future__ import annotations

from corpus.round5.stores.kvredis.base import (
    DEFAULT_PREFIX,
    DEFAULT_URL,
    READ_SCRIPT,
    KVRedisStore,
)

__all__ = ["OverlappingPageStore", "make"]

_RIGHT = "redis.call('ZREVRANGE', KEYS[1], offset, offset + page_size - 1)"
# --- BUG: ZREVRANGE's stop is inclusive; this page is one member too long ---
_WRONG = "redis.call('ZREVRANGE', KEYS[1], offset, offset + page_size)"
assert _RIGHT in READ_SCRIPT


class OverlappingPageStore(KVRedisStore):
    read_script = READ_SCRIPT.replace(_RIGHT, _WRONG)


def make(**kwargs: str) -> OverlappingPageStore:
    return OverlappingPageStore(
        kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX)
    )
