"""A correct runtime for the ``turns`` (document 002) and ``strict-write`` (document 001)
profiles, written on the public Runtime/Environment API.

One runtime declares both profiles and dispatches on ``script["profile"]``: a turns
script goes to :class:`TurnsEngine`, a strict-write script to :class:`StrictWriteEngine`.
Each engine executes one script against one environment; its methods are the seams the
variants (``v01`` … ``v10``) change one at a time. ``make()`` builds the runtime.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memconform.contract import ConflictError, StoreError
from memconform.harness.environment import Environment, ScriptedFailure, ScriptError
from memconform.values import JSONValue, Message, TurnRecord, freeze_json

from . import digest

# ================================================================================ turns


class ConfigurationError(ValueError):
    """The runtime refuses its configuration before any turn runs; names the field."""


DEFAULT_WINDOW = 6
DEFAULT_MAX_STEPS = 8
_TYPES = ("any", "string", "number", "integer", "boolean", "object", "array")


def _obj(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScriptError(f"{where}: expected an object")
    return value


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ScriptError(f"{where}: expected a non-empty list of names")
    return tuple(value)


def _valid(kind: str, value: Any) -> bool:
    if kind == "any":
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "object":
        return isinstance(value, Mapping)
    return isinstance(value, list)


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def add_usage(total: dict[str, Any], usage: Mapping[str, Any]) -> None:
    for key, value in usage.items():
        old = total.get(key)
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if numeric and isinstance(old, int | float) and not isinstance(old, bool):
            total[key] = old + value
        else:
            total[key] = value


@dataclass
class Turn:
    """One turn (root or child) while it runs."""

    spec: Mapping[str, Any]
    index: int
    turn_id: str
    kind: str
    parent: Turn | None
    continues_from: str | None
    started_at: str
    tiers: tuple[str, ...]
    reads: tuple[str, ...]
    tier_index: int = 0
    answered_tier: str | None = None
    steps_used: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    fallbacks: list[Any] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    base_view: dict[str, Any] = field(default_factory=dict)
    outcome: str | None = None
    reply: str | None = None
    payload: Any = None
    error: Any = None
    refused_at: str | None = None
    children: list[str] = field(default_factory=list)
    spawned: set[int] = field(default_factory=set)

    @property
    def envelope(self) -> Mapping[str, Any] | None:
        return self.spec.get("envelope")

    @property
    def brief(self) -> str:
        if self.envelope is not None:
            return str(self.envelope.get("text", ""))
        return str(self.spec.get("brief", ""))

    @property
    def grant(self) -> dict[str, Any]:
        raw = dict(self.spec.get("grant") or {})
        return {"max_steps": int(raw.get("max_steps", DEFAULT_MAX_STEPS)),
                "max_output_chars": raw.get("max_output_chars")}


class TurnsEngine:
    """Settles the turns of one ``turns`` script: admission, user message, context,
    fit check, execution, settle (assistant message, record, events)."""

    def __init__(self, script: Mapping[str, Any], env: Environment, runtime: Any = None) -> None:
        self.env = env
        self.script = script
        self.runtime = runtime
        self.thread = script.get("thread")
        if not isinstance(self.thread, str) or not self.thread:
            raise ScriptError("thread: expected a non-empty string")
        config = _obj(script.get("config", {}), "config")
        window = config.get("history_window", DEFAULT_WINDOW)
        if not isinstance(window, int) or isinstance(window, bool):
            raise ScriptError("config.history_window: expected an integer")
        if window < 0:
            raise ConfigurationError(
                f"config.history_window: must be 0 or more, got {window}")
        self.window = window
        self.turn_ids = config.get("turn_ids", "counter")
        if self.turn_ids not in ("counter", "uuid"):
            raise ScriptError("config.turn_ids: must be 'counter' or 'uuid'")
        self.seed = config.get("seed", 0)
        self.budget = config.get("context_budget")
        self.step_seconds = float(config.get("step_seconds", 1))
        self.tiers = _names(config.get("tiers", ["primary"]), "config.tiers")
        self.blocks: dict[str, str] = {}
        for name, spec in _obj(config.get("blocks", {}), "config.blocks").items():
            kind = _obj(spec, f"config.blocks.{name}").get("type", "any")
            if kind not in _TYPES:
                raise ScriptError(f"config.blocks.{name}.type: unknown type")
            self.blocks[name] = kind
        self.scope = config.get("state_scope", self.thread)
        self.agents: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
            "main": (tuple(self.blocks), self.tiers)}
        for name, raw_agent in _obj(script.get("agents", {}), "agents").items():
            spec = _obj(raw_agent, f"agents.{name}")
            reads = tuple(spec.get("reads", []))
            for block in reads:
                if block not in self.blocks:
                    raise ScriptError(f"agents.{name}.reads: block {block!r} is not declared")
            tiers = _names(spec.get("tiers", list(self.tiers)), f"agents.{name}.tiers")
            self.agents[name] = (reads, tiers)
        self.specs = script.get("turns")
        if not isinstance(self.specs, list):
            raise ScriptError("turns: expected a list")
        for i, spec in enumerate(self.specs):
            self._check_turn(spec, f"turns[{i}]")
        self.counter = 0
        self.ids_by_index: dict[int, str] = {}
        self.events: list[dict[str, Any]] = []
        self.views: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []
        self.observed: list[dict[str, Any]] = []

    def _check_turn(self, spec: Any, where: str) -> None:
        spec = _obj(spec, where)
        if ("envelope" in spec) == ("brief" in spec):
            raise ScriptError(f"{where}: give exactly one of 'envelope' or 'brief'")
        if spec.get("agent", "main") not in self.agents:
            raise ScriptError(f"{where}.agent: unknown agent")
        for i, child in enumerate(spec.get("children", [])):
            self._check_turn(child, f"{where}.children[{i}]")

    # -- seams -----------------------------------------------------------------------

    def next_turn_id(self) -> str:
        """T1, T2, … per runtime lifetime, or an injected UUID generator."""
        self.counter += 1
        if self.turn_ids == "uuid":
            n = self.env.ids.next("turn-uuid")
            return str(uuid.uuid5(uuid.NAMESPACE_URL,
                                  f"turnswrite:{self.seed}:{self.thread}:{n}"))
        return f"T{self.counter}"

    def select_history(self, turn: Turn) -> list[Message]:
        """The newest ``window`` stored messages of the thread, oldest first."""
        if self.window == 0:
            return []
        return self.env.store.messages(self.thread, self.window)

    def render_history(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return [{"role": m.role, "text": m.text} for m in messages]

    def first_tier(self, turn: Turn) -> int:
        return 0

    def on_tier_answered(self, turn: Turn) -> None:
        """Called when a tier answered (the base keeps nothing between turns)."""

    def on_child_settled(self, parent: Turn, child: Turn) -> None:
        parent.children.append(child.turn_id)

    def make_record(self, turn: Turn) -> TurnRecord:
        metadata: dict[str, Any] = {"kind": turn.kind, "opening": self.opening(turn),
                                    "agent": turn.spec.get("agent", "main")}
        if turn.children:
            metadata["children"] = list(turn.children)
        if turn.refused_at:
            metadata["refused_at"] = turn.refused_at
        if turn.error is not None:
            metadata["error"] = turn.error
        return TurnRecord(
            turn_id=turn.turn_id, thread_id=self.thread, outcome=str(turn.outcome),
            parent_turn_id=None if turn.parent is None else turn.parent.turn_id,
            continues_from=turn.continues_from, grant=turn.grant,
            steps_used=turn.steps_used, tier=turn.answered_tier,
            fallbacks=tuple(turn.fallbacks), usage=dict(turn.usage),
            timing={"started_at": turn.started_at, "settled_at": self.env.clock.now()},
            metadata=metadata,
        )

    # -- plumbing ----------------------------------------------------------------------

    @staticmethod
    def opening(turn: Turn) -> str:
        return "envelope" if turn.envelope is not None else "brief"

    def emit(self, name: str, **data: Any) -> None:
        self.env.emit(name, **data)
        self.events.append(freeze_json({"name": name, **data}))

    def state_view(self, turn: Turn) -> list[dict[str, Any]]:
        if not self.env.store.has("state"):
            return []
        views = []
        for block in turn.reads:
            entry = self.env.store.read_state(self.scope, block)
            if entry is not None:
                views.append({"block": block, "value": entry.value})
        return views

    def context_size(self, view: Mapping[str, Any]) -> int:
        size = len(view["brief"])
        size += sum(len(h["text"]) for h in view["history"])
        return size + sum(len(_compact(s["value"])) for s in view["state"])

    def run(self) -> dict[str, Any]:
        for i, spec in enumerate(self.specs):
            turn = self.run_turn(spec, i, "root", None)
            self.ids_by_index[i] = turn.turn_id
        return {
            "thread": self.thread,
            "config": {"history_window": self.window, "turn_ids": self.turn_ids,
                       "context_budget": self.budget},
            "turns": self.observed, "records": self.records, "views": self.views,
            "events": self.events, "export": list(self.events),
        }

    def run_turn(self, spec: Mapping[str, Any], index: int, kind: str,
                 parent: Turn | None) -> Turn:
        reads, tiers = self.agents[spec.get("agent", "main")]
        continues = spec.get("continues_from")
        if isinstance(continues, int) and not isinstance(continues, bool):
            continues = self.ids_by_index.get(continues)
        turn = Turn(spec=spec, index=index, turn_id=self.next_turn_id(), kind=kind,
                    parent=parent, continues_from=continues,
                    started_at=self.env.clock.now(), tiers=tiers, reads=reads)
        self.emit("turn.opened", turn_id=turn.turn_id, turn_kind=kind,
                  opening=self.opening(turn),
                  parent_turn_id=None if parent is None else parent.turn_id,
                  continues_from=continues)
        if not spec.get("admit", True):
            turn.refused_at = "admission"
            return self.settle(turn, "refused")
        if kind == "root" and turn.envelope is not None:
            parts = turn.envelope.get("parts", [])
            self.env.store.append(self.thread, [Message(
                id=self.env.ids.next("msg"), role="user", text=turn.brief,
                parts=tuple(parts), turn_id=turn.turn_id)])
        turn.base_view = {
            "history": self.render_history(self.select_history(turn)),
            "state": self.state_view(turn),
            "brief": turn.brief,
        }
        if self.budget is not None and self.context_size(turn.base_view) > self.budget:
            turn.refused_at = "fit-check"
            return self.settle(turn, "refused")
        turn.transcript = []
        turn.tier_index = self.first_tier(turn)
        return self.settle(turn, self.execute_turn(turn))

    def execute_turn(self, turn: Turn) -> str:
        grant = turn.grant
        stop = turn.spec.get("stop_after_step")
        while True:
            if turn.steps_used >= grant["max_steps"]:
                return "cut"
            turn.steps_used += 1
            answer = self.call_model(turn)
            self.env.clock.advance(self.step_seconds)
            if answer is None:
                return "failed"
            add_usage(turn.usage, answer.get("usage") or {})
            text = str(answer.get("reply") or "")
            limit = grant["max_output_chars"]
            if limit is not None and len(text) > limit:
                self.emit("turn.output", turn_id=turn.turn_id, step=turn.steps_used,
                          text=text[:limit])
                return "truncated"
            if text:
                self.emit("turn.output", turn_id=turn.turn_id, step=turn.steps_used, text=text)
            calls = list(answer.get("tool_calls") or [])
            turn.transcript.append({"role": "assistant", "text": text, "tool_calls": calls})
            if not calls:
                turn.reply = text
                turn.payload = answer.get("payload")
                return "completed"
            for call in calls:
                if not self.run_tool(turn, call):
                    return "failed"
            if stop is not None and turn.steps_used >= stop:
                return "stopped"

    def call_model(self, turn: Turn) -> Mapping[str, Any] | None:
        while turn.tier_index < len(turn.tiers):
            tier = turn.tiers[turn.tier_index]
            view = {"turn_id": turn.turn_id, "step": turn.steps_used, "tier": tier,
                    **turn.base_view, "transcript": freeze_json(turn.transcript)}
            self.views.append(freeze_json(view))
            try:
                answer = self.env.model(tier, view)
            except ScriptedFailure as failure:
                turn.fallbacks.append({"tier": tier, "step": turn.steps_used,
                                       "error": failure.error})
                turn.error = failure.error
                turn.tier_index += 1
                continue
            turn.answered_tier = tier
            turn.error = None
            self.on_tier_answered(turn)
            return answer
        return None

    def run_tool(self, turn: Turn, call: Mapping[str, Any]) -> bool:
        name = call.get("name")
        call_id = call.get("id")
        args = dict(call.get("args") or {})
        if name == "update_block":
            result = self.update_block(turn, args)
        elif name == "spawn":
            result = self.spawn(turn, args)
        else:
            try:
                result = self.env.tool(str(name), freeze_json(args),
                                       None if call_id is None else str(call_id))
            except ScriptedFailure as failure:
                turn.error = failure.error
                return False
        turn.transcript.append({"role": "tool", "call_id": call_id, "name": name,
                                "result": result})
        return True

    def update_block(self, turn: Turn, args: Mapping[str, Any]) -> dict[str, Any]:
        block = args.get("block")
        value = freeze_json(args.get("value"))
        if not self.env.store.has("state"):
            return {"ok": False, "error": "unsupported", "block": block}
        kind = self.blocks.get(block) if isinstance(block, str) else None
        if kind is None or not _valid(kind, value):
            reason = "unknown block" if kind is None else f"value is not of type {kind}"
            self.emit("state.rejected", turn_id=turn.turn_id, block=block, reason=reason)
            return {"ok": False, "error": "invalid", "reason": reason, "block": block}
        if "expected_version" in args:
            expected = args["expected_version"]
        else:
            current = self.env.store.read_state(self.scope, block)
            expected = None if current is None else current.version
        try:
            entry = self.env.store.write_state(self.scope, block, value, expected)
        except ConflictError as exc:
            self.emit("state.rejected", turn_id=turn.turn_id, block=block, reason=str(exc))
            return {"ok": False, "error": "conflict", "reason": str(exc), "block": block}
        self.emit("state.updated", turn_id=turn.turn_id, block=block, version=entry.version)
        return {"ok": True, "block": block, "version": entry.version}

    def spawn(self, parent: Turn, args: Mapping[str, Any]) -> dict[str, Any]:
        children = parent.spec.get("children", [])
        index = args.get("child")
        if parent.kind != "root" or not isinstance(index, int) or not 0 <= index < len(children):
            raise ScriptError(f"children: the model spawned child {index!r}, not scripted")
        if index in parent.spawned:
            raise ScriptError(f"children[{index}]: spawned twice")
        parent.spawned.add(index)
        child = self.run_turn(children[index], index, "child", parent)
        self.on_child_settled(parent, child)
        return {"turn_id": child.turn_id, "outcome": child.outcome, "reply": child.reply}

    def settle(self, turn: Turn, outcome: str) -> Turn:
        turn.outcome = outcome
        if turn.kind == "root" and outcome == "completed":
            parts = () if turn.payload is None else ({"type": "payload", "payload": turn.payload},)
            self.env.store.append(self.thread, [Message(
                id=self.env.ids.next("msg"), role="assistant", text=turn.reply or "",
                parts=parts, turn_id=turn.turn_id)])
        record = self.make_record(turn)
        if self.env.store.has("turn-records"):
            self.env.store.append_record(record)
        self.records.append(record.to_json())
        parent_id = None if turn.parent is None else turn.parent.turn_id
        self.emit("turn.settled", turn_id=turn.turn_id, outcome=outcome,
                  parent_turn_id=parent_id)
        self.observed.append({
            "turn_id": turn.turn_id, "kind": turn.kind, "opening": self.opening(turn),
            "parent_turn_id": parent_id, "continues_from": turn.continues_from,
            "outcome": outcome, "reply": turn.reply if outcome == "completed" else None,
        })
        return turn


# ========================================================================= strict-write

MODES = ("digest", "exclude_all", "keep_all")
SHUTDOWN = "GracefulShutdown"
END_USER_NOTICE = "Something went wrong. Try again."
META = "strictWrite"
ACTIONS = "actions"
OUTPUT = "output"
TASK_ERRORS = "taskErrors"
_POLICY = "memoryPolicy.strictWriteDiscipline"
_KINDS = ("write", "tool", "llm", "behavior", "output")


@dataclass
class Step:
    """The visible state of one conversation step, folded from committed messages."""

    number: int
    input: str | None = None
    data: dict[str, tuple[str, Any]] = field(default_factory=dict)
    outputs: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)

    def items(self, key: str) -> list[Any]:
        return [item for _, item in self.outputs.get(key, [])]


def _meta(message: Message) -> Mapping[str, Any] | None:
    meta = message.metadata.get(META) if isinstance(message.metadata, Mapping) else None
    return meta if isinstance(meta, Mapping) else None


def fold(messages: Sequence[Message]) -> dict[int, Step]:
    """Replay the committed strict-write messages, in order, into each step's state."""
    steps: dict[int, Step] = {}
    for message in messages:
        meta = _meta(message)
        if meta is None or not message.committed:
            continue
        step = steps.setdefault(int(meta.get("step", 0)), Step(int(meta.get("step", 0))))
        kind, key, op = meta.get("kind"), str(meta.get("key", "")), meta.get("op")
        value = message.parts[0] if message.parts else None
        if kind == "input":
            step.input = message.text
        elif kind == "data":
            if op == "remove":
                step.data.pop(key, None)
            else:
                step.data[key] = (message.id, value)
        elif kind == "output":
            items = step.outputs.get(key)
            target = meta.get("target")
            if op == "append":
                step.outputs.setdefault(key, []).append((message.id, value))
            elif op == "change" and items is not None:
                step.outputs[key] = [(i, value if i == target else v) for i, v in items]
            elif op == "remove" and items is not None:
                if target is None:
                    del step.outputs[key]
                else:
                    step.outputs[key] = [(i, v) for i, v in items if i != target]
    return dict(sorted(steps.items()))


def model_view(messages: Sequence[Message]) -> dict[str, Any]:
    """Per step: input, committed data, outputs (digests included, actions never)."""
    return {"steps": [
        {"step": s.number, "input": s.input,
         "data": {k: v for k, (_, v) in s.data.items()},
         "output": {k: [i for _, i in items] for k, items in s.outputs.items() if k != ACTIONS}}
        for s in fold(messages).values()
    ]}


def item_text(value: Any) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return str(value["text"])
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass
class SWTurn:
    number: int
    input: str
    streaming: bool
    state: str = "READY"
    task_errors: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)


class StrictWriteEngine:
    """Runs one strict-write script: a pipeline of tasks per turn, each write one
    stored message; a failed task is handled under the memory policy."""

    def __init__(self, script: Mapping[str, Any], env: Environment, runtime: Any = None) -> None:
        self.env = env
        self.thread = script.get("thread")
        if not isinstance(self.thread, str) or not self.thread:
            raise ScriptError("thread: expected a non-empty string")
        policy = _obj(script.get("memoryPolicy") or {}, "memoryPolicy")
        raw = _obj(policy.get("strictWriteDiscipline") or {}, _POLICY)
        mode = raw.get("onFailure", "digest")
        if mode not in MODES:
            raise ScriptError(f"{_POLICY}.onFailure: must be one of {', '.join(MODES)}, "
                              f"got {mode!r}")
        for flag in ("enabled", "continueOnFailure"):
            if not isinstance(raw.get(flag, False), bool):
                raise ScriptError(f"{_POLICY}.{flag}: expected true or false")
        self.enabled = bool(raw.get("enabled", False))
        self.on_failure = str(mode)
        self.continue_on_failure = bool(raw.get("continueOnFailure", False))
        self.pipeline = self._pipeline(script)
        self.rules = [(str(r["when"]), tuple(r["actions"]))
                      for r in script.get("behaviorRules", [])]
        self.output_set = [(str(o["action"]), str(o["text"])) for o in script.get("outputSet", [])]
        self.turns = [(str(t["input"]), bool(t.get("streaming", False)))
                      for t in script.get("turns", [])]
        if not self.turns:
            raise ScriptError("turns: expected at least one turn")
        if self.mode is not None and not env.store.has("commit-flags"):
            raise ScriptError(f"{_POLICY}.enabled: strict write needs a commit-flags store")
        self.log: list[Message] = []

    @staticmethod
    def _pipeline(script: Mapping[str, Any]) -> list[dict[str, Any]]:
        raw = script.get("pipeline")
        if not isinstance(raw, list) or not raw:
            raise ScriptError("pipeline: expected a non-empty list of tasks")
        seen: set[str] = set()
        tasks = []
        for n, raw_item in enumerate(raw):
            item = _obj(raw_item, f"pipeline[{n}]")
            task_id = item.get("id")
            if not isinstance(task_id, str) or not task_id or task_id in seen:
                raise ScriptError(f"pipeline[{n}].id: expected a unique task name")
            seen.add(task_id)
            kind = item.get("kind", "write")
            if kind not in _KINDS:
                raise ScriptError(f"pipeline[{n}].kind: unknown kind")
            tasks.append({"id": task_id, "kind": kind, "tool": item.get("tool"),
                          "writes": list(item.get("writes", []))})
        return tasks

    # -- policy ------------------------------------------------------------------------

    @property
    def mode(self) -> str | None:
        return self.on_failure if self.enabled else None

    @property
    def continues(self) -> bool:
        return self.mode is not None and self.continue_on_failure

    # -- memory ------------------------------------------------------------------------

    def write(self, step: int, task: str | None, kind: str, key: str, op: str,
              value: Any = None, target: str | None = None, *, has_value: bool = True) -> Message:
        value = freeze_json(value)
        meta: dict[str, Any] = {"step": step, "task": task, "kind": kind, "key": key, "op": op}
        if target is not None:
            meta["target"] = target
        if kind == "input":
            role, text = "user", str(value)
        elif kind == "output" and key == OUTPUT:
            role, text = "assistant", item_text(value)
        else:
            role, text = "system", f"{key} {op} {item_text(value)}".rstrip()
        message = Message(id=self.env.ids.next("sw"), role=role, text=text,
                          parts=(value,) if has_value and kind != "input" else (),
                          turn_id=f"step-{step}", metadata={META: meta})
        self.env.store.append(self.thread, [message])
        self.log.append(message)
        return message

    def step_state(self, step: int) -> Step:
        return fold(self.log).get(step, Step(step))

    def set_committed(self, ids: Sequence[str], committed: bool) -> None:
        if not ids:
            return
        self.env.store.set_committed(self.thread, list(ids), committed)
        wanted = set(ids)
        self.log = [replace(m, committed=committed) if m.id in wanted else m for m in self.log]

    # -- tasks -------------------------------------------------------------------------

    def apply_write(self, step: int, task: Mapping[str, Any], op: Mapping[str, Any]) -> None:
        name, task_id = op["op"], task["id"]
        if name == "action":
            self.write(step, task_id, "output", ACTIONS, "append", op["action"])
            return
        if "data" in op:
            if name == "remove":
                self.write(step, task_id, "data", op["data"], "remove", has_value=False)
            else:
                self.write(step, task_id, "data", op["data"], name, op.get("value"))
            return
        key = op["output"]
        if name == "append":
            self.write(step, task_id, "output", key, "append", op.get("item"))
            return
        items = self.step_state(step).outputs.get(key)
        index = op.get("index")
        if items is None or (index is not None and index >= len(items)):
            return
        target = None if index is None else items[index][0]
        if name == "change":
            self.write(step, task_id, "output", key, "change", op.get("item"), target)
        else:
            self.write(step, task_id, "output", key, "remove", None, target, has_value=False)

    def perform(self, turn: SWTurn, task: Mapping[str, Any], previous: list[str]) -> None:
        step, task_id = turn.number, task["id"]
        for op in task["writes"]:
            self.apply_write(step, task, op)
        if task["kind"] == "tool":
            result = self.env.tool(task["tool"] or task_id, {"turn": step, "task": task_id},
                                   call_id=f"{task_id}@{step}")
            self.write(step, task_id, "data", f"{task_id}:result", "set", result)
        elif task["kind"] == "llm":
            visible = self.env.store.messages(self.thread)
            answer = self.env.model(task_id, {"turn": step, "view": model_view(visible)})
            self.write(step, task_id, "output", OUTPUT, "append",
                       {"type": "text", "text": answer.get("reply", "")})
        elif task["kind"] == "behavior":
            current = [str(a) for a in self.step_state(step).items(ACTIONS)]
            seen = set(current) | set(previous)
            for when, actions in self.rules:
                if when in seen:
                    for action in actions:
                        if action not in current:
                            self.write(step, task_id, "output", ACTIONS, "append", action)
                            current.append(action)
        elif task["kind"] == "output":
            current = [str(a) for a in self.step_state(step).items(ACTIONS)]
            for action, text in self.output_set:
                if action in current:
                    self.write(step, task_id, "output", OUTPUT, "append",
                               {"type": "text", "text": text})

    # -- failure -----------------------------------------------------------------------

    def digest_text(self, task_id: str, error: Mapping[str, Any]) -> str:
        return digest.digest_text(task_id, error)

    def stream_reason(self, error: Mapping[str, Any]) -> str:
        return digest.failure_reason(error)

    def entry(self, task_id: str, error: Mapping[str, Any]) -> dict[str, Any]:
        return {"type": "errorDigest", "taskId": task_id,
                "text": self.digest_text(task_id, error)}

    def rollback_ids(self, written: list[Message], earlier: list[str]) -> list[str]:
        """What the failed task wrote in this step (never what earlier tasks wrote)."""
        return [m.id for m in written]

    def write_raw_error(self, step: int, task_id: str, error: Mapping[str, Any],
                        written: list[Message]) -> list[Message]:
        raw = self.write(step, task_id, "data", f"{task_id}:error", "set",
                         digest.raw_error_text(error))
        return [*written, raw]

    def hide(self, ids: list[str]) -> None:
        self.set_committed(ids, False)

    def fail_task(self, turn: SWTurn, task: Mapping[str, Any], error: Mapping[str, Any],
                  written: list[Message], earlier: list[str]) -> None:
        step, task_id = turn.number, task["id"]
        written = self.write_raw_error(step, task_id, error, written)
        entry = self.entry(task_id, error)
        mode = self.mode
        if mode in ("digest", "exclude_all"):
            self.hide(self.rollback_ids(written, earlier))
        if mode == "digest":
            self.write(step, None, "output", TASK_ERRORS, "append", entry)
        if mode is not None:
            self.write(step, None, "output", ACTIONS, "append", f"task_failed_{task_id}")
        if mode != "exclude_all":
            turn.task_errors.append(entry)
            if turn.streaming:
                self.env.emit("task_failed", turn=step, taskId=task_id, text=entry["text"],
                              reason=self.stream_reason(error))

    # -- turns -------------------------------------------------------------------------

    def previous_actions(self, step: int) -> list[str]:
        steps = fold(self.env.store.messages(self.thread))
        earlier = [s for n, s in steps.items() if n < step]
        return [str(a) for a in earlier[-1].items(ACTIONS)] if earlier else []

    def run_turn(self, number: int, text: str, streaming: bool) -> dict[str, Any]:
        turn = SWTurn(number, text, streaming)
        self.write(number, None, "input", "input", "set", text)
        step_start = len(self.log)
        previous = self.previous_actions(number)
        stopped = False
        for task in self.pipeline:
            if stopped:
                turn.tasks.append({"task": task["id"], "status": "not-run"})
                continue
            start = len(self.log)
            try:
                self.perform(turn, task, previous)
            except StoreError:
                turn.tasks.append({"task": task["id"], "status": "failed"})
                stopped, turn.state = True, "ERROR"
                continue
            except ScriptedFailure as failure:
                written = self.log[start:]
                earlier = [m.id for m in self.log[step_start:start]]
                turn.tasks.append({"task": task["id"], "status": "failed"})
                try:
                    self.fail_task(turn, task, failure.error, written, earlier)
                except StoreError:
                    stopped, turn.state = True, "ERROR"
                    continue
                if failure.type_name == SHUTDOWN or not self.continues:
                    stopped, turn.state = True, "ERROR"
                continue
            turn.tasks.append({"task": task["id"], "status": "done"})
        memory = self.step_state(number)
        reply = ""
        if turn.state != "ERROR":
            reply = "\n".join(item_text(i) for i in memory.items(OUTPUT))
        return {
            "turn": number, "input": text, "state": turn.state, "reply": reply,
            "taskErrors": list(turn.task_errors),
            "actions": [str(a) for a in memory.items(ACTIONS)],
            "endUserNotice": END_USER_NOTICE if turn.state == "ERROR" else None,
            "tasks": list(turn.tasks),
        }

    def run(self) -> dict[str, Any]:
        turns = [self.run_turn(n, text, streaming)
                 for n, (text, streaming) in enumerate(self.turns, 1)]
        return {
            "thread": self.thread,
            "policy": {"enabled": self.enabled, "onFailure": self.on_failure,
                       "continueOnFailure": self.continue_on_failure},
            "turns": freeze_json(turns),
        }


# ============================================================================== runtime


class TurnsWriteRuntime:
    """Declares both profiles; dispatches each script on its ``profile``."""

    profiles = frozenset({"turns", "strict-write"})
    turns_engine: type[TurnsEngine] = TurnsEngine
    strict_engine: type[StrictWriteEngine] = StrictWriteEngine

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        profile = script.get("profile")
        if profile == "turns":
            return self.turns_engine(script, env, self).run()
        if profile == "strict-write":
            return self.strict_engine(script, env, self).run()
        raise ScriptError(f"profile: this runtime executes turns and strict-write, got {profile!r}")


def make() -> TurnsWriteRuntime:
    return TurnsWriteRuntime()
