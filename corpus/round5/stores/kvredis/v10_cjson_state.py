"""v10: the state compare-and-set script re-encodes the value with Lua cjson.

The bug: the CAS script keeps each entry as a JSON envelope
``{"version": N, "value": ...}`` built on the server with
``cjson.encode({version = v + 1, value = cjson.decode(ARGV[2])})``. Lua
numbers are doubles and Redis's cjson prints them with 14 significant
digits: integers past 2**53 (and even past 10**14) and floats with more
digits come back rounded, whole floats come back as integers, and an empty
array comes back as an empty object.

Why a team ships it: one self-describing JSON value per key reads better
than ``"3:{...}"``, and the envelope is built where the version is checked;
test values such as ``{"step": 2, "todo": ["a"]}`` round-trip exactly.

Rules broken: ST-025 (the value read back exactly), PS-031 (state read back
unchanged by a fresh process). Shows with a state value holding 2**60, 0.1 +
0.2, 2.0 or ``[]``.
"""

from __future__ import annotations

from corpus.round5.stores.kvredis.base import DEFAULT_PREFIX, DEFAULT_URL, KVRedisStore
from memconform.contract import StoreError
from memconform.values import StateEntry

__all__ = ["CjsonStateStore", "make"]

# --- BUG: the value goes through cjson.decode/cjson.encode on the server ---
CJSON_STATE_SCRIPT = """
local current = redis.call('GET', KEYS[1])
local version = 0
if current then version = cjson.decode(current).version end
if ARGV[1] == '' then
  if current then return {0, version} end
elseif (not current) or tonumber(ARGV[1]) ~= version then
  return {0, version}
end
redis.call('SET', KEYS[1], cjson.encode({version = version + 1, value = cjson.decode(ARGV[2])}))
return {1, version + 1}
"""


class CjsonStateStore(KVRedisStore):
    state_script = CJSON_STATE_SCRIPT

    def _state_entry(self, key: str, stored: bytes) -> StateEntry:
        data = self._loads(stored, f"state {key!r}")
        if not isinstance(data, dict) or "version" not in data:
            raise StoreError(f"state {key!r} is not an envelope")
        return StateEntry(key, data.get("value"), int(data["version"]))


def make(**kwargs: str) -> CjsonStateStore:
    return CjsonStateStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
