"""Step definitions of the ``store`` profile that need several processes
(``features/store/processes.feature``): durable, concurrent writers, reads
while another process writes and atomic batches, judged by
:mod:`memconform.steps.contract_checks`.

Each check's evidence says how it was reached; it becomes the message of a
passing scenario (:func:`memconform.steps.common.how_passed`), the evidence of
a failing one, and the reason of an inconclusive one."""

from __future__ import annotations

import pytest
from pytest_bdd import parsers, then, when

from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.steps.common import Mismatch, how_passed, inconclusive
from memconform.steps.contract_checks import (
    check_atomic_batch,
    check_concurrent_writers,
    check_durable,
    check_raced_writes,
    check_racing_writes,
    check_reads_during_writes,
    check_relayed_writes,
    check_warm_reads,
)
from memconform.steps.plugin import call_timeout
from memconform.steps.store import StoreScene

__all__: list[str] = []


# -- several processes --


def _mutant(request: pytest.FixtureRequest) -> str | None:
    name = request.config.getoption("--memconform-mutant")
    return str(name) if name else None


def _timeout(request: pytest.FixtureRequest) -> float:
    return call_timeout(request.config)


def _when_quick(request: pytest.FixtureRequest, **fewer: int) -> dict[str, int]:
    """``fewer`` on a quick run (``--memconform-quick``), else nothing, so the
    check's own defaults hold. A quick run releases one round of writers instead
    of two (ST-033; the held writer still runs first) and needs one kill during
    an append instead of three (ST-034's timed kills): a failure found is the
    same failure; a quick pass has met fewer moments."""
    return fewer if request.config.getoption("--memconform-quick") else {}


@when(
    parsers.parse('one process writes to store thread "{name}" and is killed after acknowledging')
)
def _durable(
    request: pytest.FixtureRequest,
    store: RecordingStore,
    store_scene: StoreScene,
    store_url: str,
    name: str,
) -> None:
    store_scene.check = check_durable(
        store_url,
        store_scene.thread(name),
        capabilities=store.capabilities,
        mutant=_mutant(request),
        timeout=_timeout(request),
    )


@when(
    parsers.parse(
        "{writers:d} writer processes append at once to a shared store thread "
        "and to threads of their own"
    )
)
def _concurrent(
    request: pytest.FixtureRequest, store_scene: StoreScene, store_url: str, writers: int
) -> None:
    store_scene.check = check_concurrent_writers(
        store_url,
        store_scene.thread("shared"),
        writers=writers,
        mutant=_mutant(request),
        timeout=_timeout(request),
        **_when_quick(request, rounds=1),
    )


@when(
    parsers.parse(
        'a writer process is killed in the middle of appending a batch to store thread "{name}"'
    )
)
def _killed(
    request: pytest.FixtureRequest,
    store: RecordingStore,
    store_scene: StoreScene,
    store_url: str,
    name: str,
) -> None:
    store_scene.check = check_atomic_batch(
        store_url,
        store_scene.thread(name),
        capabilities=store.capabilities,
        mutant=_mutant(request),
        timeout=_timeout(request),
        **_when_quick(request, kills=1),
    )


@when(
    parsers.parse(
        'another process reads store thread "{name}" again and again while a writer process '
        "appends batches to it"
    )
)
def _reads_during_writes(
    request: pytest.FixtureRequest,
    store: RecordingStore,
    store_scene: StoreScene,
    store_url: str,
    name: str,
) -> None:
    store_scene.check = check_reads_during_writes(
        store_url,
        store_scene.thread(name),
        uncommitted="commit-flags" in store.capabilities,
        mutant=_mutant(request),
        timeout=_timeout(request),
    )


def _check_passed(
    request: pytest.FixtureRequest, store: RecordingStore, scene: StoreScene, what: str
) -> None:
    check = scene.check
    assert check is not None
    if not check.conclusive:
        inconclusive(check.evidence)
    # the evidence goes on the timeline, so a pass also says how it was reached
    store.timeline.add(
        "check",
        what,
        passed=check.passed,
        deterministic=check.deterministic,
        evidence=check.evidence,
    )
    if check.adapter_error is not None:
        raise AdapterContractError(check.adapter_error[0], check.adapter_error[1])
    if not check.passed:
        raise Mismatch(what, check.expected, check.evidence)
    how_passed(request, check.evidence)


@when(parsers.parse(
    '{writers:d} writer processes race to append the same message ids to store thread "{name}"'
))
def _racing_ids(
    request: pytest.FixtureRequest, store_scene: StoreScene, store_url: str, writers: int,
    name: str,
) -> None:
    store_scene.check = check_racing_writes(
        store_url, store_scene.thread(name), state=False, writers=writers,
        mutant=_mutant(request), timeout=_timeout(request),
    )


@when(parsers.parse(
    '{writers:d} writer processes race to increment a state key of scope "{name}" '
    "by compare-and-set"
))
def _racing_increments(
    request: pytest.FixtureRequest, store_scene: StoreScene, store_url: str, writers: int,
    name: str,
) -> None:
    store_scene.check = check_racing_writes(
        store_url, store_scene.thread(name), state=True, writers=writers,
        mutant=_mutant(request), timeout=_timeout(request),
    )


@then("one racing append is acknowledged and each raced id is stored once")
def _racing_ids_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene
) -> None:
    _check_passed(request, store, store_scene, "the thread several processes raced to append to")


@then("no acknowledged increment is lost")
def _racing_increments_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene
) -> None:
    _check_passed(request, store, store_scene, "the state key several processes raced to increment")


@then("a fresh process reads back everything that was acknowledged")
def _durable_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene
) -> None:
    _check_passed(request, store, store_scene, "what a fresh process read back")


@then("no acknowledged message is lost, each writer's order holds and no batch is interleaved")
def _concurrent_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene
) -> None:
    _check_passed(
        request, store, store_scene, "the shared and own threads after concurrent writers"
    )


@then("a fresh process finds that batch wholly stored or wholly absent")
def _atomic_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene
) -> None:
    _check_passed(request, store, store_scene, "the batch whose writer was killed")


@then("every read showed whole batches in their order and kept what earlier reads showed")
def _reads_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene
) -> None:
    _check_passed(request, store, store_scene, "what another process read while a writer appended")


WRITES = {
    "message": "message",
    "commit-flag change": "commit",
    "error record": "error",
    "turn record": "record",
    "new state key": "key",
    "fact": "fact",
}
"""The kinds of write of :data:`memconform.steps.check_jobs.WRITES`, as the
scenarios name them."""


@when(parsers.parse(
    "{writers:d} writer processes in different time zones race to make {count:d} {write}s "
    'each in store thread "{name}"'
))
def _raced_writes(
    request: pytest.FixtureRequest, store_scene: StoreScene, store_url: str, writers: int,
    count: int, write: str, name: str,
) -> None:
    store_scene.check = check_raced_writes(
        store_url, store_scene.thread(name), WRITES[write], writers=writers, count=count,
        mutant=_mutant(request), timeout=_timeout(request),
    )


@when(parsers.parse(
    "{writers:d} processes in time zones UTC+14, UTC-11 and UTC+5:45 each make {count:d} "
    '{write}s in store thread "{name}", one process after another'
))
def _relayed_writes(
    request: pytest.FixtureRequest, store_scene: StoreScene, store_url: str, writers: int,
    count: int, write: str, name: str,
) -> None:
    store_scene.check = check_relayed_writes(
        store_url, store_scene.thread(name), WRITES[write], writers=writers, count=count,
        mutant=_mutant(request), timeout=_timeout(request),
    )


@then(parsers.parse(
    "a fresh process finds every acknowledged {write} held once, each writer's in its order"
))
def _raced_writes_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene, write: str
) -> None:
    _check_passed(request, store, store_scene, f"the {write}s several processes raced to make")


@then(parsers.parse(
    "a fresh process finds every {write} held once, in the order the processes made them"
))
def _relayed_writes_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene, write: str
) -> None:
    _check_passed(request, store, store_scene,
                  f"the {write}s processes in different time zones made in turn")


REREADS = {
    "commit-flag change": "commit",
    "error record": "error",
    "turn record": "record",
    "state-key rewrite": "key-rewrite",
    "fact replacement": "fact-rewrite",
}
"""The writes of :func:`check_warm_reads`, as the scenarios name them."""


@when(parsers.parse(
    'a process reads store thread "{name}" and keeps the store open while another process '
    "makes {count:d} {write}s there"
))
def _warm_reads(
    request: pytest.FixtureRequest, store_scene: StoreScene, store_url: str, count: int,
    write: str, name: str,
) -> None:
    store_scene.check = check_warm_reads(
        store_url, store_scene.thread(name), REREADS[write], count=count,
        mutant=_mutant(request), timeout=_timeout(request),
    )


@then("its next read shows what a fresh process reads")
def _warm_reads_ok(
    request: pytest.FixtureRequest, store: RecordingStore, store_scene: StoreScene
) -> None:
    _check_passed(request, store, store_scene,
                  "what a process that kept the store open read after another's writes")
