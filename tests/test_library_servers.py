"""The server URLs of the library stores' production backends: a schema or key
prefix of the run's own, and a clean-up that removes exactly it."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from memconform.adapters.libraries.servers import drop, postgresql_target, redis_target
from memconform.adapters.registry import StoreURLError
from memconform.compliance import TARGETS

SCHEME = "openai-agents+postgresql"


def test_a_postgresql_url_names_the_server_and_the_schema() -> None:
    url = f"{SCHEME}://postgres@127.0.0.1:5432/test?sslmode=disable&schema=mcl_ab12"
    assert postgresql_target(url, SCHEME) == (
        "postgresql://postgres@127.0.0.1:5432/test?sslmode=disable", "mcl_ab12"
    )


@pytest.mark.parametrize(
    "url",
    [
        f"{SCHEME}://postgres@127.0.0.1:5432/test",
        f"{SCHEME}://postgres@127.0.0.1:5432/test?schema=",
        f"{SCHEME}://postgres@127.0.0.1:5432/test?schema=Upper",
        f"{SCHEME}://postgres@127.0.0.1:5432/test?schema=a;drop",
        f"{SCHEME}://postgres@127.0.0.1:5432/test?schema=a&schema=b",
        "langgraph+postgresql://postgres@127.0.0.1:5432/test?schema=a",
    ],
)
def test_a_postgresql_url_without_one_plain_schema_is_refused(url: str) -> None:
    with pytest.raises(StoreURLError):
        postgresql_target(url, SCHEME)


def test_a_redis_url_names_the_server_and_the_prefix() -> None:
    url = "openai-agents+redis://127.0.0.1:6379/0?prefix=mcl:x1:"
    assert redis_target(url, "openai-agents+redis") == ("redis://127.0.0.1:6379/0", "mcl:x1:")
    with pytest.raises(StoreURLError):
        redis_target("openai-agents+redis://127.0.0.1:6379/0", "openai-agents+redis")


def test_every_server_target_gets_a_name_of_its_own_per_run() -> None:
    servers = [t for t in TARGETS if t.server]
    assert servers
    for target in servers:
        first = target.store_url(Path("/x"), "aaa")
        second = target.store_url(Path("/x"), "bbb")
        assert first != second, target.name
        assert "{" not in first, target.name


@pytest.mark.redis
def test_dropping_a_redis_prefix_removes_only_its_keys() -> None:
    redis = pytest.importorskip("redis")
    from tests.adapters_support import require_server
    from tests.test_redis_store import DEFAULT_URL, _probe

    server = require_server("Redis", "MEMCONFORM_REDIS_URL", DEFAULT_URL, _probe)
    prefix = f"mct:{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(server)
    try:
        client.set(f"{prefix}:a", "1")
        client.set(f"{prefix}:b*", "2")
        client.set(f"{prefix}x:c", "3")
        drop(f"openai-agents+redis://{server.split('://', 1)[1]}?prefix={prefix}:")
        assert client.exists(f"{prefix}:a", f"{prefix}:b*") == 0
        assert client.get(f"{prefix}x:c") == b"3"
    finally:
        client.delete(f"{prefix}x:c")
        client.close()
