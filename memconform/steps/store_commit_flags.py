"""Steps of the ``store`` profile on commit flags: clearing and setting them, and
what plain and all-inclusive reads return
(``features/store/commit_flags.feature``).
"""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from memconform.harness.proxy import RecordingStore
from memconform.steps.common import expect_equal
from memconform.steps.store_world import (
    StoreScene,
    attempt,
    expect_ids,
    id_list,
    must_succeed,
    read_thread,
)


@when(parsers.parse('the committed flag of messages "{ids}" in store thread "{name}" is cleared'))
def _clear_flag(store: RecordingStore, store_scene: StoreScene, ids: str, name: str) -> None:
    must_succeed(
        "set_committed", lambda: store.set_committed(store_scene.thread(name), id_list(ids), False)
    )


@when(parsers.parse('the committed flag of messages "{ids}" in store thread "{name}" is set'))
def _set_flag(store: RecordingStore, store_scene: StoreScene, ids: str, name: str) -> None:
    must_succeed(
        "set_committed", lambda: store.set_committed(store_scene.thread(name), id_list(ids), True)
    )


@when(
    parsers.parse(
        'clearing the committed flag of messages "{ids}" in store thread "{name}" is attempted'
    )
)
def _clear_flag_attempt(
    store: RecordingStore, store_scene: StoreScene, ids: str, name: str
) -> None:
    attempt(store_scene, lambda: store.set_committed(store_scene.thread(name), id_list(ids), False))


@then(parsers.parse('plain reads of store thread "{name}" return "{ids}"'))
def _plain_reads(store: RecordingStore, store_scene: StoreScene, name: str, ids: str) -> None:
    messages = read_thread(store, store_scene.thread(name))
    expect_ids(f"plain reads of thread {name}", id_list(ids), messages)
    hidden = [m.id for m in messages if not m.committed]
    expect_equal("uncommitted messages in a plain read", [], hidden)


@then(
    parsers.parse(
        'reads of store thread "{name}" including uncommitted'
        ' return "{ids}" with "{hidden}" uncommitted'
    )
)
def _all_reads(
    store: RecordingStore, store_scene: StoreScene, name: str, ids: str, hidden: str
) -> None:
    messages = read_thread(store, store_scene.thread(name), include_uncommitted=True)
    expect_ids(f"reads of thread {name} including uncommitted", id_list(ids), messages)
    expect_equal(
        "which messages carry a cleared committed flag",
        id_list(hidden),
        [m.id for m in messages if not m.committed],
    )
    by_id = {m.id: m for m in store_scene.appended.get(name, [])}
    for m in messages:
        if m.id in by_id:
            expect_equal(
                f"message {m.id} apart from its flag",
                by_id[m.id].to_json() | {"committed": None},
                m.to_json() | {"committed": None},
            )
