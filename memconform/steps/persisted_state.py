"""Step definitions of the ``persisted-state`` profile (document 004).

State flows through the ``persisted_state`` fixture, a :class:`JobWorld`: the
job definitions and the world they act on (tool answers, hooks, clock), the
observations of every execution and the combined ledger of tool effects. Each
execution builds a script (``memconform.script/1``, profile
``persisted-state``) and runs it on the runtime under test through
:func:`memconform.simulator.runtime.observe`, so every store call lands on the
scenario's timeline.

Fresh-process steps start ``memconform.simulator.job_resume`` in a fresh
process (:mod:`memconform.adapters.fresh_process`): the kit's import path
passed as an argument, an environment holding only ``PATH`` (and ``TMPDIR``
pointing at a new empty folder), a new working directory; they read its
observation from stdout.

A kill is real: the job's first run executes in such a child process, whose
proxy stops right after the store acknowledged the chosen write (the record
write marking step k done, or the k-th write of the process) and the kit
SIGKILLs it; nothing reaches the runtime, no ``finally`` runs. The kill needs a
durable store (the child opens it by URL). Store refusals come from the kit
too: the store the runtime gets raises ``StoreError`` on the refused write.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from memconform.adapters.contract import ConflictError, StoreError
from memconform.adapters.proxy import AdapterContractError, RecordingStore
from memconform.simulator.environment import Clock
from memconform.simulator.persisted_state import (
    RECORD_KEY,
    job_scope,
    knowledge_scope,
    log_thread,
)
from memconform.simulator.runtime import SCRIPT_SCHEMA, Runtime, observe
from memconform.steps.child_runs import run_fresh, run_killed, runtime_options
from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.values import Fact, JSONValue, StateEntry

__all__ = ["JobWorld", "persisted_state"]

START = "2026-01-01T00:00:00Z"
MODEL_REPLIES = 64
MAX_KILL_WRITES = 64
"""The every-write kill scenario gives up on a job still writing after this many writes."""


@dataclass
class JobWorld:
    """Everything one persisted-state scenario builds up."""

    store: RecordingStore
    raw_store: object
    runtime: Runtime
    namespace: str
    store_url: str
    mutant: str | None
    runtime_target: str | None
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    job_id: str | None = None
    tools: dict[str, dict[str, JSONValue]] = field(default_factory=dict)
    hooks: dict[str, JSONValue] = field(default_factory=dict)
    cap: int | None = None
    lifetimes: dict[str, int] = field(default_factory=dict)
    kb: str = "user"
    clock: Clock = field(default_factory=lambda: Clock(START))
    observations: list[dict[str, Any]] = field(default_factory=list)
    ledger: list[dict[str, JSONValue]] = field(default_factory=list)
    fresh_timelines: list[list[dict[str, Any]]] = field(default_factory=list)
    exports: list[str] = field(default_factory=list)
    resume_from: int | None = None
    last_write: StateEntry | Exception | None = None
    last_forget: bool | None = None
    put_fact: Fact | None = None
    other_writer: tuple[str, JSONValue, str] | None = None
    log_lost: bool = False
    remembered: list[dict[str, str]] = field(default_factory=list)
    refuse: tuple[str, str] | None = None
    kill_rounds: list[KillRound] = field(default_factory=list)

    # -- scripts -----------------------------------------------------------------------
    def world(self) -> dict[str, Any]:
        """The environment sections every script of this scenario shares."""
        knowledge: dict[str, Any] = {"scope": self.kb, "cap": self.cap}
        if self.lifetimes:
            knowledge["lifetimes"] = dict(self.lifetimes)
        return {
            "clock": self.clock.now(),
            "tools": json.loads(json.dumps(self.tools)),
            "hooks": json.loads(json.dumps(self.hooks)),
            "model": {"agent": [{"reply": "ok"}] * MODEL_REPLIES},
            "knowledge": knowledge,
        }

    def run(self, actions: list[dict[str, Any]], namespace: str | None = None) -> dict[str, Any]:
        """Execute ``actions`` on the runtime under test and keep the observation."""
        script = {
            "schema": SCRIPT_SCHEMA,
            "profile": "persisted-state",
            "namespace": namespace or self.namespace,
            "actions": actions,
            **self.world(),
        }
        before = len(self.store.timeline)
        if self.log_lost:
            lost = _LostLog(self)
            proxy = RecordingStore(
                lost, self.store.timeline, timeout=self.store.timeout, hangs=self.store.hangs
            )
            try:
                observation = observe(self.runtime, script, proxy)
            finally:
                proxy.close()
        elif self.refuse is not None:
            refusing = _Refusing(self, *self.refuse)
            proxy = RecordingStore(
                refusing, self.store.timeline, timeout=self.store.timeout, hangs=self.store.hangs
            )
            try:
                observation = observe(self.runtime, script, proxy)
            finally:
                proxy.close()
        elif self.other_writer is None:
            observation = observe(self.runtime, script, self.store)
        else:
            name, value, step = self.other_writer
            meddler = _OtherWriter(self, name, value, step)
            proxy = RecordingStore(
                meddler, self.store.timeline, timeout=self.store.timeout, hangs=self.store.hangs
            )
            try:
                observation = observe(self.runtime, script, proxy)
            finally:
                proxy.close()
                meddler.helper.close()
        observation["_from"] = before
        self.observations.append(observation)
        self.ledger.extend(observation.get("ledger", []))
        self.exports.extend(observation.get("exports", []))
        return observation

    @property
    def job(self) -> dict[str, Any]:
        """The scenario's job definition."""
        if self.job_id is None:
            raise AssertionError("the scenario defines no job")
        return self.jobs[self.job_id]

    @property
    def scope(self) -> str:
        """The scenario job's state scope."""
        return job_scope(self.namespace, self.job["id"])

    @property
    def kb_scope(self) -> str:
        """The scenario's knowledge scope."""
        return knowledge_scope(self.namespace, self.kb)

    def record(self) -> StateEntry:
        """The job's record as stored now."""
        entry = self.store.read_state(self.scope, RECORD_KEY)
        if entry is None:
            raise Mismatch("the job's working-state record", "a stored record", "no record")
        return entry

    def last_outcome(self, *kinds: str) -> dict[str, Any]:
        """The newest outcome of one of ``kinds`` across all executions."""
        for observation in reversed(self.observations):
            for outcome in reversed(observation.get("outcomes", [])):
                if outcome.get("do") in kinds:
                    return dict(outcome)
        raise Mismatch(f"an outcome of {', '.join(kinds)}", "one", "none")

    def timeline(self) -> list[dict[str, Any]]:
        """Every entry observed in this process, in order."""
        return self.store.timeline.to_json()


@dataclass(frozen=True)
class KillRound:
    """One real kill of the every-write scenario: the job's first run killed
    right after the ``k``-th acknowledged write, then resumed in a fresh process."""

    k: int
    namespace: str
    done_at_kill: list[str]
    killed_ledger: list[str]
    resumed_ledger: list[str]
    resumed_outcome: str | None
    deploy_args: list[JSONValue]


class _Refusing:
    """The store under test, refusing one kind of write the way a real store
    does (``StoreError``), with nothing in the script telling the runtime:
    ``("record", step)`` refuses the job record write that marks ``step`` done,
    ``("fact", subject)`` refuses ``put_fact`` of that subject. Every refusal
    is noted on the timeline as the event ``store_refused``."""

    def __init__(self, world: JobWorld, what: str, name: str) -> None:
        self.inner = world.raw_store
        self.world = world
        self.what, self.name = what, name

    @property
    def capabilities(self) -> frozenset[str]:
        return self.world.store.capabilities

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def _refuse(self, method: str) -> None:
        self.world.store.timeline.add("event", "store_refused", method=method, refused=self.name)
        raise StoreError(f"the store refused {method} ({self.name})")

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        if self.what == "record" and key == RECORD_KEY and _marks_done(value, self.name):
            self._refuse("write_state")
        return self.inner.write_state(scope, key, value, expected)  # type: ignore[attr-defined]

    def put_fact(self, scope: str, fact: Fact) -> Any:
        if self.what == "fact" and fact.subject == self.name:
            self._refuse("put_fact")
        return self.inner.put_fact(scope, fact)  # type: ignore[attr-defined]


def _marks_done(record: Any, step: str) -> bool:
    steps = record.get("steps") if isinstance(record, Mapping) else None
    return any(
        isinstance(s, Mapping) and s.get("name") == step and s.get("status") == "done"
        for s in steps or []
    )


class _OtherWriter:
    """The store under test, plus another writer who changes a job's record once:
    just before the runtime's first record write that marks ``step`` done, it
    adds ``name = value`` to the record's values through compare-and-set. Its
    calls go through a second recording proxy and are noted on the timeline
    as the event ``other_writer``."""

    def __init__(self, world: JobWorld, name: str, value: JSONValue, step: str) -> None:
        self.inner = world.raw_store
        self.world = world
        self.name, self.value, self.step = name, value, step
        self.helper = RecordingStore(
            world.raw_store, timeout=world.store.timeout, hangs=world.store.hangs
        )
        self.done = False

    @property
    def capabilities(self) -> frozenset[str]:
        return self.world.store.capabilities

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        marks_step = _marks_done(value, self.step)
        if not self.done and scope == self.world.scope and key == RECORD_KEY and marks_step:
            self.done = True
            current = self.helper.read_state(scope, key)
            if current is not None and isinstance(current.value, Mapping):
                record = json.loads(json.dumps(current.value))
                record.setdefault("values", {})[self.name] = self.value
                entry = self.helper.write_state(scope, key, record, current.version)
                self.world.store.timeline.add(
                    "event", "other_writer", scope=scope, key=key, version=entry.version,
                    values={self.name: self.value},
                )
        return self.inner.write_state(scope, key, value, expected)  # type: ignore[attr-defined]


class _LostLog:
    """The store under test, except that the job's logged transcript is lost: the
    runtime's reads and appends of the job's log thread go to a new, empty thread
    of the same scope, as if the log had been discarded."""

    def __init__(self, world: JobWorld) -> None:
        self.inner = world.raw_store
        self.world = world
        self.thread = log_thread(world.namespace, str(world.job["id"]))

    @property
    def capabilities(self) -> frozenset[str]:
        return self.world.store.capabilities

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def _thread(self, thread_id: str) -> str:
        return f"{thread_id}-lost" if thread_id == self.thread else thread_id

    def messages(self, thread_id: str, *args: Any, **kwargs: Any) -> Any:
        return self.inner.messages(self._thread(thread_id), *args, **kwargs)  # type: ignore[attr-defined]

    def append(self, thread_id: str, *args: Any, **kwargs: Any) -> Any:
        return self.inner.append(self._thread(thread_id), *args, **kwargs)  # type: ignore[attr-defined]


@pytest.fixture
def persisted_state(
    request: pytest.FixtureRequest,
    store: RecordingStore,
    raw_store: object,
    runtime: Runtime,
    namespace: str,
    store_url: str,
) -> JobWorld:
    """A fresh :class:`JobWorld` for one scenario."""
    return JobWorld(
        store=store,
        raw_store=raw_store,
        runtime=runtime,
        namespace=namespace,
        store_url=store_url,
        mutant=request.config.getoption("--memconform-mutant"),
        runtime_target=request.config.getoption("--memconform-runtime"),
    )


# -- parsing helpers ---------------------------------------------------------------------


def _json_or_text(text: str) -> JSONValue:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _pairs(cell: str) -> dict[str, JSONValue]:
    """``a=1, b=$x`` as ``{"a": 1, "b": "$x"}``; an empty cell is ``{}``."""
    out: dict[str, JSONValue] = {}
    for item in filter(None, (part.strip() for part in cell.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"expected key=value, got {item!r}")
        out[key.strip()] = _json_or_text(value.strip())
    return out


def _rows(datatable: Sequence[Sequence[str]]) -> list[dict[str, str]]:
    header = [h.strip() for h in datatable[0]]
    return [dict(zip(header, (c.strip() for c in row), strict=True)) for row in datatable[1:]]


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _scope_of(entry: Mapping[str, Any]) -> str | None:
    args = entry.get("args") or []
    return str(args[0]) if args else None


# -- givens ------------------------------------------------------------------------------


@given(parsers.parse('the persisted-state store declares "{capability}"'))
def store_declares(persisted_state: JobWorld, capability: str) -> None:
    require_capability(persisted_state.store.capabilities, capability)


@given(parsers.parse('a job "{job_id}" with the steps:'))
def job_with_steps(
    persisted_state: JobWorld, job_id: str, datatable: Sequence[Sequence[str]]
) -> None:
    steps = []
    for row in _rows(datatable):
        steps.append(
            {
                "name": row["step"],
                "tool": row["tool"],
                "args": _pairs(row.get("args", "")),
                "record": _pairs(row.get("records", "")),
                "marks": _pairs(row.get("marks", "")),
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


@given(parsers.parse("the knowledge base holds at most {cap:d} facts"))
def knowledge_cap(persisted_state: JobWorld, cap: int) -> None:
    persisted_state.cap = cap


@given(parsers.parse('the lifetime of "{kind}" facts is {days:d} days'))
def knowledge_lifetime(persisted_state: JobWorld, kind: str, days: int) -> None:
    persisted_state.lifetimes[kind] = days * 86_400


@given(parsers.re(r"(?P<days>\d+) days? ha(?:s|ve) passed on the scenario clock"))
@when(parsers.re(r"(?P<days>\d+) days? pass(?:es)? on the scenario clock"))
def days_pass(persisted_state: JobWorld, days: str) -> None:
    persisted_state.clock.advance(int(days) * 86_400)


# -- jobs --------------------------------------------------------------------------------


@when("the job runs to the end")
def job_runs(persisted_state: JobWorld) -> None:
    require_capability(persisted_state.store.capabilities, "state")
    persisted_state.run([{"do": "job", "job": persisted_state.job}])


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
        done = [str(s["name"]) for s in world.job["steps"] if _marks_done(record, s["name"])]
        args = ["--namespace", namespace, "--job", job_id]
        resumed = _fresh_process(world, args, world.world())
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
    out = run_killed(world.store_url, script, kill, options=_runtime_options(world),
                     what="the process running the job")
    if out.get("killed_after") is not None:
        out["outcomes"] = [{"do": "job", "job": world.job["id"], "outcome": "killed"}]
    return out


def _runtime_options(world: JobWorld) -> list[str]:
    return runtime_options(world.mutant, world.runtime_target)


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
    observation = _fresh_process(persisted_state, args, world)
    persisted_state.observations.append(observation)
    persisted_state.ledger.extend(observation.get("ledger", []))
    persisted_state.fresh_timelines.append(observation.get("timeline", []))


def _fresh_process(
    world_state: JobWorld, args: list[str], world: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Run ``job_resume`` in a new process with a scrubbed environment."""
    return run_fresh(world_state.store_url, args, world=world,
                     options=_runtime_options(world_state))


# -- job checks --------------------------------------------------------------------------


@then(parsers.parse('the job outcome is "{outcome}"'))
@decides("PS-007", "PS-009", "PS-032")
def job_outcome_is(persisted_state: JobWorld, outcome: str) -> None:
    expect_equal("the job's outcome", outcome, persisted_state.last_outcome("job", "resume").get(
        "outcome"))


def _record_writes(world: JobWorld, before_seq: int | None) -> list[dict[str, Any]]:
    return [
        e for e in world.timeline()
        if e["kind"] == "store" and e["name"] == "write_state" and _scope_of(e) == world.scope
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
    expected = [(r["step"], r["status"]) for r in _rows(datatable)]
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
                and _scope_of(later) == persisted_state.scope
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
            and _scope_of(w) == persisted_state.scope
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
    expect_equal("the record's fields", sorted(_names(fields)),
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
    expected = [(s, role) for s in _names(steps) for role in ("assistant", "tool")]
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


@then("the resumed job did not read the job's log")
@decides("PS-008")
def resume_did_not_read_log(persisted_state: JobWorld) -> None:
    start = persisted_state.resume_from or 0
    thread = log_thread(persisted_state.namespace, persisted_state.job["id"])
    reads = [
        e["seq"] for e in persisted_state.timeline()[start:]
        if e["kind"] == "store" and e["name"] == "messages" and _scope_of(e) == thread
    ]
    expect_equal("reads of the job's logged transcript during the resume", [], reads)


@then("the ledger of all runs holds each effect once, in plan order:")
@decides("PS-006", "PS-009")
def ledger_once(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    expected = [r["effect"] for r in _rows(datatable)]
    observed = [str(e.get("effect")) for e in persisted_state.ledger]
    expect_equal("the effects in the ledger of the killed and the resumed runs", expected, observed)


@then("with its log lost, the job completed with each effect once, in plan order:")
@decides("PS-033")
def completed_without_log(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    expected = [r["effect"] for r in _rows(datatable)]
    observed = [str(e.get("effect")) for e in persisted_state.ledger]
    outcome = persisted_state.last_outcome("job", "resume").get("outcome")
    expect_equal("the job's outcome and the effects of the killed and the resumed runs",
                 ("completed", expected), (outcome, observed))


@then("the durable-write confirmation was never asked")
@decides("PS-011", "PS-021")
def confirmation_never_asked(persisted_state: JobWorld) -> None:
    asked = [e["seq"] for e in persisted_state.timeline()
             if e["kind"] == "hook" and e["name"] == "confirm_durable_write"]
    expect_equal("calls of the confirm_durable_write hook", [], asked)


# -- knowledge -------------------------------------------------------------------------


@when("the agent remembers the facts:")
def agent_remembers(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    require_capability(persisted_state.store.capabilities, "knowledge")
    requests = [_fact_request(row) for row in _rows(datatable)]
    persisted_state.remembered.extend(requests)
    persisted_state.run([{"do": "remember", "fact": request} for request in requests])


def _fact_request(row: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in row.items() if v}


@when(parsers.parse('the agent recalls "{subject}"'))
def agent_recalls(persisted_state: JobWorld, subject: str) -> None:
    persisted_state.run([{"do": "recall", "subject": subject}])


@when("the agent recalls every fact")
def agent_recalls_all(persisted_state: JobWorld) -> None:
    persisted_state.run([{"do": "recall"}])


@when(parsers.parse('the agent forgets "{subject}"'))
def agent_forgets(persisted_state: JobWorld, subject: str) -> None:
    persisted_state.run([{"do": "forget", "subject": subject}])


@when("the persisted state is exported")
def state_exported(persisted_state: JobWorld) -> None:
    jobs = list(persisted_state.jobs)
    persisted_state.run([{"do": "export", "jobs": jobs}])


@when("the same facts are remembered in reverse order in a fresh knowledge base and exported")
def remembered_in_reverse(persisted_state: JobWorld) -> None:
    actions: list[dict[str, Any]] = [
        {"do": "remember", "fact": request} for request in reversed(persisted_state.remembered)
    ]
    actions.append({"do": "export", "jobs": []})
    persisted_state.run(actions, namespace=persisted_state.namespace + "-reverse")


def _stored_fact(world: JobWorld, subject: str) -> Fact:
    fact = world.store.get_fact(world.kb_scope, subject)
    if fact is None:
        raise Mismatch(f"the stored fact {subject!r}", "a fact", "no fact")
    return fact


@then(parsers.parse('the stored fact "{subject}" has the provenance:'))
@decides("PS-012")
def fact_provenance(
    persisted_state: JobWorld, subject: str, datatable: Sequence[Sequence[str]]
) -> None:
    fact = _stored_fact(persisted_state, subject).to_json()
    expected = {r["field"]: r["value"] for r in _rows(datatable)}
    expect_equal(f"the provenance of {subject!r}", expected, {k: fact.get(k) for k in expected})


@then(parsers.parse('the stored fact "{subject}" says "{statement}"'))
@decides("PS-022")
def fact_says(persisted_state: JobWorld, subject: str, statement: str) -> None:
    expect_equal(f"the statement of {subject!r}", statement,
                 _stored_fact(persisted_state, subject).statement)


@then(parsers.parse('the stored fact "{subject}" is labelled "{trust}"'))
@decides("PS-018")
def fact_labelled(persisted_state: JobWorld, subject: str, trust: str) -> None:
    expect_equal(f"the trust label of {subject!r}", trust,
                 _stored_fact(persisted_state, subject).trust)


@then(parsers.parse('the stored fact "{subject}" has the origin "{origin}"'))
@decides("PS-019")
def fact_origin(persisted_state: JobWorld, subject: str, origin: str) -> None:
    expect_equal(f"the origin of {subject!r}", origin,
                 _stored_fact(persisted_state, subject).origin)


@then(parsers.re(r'the knowledge base holds the subjects "(?P<subjects>[^"]*)"'))
@decides("PS-015", "PS-016", "PS-017", "PS-020", "PS-021")
def kb_subjects(persisted_state: JobWorld, subjects: str) -> None:
    facts = persisted_state.store.facts(persisted_state.kb_scope)
    expect_equal("the subjects in the knowledge base", sorted(_names(subjects)),
                 sorted(f.subject for f in facts))


def _recalled(world: JobWorld) -> list[dict[str, Any]]:
    return list(world.last_outcome("recall").get("facts") or [])


@then(parsers.parse('the recall shows only "{statement}" for "{subject}"'))
@decides("PS-015")
def recall_only(persisted_state: JobWorld, statement: str, subject: str) -> None:
    shown = [f.get("statement") for f in _recalled(persisted_state) if f.get("subject") == subject]
    expect_equal(f"the statements recalled for {subject!r}", [statement], shown)


@then(parsers.parse('the recall does not show "{subject}"'))
@decides("PS-017")
def recall_lacks(persisted_state: JobWorld, subject: str) -> None:
    shown = [f for f in _recalled(persisted_state) if f.get("subject") == subject]
    expect_equal(f"recalled entries for {subject!r}", [], shown)


def _shown_to_model(world: JobWorld, subject: str) -> dict[str, Any]:
    """The entry for ``subject`` in the newest knowledge view on the timeline."""
    for e in reversed(world.timeline()):
        request = e.get("request")
        if e["kind"] == "model" and isinstance(request, Mapping) and "knowledge" in request:
            for item in request["knowledge"]:
                if isinstance(item, Mapping) and item.get("subject") == subject:
                    return dict(item)
            break
    raise Mismatch(f"what the model was shown for {subject!r}", "an entry", "nothing")


@then(parsers.parse('the recalled fact "{subject}" is shown as "{status}"'))
@decides("PS-013", "PS-014")
def recalled_status(persisted_state: JobWorld, subject: str, status: str) -> None:
    item = _shown_to_model(persisted_state, subject)
    expect_equal(f"the status {subject!r} was shown to the model with", status,
                 item.get("status"))
    if status == "unverified" and "unverified" not in str(item.get("text", "")):
        raise Mismatch(f"the text shown for {subject!r}", "a mention of 'unverified'",
                       str(item.get("text")))


@then(parsers.parse('the model was shown "{subject}" as a claim from "{source}"'))
@decides("PS-018")
def shown_as_claim(persisted_state: JobWorld, subject: str, source: str) -> None:
    item = _shown_to_model(persisted_state, subject)
    observed = (item.get("shown_as"), item.get("trust"), f"claim from {source}" in str(
        item.get("text", "")))
    expect_equal(f"how {subject!r} was shown to the model (shown_as, trust, labelled text)",
                 ("claim", "untrusted", True), observed)


@then(parsers.parse('the model was shown "{subject}" as copied from "{source}"'))
@decides("PS-019")
def shown_as_copied(persisted_state: JobWorld, subject: str, source: str) -> None:
    item = _shown_to_model(persisted_state, subject)
    observed = (item.get("origin"), f"copied from {source}" in str(item.get("text", "")))
    expect_equal(f"how {subject!r} was shown to the model (origin, labelled text)",
                 ("copied", True), observed)


@then(parsers.parse('the remember request for "{subject}" was "{outcome}"'))
@decides("PS-020", "PS-021", "PS-022")
def remember_outcome(persisted_state: JobWorld, subject: str, outcome: str) -> None:
    found = [
        o.get("outcome") for obs in persisted_state.observations for o in obs.get("outcomes", [])
        if o.get("do") == "remember" and o.get("subject") == subject
    ]
    expect_equal(f"the outcome of remembering {subject!r}", outcome, found[-1] if found else None)


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


def _instant(text: str) -> datetime:
    """An ISO-8601 date as an aware instant (a trailing ``Z`` is UTC)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _evicted_by(world: JobWorld, subject: str) -> list[str] | None:
    """The facts the runtime removed from the store (the accepted ``forget`` calls
    on the timeline) between the previous ``put_fact`` and the one storing
    ``subject``; the runtime's own ``evicted`` list is a claim and is not read.
    ``None`` when ``subject`` was never stored."""
    entries = world.timeline()
    puts = [i for i, e in enumerate(entries) if e["kind"] == "store" and e["name"] == "put_fact"]
    mine = [i for i in puts if _put_subject(entries[i]) == subject]
    if not mine:
        return None
    start = max((i for i in puts if i < mine[-1]), default=-1) + 1
    return [
        str(e["args"][1]) for e in entries[start:mine[-1]]
        if e["kind"] == "store" and e["name"] == "forget" and "raised" not in e
        and len(e.get("args") or []) > 1
    ]


def _put_subject(entry: Mapping[str, Any]) -> str | None:
    args = entry.get("args") or []
    fact = args[1] if len(args) > 1 else None
    return str(fact.get("subject")) if isinstance(fact, Mapping) else None


@then(parsers.parse('the knowledge base holds {count:d} facts, among them "{subjects}"'))
@decides("PS-016")
def kb_count(persisted_state: JobWorld, count: int, subjects: str) -> None:
    held = sorted(f.subject for f in persisted_state.store.facts(persisted_state.kb_scope))
    missing = [s for s in _names(subjects) if s not in held]
    expect_equal("the number of facts in the knowledge base and the subjects missing",
                 (count, []), (len(held), missing))


@then(parsers.parse(
    'the remember request for "{subject}" evicted one fact, now gone from the store'
))
@decides("PS-016")
def remember_evicted_one(persisted_state: JobWorld, subject: str) -> None:
    evicted = _evicted_by(persisted_state, subject) or []
    held = {f.subject for f in persisted_state.store.facts(persisted_state.kb_scope)}
    expect_equal(f"the facts evicted to remember {subject!r} (count, still stored)",
                 (1, []), (len(evicted), [s for s in evicted if s in held]))


@then(parsers.parse('the remember request for "{subject}" evicted nothing'))
@decides("PS-016")
def remember_evicted_nothing(persisted_state: JobWorld, subject: str) -> None:
    expect_equal(f"the facts evicted to remember {subject!r}", [],
                 _evicted_by(persisted_state, subject) or [])


@then(parsers.parse('the stored fact "{later}" is rechecked later than "{earlier}"'))
@decides("PS-014")
def rechecked_later(persisted_state: JobWorld, later: str, earlier: str) -> None:
    first, second = (_stored_fact(persisted_state, s) for s in (later, earlier))
    if second.recheck_at is None or (
        first.recheck_at is not None
        and _instant(first.recheck_at) <= _instant(second.recheck_at)
    ):
        raise Mismatch(f"the recheck date of {later!r} against that of {earlier!r}",
                       f"later than {second.recheck_at}", str(first.recheck_at))


@then("the durable-write confirmation was asked before any fact reached the store")
@decides("PS-020")
def confirmation_first(persisted_state: JobWorld) -> None:
    order = [
        "confirm" if e["kind"] == "hook" else "put_fact"
        for e in persisted_state.timeline()
        if (e["kind"] == "hook" and e["name"] == "confirm_durable_write")
        or (e["kind"] == "store" and e["name"] == "put_fact")
    ]
    if not order or order[0] != "confirm" or any(
        order[i] == "put_fact" and order[i - 1] != "confirm" for i in range(1, len(order))
    ):
        raise Mismatch("confirmation before each durable write",
                       "confirm_durable_write before every put_fact", " -> ".join(order) or "none")


# -- export ----------------------------------------------------------------------------


@then("the two exports are identical")
@decides("PS-023")
def exports_identical(persisted_state: JobWorld) -> None:
    if len(persisted_state.exports) < 2:
        raise Mismatch("two exports", "two", str(len(persisted_state.exports)))
    expect_equal("the second export", persisted_state.exports[-2], persisted_state.exports[-1])


@then(parsers.parse('the export lists the facts in the order "{subjects}"'))
@decides("PS-023")
def export_order(persisted_state: JobWorld, subjects: str) -> None:
    headers = [
        json.loads(line[len("[fact "):-1]) for line in persisted_state.exports[-1].splitlines()
        if line.startswith("[fact ")
    ]
    expect_equal("the order of fact blocks in the export", _names(subjects), headers)


def _blocks(text: str) -> dict[int, str]:
    """Line number -> the header of the block the line belongs to."""
    owner: dict[int, str] = {}
    current = ""
    for n, line in enumerate(text.splitlines()):
        if line.startswith("["):
            current = line
        owner[n] = current
    return owner


@then(parsers.parse('the two exports differ only in the lines of "{subject}"'))
@decides("PS-024")
def exports_differ_in(persisted_state: JobWorld, subject: str) -> None:
    before, after = persisted_state.exports[-2], persisted_state.exports[-1]
    header = f"[fact {json.dumps(subject, ensure_ascii=False)}]"
    owners_before, owners_after = _blocks(before), _blocks(after)
    outside: list[str] = []
    changed = False
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed = True
        lines = [owners_before[i] for i in range(i1, i2)] + [owners_after[j] for j in range(j1, j2)]
        outside += [owner for owner in lines if owner != header]
    if not changed:
        raise Mismatch("the diff between the exports", f"changes in {header}", "no change")
    expect_equal(f"changed lines outside {header}", [], outside)


@then("the export contains the lines:")
@decides("PS-025")
def export_lines(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    lines = set(persisted_state.exports[-1].splitlines())
    missing = [r["line"] for r in _rows(datatable) if r["line"] not in lines]
    expect_equal("lines missing from the export", [], missing)


# -- store promises ----------------------------------------------------------------------


def _state_scope(world: JobWorld, name: str = "store") -> str:
    return f"{world.namespace}/state/{name}"


@when(parsers.re(
    r'the state key "(?P<key>[^"]+)" is written as (?P<value>\{.*\}) '
    r"expecting (?P<expected>no version|version \d+)"
))
def state_written(persisted_state: JobWorld, key: str, value: str, expected: str) -> None:
    require_capability(persisted_state.store.capabilities, "state")
    version = None if expected == "no version" else int(expected.split()[1])
    try:
        persisted_state.last_write = persisted_state.store.write_state(
            _state_scope(persisted_state), key, json.loads(value), version
        )
    except ConflictError as exc:
        persisted_state.last_write = exc


@then("the last state write was refused with a conflict")
@decides("PS-026")
def write_conflicted(persisted_state: JobWorld) -> None:
    observed = persisted_state.last_write
    if not isinstance(observed, ConflictError):
        raise Mismatch("the stale write", "ConflictError", repr(observed))


@then(parsers.re(
    r'the state key "(?P<key>[^"]+)" reads (?P<value>\{.*\}) at version (?P<version>\d+)'
))
@decides("PS-026")
def state_reads(persisted_state: JobWorld, key: str, value: str, version: str) -> None:
    entry = persisted_state.store.read_state(_state_scope(persisted_state), key)
    observed = None if entry is None else (entry.value, entry.version)
    expect_equal(f"state key {key!r}", (json.loads(value), int(version)), observed)


def _fact(world: JobWorld, subject: str, statement: str) -> Fact:
    return Fact(
        subject=subject, statement=statement, writer="agent:store-check",
        source="tool:inventory", evidence="inventory listing", written_at=world.clock.now(),
        kind="observation", trust="trusted", origin="concluded",
        recheck_at="2026-04-01T00:00:00Z",
    )


def _kb(world: JobWorld, scope: str | None) -> str:
    return world.kb_scope if scope is None else knowledge_scope(world.namespace, scope)


@when(parsers.re(
    r'the fact "(?P<subject>[^"]+)" is put directly(?: in scope "(?P<scope>[^"]+)")? '
    r'with the statement "(?P<statement>[^"]+)"'
))
def fact_put(persisted_state: JobWorld, subject: str, statement: str, scope: str | None) -> None:
    require_capability(persisted_state.store.capabilities, "knowledge")
    fact = _fact(persisted_state, subject, statement)
    persisted_state.store.put_fact(_kb(persisted_state, scope), fact)
    persisted_state.put_fact = fact


@when("a fact is put directly with the fields:")
def fact_put_fields(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    fields: dict[str, Any] = {r["field"]: r["value"] for r in _rows(datatable)}
    fields["metadata"] = {"note": "ünïcode ✓", "tags": ["a", "b"]}
    fact = Fact.from_json(fields)
    persisted_state.store.put_fact(persisted_state.kb_scope, fact)
    persisted_state.put_fact = fact


@then(parsers.parse('the fact "{subject}" reads back with exactly those fields'))
@decides("PS-028")
def fact_exact(persisted_state: JobWorld, subject: str) -> None:
    expected = persisted_state.put_fact
    assert expected is not None
    got = persisted_state.store.get_fact(persisted_state.kb_scope, subject)
    expect_equal(f"get_fact({subject!r})", expected.to_json(),
                 None if got is None else got.to_json())
    listed = [f.to_json() for f in persisted_state.store.facts(persisted_state.kb_scope)]
    expect_equal("facts()", [expected.to_json()], listed)


@then(parsers.parse('the store returns only "{statement}" for "{subject}"'))
@decides("PS-027")
def store_only(persisted_state: JobWorld, statement: str, subject: str) -> None:
    got = persisted_state.store.get_fact(persisted_state.kb_scope, subject)
    expect_equal(f"get_fact({subject!r})", statement, None if got is None else got.statement)
    listed = [f.statement for f in persisted_state.store.facts(persisted_state.kb_scope)
              if f.subject == subject]
    expect_equal(f"facts() entries for {subject!r}", [statement], listed)


@when(parsers.re(
    r'the fact "(?P<subject>[^"]+)" is forgotten directly(?: in scope "(?P<scope>[^"]+)")?$'
))
def fact_forgotten(persisted_state: JobWorld, subject: str, scope: str | None) -> None:
    persisted_state.last_forget = persisted_state.store.forget(_kb(persisted_state, scope), subject)


@then(parsers.re(r"forget answered (?P<answer>true|false)"))
@decides("PS-029")
def forget_answer(persisted_state: JobWorld, answer: str) -> None:
    expect_equal("forget's answer", answer == "true", persisted_state.last_forget)


@then(parsers.parse('the store returns no fact for "{subject}"'))
@decides("PS-029")
def store_none(persisted_state: JobWorld, subject: str) -> None:
    got = persisted_state.store.get_fact(persisted_state.kb_scope, subject)
    expect_equal(f"get_fact({subject!r})", None, got)
    listed = [f.subject for f in persisted_state.store.facts(persisted_state.kb_scope)]
    expect_equal("subjects in facts()", [], [s for s in listed if s == subject])


@then(parsers.parse('scope "{scope}" returns only "{statement}" for "{subject}"'))
@decides("PS-030")
def scope_only(persisted_state: JobWorld, scope: str, statement: str, subject: str) -> None:
    kb = _kb(persisted_state, scope)
    got = persisted_state.store.get_fact(kb, subject)
    expect_equal(f"get_fact in scope {scope!r}", statement, None if got is None else got.statement)
    expect_equal(f"facts() of scope {scope!r}", [statement],
                 [f.statement for f in persisted_state.store.facts(kb)])


@then(parsers.parse('scope "{scope}" holds no facts'))
@decides("PS-030")
def scope_empty(persisted_state: JobWorld, scope: str) -> None:
    expect_equal(f"facts() of scope {scope!r}", [],
                 [f.subject for f in persisted_state.store.facts(_kb(persisted_state, scope))])


@then(parsers.parse('working state written in scope "{left}" is not visible in scope "{right}"'))
@decides("PS-030")
def state_isolated(persisted_state: JobWorld, left: str, right: str) -> None:
    if "state" not in persisted_state.store.capabilities:
        return
    store = persisted_state.store
    store.write_state(_state_scope(persisted_state, left), "k", {"side": left}, None)
    expect_equal(f"state key 'k' in scope {right!r}", None,
                 store.read_state(_state_scope(persisted_state, right), "k"))
    try:
        entry = store.write_state(_state_scope(persisted_state, right), "k", {"side": right}, None)
    except ConflictError as exc:
        raise Mismatch(f"a first write in scope {right!r}", "version 1", repr(exc)) from None
    expect_equal(f"the version of the first write in scope {right!r}", 1, entry.version)
    left_entry = store.read_state(_state_scope(persisted_state, left), "k")
    expect_equal(f"state key 'k' in scope {left!r}", ({"side": left}, 1),
                 None if left_entry is None else (left_entry.value, left_entry.version))


@then(parsers.re(
    r'a fresh process opening the store URL reads the state key "(?P<key>[^"]+)" as '
    r"(?P<value>\{.*\}) at version (?P<version>\d+)"
))
@decides("PS-031")
def fresh_reads_state(persisted_state: JobWorld, key: str, value: str, version: str) -> None:
    shown = _fresh_process(
        persisted_state, ["--show-state", _state_scope(persisted_state), key]
    )
    expect_equal(f"state key {key!r} read by a fresh process",
                 {"key": key, "value": json.loads(value), "version": int(version)},
                 shown.get("state"))


@then(parsers.parse('a fresh process opening the store URL reads the fact "{subject}" unchanged'))
@decides("PS-031")
def fresh_reads_fact(persisted_state: JobWorld, subject: str) -> None:
    expected = persisted_state.put_fact
    assert expected is not None
    shown = _fresh_process(persisted_state, ["--show-facts", persisted_state.kb_scope])
    facts = [f for f in shown.get("facts", []) if f.get("subject") == subject]
    expect_equal(f"the fact {subject!r} read by a fresh process", [expected.to_json()], facts)

