"""Steps of the ``store`` profile that append messages: tables, empty and
faulted batches, timestamps, duplicate ids, counts
(``features/store/append.feature``).
"""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from memconform.harness.faults import arm_row_fault, disarm_row_fault
from memconform.harness.proxy import RecordingStore
from memconform.steps.common import Mismatch, expect_equal, inconclusive
from memconform.steps.store_world import (
    TEXT_SAMPLES,
    StoreScene,
    append_batch,
    attempt,
    expect_ids,
    read_thread,
)
from memconform.values import Message


def _table_messages(datatable: list[list[str]]) -> list[Message]:
    header, *rows = datatable
    out = []
    for row in rows:
        cells = dict(zip(header, row, strict=True))
        out.append(
            Message(
                id=cells["id"],
                role=cells.get("role", "user"),  # type: ignore[arg-type]
                text=cells.get("text", ""),
                committed=cells.get("committed", "yes") == "yes",
            )
        )
    return out


@when(parsers.parse('store thread "{name}" is appended the batch:'))
def _append_table(
    store: RecordingStore, store_scene: StoreScene, name: str, datatable: list[list[str]]
) -> None:
    append_batch(store, store_scene, name, _table_messages(datatable))


@when(parsers.parse('store thread "{name}" is appended an empty batch'))
def _append_empty(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    append_batch(store, store_scene, name, [])


@when(
    parsers.parse(
        'a batch of {count:d} messages is appended to store thread "{name}" despite the fault'
    )
)
def _append_faulted(store: RecordingStore, store_scene: StoreScene, name: str, count: int) -> None:
    batch = [Message(id=f"f{i}", role="assistant", text=f"doomed {i}") for i in range(1, count + 1)]
    row = store_scene.fault_row
    if store_scene.fault_mode == "refused value":
        batch[row] = Message(
            id=f"f{row + 1}", role="assistant", text=TEXT_SAMPLES["lone surrogate"]
        )
        attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))
        if store_scene.raised is None:
            inconclusive(
                "the store passes no rows through the kit's row point and kept the value "
                "planted to fail the batch, so no failure could be injected in the middle of "
                "its batch (the SIGKILL check of ST-034 judges that across processes)",
                rules=["ST-016"],
            )
        planted = {m.id for m in batch}
        left = [m for m in read_thread(store, store_scene.thread(name)) if m.id in planted]
        if not left:
            # a partial batch fails in the steps that follow; an empty one proves nothing
            inconclusive(
                f"the store passes no rows through the kit's row point; it refused the value "
                f"planted at row {row} and kept nothing of the batch, but it may have refused "
                "before writing any row, so no failure was injected in the middle of its batch "
                "(the SIGKILL check of ST-034 judges that across processes)",
                rules=["ST-016"],
            )
        return
    arm_row_fault(row)
    try:
        attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))
    finally:
        fired = disarm_row_fault()
    if not fired and store_scene.raised is None:
        raise Mismatch(
            "the fault injected at the row point",
            f"the append to fail before row {row}",
            "the store passed fewer rows through its row point than the batch holds",
        )


def _stamped(prefix: str, hour: int) -> list[Message]:
    # ids, rounds and every caller timestamp run against the append order
    return [
        Message(
            id=f"{prefix}{i}",
            role="user",
            text=f"stamped {prefix}{i}",
            round=i,
            metadata={
                "timestamp": f"2026-01-01T{hour:02d}:0{i}:00Z",
                "created_at": f"2026-01-01T{hour:02d}:0{i}:00Z",
                "ts": hour * 100 + i,
                "seq": i,
            },
        )
        for i in (3, 2, 1)
    ]


@when(
    parsers.parse(
        'store thread "{name}" is appended 3 messages stamped with decreasing caller timestamps'
    )
)
def _append_stamped(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    append_batch(store, store_scene, name, _stamped("t", 12))


@when(
    parsers.parse(
        'store thread "{name}" is appended 3 more messages stamped with earlier caller timestamps'
    )
)
def _append_stamped_earlier(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    append_batch(store, store_scene, name, _stamped("u", 8))


@when(
    parsers.parse(
        'store thread "{name}" is appended a batch of new ids'
        ' with the stored id "{dup}" in the middle'
    )
)
def _append_dup_stored(store: RecordingStore, store_scene: StoreScene, name: str, dup: str) -> None:
    batch = [
        Message(id="n1", role="user", text="new 1"),
        Message(id=dup, role="user", text="a retry of a stored message"),
        Message(id="n2", role="user", text="new 2"),
    ]
    attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))


@when(
    parsers.parse(
        'store thread "{name}" is appended a batch repeating the id "{dup}" within itself'
    )
)
def _append_dup_inner(store: RecordingStore, store_scene: StoreScene, name: str, dup: str) -> None:
    batch = [
        Message(id=dup, role="user", text="first"),
        Message(id="d-other", role="user", text="other"),
        Message(id=dup, role="assistant", text="second with the same id"),
    ]
    attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))


@when(parsers.parse('store thread "{name}" is appended a batch of {count:d} messages'))
def _append_count(store: RecordingStore, store_scene: StoreScene, name: str, count: int) -> None:
    batch = [
        Message(id=f"b{i}", role="user", text=f"batch message {i}", round=i)
        for i in range(1, count + 1)
    ]
    append_batch(store, store_scene, name, batch)


@then(parsers.parse('store thread "{name}" holds every message appended, in order'))
def _holds_appended(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    expected = store_scene.appended.get(name, [])
    got = read_thread(store, store_scene.thread(name))
    expect_ids(f"the messages of thread {name}", [m.id for m in expected], got)
    expect_equal(f"the messages of thread {name}, field for field", expected, got)
