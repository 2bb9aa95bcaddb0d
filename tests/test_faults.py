"""Fault injection: the row point, the wrappers and the SQLite abort trigger."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memconform.adapters.memory import MemoryStore
from memconform.adapters.sqlite import SQLiteStore
from memconform.contract import StoreError
from memconform.harness.faults import (
    DelayingStore,
    FailNthAppend,
    HangingStore,
    InjectedFault,
    arm_row_fault,
    batch_row_pause,
    disarm_row_fault,
    install_sqlite_abort_trigger,
    remove_sqlite_abort_trigger,
    row_fault_fired,
)
from memconform.harness.proxy import AdapterTimeoutError, RecordingStore
from memconform.values import Message


def _batch(n: int, prefix: str = "m") -> list[Message]:
    return [Message(id=f"{prefix}{i}", role="user", text=f"text {i}") for i in range(n)]


@pytest.fixture(params=["memory", "sqlite"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    if request.param == "memory":
        yield MemoryStore()
        return
    store = SQLiteStore(tmp_path / "faults.db")
    yield store
    store.close()


def test_row_point_does_nothing_unarmed() -> None:
    for _ in range(5):
        batch_row_pause()
    assert not disarm_row_fault()


def test_row_fault_fires_once_at_the_armed_row() -> None:
    arm_row_fault(2)
    batch_row_pause()
    batch_row_pause()
    with pytest.raises(InjectedFault):
        batch_row_pause()
    assert row_fault_fired()
    batch_row_pause()  # disarmed after firing
    assert disarm_row_fault()


def test_arming_rejects_a_negative_row() -> None:
    with pytest.raises(ValueError, match="at_row"):
        arm_row_fault(-1)


@pytest.mark.parametrize("row", [0, 1, 2])
def test_built_in_stores_leave_nothing_when_failing_mid_batch(any_store: object, row: int) -> None:
    store: object = any_store
    store.append("t", _batch(2, "old"))  # type: ignore[attr-defined]
    arm_row_fault(row)
    with pytest.raises(InjectedFault):
        store.append("t", _batch(3))  # type: ignore[attr-defined]
    assert disarm_row_fault()
    assert [m.id for m in store.messages("t")] == ["old0", "old1"]  # type: ignore[attr-defined]


def test_fail_nth_append_fails_only_the_nth_call_in_the_middle(any_store: object) -> None:
    store = FailNthAppend(any_store, 2)
    store.append("t", _batch(2, "a"))
    with pytest.raises(StoreError):
        store.append("t", _batch(4, "b"))
    store.append("t", _batch(1, "c"))
    assert not store.missed
    assert [m.id for m in store.messages("t")] == ["a0", "a1", "c0"]


def test_fail_nth_append_before_the_store_writes_nothing(any_store: object) -> None:
    store = FailNthAppend(any_store, 1, where="before")
    with pytest.raises(InjectedFault, match="before reaching"):
        store.append("t", _batch(2))
    assert store.messages("t") == []


def test_fail_nth_append_reports_a_store_without_row_point() -> None:
    class Opaque(MemoryStore):
        def append(self, thread_id: str, batch: object) -> None:
            self._messages.setdefault(thread_id, []).extend(batch)  # type: ignore[arg-type]

    store = FailNthAppend(Opaque(), 1)
    store.append("t", _batch(2))
    assert store.missed


def test_fail_nth_append_validates_arguments() -> None:
    with pytest.raises(ValueError, match="from 1"):
        FailNthAppend(MemoryStore(), 0)
    with pytest.raises(ValueError, match="where"):
        FailNthAppend(MemoryStore(), 1, where="after")


def test_delaying_store_waits_for_its_gate() -> None:
    store = DelayingStore(MemoryStore(), methods=("append",))
    done = threading.Event()

    def writer() -> None:
        store.append("t", _batch(1))
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    store.waiting.acquire()  # the call has reached the gate
    assert not done.is_set()
    assert store.messages("t") == []  # other methods pass straight through
    store.release()
    thread.join()
    assert [m.id for m in store.messages("t")] == ["m0"]


def test_hanging_store_times_out_behind_the_proxy() -> None:
    hanging = HangingStore(MemoryStore(), methods=("messages",))
    proxy = RecordingStore(hanging, timeout=0.05)
    proxy.append("t", _batch(1))
    with pytest.raises(AdapterTimeoutError, match="messages: did not return"):
        proxy.messages("t")
    with pytest.raises(AdapterTimeoutError, match="hung earlier"):
        proxy.append("t", _batch(1, "x"))
    hanging.release()
    proxy.close()


def test_sqlite_abort_trigger_rolls_back_the_whole_batch(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "trigger.db")
    store.append("t", _batch(1, "old"))
    install_sqlite_abort_trigger(tmp_path / "trigger.db", "POISON")
    batch = _batch(3)
    batch[1] = Message(id="m1", role="user", text="POISON")
    with pytest.raises(StoreError, match="injected"):
        store.append("t", batch)
    assert [m.id for m in store.messages("t")] == ["old0"]
    remove_sqlite_abort_trigger(tmp_path / "trigger.db")
    store.append("t", batch)
    assert [m.id for m in store.messages("t")] == ["old0", "m0", "m1", "m2"]
    store.close()


def test_a_refusing_store_refuses_what_it_is_told_and_stores_nothing_of_it() -> None:
    from memconform.harness.faults import RefusingStore
    from memconform.values import ErrorRecord

    inner = MemoryStore()
    store = RefusingStore(inner, appends={2}, methods={"record_error"})
    store.append("t", _batch(1, "a"))
    with pytest.raises(StoreError) as refused:
        store.append("t", _batch(1, "b"))
    assert not isinstance(refused.value, InjectedFault)  # the contract's own refusal
    store.append("t", _batch(1, "c"))
    with pytest.raises(StoreError):
        store.record_error("t", ErrorRecord(run_id="r", error={"type": "E", "message": "m"}))
    assert [m.id for m in inner.messages("t")] == ["a0", "c0"]
    assert inner.errors("t") == []
