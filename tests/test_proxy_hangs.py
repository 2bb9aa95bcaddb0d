"""The recording proxy with a hung or raising adapter: the session's hang guard
and the mark that says an exception came out of the adapter."""

from __future__ import annotations

import gc
from collections.abc import Mapping
from typing import Any

import pytest

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import ScriptError
from memconform.harness.faults import HangingStore
from memconform.harness.proxy import (
    AdapterContractError,
    AdapterTimeoutError,
    HangGuard,
    RecordingStore,
    raised_by_adapter,
)
from memconform.harness.runtime import SCRIPT_SCHEMA, observe
from memconform.simulator.runtime import Simulator
from memconform.values import Message


def _batch(prefix: str) -> list[Message]:
    return [Message(id=f"{prefix}1", role="user", text="hello")]


def test_the_guard_stops_after_the_limit_of_timeouts_in_a_row_of_one_method() -> None:
    guard = HangGuard(3)
    guard.timed_out("messages", 30)
    guard.timed_out("messages", 30)
    guard.returned("append")  # another method returning does not break the run of hangs
    assert guard.stopped is None
    guard.timed_out("messages", 30)
    assert guard.stopped == (
        "the kit stopped calling the store after messages did not return within 30 s "
        "3 times in a row"
    )


def test_a_return_of_the_method_starts_its_count_again() -> None:
    guard = HangGuard(2)
    guard.timed_out("messages", 1)
    guard.returned("messages")
    guard.timed_out("messages", 1)
    assert guard.stopped is None


def test_a_limit_of_zero_never_stops_and_a_negative_one_is_refused() -> None:
    guard = HangGuard(0)
    for _ in range(10):
        guard.timed_out("append", 1)
    assert guard.stopped is None
    with pytest.raises(ValueError, match="limit"):
        HangGuard(-1)


def test_proxies_sharing_a_guard_stop_calling_a_hung_store() -> None:
    hanging = HangingStore(MemoryStore(), methods=("messages",))
    guard = HangGuard(2)
    proxies = []
    try:
        for n in range(2):
            # the timeout only bounds the hangs: nothing else here waits on it
            proxy = RecordingStore(hanging, timeout=1.0, hangs=guard)
            proxies.append(proxy)
            with pytest.raises(AdapterTimeoutError, match="did not return"):
                proxy.messages(f"t{n}")
        assert guard.stopped is not None
        later = RecordingStore(hanging, timeout=1.0, hangs=guard)  # declared once a session
        proxies.append(later)
        assert later.capabilities == proxies[0].capabilities
        with pytest.raises(AdapterTimeoutError, match="not called: the kit stopped calling"):
            later.messages("t8")
        with pytest.raises(AdapterTimeoutError, match="not called: the kit stopped calling"):
            proxies[0].append("t9", _batch("x"))
    finally:
        hanging.release()
        for proxy in proxies:
            proxy.close()


class _KeyErrorStore(MemoryStore):
    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        raise KeyError(thread_id)


def test_an_exception_out_of_the_store_passes_unchanged_and_marked() -> None:
    proxy = RecordingStore(_KeyErrorStore())
    with pytest.raises(KeyError) as caught:
        proxy.messages("t")
    assert raised_by_adapter(caught.value) == "messages"
    assert raised_by_adapter(KeyError("raised by the kit")) is None
    proxy.close()


class _Broken:
    profiles = frozenset({"turns"})

    def __init__(self, answer: Any = None, exc: Exception | None = None) -> None:
        self.answer = answer
        self.exc = exc

    def execute(self, script: Mapping[str, Any], env: object) -> Any:
        if self.exc is not None:
            raise self.exc
        return self.answer


def _script() -> dict[str, Any]:
    return {"schema": SCRIPT_SCHEMA, "profile": "turns"}


def test_what_a_runtime_raises_is_the_adapters_and_a_wrong_answer_a_contract_error() -> None:
    proxy = RecordingStore(MemoryStore())
    with pytest.raises(LookupError) as caught:
        observe(_Broken(exc=LookupError("boom")), _script(), proxy)
    assert raised_by_adapter(caught.value) == "execute"
    with pytest.raises(AdapterContractError, match="execute: returned list"):
        observe(_Broken(answer=[]), _script(), proxy)
    proxy.close()


def test_what_the_reference_simulator_raises_stays_the_kits() -> None:
    proxy = RecordingStore(MemoryStore())
    with pytest.raises(ScriptError) as caught:
        observe(Simulator(), {"schema": SCRIPT_SCHEMA, "profile": "nope"}, proxy)
    assert raised_by_adapter(caught.value) is None
    proxy.close()


def test_a_large_batch_gets_one_timeout_per_started_thousand_messages() -> None:
    hanging = HangingStore(MemoryStore(), methods=("append",))
    small = RecordingStore(hanging, timeout=0.05)
    large = RecordingStore(hanging, timeout=0.05)
    batch = [Message(id=f"m{n}", role="user", text="hello") for n in range(2001)]
    try:
        with pytest.raises(AdapterTimeoutError, match=r"within 0\.05 s"):
            small.append("t1", batch[:1000])
        with pytest.raises(AdapterTimeoutError, match=r"within 0\.15 s"):
            large.append("t2", batch)
    finally:
        hanging.release()
        small.close()
        large.close()


class _Unreadable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str failed")


class _Raising(MemoryStore):
    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        raise self.exc


@pytest.mark.parametrize(("exc", "complaint"), [
    (_Unreadable(), "raised _Unreadable whose message cannot be read"),
    (SystemExit(0), "raised SystemExit, which only the kit's own process may raise"),
    (KeyboardInterrupt(), "raised KeyboardInterrupt, which only the kit's own process"),
], ids=["unprintable", "system-exit", "keyboard-interrupt"])
def test_what_no_store_may_raise_is_the_adapters_error(
    exc: BaseException, complaint: str
) -> None:
    proxy = RecordingStore(_Raising(exc), timeout=5)
    try:
        with pytest.raises(AdapterContractError, match=r"^messages: ") as raised:
            proxy.messages("t")
        assert complaint in str(raised.value)
    finally:
        proxy.close()


def test_a_store_given_the_id_of_a_store_gone_is_read_afresh() -> None:
    """The guard remembers each store's declaration by identity; a later store
    that CPython gives the same ``id`` (the first one collected) declares its
    own capabilities, never the earlier store's."""
    class Declaring:
        def __init__(self, capabilities: frozenset[str]) -> None:
            self.capabilities = capabilities
            self.inner = MemoryStore()

        def append(self, thread_id: str, batch: object) -> None:
            pass

        def messages(self, thread_id: str, limit: int | None = None) -> list[object]:
            return []

        def record_error(self, thread_id: str, record: object) -> None:
            pass

        def errors(self, thread_id: str) -> list[object]:
            return []

    guard = HangGuard()
    for n in range(100):
        wanted = frozenset({"errors"}) if n % 2 == 0 else frozenset()
        store = Declaring(wanted)
        proxy = RecordingStore(store, hangs=guard)
        try:
            assert proxy.capabilities == wanted, n
        finally:
            proxy.close()
        del store, proxy
        gc.collect()
