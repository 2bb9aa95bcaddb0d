"""v09: the read script passes every id to one HMGET with ``unpack``.

The bug: the read script fetches the window's messages with
``redis.call('HMGET', KEYS[2], unpack(ids))``. Redis's Lua has a fixed C
stack: ``unpack`` of about 8,000 values fails ("too many results to
unpack"), so any read that returns more than that many messages (a read
without a limit of a long thread, or a wide window) raises instead of
answering.

Why a team ships it: it is the idiom every Redis Lua example uses, and it is
fast; the longest thread in the tests holds a thousand messages.

Rules broken: ST-006 (reading without a limit returns every message, however
many), ST-003 (a wide window). Shows on a thread of more than 8,000 messages.
"""

from __future__ import annotations

from corpus.round5.stores.kvredis.base import (
    DEFAULT_PREFIX,
    DEFAULT_URL,
    READ_SCRIPT,
    KVRedisStore,
)

__all__ = ["UnpackAllStore", "make"]

_RIGHT = """for first = 1, #ids, chunk_size do
  local last = math.min(first + chunk_size - 1, #ids)
  local chunk = {}
  for i = first, last do chunk[#chunk + 1] = ids[i] end
  local values = redis.call('HMGET', KEYS[2], unpack(chunk))"""
# --- BUG: one HMGET with every id unpacked onto Lua's C stack (about 8,000 at most) ---
_WRONG = """if #ids > 0 then
  local chunk = ids
  local values = redis.call('HMGET', KEYS[2], unpack(ids))"""
assert _RIGHT in READ_SCRIPT


class UnpackAllStore(KVRedisStore):
    read_script = READ_SCRIPT.replace(_RIGHT, _WRONG)


def make(**kwargs: str) -> UnpackAllStore:
    return UnpackAllStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
