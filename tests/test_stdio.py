"""The stdio adapter and the Python stdio server.

- The Python server over ``memory://``, reached through the adapter, keeps the
  whole Store contract, and its traffic matches the protocol's JSON Schema.
- A child that exits, prints garbage, answers the wrong id, answers a bad shape
  or never answers becomes ``AdapterContractError`` naming the method, the
  child is stopped, and this process goes on. Hangs end by the adapter's own
  timeout, set short here; nothing sleeps.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters.memory import MemoryStore
from memconform.adapters.registry import StoreURLError, open_store
from memconform.adapters.stdio import StdioStore, open_stdio
from memconform.adapters.stdio_server import StdioServer, error_kind, main
from memconform.contract import (
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
)
from memconform.harness.proxy import AdapterContractError, AdapterTimeoutError, RecordingStore
from memconform.values import Message
from tests.adapters_support import (
    NO_ROW_POINT,
    ROOT,
    SCHEMA_PATH,
    StoreContract,
    check_conversation,
    check_store_features,
    fresh,
    msg,
)

SERVER = [sys.executable, "-m", "memconform.adapters.stdio_server"]
FAKES = str(ROOT / "tests" / "stdio_fakes.py")


@pytest.fixture(scope="module")
def opened_store() -> Iterator[StdioStore]:
    store = StdioStore([*SERVER, "memory://"], timeout=30, cwd=ROOT)
    yield store
    store.close()


class TestStdioServerOverMemory(StoreContract):
    """The whole contract, through the adapter, the protocol and the server."""


def test_server_traffic_matches_the_protocol_schema() -> None:
    check_conversation([*SERVER, "memory://"])


def test_adapter_reports_what_the_child_declared(opened_store: StdioStore) -> None:
    assert opened_store.name == "MemoryStore"
    assert opened_store.capabilities == MemoryStore().capabilities
    assert opened_store.hooks == {"damage"}
    assert callable(opened_store.damage)


def test_a_child_declaring_no_hook_has_no_damage_hook() -> None:
    """ST-037 is then unsupported: the kit has no way to damage a row."""
    store = fake("die")
    try:
        assert store.hooks == frozenset()
        assert store.damage is None
    finally:
        store.close()


def test_open_stdio_splits_the_command_like_a_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCONFORM_STDIO_TIMEOUT", "15")
    url = f"stdio:{sys.executable} -m memconform.adapters.stdio_server 'memory://'"
    store: Any = open_store(url)
    try:
        assert isinstance(store, StdioStore)
        assert store.timeout == 15
        assert store.command[-1] == "memory://"
        t = fresh()
        store.append(t, [msg("a")])
        assert [m.id for m in store.messages(t)] == ["a"]
    finally:
        store.close()
    assert store.returncode == 0


@pytest.mark.parametrize("url", ["stdio:", "stdio:   ", "stdio:'unclosed"])
def test_open_stdio_refuses_a_missing_command(url: str) -> None:
    with pytest.raises(StoreURLError):
        open_stdio(url)


def test_bad_timeout_setting_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCONFORM_STDIO_TIMEOUT", "soon")
    with pytest.raises(StoreURLError, match="MEMCONFORM_STDIO_TIMEOUT"):
        open_stdio("stdio:true")


def test_closing_twice_is_harmless_and_calls_after_close_fail(opened_store: StdioStore) -> None:
    store = StdioStore([*SERVER, "memory://"], timeout=30, cwd=ROOT)
    store.close()
    store.close()
    assert store.returncode == 0
    with pytest.raises(AdapterContractError) as caught:
        store.messages("t")
    assert caught.value.method == "messages"


# -- broken children -------------------------------------------------------------------------


def fake(mode: str, timeout: float = 10) -> StdioStore:
    return StdioStore([sys.executable, FAKES, mode], timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("exit-at-once", "exited with status 3"),
        ("chatty", "not JSON"),
        ("wrong-protocol", "other/9"),
        ("bad-capabilities", "capabilities"),
        ("unknown-hook", "unknown hooks ['rewind']"),
    ],
)
def test_a_child_broken_at_hello_is_an_adapter_error(mode: str, problem: str) -> None:
    with pytest.raises(AdapterContractError) as caught:
        fake(mode)
    assert caught.value.method == "hello"
    assert problem in caught.value.problem


def test_the_childs_last_words_are_kept() -> None:
    with pytest.raises(AdapterContractError, match="gives up before saying anything"):
        fake("exit-at-once")


def test_a_command_that_cannot_start_is_an_adapter_error(tmp_path: Any) -> None:
    with pytest.raises(AdapterContractError) as caught:
        StdioStore([str(tmp_path / "no-such-program")])
    assert caught.value.method == "hello"


def test_a_child_silent_at_hello_times_out() -> None:
    with pytest.raises(AdapterTimeoutError) as caught:
        fake("silent-hello", timeout=0.5)
    assert caught.value.method == "hello"


@pytest.mark.parametrize(
    ("mode", "call", "method", "problem"),
    [
        ("die", lambda s: s.append("t", [msg("a")]), "append", "exited with status 5"),
        ("garbage", lambda s: s.messages("t"), "messages", "not JSON: this is not json"),
        ("wrong-id", lambda s: s.errors("t"), "errors", "answered id"),
        ("bad-shape", lambda s: s.messages("t"), "messages", "malformed"),
        ("not-a-list", lambda s: s.messages("t"), "messages", "expected an array"),
        ("both", lambda s: s.append("t", []), "append", "exactly one"),
        ("internal", lambda s: s.errors("t"), "errors", "NullPointerException"),
        ("unknown-kind", lambda s: s.errors("t"), "errors", "unknown error kind"),
        ("not-null", lambda s: s.append("t", []), "append", "expected null"),
    ],
)
def test_a_misbehaving_child_is_an_adapter_error_naming_the_method(
    mode: str, call: Any, method: str, problem: str
) -> None:
    store = fake(mode)
    try:
        with pytest.raises(AdapterContractError) as caught:
            call(store)
        assert caught.value.method == method
        assert problem in caught.value.problem
    finally:
        store.close()
    assert store.returncode is not None


def test_a_child_that_never_answers_is_stopped_after_the_timeout() -> None:
    store = fake("never-answers", timeout=0.5)
    with pytest.raises(AdapterTimeoutError) as caught:
        store.append("t", [msg("a")])
    assert caught.value.method == "append"
    assert "no answer within 0.5 s" in caught.value.problem
    assert store.returncode is not None  # stopped, not left hanging
    with pytest.raises(AdapterContractError, match="not sent") as again:
        store.messages("t")
    assert again.value.method == "messages"
    store.close()


def test_after_a_protocol_break_nothing_more_is_sent() -> None:
    store = fake("garbage")
    with pytest.raises(AdapterContractError):
        store.messages("t")
    with pytest.raises(AdapterContractError, match="stopped after messages") as caught:
        store.errors("t")
    assert caught.value.method == "errors"
    store.close()


def test_a_refusal_is_raised_and_the_session_goes_on() -> None:
    store = fake("refuse")
    try:
        with pytest.raises(StoreError, match="disk full") as caught:
            store.append("t", [msg("a")])
        assert not isinstance(caught.value, AdapterContractError)
        assert store.messages("t") == []
    finally:
        store.close()


def test_through_the_recording_proxy_a_hang_is_an_adapter_error_on_the_timeline() -> None:
    store = fake("never-answers", timeout=0.5)
    proxy = RecordingStore(store, timeout=10)
    try:
        with pytest.raises(AdapterContractError) as caught:
            proxy.messages("t")
        assert caught.value.method == "messages"
        entry = proxy.timeline.of("store", "messages")[0]
        assert entry.data["raised"]["type"] == "AdapterTimeoutError"
    finally:
        proxy.close()
        store.close()


# -- the server in-process -------------------------------------------------------------------


def _hello(server: StdioServer) -> None:
    hello = {"id": 1, "method": "hello", "params": {"protocol": "memconform.stdio/1"}}
    answer = server.handle(hello)
    assert answer["result"]["protocol"] == "memconform.stdio/1"


def test_server_requires_hello_first() -> None:
    server = StdioServer(MemoryStore())
    answer = server.handle({"id": 1, "method": "messages", "params": {"thread_id": "t"}})
    assert answer["error"]["kind"] == "internal"
    assert "hello" in answer["error"]["message"]


def test_server_refuses_another_protocol_version() -> None:
    server = StdioServer(MemoryStore())
    hello = {"id": 1, "method": "hello", "params": {"protocol": "memconform.stdio/2"}}
    answer = server.handle(hello)
    assert answer["error"]["kind"] == "internal"


@pytest.mark.parametrize(
    ("request_", "kind"),
    [
        ({"id": 2, "method": "nope", "params": {}}, "internal"),
        ({"id": 2, "method": "messages", "params": {}}, "value"),
        ({"id": 2, "method": "messages", "params": {"thread_id": "t", "limit": "3"}}, "value"),
        ({"id": 2, "method": "append", "params": {"thread_id": "t", "batch": [{"id": 1}]}},
         "value"),
        ({"id": 2, "method": "write_state", "params": {"scope": "s", "key": "k"}}, "value"),
        ({"id": 2, "method": "messages", "params": []}, "internal"),
        ({"method": "messages", "params": {}}, "internal"),
        ([1, 2], "internal"),
    ],
)
def test_server_answers_bad_requests_with_errors(request_: Any, kind: str) -> None:
    server = StdioServer(MemoryStore())
    _hello(server)
    assert server.handle(request_)["error"]["kind"] == kind


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (DuplicateIdError("x"), "duplicate-id"),
        (ConflictError("x"), "conflict"),
        (UnsupportedValueError("x"), "unsupported-value"),
        (StoreError("x"), "store"),
        (KeyError("x"), "key"),
        (ValueError("x"), "value"),
        (TypeError("x"), "internal"),
        (RuntimeError("x"), "internal"),
    ],
)
def test_error_kinds(exc: Exception, kind: str) -> None:
    assert error_kind(exc) == kind


class _AsyncStore:
    """A store whose methods are coroutines (the contract allows it)."""

    def __init__(self) -> None:
        self.inner = MemoryStore()
        self.closed = False

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset()

    async def append(self, thread_id: str, batch: list[Message]) -> None:
        self.inner.append(thread_id, batch)

    async def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        return self.inner.messages(thread_id, limit)

    async def close(self) -> None:
        self.closed = True


def test_server_awaits_async_stores_and_closes_them() -> None:
    store = _AsyncStore()
    server = StdioServer(store)
    _hello(server)
    batch = [msg("a").to_json()]
    appended = server.handle(
        {"id": 2, "method": "append", "params": {"thread_id": "t", "batch": batch}}
    )
    assert appended == {"id": 2, "result": None}
    answer = server.handle({"id": 3, "method": "messages",
                            "params": {"thread_id": "t", "limit": None,
                                       "include_uncommitted": False}})
    assert answer == {"id": 3, "result": batch}
    assert server.handle({"id": 4, "method": "close", "params": {}}) == {"id": 4, "result": None}
    assert store.closed


def test_server_main_without_a_url_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err


def test_server_main_with_a_bad_url_fails_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nope://"]) == 1
    assert "cannot open the store" in capsys.readouterr().err


def test_open_stdio_accepts_the_double_slash_form() -> None:
    store = open_stdio(f"stdio://{sys.executable} -m memconform.adapters.stdio_server memory://")
    store.close()
    assert store.command[0] == sys.executable


@pytest.mark.slow
def test_python_server_over_memory_passes_the_store_features(tmp_path: Path) -> None:
    check_store_features(
        f"stdio:{shlex.join([*SERVER, 'memory://'])}", tmp_path, NO_ROW_POINT
    )


@pytest.mark.slow
def test_python_server_over_sqlite_shows_other_processes_whole_batches(tmp_path: Path) -> None:
    """ST-036 through stdio: the server child writes, out of reach of the kit's
    row point, so the polling reader alone judges it (best effort)."""
    from memconform.steps.contract_checks import check_reads_during_writes

    db = tmp_path / "s.db"
    url = f"stdio:{shlex.join([*SERVER, f'sqlite:///{db}'])}"
    result = check_reads_during_writes(url, "r")
    assert result.adapter_error is None, result.evidence
    assert result.passed or not result.conclusive, result.evidence
    assert "best effort: the store has no row point" in result.evidence


@pytest.mark.parametrize(
    ("line", "valid"),
    [
        ({"id": 1, "result": None}, True),
        ({"id": 1, "error": {"kind": "conflict", "message": "stale"}}, True),
        ({"id": None, "error": {"kind": "internal", "message": "not JSON"}}, True),
        ({"id": 1, "result": None, "error": {"kind": "store", "message": "x"}}, False),
        ({"id": 1}, False),
        ({"id": 1, "error": {"kind": "oops", "message": "x"}}, False),
        ({"id": 2, "method": "messages",
          "params": {"thread_id": "t", "limit": None, "include_uncommitted": False}}, True),
        ({"id": 2, "method": "messages", "params": {"thread_id": "t"}}, False),
        ({"id": 2, "method": "compact", "params": {}}, False),
        ({"id": 2, "method": "append", "params": {"thread_id": "t", "batch": [{"id": "a"}]}},
         False),
    ],
)
def test_the_protocol_schema_tells_good_lines_from_bad(line: Any, valid: bool) -> None:
    import jsonschema  # type: ignore[import-untyped]

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(line))
    assert (not errors) is valid, errors
