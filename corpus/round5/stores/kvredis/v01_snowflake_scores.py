"""v01: positions are snowflake ids, which a sorted-set score cannot hold exactly.

The bug: the batch's scores come from a snowflake generator (milliseconds since
an epoch << 22 | worker << 12 | sequence) instead of the thread's own counter.
A snowflake is about 2**62, and a sorted-set score is a double: every score is
rounded to a multiple of 1,024, so the messages written within the same
millisecond (a whole batch, and often the next batch too) get the same score,
and Redis orders equal scores by member, i.e. by message id bytes.

Why a team ships it: "we already have a snowflake service, ids are unique and
time-ordered across hosts, and it saves the per-thread counter". Tests with ids
``m1``, ``m2``, ``m3`` come back in order because those ids sort as appended.

Rules broken: ST-001 (a batch not side by side in the order given), ST-002
(order is no longer append order). Shows with a batch whose ids do not sort in
append order (``m10`` after ``m9``, uuid ids, ``b`` then ``a``).
"""

from __future__ import annotations

import itertools
import time

from corpus.round5.stores.kvredis.base import DEFAULT_PREFIX, DEFAULT_URL, KVRedisStore

__all__ = ["SnowflakeScoreStore", "make"]

EPOCH_MS = 1288834974657  # the classic snowflake epoch
WORKER = 1
_SEQUENCE = itertools.count()


def snowflake() -> int:
    ms = time.time_ns() // 1_000_000 - EPOCH_MS
    return (ms << 22) | (WORKER << 12) | (next(_SEQUENCE) & 0xFFF)


class SnowflakeScoreStore(KVRedisStore):
    def _scores(self, last: int, count: int) -> list[int]:
        # --- BUG: 64-bit snowflake ids as ZADD scores (doubles: 53-bit mantissa) ---
        return [snowflake() for _ in range(count)]


def make(**kwargs: str) -> SnowflakeScoreStore:
    return SnowflakeScoreStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
