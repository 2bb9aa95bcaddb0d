"""The ``redis://`` store against the Store contract and its own promises.

Needs a Redis server: ``MEMCONFORM_REDIS_URL`` (default
``redis://127.0.0.1:6379/0``). Without one the tests are skipped, except in CI
(``CI=true``), where they fail. Each run writes under a key prefix of its own
and deletes its keys at the end.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from memconform.adapters.redis import (
    DEFAULT_PREFIX,
    RedisStore,
    durable_from_config,
    open_redis,
    split_url,
)
from memconform.adapters.registry import StoreURLError, open_store
from memconform.contract import Capability, StoreError, UnsupportedValueError
from memconform.values import Message
from tests.adapters_support import (
    NO_ROW_POINT,
    StoreContract,
    check_store_features,
    check_writers,
    fresh,
    msg,
    read_in_new_process,
    require_server,
    rich_message,
    run_writers,
)

pytestmark = pytest.mark.redis

DEFAULT_URL = "redis://127.0.0.1:6379/0"


def _probe(url: str) -> None:
    import redis

    client = redis.Redis.from_url(split_url(url)[0], socket_connect_timeout=3)
    try:
        client.ping()
    finally:
        client.close()


def with_prefix(url: str, prefix: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "prefix"]
    return parts._replace(query=urlencode([*query, ("prefix", prefix)])).geturl()


def _delete(url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(split_url(url)[0])
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture(scope="module")
def server_url() -> str:
    return require_server("Redis", "MEMCONFORM_REDIS_URL", DEFAULT_URL, _probe)


@pytest.fixture(scope="module")
def redis_url(server_url: str) -> Iterator[str]:
    prefix = f"mct:{uuid.uuid4().hex[:12]}:"
    yield with_prefix(server_url, prefix)
    _delete(server_url, prefix)


@pytest.fixture(scope="module")
def opened_store(redis_url: str) -> Iterator[RedisStore]:
    store = open_redis(redis_url)
    yield store
    store.close()


class TestRedisContract(StoreContract):
    """Every rule of the Store contract."""


# -- exactness -------------------------------------------------------------------------------


def test_nul_and_negative_zero_are_kept_exactly(opened_store: RedisStore) -> None:
    t = fresh()
    batch = [
        Message(id="n\x00", role="user", text="a\x00b", parts=({"z": -0.0, "k\x00": "\x00"},)),
    ]
    opened_store.append(t, batch)
    back = opened_store.messages(t)
    assert back == batch
    assert str(back[0].parts[0]["z"]) == "-0.0"


@pytest.mark.parametrize(
    "bad",
    [
        Message(id="x", role="user", text="ok", parts=({"nan": float("nan")},)),
        Message(id="x", role="user", text="ok", metadata={"inf": float("inf")}),
        Message(id="x", role="user", text="ok", metadata={"s": "\ud800"}),
        Message(id="\udc00", role="user", text="ok"),
    ],
    ids=["nan", "inf", "surrogate-in-metadata", "surrogate-in-id"],
)
def test_values_that_are_not_json_text_are_refused_whole(
    opened_store: RedisStore, bad: Message
) -> None:
    t = fresh()
    with pytest.raises(UnsupportedValueError):
        opened_store.append(t, [msg("fine"), bad])
    assert opened_store.messages(t) == []


def test_thread_ids_with_key_syntax_stay_apart(opened_store: RedisStore) -> None:
    base = fresh()
    threads = [base, f"{base}}}:list", f"{base}}}:idx", f"{{{base}", f"{base}:unc"]
    for i, t in enumerate(threads):
        opened_store.append(t, [msg(f"m{i}")])
    for i, t in enumerate(threads):
        assert [m.id for m in opened_store.messages(t)] == [f"m{i}"]


def test_window_scans_past_many_uncommitted_messages(opened_store: RedisStore) -> None:
    t = fresh()
    opened_store.append(t, [msg("first"), msg("second")])
    opened_store.append(t, [msg(f"u{i}", committed=False) for i in range(600)])
    opened_store.append(t, [msg("last")])
    assert [m.id for m in opened_store.messages(t, 3)] == ["first", "second", "last"]
    assert len(opened_store.messages(t, include_uncommitted=True)) == 603
    opened_store.set_committed(t, [f"u{i}" for i in range(600)], True)
    assert [m.id for m in opened_store.messages(t, 2)] == ["u599", "last"]


# -- declarations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "durable"),
    [
        ({"appendonly": "yes"}, True),
        ({"appendonly": "YES "}, True),
        ({"appendonly": "no"}, False),
        ({"appendonly": "no", "save": "3600 1 300 100"}, False),
        ({}, False),
        (None, False),
    ],
)
def test_durable_only_with_the_append_only_file(
    config: dict[str, str] | None, durable: bool
) -> None:
    assert durable_from_config(config) is durable


def test_capabilities_follow_the_servers_persistence(
    opened_store: RedisStore, server_url: str
) -> None:
    import redis

    client = redis.Redis.from_url(split_url(server_url)[0], decode_responses=True)
    try:
        appendonly = client.config_get("appendonly").get("appendonly")
    finally:
        client.close()
    expected = {c.value for c in Capability}
    if appendonly != "yes":
        expected.discard("durable")
    assert opened_store.capabilities == frozenset(expected)
    assert f"appendonly={appendonly}" in opened_store.persistence


def test_split_url_takes_the_prefix_and_keeps_the_rest() -> None:
    assert split_url("redis://h:1/2?prefix=p:&socket_timeout=3") == (
        "redis://h:1/2?socket_timeout=3", "p:",
    )
    assert split_url("rediss://h/0")[1] == DEFAULT_PREFIX
    with pytest.raises(StoreURLError):
        split_url("http://h/0")


def test_registry_opens_redis_urls(redis_url: str) -> None:
    store: Any = open_store(redis_url)
    assert isinstance(store, RedisStore)
    store.close()


def test_prefixes_isolate_stores(opened_store: RedisStore, server_url: str) -> None:
    t = fresh()
    opened_store.append(t, [msg("a")])
    prefix = f"mct:{uuid.uuid4().hex[:12]}:"
    other = open_redis(with_prefix(server_url, prefix))
    try:
        assert other.messages(t) == []
        other.append(t, [msg("a")])
        assert [m.id for m in other.messages(t)] == ["a"]
    finally:
        other.close()
        _delete(server_url, prefix)


def test_unreachable_server_is_a_store_error_without_the_password() -> None:
    with pytest.raises(StoreError) as caught:
        open_redis("redis://:s3cret@127.0.0.1:1/0?socket_connect_timeout=2")
    assert "s3cret" not in str(caught.value)


def test_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(StoreURLError, match=r"memconform\[redis\]"):
        open_redis(DEFAULT_URL)


# -- concurrency and reopening -----------------------------------------------------------------


@pytest.mark.slow
def test_concurrent_writers_keep_batches_whole_and_in_order(
    opened_store: RedisStore, redis_url: str
) -> None:
    t = fresh()
    run_writers(redis_url, t, writers=4, batches=8, size=5)
    check_writers(opened_store.messages(t), writers=4, batches=8, size=5)


@pytest.mark.slow
def test_reads_by_another_process_show_whole_batches_while_a_writer_appends(
    redis_url: str,
) -> None:
    from memconform.steps.contract_checks import check_reads_during_writes

    for _attempt in range(3):  # a loaded machine may let no read fall inside the writes
        result = check_reads_during_writes(redis_url, fresh())
        if result.conclusive:
            break
    else:
        pytest.skip(f"inconclusive three times (the machine is loaded): {result.evidence}")
    assert result.passed, result.evidence
    # one Lua script per batch, no row point: judged by the polling reader only
    assert not result.deterministic
    assert "best effort: the store has no row point" in result.evidence


@pytest.mark.slow
def test_what_was_written_is_read_by_a_new_process(redis_url: str) -> None:
    t = fresh()
    store = open_redis(redis_url)
    store.append(t, [rich_message("a"), msg("b", committed=False)])
    store.close()
    assert read_in_new_process(redis_url, t) == [rich_message("a").to_json()]


def test_unknown_role_is_a_value_error_and_nothing_is_stored(opened_store: RedisStore) -> None:
    t = fresh()
    bad = Message(id="b", role="bot", text="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="role"):
        opened_store.append(t, [msg("a"), bad])
    assert opened_store.messages(t) == []


@pytest.mark.slow
def test_passes_the_store_features(redis_url: str, tmp_path: Path) -> None:
    check_store_features(redis_url, tmp_path, NO_ROW_POINT)
