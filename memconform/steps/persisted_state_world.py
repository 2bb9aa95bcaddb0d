"""The world of the ``persisted-state`` profile (document 004): the
``persisted_state`` fixture and what its steps share.

State flows through the ``persisted_state`` fixture, a :class:`JobWorld`: the
job definitions and the world they act on (tool answers, hooks, clock), the
observations of every execution and the combined ledger of tool effects. Each
execution builds a script (``memconform.script/1``, profile
``persisted-state``) and runs it on the runtime under test through
:func:`memconform.simulator.runtime.observe`, so every store call lands on the
scenario's timeline.

Store refusals, a lost log and another writer come from the kit: the store the
runtime gets is the store under test wrapped by :class:`_Refusing` (raises
``StoreError`` on the refused write), :class:`_LostLog` or :class:`_OtherWriter`.
The steps themselves live in the family modules ``persisted_state`` (working
state), ``persisted_state_resumes``, ``persisted_state_knowledge``,
``persisted_state_eviction``, ``persisted_state_exports`` and
``persisted_state_promises``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from memconform.contract import StoreError
from memconform.harness.environment import Clock
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import SCRIPT_SCHEMA, Runtime, observe
from memconform.harness.wrapper import StoreWrapper
from memconform.simulator.persisted_state import RECORD_KEY, job_scope, knowledge_scope, log_thread
from memconform.steps.child_runs import run_fresh, runtime_options
from memconform.steps.common import Mismatch
from memconform.values import Fact, JSONValue, StateEntry

__all__ = ["JobWorld", "KillRound", "persisted_state"]

START = "2026-01-01T00:00:00Z"
MODEL_REPLIES = 64


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
        wrapper = self._wrapper()
        if wrapper is None:
            observation = observe(self.runtime, script, self.store)
        else:
            proxy = RecordingStore(
                wrapper, self.store.timeline, timeout=self.store.timeout, hangs=self.store.hangs
            )
            try:
                observation = observe(self.runtime, script, proxy)
            finally:
                proxy.close()
                if isinstance(wrapper, _OtherWriter):
                    wrapper.helper.close()
        observation["_from"] = before
        self.observations.append(observation)
        self.ledger.extend(observation.get("ledger", []))
        self.exports.extend(observation.get("exports", []))
        return observation

    def _wrapper(self) -> _AroundWorld | None:
        """The store the runtime is given in place of the world's own, when the
        scenario asked for one: a lost log, a refusal, or another writer."""
        if self.log_lost:
            return _LostLog(self)
        if self.refuse is not None:
            return _Refusing(self, *self.refuse)
        if self.other_writer is not None:
            return _OtherWriter(self, *self.other_writer)
        return None

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


class _AroundWorld(StoreWrapper):
    """The store under test as a job world sees it: the raw store inside, and the
    declaration of the world's store (the proxy's), whatever the wrapper changes."""

    def __init__(self, world: JobWorld) -> None:
        super().__init__(world.raw_store)
        self.world = world

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(self.world.store.capabilities)


class _Refusing(_AroundWorld):
    """The store under test, refusing one kind of write the way a real store
    does (``StoreError``), with nothing in the script telling the runtime:
    ``("record", step)`` refuses the job record write that marks ``step`` done,
    ``("fact", subject)`` refuses ``put_fact`` of that subject. Every refusal
    is noted on the timeline as the event ``store_refused``."""

    def __init__(self, world: JobWorld, what: str, name: str) -> None:
        super().__init__(world)
        self.what, self.name = what, name

    def _refuse(self, method: str) -> None:
        self.world.store.timeline.add("event", "store_refused", method=method, refused=self.name)
        raise StoreError(f"the store refused {method} ({self.name})")

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        if self.what == "record" and key == RECORD_KEY and marks_done(value, self.name):
            self._refuse("write_state")
        return self.inner.write_state(scope, key, value, expected)

    def put_fact(self, scope: str, fact: Fact) -> Any:
        if self.what == "fact" and fact.subject == self.name:
            self._refuse("put_fact")
        return self.inner.put_fact(scope, fact)


def marks_done(record: Any, step: str) -> bool:
    steps = record.get("steps") if isinstance(record, Mapping) else None
    return any(
        isinstance(s, Mapping) and s.get("name") == step and s.get("status") == "done"
        for s in steps or []
    )


class _OtherWriter(_AroundWorld):
    """The store under test, plus another writer who changes a job's record once:
    just before the runtime's first record write that marks ``step`` done, it
    adds ``name = value`` to the record's values through compare-and-set. Its
    calls go through a second recording proxy and are noted on the timeline
    as the event ``other_writer``."""

    def __init__(self, world: JobWorld, name: str, value: JSONValue, step: str) -> None:
        super().__init__(world)
        self.name, self.value, self.step = name, value, step
        self.helper = RecordingStore(
            world.raw_store, timeout=world.store.timeout, hangs=world.store.hangs
        )
        self.done = False

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        marks_step = marks_done(value, self.step)
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
        return self.inner.write_state(scope, key, value, expected)


class _LostLog(_AroundWorld):
    """The store under test, except that the job's logged transcript is lost: the
    runtime's reads and appends of the job's log thread go to a new, empty thread
    of the same scope, as if the log had been discarded."""

    def __init__(self, world: JobWorld) -> None:
        super().__init__(world)
        self.thread = log_thread(world.namespace, str(world.job["id"]))

    def _thread(self, thread_id: str) -> str:
        return f"{thread_id}-lost" if thread_id == self.thread else thread_id

    def messages(self, thread_id: str, *args: Any, **kwargs: Any) -> Any:
        return self.inner.messages(self._thread(thread_id), *args, **kwargs)

    def append(self, thread_id: str, *args: Any, **kwargs: Any) -> Any:
        return self.inner.append(self._thread(thread_id), *args, **kwargs)


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


def pairs(cell: str) -> dict[str, JSONValue]:
    """``a=1, b=$x`` as ``{"a": 1, "b": "$x"}``; an empty cell is ``{}``."""
    out: dict[str, JSONValue] = {}
    for item in filter(None, (part.strip() for part in cell.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"expected key=value, got {item!r}")
        out[key.strip()] = _json_or_text(value.strip())
    return out


def table_rows(datatable: Sequence[Sequence[str]]) -> list[dict[str, str]]:
    header = [h.strip() for h in datatable[0]]
    return [dict(zip(header, (c.strip() for c in row), strict=True)) for row in datatable[1:]]


def name_list(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def scope_of(entry: Mapping[str, Any]) -> str | None:
    args = entry.get("args") or []
    return str(args[0]) if args else None


def child_options(world: JobWorld) -> list[str]:
    return runtime_options(world.mutant, world.runtime_target)


def fresh_process(
    world_state: JobWorld, args: list[str], world: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Run ``job_resume`` in a new process with the fresh-process environment."""
    return run_fresh(world_state.store_url, args, world=world,
                     options=child_options(world_state))


def stored_fact(world: JobWorld, subject: str) -> Fact:
    fact = world.store.get_fact(world.kb_scope, subject)
    if fact is None:
        raise Mismatch(f"the stored fact {subject!r}", "a fact", "no fact")
    return fact
