"""Step definitions of the ``persisted-state`` profile (document 004): the
job's working state (``features/persisted-state/working_state.feature``) and
what the store refuses (``store_refusals.feature``).

The job givens and the step that runs a job to its end live here; the
``persisted_state`` fixture and its :class:`JobWorld` live in
:mod:`memconform.steps.persisted_state_world`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_bdd import given, parsers, then, when

from memconform.simulator.persisted_state import log_thread
from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.steps.persisted_state_world import JobWorld, name_list, pairs, scope_of, table_rows
from memconform.values import JSONValue

__all__ = ["JobWorld"]


# -- givens ------------------------------------------------------------------------------


@given(parsers.parse('the persisted-state store declares "{capability}"'))
def store_declares(persisted_state: JobWorld, capability: str) -> None:
    require_capability(persisted_state.store.capabilities, capability)


@given(parsers.parse('a job "{job_id}" with the steps:'))
def job_with_steps(
    persisted_state: JobWorld, job_id: str, datatable: Sequence[Sequence[str]]
) -> None:
    steps = []
    for row in table_rows(datatable):
        steps.append(
            {
                "name": row["step"],
                "tool": row["tool"],
                "args": pairs(row.get("args", "")),
                "record": pairs(row.get("records", "")),
                "marks": pairs(row.get("marks", "")),
            }
        )
        persisted_state.tools.setdefault(row["tool"], {"effect": row["tool"]})
    persisted_state.jobs[job_id] = {"id": job_id, "goal": f"finish {job_id}", "steps": steps}
    persisted_state.job_id = job_id


@given(parsers.parse('the job tool "{tool}" returns {result}'))
def job_tool_returns(persisted_state: JobWorld, tool: str, result: str) -> None:
    persisted_state.tools[tool] = {"result": json.loads(result), "effect": tool}


@given(parsers.parse('the job tool "{tool}" fails with "{message}"'))
def job_tool_fails(persisted_state: JobWorld, tool: str, message: str) -> None:
    persisted_state.tools[tool] = {"fail": {"type": "ToolError", "message": message}}


@given(parsers.parse('the durable-write confirmation answers "{answer}"'))
def confirmation_answers(persisted_state: JobWorld, answer: str) -> None:
    persisted_state.hooks["confirm_durable_write"] = {"action": answer}


@given(parsers.parse(
    'another writer adds the record value "{name}" = {value} while the "{step}" step runs'
))
def another_writer(persisted_state: JobWorld, name: str, value: str, step: str) -> None:
    persisted_state.other_writer = (name, json.loads(value), step)


@given(parsers.parse('the store refuses the record write that marks step "{step}" done'))
def store_refuses_record(persisted_state: JobWorld, step: str) -> None:
    persisted_state.refuse = ("record", step)


@given(parsers.parse('the store refuses the fact "{subject}"'))
def store_refuses_fact(persisted_state: JobWorld, subject: str) -> None:
    persisted_state.refuse = ("fact", subject)


# -- jobs --------------------------------------------------------------------------------


@when("the job runs to the end")
def job_runs(persisted_state: JobWorld) -> None:
    require_capability(persisted_state.store.capabilities, "state")
    persisted_state.run([{"do": "job", "job": persisted_state.job}])


# -- job checks --------------------------------------------------------------------------


@then(parsers.parse('the job outcome is "{outcome}"'))
@decides("PS-007", "PS-009", "PS-032")
def job_outcome_is(persisted_state: JobWorld, outcome: str) -> None:
    expect_equal("the job's outcome", outcome, persisted_state.last_outcome("job", "resume").get(
        "outcome"))


def _record_writes(world: JobWorld, before_seq: int | None) -> list[dict[str, Any]]:
    return [
        e for e in world.timeline()
        if e["kind"] == "store" and e["name"] == "write_state" and scope_of(e) == world.scope
        and (before_seq is None or e["seq"] < before_seq)
    ]


def _tool_success_seq(world: JobWorld, tool: str) -> int | None:
    for e in world.timeline():
        if e["kind"] == "tool" and e["name"] == tool and "result" in e:
            return int(e["seq"])
    return None


def _written_record(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    args = entry.get("args") or []
    value = args[2] if len(args) > 2 else None
    return value if isinstance(value, Mapping) else {}


@then(parsers.parse('no record write before the "{tool}" tool succeeded holds the value "{name}"'))
@decides("PS-003")
def no_early_value(persisted_state: JobWorld, tool: str, name: str) -> None:
    seq = _tool_success_seq(persisted_state, tool)
    early = [
        e["seq"] for e in _record_writes(persisted_state, seq)
        if name in (_written_record(e).get("values") or {})
    ]
    expect_equal(
        f"record writes holding {name!r} before the {tool!r} tool returned success", [], early
    )


@then(parsers.parse(
    'no record write before the "{tool}" tool succeeded marks the step "{step}" done'
))
@decides("PS-003")
def no_early_done(persisted_state: JobWorld, tool: str, step: str) -> None:
    seq = _tool_success_seq(persisted_state, tool)
    early = [
        e["seq"] for e in _record_writes(persisted_state, seq)
        if any(
            s.get("name") == step and s.get("status") == "done"
            for s in _written_record(e).get("steps") or []
        )
    ]
    expect_equal(f"record writes marking {step!r} done before {tool!r} succeeded", [], early)


@then(parsers.parse('the stored record holds the value "{name}" = {value}'))
@decides("PS-003", "PS-005", "PS-032")
def record_holds(persisted_state: JobWorld, name: str, value: str) -> None:
    values = persisted_state.record().value.get("values") or {}
    expect_equal(f"the record's value {name!r}", json.loads(value), values.get(name, "<absent>"))


@then(parsers.parse('the stored record holds no value "{name}"'))
@decides("PS-003")
def record_lacks(persisted_state: JobWorld, name: str) -> None:
    values = persisted_state.record().value.get("values") or {}
    expect_equal(f"the record's value {name!r}", "<absent>", values.get(name, "<absent>"))


@then(parsers.parse('the stored record gives the error of step "{step}" as "{message}"'))
@decides("PS-003")
def record_error(persisted_state: JobWorld, step: str, message: str) -> None:
    steps = persisted_state.record().value.get("steps") or []
    errors = [s.get("error") for s in steps if s.get("name") == step]
    observed = errors[0].get("message") if errors and isinstance(errors[0], Mapping) else None
    expect_equal(f"the error recorded for step {step!r}", message, observed)


@then("the stored record marks the steps:")
@decides("PS-001", "PS-003", "PS-032")
def record_marks(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    expected = [(r["step"], r["status"]) for r in table_rows(datatable)]
    steps = persisted_state.record().value.get("steps") or []
    observed = [(s.get("name"), s.get("status")) for s in steps]
    expect_equal("the step statuses in the stored record", expected, observed)


@then("the record was written after each completed step before the next step began")
@decides("PS-001")
def written_after_each_step(persisted_state: JobWorld) -> None:
    entries = persisted_state.timeline()
    prefix = f"{persisted_state.job['id']}/"
    missing: list[str] = []
    for i, e in enumerate(entries):
        if e["kind"] != "tool" or "result" not in e or not str(e.get("call_id")).startswith(prefix):
            continue
        step = str(e["call_id"])[len(prefix):]
        found = False
        for later in entries[i + 1:]:
            if later["kind"] in ("tool", "model"):
                break
            if (
                later["kind"] == "store" and later["name"] == "write_state"
                and scope_of(later) == persisted_state.scope
                and any(
                    s.get("name") == step and s.get("status") == "done"
                    for s in _written_record(later).get("steps") or []
                )
            ):
                found = True
                break
        if not found:
            missing.append(step)
    expect_equal("completed steps without a record write before the next step", [], missing)


@then("the record was read from the store at the start of every step")
@decides("PS-002")
def read_at_each_step(persisted_state: JobWorld) -> None:
    entries = persisted_state.timeline()
    prefix = f"{persisted_state.job['id']}/"
    unread: list[str] = []
    last = 0
    for i, e in enumerate(entries):
        if e["kind"] != "tool" or not str(e.get("call_id")).startswith(prefix):
            continue
        window = entries[last:i]
        if not any(
            w["kind"] == "store" and w["name"] == "read_state"
            and scope_of(w) == persisted_state.scope
            for w in window
        ):
            unread.append(str(e["call_id"])[len(prefix):])
        last = i + 1
    expect_equal("steps that started without reading the record", [], unread)


def _tool_calls(world: JobWorld, tool: str) -> list[JSONValue]:
    calls = [e.get("args") for e in world.timeline() if e["kind"] == "tool" and e["name"] == tool]
    for timeline in world.fresh_timelines:
        calls += [e.get("args") for e in timeline if e["kind"] == "tool" and e["name"] == tool]
    return calls


@then(parsers.parse('the "{tool}" tool was called with {args}'))
@decides("PS-002", "PS-007", "PS-009")
def tool_called_with(persisted_state: JobWorld, tool: str, args: str) -> None:
    expect_equal(f"the arguments of each {tool!r} call", [json.loads(args)],
                 _tool_calls(persisted_state, tool))


@then(parsers.parse('the stored record has exactly the fields "{fields}"'))
@decides("PS-004")
def record_fields(persisted_state: JobWorld, fields: str) -> None:
    expect_equal("the record's fields", sorted(name_list(fields)),
                 sorted(persisted_state.record().value))


@then(parsers.parse("the stored record is at version {version:d}"))
@decides("PS-004")
def record_version(persisted_state: JobWorld, version: int) -> None:
    expect_equal("the record's version", version, persisted_state.record().version)


@then(parsers.parse('the job\'s log holds a call and a result for each of "{steps}"'))
@decides("PS-010")
def log_holds(persisted_state: JobWorld, steps: str) -> None:
    thread = log_thread(persisted_state.namespace, persisted_state.job["id"])
    messages = persisted_state.store.messages(thread)
    observed = [(m.metadata.get("step"), m.role) for m in messages]
    expected = [(s, role) for s in name_list(steps) for role in ("assistant", "tool")]
    expect_equal("the job's logged exchanges (step, role)", expected, observed)


@then("the model's view at every step holds only the record and the current step")
@decides("PS-008", "PS-010")
def model_view(persisted_state: JobWorld) -> None:
    start = persisted_state.resume_from or 0
    views: list[Mapping[str, Any]] = [
        e["request"] for e in persisted_state.timeline()[start:]
        if e["kind"] == "model" and isinstance(e.get("request"), Mapping)
        and "job" in e["request"]
    ]
    if not views:
        raise Mismatch("the model's views at the job's steps", "one per step", "none")
    bad = [sorted(v) for v in views if sorted(v) != ["job", "record", "step"]]
    expect_equal("model views with more than the record and the current step", [], bad)


@then("the durable-write confirmation was never asked")
@decides("PS-011", "PS-021")
def confirmation_never_asked(persisted_state: JobWorld) -> None:
    asked = [e["seq"] for e in persisted_state.timeline()
             if e["kind"] == "hook" and e["name"] == "confirm_durable_write"]
    expect_equal("calls of the confirm_durable_write hook", [], asked)


@then(parsers.parse('the remember request for "{subject}" was not reported as stored'))
@decides("PS-035")
def remember_not_stored(persisted_state: JobWorld, subject: str) -> None:
    refused = [e for e in persisted_state.timeline() if e.get("name") == "store_refused"]
    if not refused:
        raise Mismatch("the kit's refusal", "the store refused put_fact", "no put_fact reached it")
    found = [
        o.get("outcome") for obs in persisted_state.observations for o in obs.get("outcomes", [])
        if o.get("do") == "remember" and o.get("subject") == subject
    ]
    outcome = found[-1] if found else None
    if outcome in ("stored", "stored-observation"):
        raise Mismatch(
            f"the outcome of remembering {subject!r} after the store refused it",
            "not stored (failed)", outcome,
        )


@then("the job reported the refused write as a failure and ran no later step")
@decides("PS-035")
def refused_record_fails(persisted_state: JobWorld) -> None:
    timeline = persisted_state.timeline()
    refused = [i for i, e in enumerate(timeline) if e.get("name") == "store_refused"]
    if not refused:
        raise Mismatch("the kit's refusal", "the store refused a record write", "none reached it")
    later = [e.get("name") for e in timeline[refused[0] + 1:] if e.get("kind") == "tool"]
    expect_equal("tools called after the store refused the record write", [], later)
    outcome = persisted_state.last_outcome("job", "resume").get("outcome")
    expect_equal("the job's outcome after the store refused its record write", "failed", outcome)
