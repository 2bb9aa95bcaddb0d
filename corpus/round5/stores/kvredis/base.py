"""A key-value store on a Redis server (redis-py), correct by intent.

URL: ``corpus.round5.stores.kvredis.base:make?prefix=TEXT[&url=redis://host:port/db]``.
Every key starts with ``prefix``, so a fresh process opening the same URL sees
the same data and several stores can share one database.

Layout, with ``H(x)`` the hex of ``x`` encoded as UTF-8 (lone surrogates passed
through), so that no id can contain the separator of a key name:

- ``P t:H(thread):order``: sorted set, member = message id (bytes), score = the
  message's position in the thread (1, 2, 3 ...; exact in a double far below
  2**53);
- ``P t:H(thread):msg``: hash, message id -> the message as JSON (ASCII only:
  ``ensure_ascii``, so any code point, NUL and lone surrogates included, comes
  back exactly);
- ``P t:H(thread):seq``: the last position handed out in the thread;
- ``P t:H(thread):hidden``: set of the ids whose committed flag is cleared;
- ``P t:H(thread):err``: list of error records (JSON);
- ``P records`` and ``P t:H(thread):rec``: turn records, all and per thread,
  pushed together in one ``MULTI``/``EXEC``;
- ``P s:H(scope):H(key)``: one working-state entry, ``"<version>:<json>"``,
  written by a Lua compare-and-set script;
- ``P f:H(scope)``: hash, subject -> fact as JSON.

An append WATCHes the thread's ``seq`` key, checks the batch's ids against the
sorted set, reads the last position, then queues every row in ``MULTI`` (the
kit's row point before each row) and ``EXEC``s; when another writer moved
``seq`` meanwhile, ``EXEC`` fails and the whole attempt is retried. Nothing
reaches the server before ``EXEC``, so a failure or a kill while staging leaves
nothing behind. Reads run one Lua script, so they see whole batches only.

Capabilities: all of :class:`memconform.contract.Capability`. ``durable`` holds
within the running server (what one process acknowledged, any later process
reads); whether it also survives a restart of the server is the server's
persistence setting (``appendonly``), which this store does not control.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import redis

from memconform.contract import (
    Capability,
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
    check_limit,
    damage_index,
)
from memconform.harness.faults import batch_row_pause
from memconform.values import ROLES, ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = ["KVRedisStore", "make"]

DEFAULT_URL = "redis://127.0.0.1:6379/0"
DEFAULT_PREFIX = "kvredis:"
MAX_WINDOW = 2**40  # any window wider than a thread is "all"; keeps Lua numbers exact

READ_SCRIPT = """
-- KEYS: order, msg, hidden.  ARGV: limit (-1 = all), include uncommitted (1/0),
-- page size of the backwards scan, HMGET chunk size.
local limit = tonumber(ARGV[1])
local everything = ARGV[2] == '1'
local page_size = tonumber(ARGV[3])
local chunk_size = tonumber(ARGV[4])
local hidden = redis.call('SCARD', KEYS[3])
local ids
if everything or hidden == 0 then
  if limit < 0 then
    ids = redis.call('ZRANGE', KEYS[1], 0, -1)
  else
    ids = redis.call('ZRANGE', KEYS[1], -limit, -1)
  end
else
  local picked = {}
  local offset = 0
  while limit < 0 or #picked < limit do
    local page = redis.call('ZREVRANGE', KEYS[1], offset, offset + page_size - 1)
    if #page == 0 then break end
    for i = 1, #page do
      if redis.call('SISMEMBER', KEYS[3], page[i]) == 0 then
        picked[#picked + 1] = page[i]
        if limit >= 0 and #picked >= limit then break end
      end
    end
    offset = offset + page_size
  end
  ids = {}
  for i = #picked, 1, -1 do ids[#ids + 1] = picked[i] end
end
local out = {}
for first = 1, #ids, chunk_size do
  local last = math.min(first + chunk_size - 1, #ids)
  local chunk = {}
  for i = first, last do chunk[#chunk + 1] = ids[i] end
  local values = redis.call('HMGET', KEYS[2], unpack(chunk))
  for i = 1, #chunk do
    local flag = 0
    if hidden > 0 and redis.call('SISMEMBER', KEYS[3], chunk[i]) == 1 then flag = 1 end
    out[#out + 1] = chunk[i]
    out[#out + 1] = values[i]
    out[#out + 1] = flag
  end
end
return out
"""

STATE_SCRIPT = """
-- KEYS: the entry.  ARGV: expected version ('' = must be absent), value JSON.
local current = redis.call('GET', KEYS[1])
local version = 0
if current then version = tonumber(string.match(current, '^(%d+):')) end
if ARGV[1] == '' then
  if current then return {0, version} end
elseif (not current) or tonumber(ARGV[1]) ~= version then
  return {0, version}
end
redis.call('SET', KEYS[1], (version + 1) .. ':' .. ARGV[2])
return {1, version + 1}
"""

PAGE_SIZE = 256
CHUNK_SIZE = 1000
SCAN_COUNT = 100


def _raw(name: str) -> bytes:
    """``name`` as bytes, exactly (lone surrogates kept)."""
    return name.encode("utf-8", "surrogatepass")


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


class KVRedisStore:
    """The store; see :mod:`memconform.contract` for what each method promises."""

    read_script = READ_SCRIPT
    state_script = STATE_SCRIPT

    def __init__(self, url: str = DEFAULT_URL, prefix: str = DEFAULT_PREFIX) -> None:
        self._url = url
        self._prefix = prefix
        self._client = self._make_client(url)
        try:
            self._client.ping()
        except redis.RedisError as exc:
            self._client.close()
            raise StoreError(f"cannot reach Redis at {url}: {exc}") from exc
        self._read = self._client.register_script(self.read_script)
        self._cas = self._client.register_script(self.state_script)

    # -- plumbing -------------------------------------------------------------------------

    def _make_client(self, url: str) -> Any:
        return redis.Redis.from_url(url, decode_responses=False)

    @property
    def capabilities(self) -> frozenset[str]:
        """Every capability of the contract."""
        return frozenset(c.value for c in Capability)

    def close(self) -> None:
        """Close the client's connections."""
        self._client.close()

    def purge(self) -> int:
        """Delete every key under this store's prefix (for tests and demos)."""
        count = 0
        for key in self._client.scan_iter(match=_glob_escape(self._prefix) + "*", count=500):
            count += int(self._client.delete(key))
        return count

    def _tkey(self, thread_id: str, suffix: str) -> str:
        return f"{self._prefix}t:{_raw(thread_id).hex()}:{suffix}"

    def _state_key(self, scope: str, key: str) -> str:
        return f"{self._prefix}s:{_raw(scope).hex()}:{_raw(key).hex()}"

    def _facts_key(self, scope: str) -> str:
        return f"{self._prefix}f:{_raw(scope).hex()}"

    def _dumps(self, value: JSONValue, what: str) -> str:
        try:
            return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        except ValueError as exc:  # NaN or an infinity: no JSON for it
            raise UnsupportedValueError(f"{what}: {exc}") from None

    def _loads(self, raw: bytes | str, what: str) -> Any:
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise StoreError(f"{what} cannot be decoded: {exc}") from None

    def _scores(self, last: int, count: int) -> list[int]:
        """The positions of a batch of ``count`` after position ``last``."""
        return list(range(last + 1, last + count + 1))

    # -- core -----------------------------------------------------------------------------

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = list(batch)
        if not batch:
            return
        seen: set[str] = set()
        rows: list[tuple[bytes, str, bool]] = []
        for i, message in enumerate(batch):
            if message.id in seen:
                raise DuplicateIdError(f"message id {message.id!r} repeats within the batch")
            seen.add(message.id)
            if message.role not in ROLES:
                raise ValueError(f"message {i}: role must be one of {ROLES}, got {message.role!r}")
            data = message.to_json()
            del data["committed"]
            rows.append((_raw(message.id), self._dumps(data, f"message {i}"), message.committed))
        try:
            self._write_batch(thread_id, rows)
        except redis.RedisError as exc:
            raise StoreError(f"append failed on Redis: {exc}") from exc

    def _write_batch(self, thread_id: str, rows: list[tuple[bytes, str, bool]]) -> None:
        order, msg = self._tkey(thread_id, "order"), self._tkey(thread_id, "msg")
        seq, hidden = self._tkey(thread_id, "seq"), self._tkey(thread_id, "hidden")
        ids = [row[0] for row in rows]
        with self._client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(seq)
                    taken = pipe.zmscore(order, ids)
                    for raw, score in zip(ids, taken, strict=True):
                        if score is not None:
                            raise DuplicateIdError(
                                f"message id {_name(raw)!r} is already in thread {thread_id!r}"
                            )
                    last = int(pipe.get(seq) or 0)
                    scores = self._scores(last, len(rows))
                    pipe.multi()
                    for (raw, text, committed), score in zip(rows, scores, strict=True):
                        batch_row_pause()  # the kit's row point: nothing is sent before EXEC
                        pipe.hset(msg, raw, text)
                        pipe.zadd(order, {raw: score})
                        if not committed:
                            pipe.sadd(hidden, raw)
                    pipe.set(seq, last + len(rows))
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        if limit == 0:
            return []
        keys = [self._tkey(thread_id, s) for s in ("order", "msg", "hidden")]
        window = -1 if limit is None else min(limit, MAX_WINDOW)
        try:
            flat = self._read(
                keys=keys,
                args=[window, 1 if include_uncommitted else 0, PAGE_SIZE, CHUNK_SIZE],
            )
        except redis.RedisError as exc:
            raise StoreError(f"messages failed on Redis: {exc}") from exc
        return [
            self._message(flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)
        ]

    def _message(self, raw_id: bytes, raw: bytes | None, hidden: int) -> Message:
        if raw is None:
            raise StoreError(f"message {_name(raw_id)!r} is listed but not stored")
        data = self._loads(raw, f"message {_name(raw_id)!r}")
        if not isinstance(data, dict):
            raise StoreError(f"message {_name(raw_id)!r} is not a JSON object")
        data["committed"] = not hidden
        try:
            return Message.from_json(data)
        except ValueError as exc:
            raise StoreError(f"message {_name(raw_id)!r} cannot be decoded: {exc}") from None

    def damage(self, thread_id: str) -> None:
        """The optional hook: the middle message's JSON becomes text that is not JSON."""
        order, msg = self._tkey(thread_id, "order"), self._tkey(thread_id, "msg")
        try:
            index = damage_index(int(self._client.zcard(order)))
            (target,) = self._client.zrange(order, index, index)
            self._client.hset(msg, target, "{not json")
        except redis.RedisError as exc:
            raise StoreError(f"damage failed on Redis: {exc}") from exc

    # -- commit-flags -----------------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        wanted = list(dict.fromkeys(message_ids))
        if not wanted:
            return
        raws = [_raw(i) for i in wanted]
        order, hidden = self._tkey(thread_id, "order"), self._tkey(thread_id, "hidden")
        try:
            taken = self._client.zmscore(order, raws)
            missing = [i for i, s in zip(wanted, taken, strict=True) if s is None]
            if missing:
                raise KeyError(f"unknown message ids in thread {thread_id!r}: {missing}")
            with self._client.pipeline(transaction=True) as pipe:
                if committed:
                    pipe.srem(hidden, *raws)
                else:
                    pipe.sadd(hidden, *raws)
                pipe.execute()
        except redis.RedisError as exc:
            raise StoreError(f"set_committed failed on Redis: {exc}") from exc

    # -- errors -----------------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        text = self._dumps(record.to_json(), "error record")
        try:
            self._client.rpush(self._tkey(thread_id, "err"), text)
        except redis.RedisError as exc:
            raise StoreError(f"record_error failed on Redis: {exc}") from exc

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        try:
            items = self._client.lrange(self._tkey(thread_id, "err"), 0, -1)
        except redis.RedisError as exc:
            raise StoreError(f"errors failed on Redis: {exc}") from exc
        return [ErrorRecord.from_json(self._loads(item, "error record")) for item in items]

    # -- turn-records -------------------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        text = self._dumps(record.to_json(), "turn record")
        try:
            with self._client.pipeline(transaction=True) as pipe:
                pipe.rpush(f"{self._prefix}records", text)
                pipe.rpush(self._tkey(record.thread_id, "rec"), text)
                pipe.execute()
        except redis.RedisError as exc:
            raise StoreError(f"append_record failed on Redis: {exc}") from exc

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        key = f"{self._prefix}records" if thread_id is None else self._tkey(thread_id, "rec")
        try:
            items = self._client.lrange(key, 0, -1)
        except redis.RedisError as exc:
            raise StoreError(f"records failed on Redis: {exc}") from exc
        return [TurnRecord.from_json(self._loads(item, "turn record")) for item in items]

    # -- state ----------------------------------------------------------------------------------

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        try:
            stored = self._client.get(self._state_key(scope, key))
        except redis.RedisError as exc:
            raise StoreError(f"read_state failed on Redis: {exc}") from exc
        if stored is None:
            return None
        return self._state_entry(key, stored)

    def _state_entry(self, key: str, stored: bytes) -> StateEntry:
        version, _, text = stored.partition(b":")
        return StateEntry(key, self._loads(text, f"state {key!r}"), int(version))

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, int)
        ):
            raise ValueError(f"expected_version must be an int or None, got {expected_version!r}")
        text = self._dumps(value, "state value")
        if expected_version is not None and not 0 < expected_version < 2**53:
            current = self.read_state(scope, key)  # no stored version can match it
            raise ConflictError(
                f"state {scope!r}/{key!r}: expected version {expected_version}, stored version "
                f"is {None if current is None else current.version}"
            )
        try:
            written, version = self._cas(
                keys=[self._state_key(scope, key)],
                args=["" if expected_version is None else str(expected_version), text],
            )
        except redis.RedisError as exc:
            raise StoreError(f"write_state failed on Redis: {exc}") from exc
        if not written:
            raise ConflictError(
                f"state {scope!r}/{key!r}: expected version {expected_version}, stored version "
                f"is {int(version) or None}"
            )
        return StateEntry(key, json.loads(text), int(version))

    # -- knowledge --------------------------------------------------------------------------------

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        text = self._dumps(fact.to_json(), "fact")
        try:
            self._client.hset(self._facts_key(scope), _raw(fact.subject), text)
        except redis.RedisError as exc:
            raise StoreError(f"put_fact failed on Redis: {exc}") from exc

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        try:
            stored = self._client.hget(self._facts_key(scope), _raw(subject))
        except redis.RedisError as exc:
            raise StoreError(f"get_fact failed on Redis: {exc}") from exc
        return None if stored is None else Fact.from_json(self._loads(stored, "fact"))

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`."""
        try:
            stored = self._scan_facts(self._facts_key(scope))
        except redis.RedisError as exc:
            raise StoreError(f"facts failed on Redis: {exc}") from exc
        found = [Fact.from_json(self._loads(v, "fact")) for v in stored.values()]
        return sorted(found, key=lambda f: f.subject)

    def _scan_facts(self, key: str) -> dict[bytes, bytes]:
        """Every field of the hash, by HSCAN (no HGETALL on big hashes), until the
        cursor comes back to 0."""
        found: dict[bytes, bytes] = {}
        cursor = 0
        while True:
            cursor, page = self._client.hscan(key, cursor, count=SCAN_COUNT)
            found.update(page)
            if cursor == 0:
                return found

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        try:
            return bool(self._client.hdel(self._facts_key(scope), _raw(subject)))
        except redis.RedisError as exc:
            raise StoreError(f"forget failed on Redis: {exc}") from exc


def make(**kwargs: str) -> KVRedisStore:
    """The store named by the URL's query: ``prefix`` (default ``kvredis:``) and
    ``url`` (default ``redis://127.0.0.1:6379/0``)."""
    return KVRedisStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
