"""``redis://…``: a store on a Redis server (redis-py).

URL: any redis-py URL (``redis://[:password@]host:port/db``, ``rediss://`` for
TLS, ``unix://``) plus one option of the kit's own, ``prefix=TEXT`` (default
``memconform:``): every key starts with it, so several kits or test processes
can share one database. The remaining query options go to redis-py.

Layout, for the prefix ``memconform:``, thread ``T`` and scope ``S``:

- ``memconform:m{T}:list``: the thread's messages in append order, one JSON
  text each, led by one flag character (``1`` committed, ``0`` not);
  ``memconform:m{T}:idx``: a hash from message id to list index;
  ``memconform:m{T}:unc``: the set of uncommitted ids. Windows are ``LRANGE``
  reads.
- ``memconform:e{T}``: the thread's error records; ``memconform:records`` and
  ``memconform:r{T}``: turn records, all and per thread (written together in
  ``MULTI``/``EXEC``).
- ``memconform:s{S}``: a hash of the scope's state keys (``version:json``);
  ``memconform:f{S}``: a hash of the scope's facts by subject.

Thread ids and scopes sit between braces and each key kind ends in a fixed
suffix, so no id can make two threads, or a thread and a scope, share a key.

Each append runs one Lua script that checks every id against the thread's
index and pushes the whole batch; Redis runs a script without interleaving any
other command, so a batch lands whole or, on a repeated id, not at all, and
concurrent writers get contiguous ranges. Compare-and-set of state and commit
flag changes are scripts too. The scripts check everything before their first
write; only a server failure in the middle of a script (for example running
out of memory with ``maxmemory`` set) could leave part of a batch behind.

The store does not call the kit's row point
(:func:`memconform.harness.faults.batch_row_pause`): the client writes no
row, the server runs the whole script, so a row point called from here would
stand before or after the write, never inside it, and a fault or a kill there
would pass by construction. ST-016 is therefore ``inconclusive`` for this
store (the kit cannot fail its batch in the middle), and its ``core`` class is
not achieved; ST-034 and ST-036 judge it by timed kills and a polling reader.

What it declares, honestly:

- ``durable`` only when the server logs every write to an append-only file
  (``CONFIG GET appendonly`` answers ``yes``). Without it, an acknowledged
  write lives only in the server's memory: a restart of the server loses it,
  and RDB snapshots (``save`` points) only keep what existed at the last
  snapshot, so they do not make an acknowledged write durable. When ``CONFIG``
  is disabled (managed services often rename it) the store cannot tell and
  does not declare ``durable``. The kit checks durability by reopening the
  store from a new process, which a server without persistence also passes;
  the declaration is therefore about the promise, not about what the check
  can see. Even with the append-only file, ``appendfsync everysec`` (the
  default) can lose the last second on a machine crash.
- Eviction (``maxmemory-policy`` other than ``noeviction``) could drop keys;
  run the store on a database that does not evict. Redis Cluster is not
  supported: the store opens a plain client (a thread's keys do share one hash
  tag, so a cluster client would keep each script on one node).
- It holds any Unicode text, U+0000 included, and floats exactly (JSON text
  with shortest round-trip floats). Lone surrogates and non-finite floats are
  refused with ``UnsupportedValueError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from memconform.adapters.exactness import Exactness
from memconform.adapters.registry import StoreURLError, redact_url
from memconform.contract import (
    Capability,
    ConflictError,
    DuplicateIdError,
    StoreError,
    check_limit,
    damage_index,
)
from memconform.values import (
    ROLES,
    ErrorRecord,
    Fact,
    JSONValue,
    Message,
    StateEntry,
    TurnRecord,
    freeze_json,
)

__all__ = ["DEFAULT_PREFIX", "RedisStore", "durable_from_config", "open_redis"]

DEFAULT_PREFIX = "memconform:"
_EXACT = Exactness(nul=True, negative_zero=True)

_APPEND = """
local n = tonumber(ARGV[1])
for i = 1, n do
  if redis.call('HEXISTS', KEYS[2], ARGV[1 + i]) == 1 then
    return redis.error_reply('DUPLICATE ' .. ARGV[1 + i])
  end
end
local len = redis.call('LLEN', KEYS[1])
for i = 1, n do
  local id = ARGV[1 + i]
  local item = ARGV[1 + n + i]
  redis.call('RPUSH', KEYS[1], item)
  redis.call('HSET', KEYS[2], id, len + i - 1)
  if string.sub(item, 1, 1) == '0' then redis.call('SADD', KEYS[3], id) end
end
return len + n
"""

_WINDOW = """
local limit = tonumber(ARGV[1])
if limit == 0 then return {} end
if ARGV[2] == '1' or redis.call('SCARD', KEYS[2]) == 0 then
  if limit < 0 then return redis.call('LRANGE', KEYS[1], 0, -1) end
  return redis.call('LRANGE', KEYS[1], -limit, -1)
end
local newest = {}
local stop = redis.call('LLEN', KEYS[1]) - 1
while stop >= 0 and (limit < 0 or #newest < limit) do
  local start = math.max(0, stop - 255)
  local items = redis.call('LRANGE', KEYS[1], start, stop)
  for i = #items, 1, -1 do
    if string.sub(items[i], 1, 1) == '1' then
      newest[#newest + 1] = items[i]
      if limit >= 0 and #newest >= limit then break end
    end
  end
  stop = start - 1
end
local out = {}
for i = #newest, 1, -1 do out[#out + 1] = newest[i] end
return out
"""

_SET_COMMITTED = """
local missing = {}
local positions = {}
for i = 2, #ARGV do
  local p = redis.call('HGET', KEYS[2], ARGV[i])
  if p then positions[#positions + 1] = p else missing[#missing + 1] = ARGV[i] end
end
if #missing > 0 then return missing end
for i = 2, #ARGV do
  local p = positions[i - 1]
  local item = redis.call('LINDEX', KEYS[1], p)
  redis.call('LSET', KEYS[1], p, ARGV[1] .. string.sub(item, 2))
  if ARGV[1] == '1' then
    redis.call('SREM', KEYS[3], ARGV[i])
  else
    redis.call('SADD', KEYS[3], ARGV[i])
  end
end
return {}
"""

_WRITE_STATE = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
local version = 0
if current then version = tonumber(string.match(current, '^(%d+):')) end
local expected = ARGV[2]
if (expected == '' and current) or (expected ~= '' and (not current or
    tonumber(expected) ~= version)) then
  return {0, version}
end
redis.call('HSET', KEYS[1], ARGV[1], (version + 1) .. ':' .. ARGV[3])
return {1, version + 1}
"""


def _import_redis() -> Any:
    try:
        import redis
    except ImportError as exc:
        raise StoreURLError(
            "the redis:// store needs redis-py; install it with pip install 'memconform[redis]'"
        ) from exc
    return redis


def split_url(url: str) -> tuple[str, str]:
    """Split a store URL into (redis-py URL without the kit's options, key prefix)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise StoreURLError(f"not a Redis URL: {redact_url(url)}")
    prefix = DEFAULT_PREFIX
    kept: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "prefix":
            prefix = value
        else:
            kept.append((key, value))
    return parts._replace(query=urlencode(kept)).geturl(), prefix


def durable_from_config(config: Mapping[str, str] | None) -> bool:
    """Whether a server with this ``CONFIG GET`` answer keeps every acknowledged
    write across its own restart: only with the append-only file on. ``None``
    (the configuration could not be read) is not durable."""
    if config is None:
        return False
    return str(config.get("appendonly", "no")).strip().lower() == "yes"


def _dumps(value: JSONValue) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _item(message: Message) -> str:
    data = message.to_json()
    del data["committed"]
    return ("1" if message.committed else "0") + _dumps(data)


def _message(item: str) -> Message:
    """The message of one list item; an item that does not decode raises
    :class:`StoreError` (the read fails, never skips it)."""
    try:
        data = json.loads(item[1:])
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        data["committed"] = item[0] == "1"
        return Message.from_json(data)
    except ValueError as exc:
        raise StoreError(f"a stored message cannot be decoded: {exc}") from None


class RedisStore:
    """A store on one Redis database; see the Store contract for each method.

    Safe to share between threads; separate processes may write the same
    threads at once.
    """

    def __init__(self, redis_url: str, prefix: str = DEFAULT_PREFIX) -> None:
        self._redis = _import_redis()
        self._url = redis_url
        self._prefix = prefix
        self._client: Any = self._redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            self._client.ping()
        except self._redis.RedisError as exc:
            self._client.close()
            raise StoreError(f"cannot reach Redis at {redact_url(redis_url)}: {exc}") from exc
        self._config = self._read_config()
        self._append = self._client.register_script(_APPEND)
        self._window = self._client.register_script(_WINDOW)
        self._set_committed = self._client.register_script(_SET_COMMITTED)
        self._write_state = self._client.register_script(_WRITE_STATE)

    def _read_config(self) -> dict[str, str] | None:
        try:
            answer = self._client.config_get("appendonly")
        except self._redis.RedisError:
            return None
        return {str(k): str(v) for k, v in dict(answer).items()}

    @property
    def persistence(self) -> str:
        """What the server said about persistence, for reports."""
        if self._config is None:
            return "unknown (CONFIG GET refused)"
        return f"appendonly={self._config.get('appendonly', '?')}"

    @property
    def capabilities(self) -> frozenset[str]:
        """Every capability; ``durable`` only when the append-only file is on."""
        names = {c.value for c in Capability}
        if not durable_from_config(self._config):
            names.discard(Capability.DURABLE.value)
        return frozenset(names)

    def close(self) -> None:
        """Close the client's connections. Closing twice is harmless."""
        self._client.close()

    def _key(self, kind: str, name: str, suffix: str = "") -> str:
        return f"{self._prefix}{kind}{{{name}}}{suffix}"

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except self._redis.RedisError as exc:
            raise StoreError(f"{what} failed on Redis: {exc}") from exc

    # -- core -------------------------------------------------------------------------

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = list(batch)
        if not batch:
            return
        _EXACT.text(thread_id, "thread id")
        seen: set[str] = set()
        items: list[str] = []
        for i, message in enumerate(batch):
            if message.id in seen:
                raise DuplicateIdError(f"message id {message.id!r} repeats within the batch")
            seen.add(message.id)
            if message.role not in ROLES:
                raise ValueError(
                    f"message {i}: role must be one of {', '.join(ROLES)}, got {message.role!r}"
                )
            data = message.to_json()
            _EXACT.json(data, f"message {i}")
            items.append(_item(message))
        keys = [self._key("m", thread_id, s) for s in (":list", ":idx", ":unc")]
        try:
            self._append(keys=keys, args=[len(batch), *(m.id for m in batch), *items])
        except self._redis.ResponseError as exc:
            if str(exc).startswith("DUPLICATE "):
                raise DuplicateIdError(
                    f"message id {str(exc).removeprefix('DUPLICATE ')!r} is already "
                    f"in thread {thread_id!r}"
                ) from None
            raise StoreError(f"append failed on Redis: {exc}") from exc
        except self._redis.RedisError as exc:
            raise StoreError(f"append failed on Redis: {exc}") from exc

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        if limit == 0 or not _encodable(thread_id):
            return []
        keys = [self._key("m", thread_id, ":list"), self._key("m", thread_id, ":unc")]
        items = self._call(
            "messages", self._window,
            keys=keys, args=[-1 if limit is None else limit, 1 if include_uncommitted else 0],
        )
        return [_message(item) for item in items]

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the thread's middle list item becomes text that is not JSON (its flag
        character kept)."""
        key = self._key("m", thread_id, ":list")
        count = int(self._call("damage", self._client.llen, key))
        index = damage_index(count)
        item = str(self._call("damage", self._client.lindex, key, index))
        self._call("damage", self._client.lset, key, index, item[:1] + "{not json")

    # -- commit-flags -----------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        wanted = list(dict.fromkeys(message_ids))
        if not wanted:
            return
        bad = [i for i in wanted if not _encodable(i)]
        if bad or not _encodable(thread_id):
            raise KeyError(f"unknown message ids in thread {thread_id!r}: {bad or wanted}")
        keys = [self._key("m", thread_id, s) for s in (":list", ":idx", ":unc")]
        missing = self._call(
            "set_committed", self._set_committed,
            keys=keys, args=["1" if committed else "0", *wanted],
        )
        if missing:
            raise KeyError(f"unknown message ids in thread {thread_id!r}: {list(missing)}")

    # -- errors --------------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        _EXACT.text(thread_id, "thread id")
        data = record.to_json()
        _EXACT.json(data, "error record")
        self._call("record_error", self._client.rpush, self._key("e", thread_id), _dumps(data))

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        if not _encodable(thread_id):
            return []
        items = self._call("errors", self._client.lrange, self._key("e", thread_id), 0, -1)
        return [ErrorRecord.from_json(json.loads(item)) for item in items]

    # -- turn-records ---------------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        data = record.to_json()
        _EXACT.json(data, "turn record")
        text = _dumps(data)

        def write() -> None:
            with self._client.pipeline(transaction=True) as pipe:
                pipe.rpush(f"{self._prefix}records", text)
                pipe.rpush(self._key("r", record.thread_id), text)
                pipe.execute()

        self._call("append_record", write)

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        if thread_id is None:
            key = f"{self._prefix}records"
        elif not _encodable(thread_id):
            return []
        else:
            key = self._key("r", thread_id)
        items = self._call("records", self._client.lrange, key, 0, -1)
        return [TurnRecord.from_json(json.loads(item)) for item in items]

    # -- state -----------------------------------------------------------------------------

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        if not (_encodable(scope) and _encodable(key)):
            return None
        stored = self._call("read_state", self._client.hget, self._key("s", scope), key)
        if stored is None:
            return None
        version, _, text = str(stored).partition(":")
        return StateEntry(key, json.loads(text), int(version))

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        _EXACT.text(scope, "state scope")
        _EXACT.text(key, "state key")
        _EXACT.json(value, "state value")
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, int)
        ):
            raise ValueError(f"expected_version must be an int or None, got {expected_version!r}")
        written, version = self._call(
            "write_state", self._write_state,
            keys=[self._key("s", scope)],
            args=[key, "" if expected_version is None else expected_version, _dumps(value)],
        )
        if not written:
            raise ConflictError(
                f"state {scope}/{key}: expected version {expected_version}, stored version is "
                f"{int(version) or None}"
            )
        return StateEntry(key, freeze_json(value), int(version))

    # -- knowledge ---------------------------------------------------------------------------

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        _EXACT.text(scope, "knowledge scope")
        data = fact.to_json()
        _EXACT.json(data, "fact")
        self._call("put_fact", self._client.hset, self._key("f", scope), fact.subject, _dumps(data))

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        if not (_encodable(scope) and _encodable(subject)):
            return None
        stored = self._call("get_fact", self._client.hget, self._key("f", scope), subject)
        return None if stored is None else Fact.from_json(json.loads(stored))

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`."""
        if not _encodable(scope):
            return []
        stored = self._call("facts", self._client.hgetall, self._key("f", scope))
        return [Fact.from_json(json.loads(stored[s])) for s in sorted(stored)]

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        if not (_encodable(scope) and _encodable(subject)):
            return False
        return bool(self._call("forget", self._client.hdel, self._key("f", scope), subject))


def open_redis(url: str) -> RedisStore:
    """Open ``redis://…?prefix=TEXT`` (see the module docstring)."""
    redis_url, prefix = split_url(url)
    return RedisStore(redis_url, prefix)
