"""The reference runtime of the ``persisted-state`` profile (document 004).

A script of this profile is a list of ``actions`` run in order against one
scenario ``namespace``:

- ``{"do": "job", "job": {...}, "stop_after": k, "stop": "handoff"}``
  runs a multi-step job. The job's working state is one record, kept under the
  key ``record`` in the scope ``<namespace>/job/<job id>`` of the store's
  ``state`` capability. The record is read from the store at the start of every
  step and rewritten (compare-and-set) after a step's tool returned success,
  never before. ``stop_after`` hands the job to a person right after plan
  step ``k`` (1-based); nothing else is written. A kill is not in the script:
  the kit kills the process running the job itself (it runs the job in a child
  process and SIGKILLs it right after the store acknowledged a write). A write
  the store refuses (``StoreError``) stops the job (or the remember request),
  whose outcome is ``failed`` with the store's error.
- ``{"do": "resume", "job": id}`` continues a job from its record alone: the
  plan, the statuses and the discovered values all come from the store.
- ``{"do": "remember", "fact": {...}}``, ``{"do": "recall", "subject": s}``
  (``subject`` optional: all facts), ``{"do": "forget", "subject": s}`` operate
  on durable knowledge in the scope ``<namespace>/kb/<knowledge.scope>``.
- ``{"do": "advance", "seconds": n}`` moves the injected clock.
- ``{"do": "export", "jobs": [ids]}`` renders the persisted state as text.

The ``knowledge`` section configures durable knowledge: ``scope`` (default
``user``), ``cap`` (maximum number of facts, ``null`` for none) and
``lifetimes`` (seconds per fact kind, merged over :data:`DEFAULT_LIFETIMES`; a
kind with no lifetime gets the ``observation`` one).

Durable writes pass, in this order: the standing-instruction check (refused
before anything else), the ``confirm_durable_write`` hook (anything but
``allow`` refuses), eviction at the cap (see :func:`eviction_order`), then
``put_fact``. Working-state writes never consult that hook.

Each step's exchange is logged as a batch of two messages on the job's log
thread ``<job scope>/log`` (audit only: nothing here reads it back).

The observation holds ``outcomes`` (one object per action, in order) and
``exports`` (the text of each export action).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memconform.contract import ConflictError, StoreError
from memconform.harness.environment import Environment, ScriptedFailure, ScriptError
from memconform.values import Fact, JSONValue, Message, StateEntry

__all__ = [
    "DEFAULT_LIFETIMES",
    "INSTRUCTION_MARKERS",
    "RECORD_KEY",
    "JobRunner",
    "KnowledgeConfig",
    "Runner",
    "eviction_order",
    "execute",
    "is_instruction",
    "is_unverified",
    "job_scope",
    "knowledge_scope",
    "log_thread",
    "render_export",
    "render_fact",
]

RECORD_KEY = "record"
"""The working-state key that holds a job's whole record."""

DAY = 86_400
DEFAULT_LIFETIMES: dict[str, int] = {
    "preference": 365 * DAY,
    "observation": 90 * DAY,
    "correction": 365 * DAY,
    "inference": 30 * DAY,
}
"""Seconds from a fact's writing to its recheck date, per kind (PS-013, PS-014)."""

INSTRUCTION_MARKERS: tuple[str, ...] = (
    "always",
    "never",
    "from now on",
    "you must",
    "you should",
    "do not",
    "don't",
    "ignore",
    "make sure to",
)
"""Opening words that make a statement a standing instruction (PS-021)."""

_ACTIONS = ("job", "resume", "remember", "recall", "forget", "advance", "export")
_STOPS = ("handoff",)
_ORIGINS = ("concluded", "copied")
_TRUST = ("trusted", "untrusted")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


def job_scope(namespace: str, job_id: str) -> str:
    """The state scope holding one job's record."""
    return f"{namespace}/job/{job_id}"


def log_thread(namespace: str, job_id: str) -> str:
    """The thread that logs one job's exchanges (its conversation history)."""
    return f"{job_scope(namespace, job_id)}/log"


def knowledge_scope(namespace: str, name: str) -> str:
    """The knowledge scope called ``name`` inside ``namespace``."""
    return f"{namespace}/kb/{name}"


def is_instruction(statement: str, kind: str) -> bool:
    """Whether a remembered entry is a standing instruction rather than a fact.

    True for ``kind == "instruction"`` and for statements opening with one of
    :data:`INSTRUCTION_MARKERS` (case-insensitive, after leading punctuation).
    """
    if kind == "instruction":
        return True
    opening = re.sub(r"^[\W_]+", "", statement.strip().lower())
    return any(
        opening == marker or opening.startswith(marker + " ") or opening.startswith(marker + ",")
        for marker in INSTRUCTION_MARKERS
    )


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _format_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def is_unverified(fact: Fact, now: str) -> bool:
    """A fact is unverified once the clock is at or past its recheck date."""
    return fact.recheck_at is not None and _parse_time(now) >= _parse_time(fact.recheck_at)


def eviction_order(facts: Sequence[Fact], now: str) -> list[Fact]:
    """Facts in the order they are evicted at the cap (PS-016).

    Unverified facts (clock at or past ``recheck_at``) come first, earliest
    recheck date first; then current facts, oldest ``written_at`` first; ties
    are broken by subject.
    """

    def key(fact: Fact) -> tuple[int, str, str]:
        if is_unverified(fact, now):
            return (0, _format_time(_parse_time(str(fact.recheck_at))), fact.subject)
        return (1, _format_time(_parse_time(fact.written_at)), fact.subject)

    return sorted(facts, key=key)


# -- script reading ----------------------------------------------------------------------


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScriptError(f"{where}: expected an object")
    return value


def _text(value: Any, where: str, *, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(value, str) or not value:
        raise ScriptError(f"{where}: expected a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise ScriptError(f"{where}: {value!r} is not a valid name")
    return value


def _choice(value: Any, where: str, choices: Sequence[str], default: str) -> str:
    if value is None:
        return default
    if value not in choices:
        raise ScriptError(f"{where}: must be one of {', '.join(choices)}, got {value!r}")
    return str(value)


@dataclass(frozen=True)
class KnowledgeConfig:
    """The ``knowledge`` section: scope name, cap and lifetimes per kind."""

    scope: str = "user"
    cap: int | None = None
    lifetimes: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_LIFETIMES))

    @classmethod
    def from_script(cls, script: Mapping[str, Any]) -> KnowledgeConfig:
        """Read and check ``script["knowledge"]``; raises :class:`ScriptError`."""
        raw = _mapping(script.get("knowledge", {}), "knowledge")
        scope = _text(raw.get("scope", "user"), "knowledge.scope", pattern=_NAME)
        cap = raw.get("cap")
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ScriptError("knowledge.cap: expected a positive integer or null")
        lifetimes = dict(DEFAULT_LIFETIMES)
        for kind, seconds in _mapping(raw.get("lifetimes", {}), "knowledge.lifetimes").items():
            if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 0:
                raise ScriptError(f"knowledge.lifetimes.{kind}: expected seconds (an integer >= 0)")
            lifetimes[kind] = seconds
        return cls(scope=scope, cap=cap, lifetimes=lifetimes)


def _check_plan(raw: Any, where: str) -> dict[str, JSONValue]:
    """Check a job definition and return its initial record."""
    job = _mapping(raw, where)
    _text(job.get("id"), f"{where}.id", pattern=_NAME)
    goal = _text(job.get("goal", "unstated"), f"{where}.goal")
    steps = job.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ScriptError(f"{where}.steps: expected a non-empty list of steps")
    seen: set[str] = set()
    plan: list[dict[str, JSONValue]] = []
    for i, raw_step in enumerate(steps):
        at = f"{where}.steps[{i}]"
        step = _mapping(raw_step, at)
        name = _text(step.get("name"), f"{at}.name", pattern=_NAME)
        if name in seen:
            raise ScriptError(f"{at}.name: {name!r} is used by an earlier step")
        seen.add(name)
        tool = _text(step.get("tool"), f"{at}.tool", pattern=_NAME)
        args = _mapping(step.get("args", {}), f"{at}.args")
        record = _mapping(step.get("record", {}), f"{at}.record")
        for key, path in record.items():
            if not isinstance(path, str) or not (path == "$result" or path.startswith("$result.")):
                raise ScriptError(f"{at}.record.{key}: expected '$result' or '$result.<field>'")
        marks = _mapping(step.get("marks", {}), f"{at}.marks")
        plan.append(
            {
                "name": name,
                "tool": tool,
                "args": copy.deepcopy(dict(args)),
                "record": dict(record),
                "marks": copy.deepcopy(dict(marks)),
                "status": "pending",
            }
        )
    return {"goal": goal, "steps": plan, "values": {}, "blocked": None}


def _check_fact_request(raw: Any, where: str) -> Mapping[str, Any]:
    request = _mapping(raw, where)
    for name in ("subject", "statement", "source", "evidence"):
        _text(request.get(name), f"{where}.{name}")
    _choice(request.get("origin"), f"{where}.origin", _ORIGINS, "concluded")
    _choice(request.get("trust"), f"{where}.trust", _TRUST, "trusted")
    for name in ("kind", "writer", "observation"):
        if name in request and request[name] is not None:
            _text(request[name], f"{where}.{name}")
    return request


def _check_actions(script: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    actions = script.get("actions")
    if not isinstance(actions, list):
        raise ScriptError("actions: expected a list of actions")
    checked: list[Mapping[str, Any]] = []
    for i, raw in enumerate(actions):
        at = f"actions[{i}]"
        action = _mapping(raw, at)
        do = action.get("do")
        if do not in _ACTIONS:
            raise ScriptError(f"{at}.do: must be one of {', '.join(_ACTIONS)}, got {do!r}")
        if do == "job":
            _check_plan(action.get("job"), f"{at}.job")
            stop_after = action.get("stop_after")
            steps = len(action["job"]["steps"])
            if stop_after is not None and (
                isinstance(stop_after, bool)
                or not isinstance(stop_after, int)
                or not 1 <= stop_after <= steps
            ):
                raise ScriptError(f"{at}.stop_after: expected a step number from 1 to {steps}")
            _choice(action.get("stop"), f"{at}.stop", _STOPS, "handoff")
        elif do == "resume":
            _text(action.get("job"), f"{at}.job", pattern=_NAME)
        elif do == "remember":
            _check_fact_request(action.get("fact"), f"{at}.fact")
        elif do == "forget":
            _text(action.get("subject"), f"{at}.subject")
        elif do == "recall":
            if action.get("subject") is not None:
                _text(action.get("subject"), f"{at}.subject")
        elif do == "advance":
            seconds = action.get("seconds")
            if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
                raise ScriptError(f"{at}.seconds: expected a number of seconds >= 0")
        elif do == "export":
            jobs = action.get("jobs")
            if jobs is not None and (
                not isinstance(jobs, list) or not all(isinstance(j, str) for j in jobs)
            ):
                raise ScriptError(f"{at}.jobs: expected a list of job ids")
        checked.append(action)
    return checked


# -- values inside the record ------------------------------------------------------------


def _extract(result: JSONValue, path: str) -> tuple[bool, JSONValue]:
    value = result
    for part in path.split(".")[1:]:
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, copy.deepcopy(value)


def _substitute(args: JSONValue, values: Mapping[str, JSONValue]) -> tuple[JSONValue, str | None]:
    """Replace every string ``"$name"`` in ``args`` by ``values[name]``.

    Returns the new arguments and the first missing name (``None`` when all
    were found).
    """
    if isinstance(args, str) and args.startswith("$") and len(args) > 1:
        name = args[1:]
        if name not in values:
            return None, name
        return copy.deepcopy(values[name]), None
    if isinstance(args, Mapping):
        out: dict[str, JSONValue] = {}
        for key, item in args.items():
            out[key], missing = _substitute(item, values)
            if missing:
                return None, missing
        return out, None
    if isinstance(args, list):
        items: list[JSONValue] = []
        for item in args:
            new, missing = _substitute(item, values)
            if missing:
                return None, missing
            items.append(new)
        return items, None
    return copy.deepcopy(args), None


# -- export --------------------------------------------------------------------------------


def _line(key: str, value: JSONValue) -> str:
    return f"{key} = {json.dumps(value, sort_keys=True, ensure_ascii=False)}"


def render_export(
    records: Mapping[str, JSONValue], facts: Sequence[Fact], knowledge: str
) -> str:
    """Persisted state as deterministic, diffable text (PS-023 to PS-025).

    Job records come first, sorted by job id; then facts sorted by subject.
    Each is one block opened by a ``[job "<id>"]`` or ``[fact "<subject>"]``
    header; every field is one ``key = <JSON>`` line, keys sorted, JSON with
    sorted keys. A job's steps are one line each (``step.<n>``) and its values
    one line each (``values.<name>``), so one change is one changed line.
    """
    lines = ["# persisted state", _line("knowledge", knowledge), ""]
    for job_id in sorted(records):
        record = records[job_id]
        lines.append(f"[job {json.dumps(job_id, ensure_ascii=False)}]")
        fields: dict[str, JSONValue] = {}
        if isinstance(record, Mapping):
            fields["goal"] = record.get("goal")
            fields["blocked"] = record.get("blocked")
            for n, step in enumerate(record.get("steps") or [], 1):
                if isinstance(step, Mapping):
                    summary = {"name": step.get("name"), "status": step.get("status")}
                    if step.get("error") is not None:
                        summary["error"] = step.get("error")
                    fields[f"step.{n:03d}"] = summary
            for name, value in (record.get("values") or {}).items():
                fields[f"values.{name}"] = value
        else:
            fields["record"] = None
        lines.extend(_line(k, fields[k]) for k in sorted(fields))
        lines.append("")
    for fact in sorted(facts, key=lambda f: f.subject):
        lines.extend(render_fact(fact))
    return "\n".join(lines).rstrip("\n") + "\n"


def render_fact(fact: Fact) -> list[str]:
    """One fact as export lines: its ``[fact "<subject>"]`` header, one sorted
    ``key = <JSON>`` line per field, and a blank line."""
    data = fact.to_json()
    subject = data.pop("subject")
    block = [f"[fact {json.dumps(subject, ensure_ascii=False)}]"]
    block.extend(_line(k, data[k]) for k in sorted(data))
    block.append("")
    return block


# -- the runner ------------------------------------------------------------------------------


class JobRunner:
    """Runs and resumes jobs; every method is one overridable decision.

    The working-state contract (PS-001 to PS-011): the record is read from the
    store at the start of every step (:meth:`read_record`), the step's results
    are written only after its tool returned success (:meth:`complete_step`),
    and a resume takes everything from the record.
    """

    def __init__(self, env: Environment, namespace: str) -> None:
        self.env = env
        self.namespace = namespace

    # the record
    def read_record(self, job_id: str) -> StateEntry | None:
        """The job's record as stored now."""
        return self.env.store.read_state(job_scope(self.namespace, job_id), RECORD_KEY)

    def write_record(
        self, job_id: str, record: JSONValue, version: int | None
    ) -> StateEntry:
        """Compare-and-set the job's record; raises ``ConflictError`` on a stale version."""
        return self.env.store.write_state(
            job_scope(self.namespace, job_id), RECORD_KEY, record, version
        )

    def log_exchange(self, job_id: str, step: Mapping[str, Any], args: JSONValue,
                     result: JSONValue, error: JSONValue) -> None:
        """Append the step's tool call and its result (or error) to the job's log."""
        name = str(step["name"])
        call = Message(
            id=f"{job_id}:{name}:call", role="assistant", text=f"call {step['tool']}",
            parts=({"type": "tool_call", "tool": step["tool"], "args": args},),
            run_id=job_id, metadata={"step": name},
        )
        outcome: JSONValue = {"type": "tool_result", "tool": step["tool"]}
        if error is None:
            outcome["result"] = result
        else:
            outcome["error"] = error
        answer = Message(
            id=f"{job_id}:{name}:result", role="tool",
            text="failed" if error is not None else "ok",
            parts=(outcome,), run_id=job_id, metadata={"step": name},
        )
        self.env.store.append(log_thread(self.namespace, job_id), [call, answer])

    # the job
    def start(
        self, job: Mapping[str, Any], stop_after: int | None, stop: str, where: str = "job"
    ) -> dict[str, Any]:
        """Create the job's record (version 1) and run its steps; ``where`` names
        the job in the script for errors."""
        job_id = str(job["id"])
        record = _check_plan(job, where)
        if self.read_record(job_id) is not None:
            raise ScriptError(
                f"{where}.id: job {job_id!r} already has a record; resume it instead"
            )
        self.write_record(job_id, record, None)
        return self.run_steps(job_id, stop_after=stop_after, stop=stop, resumed=False)

    def resume(self, job_id: str) -> dict[str, Any]:
        """Continue the job from its stored record alone."""
        if self.read_record(job_id) is None:
            return {"job": job_id, "outcome": "unknown-job", "steps_run": []}
        return self.run_steps(job_id, stop_after=None, stop="kill", resumed=True)

    def plan_length(self, job_id: str) -> int:
        """How many steps the stored plan has."""
        entry = self.read_record(job_id)
        if entry is None or not isinstance(entry.value, Mapping):
            return 0
        return len(entry.value.get("steps") or [])

    def step_view(self, job_id: str, record: JSONValue, index: int) -> JSONValue:
        """What the model is shown at a step: the record and the current step only."""
        steps = record.get("steps") if isinstance(record, Mapping) else None
        step = steps[index] if isinstance(steps, list) and index < len(steps) else None
        return {"job": job_id, "step": copy.deepcopy(step), "record": copy.deepcopy(record)}

    def run_steps(
        self, job_id: str, *, stop_after: int | None, stop: str, resumed: bool
    ) -> dict[str, Any]:
        """Run every step not yet done, in plan order, reading the record first each time."""
        ran: list[str] = []
        outcome = "completed"
        for index in range(self.plan_length(job_id)):
            entry = self.read_record(job_id)
            if entry is None or not isinstance(entry.value, Mapping):
                outcome = "lost-record"
                break
            step = entry.value["steps"][index]
            if step.get("status") == "done":
                continue
            if step.get("status") == "failed":
                outcome = "failed"
                break
            self.env.model("agent", self.step_view(job_id, entry.value, index))
            args, missing = _substitute(step.get("args", {}), entry.value.get("values") or {})
            if missing is not None:
                self.block(job_id, entry, index, f"value {missing!r} is not in the record")
                outcome = "blocked"
                break
            entry = self.before_tool(job_id, entry, index)
            try:
                result = self.env.tool(str(step["tool"]), args, call_id=f"{job_id}/{step['name']}")
            except ScriptedFailure as failure:
                self.fail_step(job_id, entry, index, failure.error)
                self.log_exchange(job_id, step, args, None, failure.error)
                ran.append(str(step["name"]))
                outcome = "failed"
                break
            self.complete_step(job_id, entry, index, result)
            self.log_exchange(job_id, step, args, result, None)
            ran.append(str(step["name"]))
            if stop_after is not None and index + 1 == stop_after:
                outcome = "handed-off"
                break
        self.env.emit("job_outcome", job=job_id, outcome=outcome, resumed=resumed)
        return {"job": job_id, "outcome": outcome, "steps_run": ran, "resumed": resumed}

    def before_tool(self, job_id: str, entry: StateEntry, index: int) -> StateEntry:
        """Called just before a step's tool runs; returns the entry later writes
        compare against. The reference writes nothing here: nothing about the
        step is known yet."""
        return entry

    def _rewrite(self, job_id: str, entry: StateEntry, change: Any) -> StateEntry:
        """Apply ``change(record)`` to the record and compare-and-set it.

        On a conflict (someone else wrote in between) the record is read again
        and the change applied to the newer record, once.
        """
        record = copy.deepcopy(entry.value)
        change(record)
        try:
            return self.write_record(job_id, record, entry.version)
        except ConflictError:
            fresh = self.read_record(job_id)
            if fresh is None:
                raise
            record = copy.deepcopy(fresh.value)
            change(record)
            return self.write_record(job_id, record, fresh.version)

    def complete_step(
        self, job_id: str, entry: StateEntry, index: int, result: JSONValue
    ) -> StateEntry:
        """Write the verified results of a step whose tool returned success."""

        def change(record: dict[str, Any]) -> None:
            step = record["steps"][index]
            values = record.setdefault("values", {})
            for name, path in (step.get("record") or {}).items():
                found, value = _extract(result, str(path))
                if found:
                    values[name] = value
            values.update(copy.deepcopy(step.get("marks") or {}))
            step["status"] = "done"
            record["blocked"] = None

        return self._rewrite(job_id, entry, change)

    def fail_step(
        self, job_id: str, entry: StateEntry, index: int, error: JSONValue
    ) -> StateEntry:
        """Record that the step's tool failed; none of its results are written."""

        def change(record: dict[str, Any]) -> None:
            step = record["steps"][index]
            step["status"] = "failed"
            step["error"] = copy.deepcopy(error)

        return self._rewrite(job_id, entry, change)

    def block(self, job_id: str, entry: StateEntry, index: int, reason: str) -> StateEntry:
        """Record that the step cannot start, and on what."""

        def change(record: dict[str, Any]) -> None:
            record["blocked"] = {"step": record["steps"][index]["name"], "on": reason}

        return self._rewrite(job_id, entry, change)


class Runner(JobRunner):
    """Jobs plus durable knowledge and export: one script's execution."""

    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        namespace = _text(script.get("namespace"), "namespace")
        super().__init__(env, namespace)
        self.script = script
        self.knowledge = KnowledgeConfig.from_script(script)
        self.kb_scope = knowledge_scope(namespace, self.knowledge.scope)
        self.actions = _check_actions(script)
        self.jobs_seen: list[str] = []

    # knowledge ------------------------------------------------------------------------
    def refuse_instruction(self, request: Mapping[str, Any]) -> bool:
        """Whether the request is a standing instruction that must not be stored."""
        return is_instruction(str(request["statement"]), str(request.get("kind") or ""))

    def build_fact(self, request: Mapping[str, Any]) -> Fact:
        """The fact to store, with provenance and a recheck date from the clock."""
        kind = str(request.get("kind") or "observation")
        origin = str(request.get("origin") or "concluded")
        trust = str(request.get("trust") or ("untrusted" if origin == "copied" else "trusted"))
        now = self.env.clock.now()
        lifetime = self.knowledge.lifetimes.get(kind, DEFAULT_LIFETIMES["observation"])
        recheck = _format_time(self.env.clock.now_datetime() + timedelta(seconds=lifetime))
        return Fact(
            subject=str(request["subject"]),
            statement=str(request["statement"]),
            writer=str(request.get("writer") or "agent"),
            source=str(request["source"]),
            evidence=str(request["evidence"]),
            written_at=now,
            kind=kind,
            trust=trust,
            origin=origin,
            recheck_at=recheck,
        )

    def confirm(self, fact: Fact) -> bool:
        """Ask the ``confirm_durable_write`` hook; only ``allow`` lets the fact through."""
        answer = self.env.hook("confirm_durable_write", fact.to_json())
        return answer.get("action") == "allow"

    def make_room(self, fact: Fact) -> list[str]:
        """Evict facts until a new subject fits under the cap; return the evicted subjects."""
        cap = self.knowledge.cap
        if cap is None or self.env.store.get_fact(self.kb_scope, fact.subject) is not None:
            return []
        stored = self.env.store.facts(self.kb_scope)
        evicted: list[str] = []
        for victim in eviction_order(stored, self.env.clock.now()):
            if len(stored) - len(evicted) < cap:
                break
            self.env.store.forget(self.kb_scope, victim.subject)
            evicted.append(victim.subject)
        return evicted

    def remember(self, request: Mapping[str, Any]) -> dict[str, JSONValue]:
        """Instruction check, confirmation, eviction, then ``put_fact``."""
        subject = str(request["subject"])
        stored_observation = False
        if self.refuse_instruction(request):
            observation = request.get("observation")
            if not observation:
                self.env.emit("durable_write_refused", subject=subject, reason="instruction")
                return {"do": "remember", "subject": subject, "outcome": "refused-instruction"}
            request = {**request, "statement": observation, "kind": "observation"}
            stored_observation = True
        fact = self.build_fact(request)
        if not self.confirm(fact):
            return {"do": "remember", "subject": subject, "outcome": "denied"}
        evicted = self.make_room(fact)
        self.env.store.put_fact(self.kb_scope, fact)
        return {
            "do": "remember",
            "subject": subject,
            "outcome": "stored-observation" if stored_observation else "stored",
            "evicted": list(evicted),
            "fact": fact.to_json(),
        }

    def present(self, fact: Fact) -> dict[str, JSONValue]:
        """How a recalled fact is shown to the model (PS-013, PS-018, PS-019)."""
        now = self.env.clock.now()
        status = "unverified" if is_unverified(fact, now) else "current"
        labels: list[str] = []
        if status == "unverified":
            labels.append(f"unverified since {fact.recheck_at}")
        if fact.trust == "untrusted":
            labels.append(f"claim from {fact.source}, untrusted, not established")
        if fact.origin == "copied":
            labels.append(f"copied from {fact.source}")
        else:
            labels.append(f"concluded by {fact.writer}")
        return {
            "subject": fact.subject,
            "statement": fact.statement,
            "status": status,
            "trust": fact.trust,
            "origin": fact.origin,
            "source": fact.source,
            "shown_as": "claim" if fact.trust == "untrusted" else "fact",
            "text": f"[{'; '.join(labels)}] {fact.subject}: {fact.statement}",
        }

    def recall(self, subject: str | None) -> dict[str, JSONValue]:
        """Read facts back and show them to the model."""
        if subject is None:
            facts = self.env.store.facts(self.kb_scope)
        else:
            one = self.env.store.get_fact(self.kb_scope, subject)
            facts = [] if one is None else [one]
        shown = [self.present(f) for f in facts]
        self.env.model("agent", {"knowledge": copy.deepcopy(shown)})
        return {"do": "recall", "subject": subject, "facts": shown}

    def forget(self, subject: str) -> dict[str, JSONValue]:
        """Delete the subject's fact."""
        removed = self.env.store.forget(self.kb_scope, subject)
        return {"do": "forget", "subject": subject, "removed": removed}

    def export(self, jobs: Sequence[str] | None) -> str:
        """Render the named jobs' records and every fact of the knowledge scope."""
        records: dict[str, JSONValue] = {}
        for job_id in jobs if jobs is not None else self.jobs_seen:
            entry = self.read_record(job_id)
            records[job_id] = None if entry is None else entry.value
        facts = self.env.store.facts(self.kb_scope) if self._has("knowledge") else []
        return render_export(records, facts, self.knowledge.scope)

    def _has(self, capability: str) -> bool:
        return capability in self.env.store.capabilities

    # the script ---------------------------------------------------------------------
    def run(self) -> dict[str, JSONValue]:
        """Execute every action in order and return the observation."""
        outcomes: list[dict[str, JSONValue]] = []
        exports: list[str] = []
        for index, action in enumerate(self.actions):
            do = action["do"]
            if do in ("job", "resume") and not self._has("state"):
                outcomes.append({"do": do, "outcome": "unsupported", "needs": "state"})
                continue
            if do in ("remember", "recall", "forget") and not self._has("knowledge"):
                outcomes.append({"do": do, "outcome": "unsupported", "needs": "knowledge"})
                continue
            if do == "job":
                job_id = str(action["job"]["id"])
                self._see(job_id)
                try:
                    result = self.start(
                        action["job"], action.get("stop_after"), "handoff",
                        where=f"actions[{index}].job",
                    )
                except StoreError as exc:
                    result = self.refused(job_id, exc)
                outcomes.append({"do": "job", **result})
            elif do == "resume":
                job_id = str(action["job"])
                self._see(job_id)
                try:
                    result = self.resume(job_id)
                except StoreError as exc:
                    result = self.refused(job_id, exc)
                outcomes.append({"do": "resume", **result})
            elif do == "remember":
                try:
                    outcomes.append(self.remember(action["fact"]))
                except StoreError as exc:
                    outcomes.append({
                        "do": "remember", "subject": str(action["fact"]["subject"]),
                        "outcome": "failed", "error": _store_error(exc),
                    })
            elif do == "recall":
                outcomes.append(self.recall(action.get("subject")))
            elif do == "forget":
                outcomes.append(self.forget(str(action["subject"])))
            elif do == "advance":
                now = self.env.clock.advance(float(action["seconds"]))
                outcomes.append({"do": "advance", "now": now})
            elif do == "export":
                text = self.export(action.get("jobs"))
                exports.append(text)
                outcomes.append({"do": "export", "text": text})
        return {"namespace": self.namespace, "outcomes": outcomes, "exports": exports}

    def refused(self, job_id: str, exc: StoreError) -> dict[str, Any]:
        """The job's outcome when the store refused one of its writes: the job
        stops there and fails with the store's error (PS-035)."""
        self.env.emit("job_outcome", job=job_id, outcome="failed", resumed=False)
        return {"job": job_id, "outcome": "failed", "error": _store_error(exc)}

    def _see(self, job_id: str) -> None:
        if job_id not in self.jobs_seen:
            self.jobs_seen.append(job_id)


def _store_error(exc: StoreError) -> dict[str, JSONValue]:
    return {"type": type(exc).__name__, "message": str(exc)}


def execute(script: Mapping[str, Any], env: Environment) -> dict[str, JSONValue]:
    """Execute a ``persisted-state`` script; raises :class:`ScriptError` naming the
    bad field of a malformed script."""
    return Runner(script, env).run()
