"""Step definitions of the ``store`` profile (``features/store``): what the store
claims and already holds (Given), what a thread holds exactly, and the
refusals of attempted calls.

The other steps live in family modules: message appends in
:mod:`memconform.steps.store_appends`, round trips of hard texts and values in
:mod:`memconform.steps.store_round_trips`, reads and windows in
:mod:`memconform.steps.store_reads`, commit flags in
:mod:`memconform.steps.store_commit_flags`, records, state and knowledge in
:mod:`memconform.steps.store_records`, names in
:mod:`memconform.steps.store_names`, copies in
:mod:`memconform.steps.store_copies`, damage in
:mod:`memconform.steps.store_damage` and multi-process steps in
:mod:`memconform.steps.store_processes`. The scenario state and the shared
helpers live in :mod:`memconform.steps.store_world`; this module still
exports the helpers for code written against it.
"""

from __future__ import annotations

import pytest
from pytest_bdd import given, parsers, then

from memconform import contract
from memconform.harness.faults import arm_row_fault, disarm_row_fault, row_points_passed
from memconform.harness.proxy import RecordingStore
from memconform.steps.common import Mismatch, expect_equal, measures_unclaimed
from memconform.steps.store_world import (
    StoreScene,
    append_batch,
    attempt,
    expect_ids,
    full_message,
    id_list,
    must_succeed,
    numbered,
    read_thread,
    with_capability,
)
from memconform.values import Message

__all__ = ["StoreScene", "attempt", "full_message", "must_succeed", "read_thread"]


# -- givens --


@given(parsers.parse('the store claims the "{capability}" capability'))
def _claims(request: pytest.FixtureRequest, store: RecordingStore, capability: str) -> None:
    if not measures_unclaimed(request.config, capability):
        with_capability(store, capability)


@given(parsers.parse('store thread "{name}" holds {count:d} messages'))
def _holds(store: RecordingStore, store_scene: StoreScene, name: str, count: int) -> None:
    if count:
        append_batch(store, store_scene, name, numbered(name, 1, count))


@given(
    parsers.parse('store thread "{name}" holds {count:d} messages appended in batches of {size:d}')
)
def _holds_batched(
    store: RecordingStore, store_scene: StoreScene, name: str, count: int, size: int
) -> None:
    messages = numbered(name, 1, count)
    for start in range(0, count, size):
        append_batch(store, store_scene, name, messages[start : start + size])


@given(parsers.parse("the store will fail before row {row:d} of its next batch"))
def _arm_fault(store: RecordingStore, store_scene: StoreScene, row: int) -> None:
    # Probe whether the store passes its rows through the kit's row point (it
    # must run in this process). If not, the fault is a value the store must
    # refuse, placed at the same row: weaker (the store may check up front), but
    # it still shows a failed append leaves nothing behind.
    arm_row_fault(1_000_000)
    try:
        probe = [Message(id="probe", role="user", text="probe")]
        must_succeed("append", lambda: store.append(store_scene.thread("fault-probe"), probe))
    finally:
        passed = row_points_passed()
        disarm_row_fault()
    store_scene.fault_row = row
    store_scene.fault_mode = "row point" if passed else "refused value"


@then(
    parsers.parse('store thread "{name}" keeps "{kept}" exactly, or only "{refused}" once refused')
)
def _holds_kept_or_refused(
    store: RecordingStore, store_scene: StoreScene, name: str, kept: str, refused: str
) -> None:
    if store_scene.raised is None:
        _holds_exactly(store, store_scene, name, kept)
        return
    _refused(store_scene, "UnsupportedValueError")
    _holds_exactly(store, store_scene, name, refused)


@then(parsers.parse('store thread "{name}" holds exactly "{ids}"'))
def _holds_exactly(store: RecordingStore, store_scene: StoreScene, name: str, ids: str) -> None:
    thread = store_scene.thread(name)
    messages = read_thread(store, thread)
    expect_ids(f"the messages of thread {name}", id_list(ids), messages)
    by_id = {m.id: m for m in store_scene.appended.get(name, [])}
    expected = [by_id.get(m.id, m) for m in messages]
    expect_equal(f"the messages of thread {name}, field for field", expected, messages)
    if "commit-flags" in store.capabilities:
        everything = read_thread(store, thread, include_uncommitted=True)
        expect_ids(f"the messages of thread {name} including uncommitted", id_list(ids), everything)


# -- outcomes of attempts --

_REFUSALS: dict[str, type[BaseException]] = {
    "ValueError": ValueError,
    "KeyError": KeyError,
    "DuplicateIdError": contract.DuplicateIdError,
    "UnsupportedValueError": contract.UnsupportedValueError,
    "ConflictError": contract.ConflictError,
}


@then(parsers.parse("the store call is refused with {name}"))
def _refused(store_scene: StoreScene, name: str) -> None:
    kind = _REFUSALS[name]
    raised = store_scene.raised
    if raised is None:
        raise Mismatch("the store call", f"refused with {name}", "it succeeded")
    if not isinstance(raised, kind):
        raise Mismatch(
            "the store call", f"refused with {name}", f"{type(raised).__name__}: {raised}"
        )


@then("the store call is refused")
def _refused_somehow(store_scene: StoreScene) -> None:
    if store_scene.raised is None:
        raise Mismatch("the store call", "refused with an exception", "it succeeded")


@then("the store append raised")
def _append_raised(store_scene: StoreScene) -> None:
    if store_scene.raised is None:
        raise Mismatch("the append hit by the fault", "an exception", "it succeeded")
