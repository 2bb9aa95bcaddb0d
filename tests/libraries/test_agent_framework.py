"""The Microsoft Agent Framework adapter: how messages become framework messages
in a history provider and back."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("agent_framework", reason="needs the agent-framework extra")

from memconform.adapters.libraries.agent_framework import (
    EXTRA_KEY,
    AgentFrameworkStore,
    message_fields,
    message_from_framework,
    open_in_memory_history,
    open_redis_history,
)
from memconform.adapters.libraries.servers import drop
from memconform.adapters.registry import StoreURLError, open_store
from memconform.contract import Capability
from memconform.values import Message
from tests.libraries.messages import FULL
from tests.libraries.messages import ids as _ids
from tests.libraries.messages import numbered as _msgs

REDIS_DEFAULT = "redis://127.0.0.1:6379/0"


def _redis_url() -> str:
    """A Redis URL with a prefix of this test's own (skips without a server)."""
    from tests.adapters_support import require_server
    from tests.test_redis_store import _probe

    server = require_server("Redis", "MEMCONFORM_REDIS_URL", REDIS_DEFAULT, _probe)
    return f"agent-framework+redis://{server.split('://', 1)[1]}?prefix=mct-{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "memory":
        yield "agent-framework+memory://"
        return
    made = _redis_url()
    yield made
    drop(made)


@pytest.fixture
def store(url: str) -> Iterator[AgentFrameworkStore]:
    opened = open_store(url)
    assert isinstance(opened, AgentFrameworkStore)
    yield opened
    opened.close()


# -- translation ----------------------------------------------------------------------


def test_a_message_becomes_a_framework_message_with_its_id_role_text_and_extra() -> None:
    store = open_in_memory_history("agent-framework+memory://")
    try:
        framework = store.framework_message(FULL)
    finally:
        store.close()
    assert framework.message_id == "full-1"
    assert framework.role == "assistant"
    assert framework.text == FULL.text
    assert [c.type for c in framework.contents] == ["text"]
    assert framework.additional_properties[EXTRA_KEY] == {
        "parts": [dict(p) for p in FULL.parts],
        "run_id": "run-42",
        "round": 7,
        "turn_id": "T3",
        "committed": True,
        "metadata": dict(FULL.metadata),
    }
    assert message_from_framework(framework) == FULL


@pytest.mark.parametrize("role", ["user", "assistant", "tool", "system"])
def test_every_role_is_the_framework_role(role: str) -> None:
    message = Message(id="r", role=role, text="t")  # type: ignore[arg-type]
    assert message_fields(message)["role"] == role
    from agent_framework import Message as FrameworkMessage

    assert message_from_framework(FrameworkMessage(**message_fields(message))) == message


def test_a_framework_message_without_kit_data_reads_as_a_plain_message() -> None:
    from agent_framework import Message as FrameworkMessage

    plain = FrameworkMessage("assistant", ["Hello"], message_id="m1")
    assert message_from_framework(plain) == Message(id="m1", role="assistant", text="Hello")


# -- the store ------------------------------------------------------------------------


def test_capabilities_provisions_and_version(store: AgentFrameworkStore, url: str) -> None:
    assert "agent-framework-core==" in store.version
    assert store.provides == {"window"}  # the adapter slices the newest N
    if url.startswith("agent-framework+memory"):
        assert store.capabilities == frozenset()
    else:
        assert store.capabilities == {
            Capability.DURABLE, Capability.ATOMIC_BATCH, Capability.CONCURRENT_WRITERS
        }
        assert "agent-framework-redis==" in store.version


def test_every_field_comes_back(store: AgentFrameworkStore) -> None:
    plain = Message(id="p", role="tool", text="")
    store.append("t", [FULL, plain])
    assert store.messages("t") == [FULL, plain]


def test_the_window_is_a_slice_of_the_whole_history(store: AgentFrameworkStore) -> None:
    store.append("t", _msgs("a", 3))
    store.append("t", _msgs("b", 2, "assistant"))
    assert _ids(store.messages("t")) == ["a0", "a1", "a2", "b0", "b1"]
    assert _ids(store.messages("t", 2)) == ["b0", "b1"]
    assert _ids(store.messages("t", 9)) == ["a0", "a1", "a2", "b0", "b1"]
    assert store.messages("t", 0) == []
    with pytest.raises(ValueError, match=">= 0"):
        store.messages("t", -1)


def test_unknown_thread_and_empty_batch(store: AgentFrameworkStore) -> None:
    assert store.messages("never") == []
    store.append("empty", [])
    assert store.messages("empty") == []


def test_threads_are_sessions_and_stay_apart(store: AgentFrameworkStore) -> None:
    store.append("A", _msgs("m", 2))
    store.append("B", [Message(id="m0", role="assistant", text="other thread, same id")])
    assert [m.text for m in store.messages("A")] == ["m 0", "m 1"]
    assert [m.text for m in store.messages("B")] == ["other thread, same id"]


def test_a_read_hands_out_what_the_provider_returns(store: AgentFrameworkStore, url: str) -> None:
    store.append("t", [FULL])
    first = store.messages("t")
    first[0].metadata["source"] = "changed"  # type: ignore[index]
    first.clear()
    again = store.messages("t")
    if url.startswith("agent-framework+redis"):
        assert again == [FULL]  # each read parses fresh messages from JSON
    else:
        # the in-memory provider returns its stored Message objects, and the adapter
        # copies nothing: the change reaches the history (a finding, kept as found)
        assert dict(again[0].metadata)["source"] == "changed"


def test_calls_from_threads_with_their_own_loops(store: AgentFrameworkStore) -> None:
    errors: list[BaseException] = []

    def call(i: int) -> None:
        async def inside_a_loop() -> None:
            store.append(f"loop-{i}", _msgs(f"l{i}-", 2))
            assert len(store.messages(f"loop-{i}")) == 2

        try:
            asyncio.run(inside_a_loop())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_close_is_final_and_repeatable(url: str) -> None:
    store = open_store(url)
    assert isinstance(store, AgentFrameworkStore)
    store.close()
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.messages("t")


# -- what the providers do with ids (library behaviour, kept as found) ------------------


def test_a_batch_starting_with_the_last_stored_id_drops_it(store: AgentFrameworkStore) -> None:
    store.append("t", _msgs("m", 2))
    store.append("t", [Message(id="m1", role="user", text="again"), *_msgs("n", 1)])
    assert [(m.id, m.text) for m in store.messages("t")] == [
        ("m0", "m 0"), ("m1", "m 1"), ("n0", "n 0")
    ]


def test_a_batch_holding_the_stored_ids_keeps_only_what_follows_them(
    store: AgentFrameworkStore,
) -> None:
    store.append("t", _msgs("m", 1))
    store.append("t", [*_msgs("x", 2), Message(id="m0", role="user", text="again"),
                       *_msgs("y", 1)])
    assert _ids(store.messages("t")) == ["m0", "y0"]


def test_an_id_repeated_elsewhere_is_stored_again(store: AgentFrameworkStore) -> None:
    store.append("t", _msgs("m", 2))
    store.append("t", [Message(id="m0", role="user", text="again")])
    assert _ids(store.messages("t")) == ["m0", "m1", "m0"]


# -- Redis ----------------------------------------------------------------------------


@pytest.mark.redis
def test_the_redis_history_is_one_json_list_per_session_under_the_prefix() -> None:
    import redis

    made = _redis_url()
    prefix = made.rsplit("prefix=", 1)[1]
    store = open_redis_history(made)
    try:
        store.append("t", _msgs("m", 2))
        server = made.split("?", 1)[0].replace("agent-framework+redis", "redis", 1)
        client = redis.Redis.from_url(server, decode_responses=True)
        try:
            keys = list(client.scan_iter(match=f"{prefix}*"))
            assert len(keys) == 1
            stored = [json.loads(item) for item in client.lrange(keys[0], 0, -1)]
        finally:
            client.close()
        assert [item["message_id"] for item in stored] == ["m0", "m1"]
    finally:
        store.close()
        drop(made)


@pytest.mark.redis
def test_a_new_process_reads_what_was_written() -> None:
    made = _redis_url()
    store = open_redis_history(made)
    try:
        store.append("t", [FULL])
    finally:
        store.close()
    script = (
        "import sys, json\n"
        "from memconform.adapters.registry import open_store\n"
        "store = open_store(sys.argv[1])\n"
        "print(json.dumps([m.to_json() for m in store.messages('t')]))\n"
        "store.close()\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, made], capture_output=True, text=True,
            timeout=120, check=True, env=dict(os.environ),
        )
    finally:
        drop(made)
    assert [Message.from_json(m) for m in json.loads(done.stdout)] == [FULL]


# -- factories ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["memory://", "agent-framework+memory://x", "agent-framework+memory:"]
)
def test_bad_memory_urls_are_refused(bad: str) -> None:
    with pytest.raises(StoreURLError):
        open_in_memory_history(bad)


@pytest.mark.parametrize(
    "bad",
    [
        "redis://127.0.0.1:6379/0?prefix=p",
        "agent-framework+redis://127.0.0.1:6379/0",
        "agent-framework+redis://127.0.0.1:6379/0?prefix=",
        "agent-framework+redis://127.0.0.1:6379/0?prefix=Upper",
        "agent-framework+redis://127.0.0.1:6379/0?prefix=a:b",
        "agent-framework+redis://127.0.0.1:6379/0?prefix=.dot",
        "agent-framework+redis://127.0.0.1:6379/0?prefix=dot.",
        "agent-framework+redis:///0?prefix=p",
    ],
)
def test_bad_redis_urls_are_refused(bad: str) -> None:
    with pytest.raises(StoreURLError):
        open_redis_history(bad)


@pytest.mark.parametrize(
    ("missing", "opener", "target"),
    [
        ("agent_framework", open_in_memory_history, "agent-framework+memory://"),
        ("agent_framework_redis", open_redis_history,
         "agent-framework+redis://127.0.0.1:6379/0?prefix=p"),
    ],
)
def test_a_missing_library_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, missing: str, opener: Any, target: str
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(StoreURLError, match=r"memconform\[agent-framework\]"):
        opener(target)


def test_the_module_imports_without_the_library() -> None:
    script = (
        "import sys\n"
        "sys.modules['agent_framework'] = None\n"
        "import memconform.adapters.libraries.agent_framework as m\n"
        "try:\n"
        "    m.open_in_memory_history('agent-framework+memory://')\n"
        "except m.StoreURLError as exc:\n"
        "    print('refused:', exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "refused:" in done.stdout
    assert "pip install 'memconform[agent-framework]'" in done.stdout


# -- damage (ST-037) --------------------------------------------------------------------


@pytest.mark.redis
def test_the_damage_hook_makes_the_middle_item_unreadable_and_reads_say_so() -> None:
    from memconform.contract import StoreError

    made = _redis_url()
    store = open_redis_history(made)
    try:
        store.append("t", _msgs("m", 3))
        store.damage("t")
        with pytest.raises(StoreError, match="JSONDecodeError"):
            store.messages("t")
        with pytest.raises(StoreError):
            store.messages("t", 1)
        with pytest.raises(StoreError, match="no message"):
            store.damage("empty")
    finally:
        store.close()
        drop(made)


def test_the_in_memory_store_has_no_damage_hook() -> None:
    store = open_in_memory_history("agent-framework+memory://")
    try:
        assert not hasattr(store, "damage")
    finally:
        store.close()
