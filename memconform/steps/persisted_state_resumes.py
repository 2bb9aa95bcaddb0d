"""Steps of the ``persisted-state`` profile that kill, hand off and resume a
job (``features/persisted-state/resume.feature``).

Fresh-process steps start ``memconform.steps.job_resume`` in a fresh
process (:mod:`memconform.harness.fresh_process`): the kit's import path
passed as an argument, the kit's starting environment less its own
variables (and ``TMPDIR`` pointing at a new empty folder), a new working
directory; they read its observation from stdout.

A kill is real: the job's first run executes in such a child process, whose
proxy stops right after the store acknowledged the chosen write (the record
write marking step k done, or the k-th write of the process) and the kit
SIGKILLs it; nothing reaches the runtime, no ``finally`` runs. The kill needs a
durable store (the child opens it by URL).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_bdd import parsers, then, when

from memconform.contract import ConflictError
from memconform.harness.proxy import AdapterContractError
from memconform.harness.runtime import SCRIPT_SCHEMA
from memconform.simulator.persisted_state import RECORD_KEY, job_scope, log_thread
from memconform.steps.child_runs import run_killed
from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.steps.persisted_state_world import (
    JobWorld,
    KillRound,
    child_options,
    fresh_process,
    marks_done,
    scope_of,
    table_rows,
)

MAX_KILL_WRITES = 64
"""The every-write kill scenario gives up on a job still writing after this many writes."""


@when(parsers.parse("the job runs and is killed after step {k:d}"))
def job_killed(persisted_state: JobWorld, k: int) -> None:
    world = persisted_state
    require_capability(world.store.capabilities, "state")
    require_capability(world.store.capabilities, "durable")
    if not 1 <= k < len(world.job["steps"]):
        raise ValueError(f"the job has no step after step {k}")
    kill = ["--kill-before-tool", str(k + 1)]
    observation = _killed_run(world, world.namespace, kill)
    world.observations.append(observation)
    world.ledger.extend(observation.get("ledger", []))
    world.fresh_timelines.append(observation.get("timeline", []))


@when("the job is killed right after each write the store acknowledged and resumed elsewhere")
def job_killed_at_every_write(persisted_state: JobWorld) -> None:
    world = persisted_state
    require_capability(world.store.capabilities, "state")
    require_capability(world.store.capabilities, "durable")
    job_id = str(world.job["id"])
    for k in range(1, MAX_KILL_WRITES + 1):
        namespace = f"{world.namespace}-w{k}"
        killed = _killed_run(world, namespace, ["--kill-after-write", str(k)])
        if killed.get("killed_after") is None:
            return  # the run ended before its k-th write: every write was a kill point
        entry = world.store.read_state(job_scope(namespace, job_id), RECORD_KEY)
        record = entry.value if entry is not None else None
        done = [str(s["name"]) for s in world.job["steps"] if marks_done(record, s["name"])]
        args = ["--namespace", namespace, "--job", job_id]
        resumed = fresh_process(world, args, world.world())
        timelines = [killed.get("timeline", []), resumed.get("timeline", [])]
        world.kill_rounds.append(KillRound(
            k=k,
            namespace=namespace,
            done_at_kill=done,
            killed_ledger=[str(e.get("effect")) for e in killed.get("ledger", [])],
            resumed_ledger=[str(e.get("effect")) for e in resumed.get("ledger", [])],
            resumed_outcome=_outcome_of(resumed, "resume"),
            deploy_args=[e.get("args") for t in timelines for e in t
                         if e.get("kind") == "tool" and e.get("name") == "deploy"],
        ))
    raise Mismatch(
        "the job's writes", f"at most {MAX_KILL_WRITES} writes", "more: the job never ended"
    )


def _outcome_of(observation: Mapping[str, Any], do: str) -> str | None:
    for outcome in observation.get("outcomes", []):
        if isinstance(outcome, Mapping) and outcome.get("do") == do:
            return str(outcome.get("outcome"))
    return None


def _killed_run(world: JobWorld, namespace: str, kill: list[str]) -> dict[str, Any]:
    """Run the scenario's job in a child process armed to stop at ``kill`` and
    SIGKILL it there. Returns what the kit observed: the job's outcome
    ``killed`` (or the runtime's own answer when the run ended first), the
    ledger of effects and the timeline up to the kill."""
    script = {
        "schema": SCRIPT_SCHEMA, "profile": "persisted-state", "namespace": namespace,
        "actions": [{"do": "job", "job": world.job}], **world.world(),
    }
    out = run_killed(world.store_url, script, kill, options=child_options(world),
                     what="the process running the job")
    if out.get("killed_after") is not None:
        out["outcomes"] = [{"do": "job", "job": world.job["id"], "outcome": "killed"}]
    return out


@when(parsers.parse("the job runs and is handed off after step {k:d}"))
def job_handed_off(persisted_state: JobWorld, k: int) -> None:
    persisted_state.run(
        [{"do": "job", "job": persisted_state.job, "stop_after": k, "stop": "handoff"}]
    )


@when(parsers.parse('the person taking over sets the record value "{name}" to {value}'))
def person_edits_record(persisted_state: JobWorld, name: str, value: str) -> None:
    entry = persisted_state.record()
    record = json.loads(json.dumps(entry.value))
    record.setdefault("values", {})[name] = json.loads(value)
    try:
        persisted_state.store.write_state(persisted_state.scope, RECORD_KEY, record, entry.version)
    except ConflictError as exc:
        raise AdapterContractError(
            "write_state", f"a write at the version just read was refused: {exc}"
        ) from exc


@when("the job is resumed in the same process")
def job_resumed_here(persisted_state: JobWorld) -> None:
    persisted_state.resume_from = len(persisted_state.store.timeline)
    persisted_state.run([{"do": "resume", "job": persisted_state.job["id"]}])


@when("the job's logged transcript is lost")
def job_log_lost(persisted_state: JobWorld) -> None:
    persisted_state.log_lost = True


@when("the job is resumed in a fresh process given only the store URL")
def job_resumed_fresh(persisted_state: JobWorld) -> None:
    require_capability(persisted_state.store.capabilities, "durable")
    world = persisted_state.world()
    args = [
        "--namespace", persisted_state.namespace, "--job", str(persisted_state.job["id"]),
    ]
    observation = fresh_process(persisted_state, args, world)
    persisted_state.observations.append(observation)
    persisted_state.ledger.extend(observation.get("ledger", []))
    persisted_state.fresh_timelines.append(observation.get("timeline", []))


@then("the resumed job did not read the job's log")
@decides("PS-008")
def resume_did_not_read_log(persisted_state: JobWorld) -> None:
    start = persisted_state.resume_from or 0
    thread = log_thread(persisted_state.namespace, persisted_state.job["id"])
    reads = [
        e["seq"] for e in persisted_state.timeline()[start:]
        if e["kind"] == "store" and e["name"] == "messages" and scope_of(e) == thread
    ]
    expect_equal("reads of the job's logged transcript during the resume", [], reads)


@then("the ledger of all runs holds each effect once, in plan order:")
@decides("PS-006", "PS-009")
def ledger_once(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    expected = [r["effect"] for r in table_rows(datatable)]
    observed = [str(e.get("effect")) for e in persisted_state.ledger]
    expect_equal("the effects in the ledger of the killed and the resumed runs", expected, observed)


@then("with its log lost, the job completed with each effect once, in plan order:")
@decides("PS-033")
def completed_without_log(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    expected = [r["effect"] for r in table_rows(datatable)]
    observed = [str(e.get("effect")) for e in persisted_state.ledger]
    outcome = persisted_state.last_outcome("job", "resume").get("outcome")
    expect_equal("the job's outcome and the effects of the killed and the resumed runs",
                 ("completed", expected), (outcome, observed))


@then("after every kill the resumed job completed")
@decides("PS-007", "PS-009")
def every_kill_completed(persisted_state: JobWorld) -> None:
    rounds = _kill_rounds(persisted_state)
    bad = [(r.k, r.resumed_outcome) for r in rounds if r.resumed_outcome != "completed"]
    expect_equal("kills (write k, resumed outcome) whose resume did not complete", [], bad)


@then("after every kill no step the store had marked done ran again")
@decides("PS-006")
def every_kill_no_redo(persisted_state: JobWorld) -> None:
    effects = {str(s["name"]): str(s["tool"]) for s in persisted_state.job["steps"]}
    redone = [
        (r.k, step) for r in _kill_rounds(persisted_state) for step in r.done_at_kill
        if effects[step] in r.resumed_ledger
    ]
    expect_equal("steps marked done at a kill that the resume ran again (write k, step)", [],
                 redone)


@then("after every kill the two runs together left each effect once, in plan order")
@decides("PS-009")
def every_kill_ledger(persisted_state: JobWorld) -> None:
    plan = [str(s["tool"]) for s in persisted_state.job["steps"]]
    wrong = [
        (r.k, r.killed_ledger + r.resumed_ledger) for r in _kill_rounds(persisted_state)
        if r.killed_ledger + r.resumed_ledger != plan
    ]
    expect_equal(f"kills whose two runs did not leave the ledger {plan}", [], wrong)


def _kill_rounds(world: JobWorld) -> list[KillRound]:
    if not world.kill_rounds:
        raise Mismatch("kills", "at least one write to kill after", "the job wrote nothing")
    return world.kill_rounds
