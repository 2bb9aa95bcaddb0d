"""A correct runtime for the ``turns`` and ``strict-write`` profiles, built as middleware
pipelines over the kit's ``env``.

Every turn of a ``turns`` script passes through one ordered chain of turn middlewares
(outermost first): the event bus (``turn.opened`` / ``turn.settled``), the turn-id
assigner, the turn recorder (one turn record once the inner chain settled), the
assistant writer, admission, the user-message writer, the history-window loader, the
state loader and the fit check, ending in the executor, the model loop. Every model call
passes through a second chain: tier fallback, the view log, usage accounting and the
transport (``env.model``).

Every task of a ``strict-write`` turn passes through a chain of task middlewares: the
failure policy (commit flags, digest, ``task_failed_<task>`` action, the caller's
``taskErrors`` entry and the streaming event), the checkpointing journal writer and the
task body. Conversation memory is a journal: every write is one stored message, and the
view of a step is folded from its committed messages, so hiding a failed task's messages
rolls back everything it did.

``make()`` returns the runtime; the variants each change one middleware.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memconform.contract import ConflictError, StoreError
from memconform.harness.environment import Environment, ScriptedFailure, ScriptError
from memconform.values import JSONValue, Message, TurnRecord, freeze_json

from .redaction import Digester, raw_error_text


class Chain:
    """Calls ``middlewares`` in order, each handed the request and the rest of the chain."""

    def __init__(self, middlewares: Sequence[Any], terminal: Callable[[Any], Any]) -> None:
        self.middlewares = list(middlewares)
        self.terminal = terminal

    def __call__(self, request: Any) -> Any:
        return self._at(0, request)

    def _at(self, index: int, request: Any) -> Any:
        if index == len(self.middlewares):
            return self.terminal(request)
        return self.middlewares[index].handle(request, lambda req: self._at(index + 1, req))


class SettingError(ValueError):
    """A setting the runtime refuses before anything runs; the message names it."""


def _obj(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScriptError(f"{where}: expected an object")
    return value


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ScriptError(f"{where}: expected a non-empty list of names")
    return tuple(value)


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def type_ok(kind: str, value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    checks = {
        "any": True,
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": number,
        "object": isinstance(value, Mapping),
        "array": isinstance(value, list),
    }
    return checks[kind]


def add_usage(total: dict[str, Any], usage: Mapping[str, Any]) -> None:
    for key, value in usage.items():
        old = total.get(key)
        if (isinstance(value, int | float) and not isinstance(value, bool)
                and isinstance(old, int | float) and not isinstance(old, bool)):
            total[key] = old + value
        else:
            total[key] = value


# ================================================================================ turns

WINDOW = 6
MAX_STEPS = 8
BLOCK_TYPES = ("any", "string", "number", "integer", "boolean", "object", "array")


@dataclass
class TurnsSettings:
    thread: str
    window: int
    turn_ids: str
    seed: Any
    budget: int | None
    step_seconds: float
    tiers: tuple[str, ...]
    blocks: dict[str, str]
    scope: str
    agents: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]

    @classmethod
    def read(cls, script: Mapping[str, Any]) -> TurnsSettings:
        thread = script.get("thread")
        if not isinstance(thread, str) or not thread:
            raise ScriptError("thread: expected a non-empty string")
        config = _obj(script.get("config") or {}, "config")
        window = config.get("history_window", WINDOW)
        if not isinstance(window, int) or isinstance(window, bool):
            raise ScriptError("config.history_window: expected an integer")
        if window < 0:
            raise SettingError(f"config.history_window must not be negative (got {window})")
        turn_ids = config.get("turn_ids", "counter")
        if turn_ids not in ("counter", "uuid"):
            raise ScriptError("config.turn_ids: expected 'counter' or 'uuid'")
        budget = config.get("context_budget")
        tiers = _names(config.get("tiers", ["primary"]), "config.tiers")
        blocks: dict[str, str] = {}
        for name, raw in _obj(config.get("blocks") or {}, "config.blocks").items():
            kind = _obj(raw, f"config.blocks.{name}").get("type", "any")
            if kind not in BLOCK_TYPES:
                raise ScriptError(f"config.blocks.{name}.type: unknown type {kind!r}")
            blocks[name] = kind
        agents = {"main": (tuple(blocks), tiers)}
        for name, raw in _obj(script.get("agents") or {}, "agents").items():
            spec = _obj(raw, f"agents.{name}")
            reads = tuple(spec.get("reads", []))
            for block in reads:
                if block not in blocks:
                    raise ScriptError(f"agents.{name}.reads: {block!r} is not a declared block")
            agents[name] = (reads, _names(spec.get("tiers", list(tiers)), f"agents.{name}.tiers"))
        return cls(thread=thread, window=window, turn_ids=turn_ids, seed=config.get("seed", 0),
                   budget=budget, step_seconds=float(config.get("step_seconds", 1)),
                   tiers=tiers, blocks=blocks, scope=str(config.get("state_scope", thread)),
                   agents=agents)


@dataclass
class Turn:
    """One turn, root or child, as it travels through the chain."""

    spec: Mapping[str, Any]
    index: int
    kind: str
    parent: Turn | None
    continues_from: str | None
    reads: tuple[str, ...]
    tiers: tuple[str, ...]
    turn_id: str = ""
    started_at: str = ""
    outcome: str | None = None
    reply: str | None = None
    payload: Any = None
    refused_at: str | None = None
    error: Any = None
    history: list[dict[str, Any]] = field(default_factory=list)
    state: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    steps: int = 0
    tier_pos: int = 0
    answered: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    fallbacks: list[Any] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    spawned: set[int] = field(default_factory=set)

    @property
    def envelope(self) -> Mapping[str, Any] | None:
        envelope = self.spec.get("envelope")
        return envelope if isinstance(envelope, Mapping) else None

    @property
    def opening(self) -> str:
        return "envelope" if self.envelope is not None else "brief"

    @property
    def brief(self) -> str:
        if self.envelope is not None:
            return str(self.envelope.get("text", ""))
        return str(self.spec.get("brief", ""))

    @property
    def grant(self) -> dict[str, Any]:
        raw = self.spec.get("grant") or {}
        return {"max_steps": int(raw.get("max_steps", MAX_STEPS)),
                "max_output_chars": raw.get("max_output_chars")}

    @property
    def parent_id(self) -> str | None:
        return None if self.parent is None else self.parent.turn_id


@dataclass
class ModelCall:
    turn: Turn
    tier: str = ""
    view: dict[str, Any] = field(default_factory=dict)


class Middleware:
    """A turn (or model-call) middleware; the default passes the request on."""

    def __init__(self, app: Any) -> None:
        self.app = app

    @property
    def env(self) -> Environment:
        return self.app.env

    @property
    def settings(self) -> TurnsSettings:
        return self.app.settings

    def handle(self, request: Any, nxt: Callable[[Any], Any]) -> Any:
        return nxt(request)


# -- turn middlewares -------------------------------------------------------------------


class EventBus(Middleware):
    """``turn.opened`` before the turn, ``turn.settled`` once it settled."""

    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        nxt(turn)
        self.app.emit("turn.settled", turn_id=turn.turn_id, outcome=turn.outcome,
                      parent_turn_id=turn.parent_id)
        self.app.observed.append({
            "turn_id": turn.turn_id, "kind": turn.kind, "opening": turn.opening,
            "parent_turn_id": turn.parent_id, "continues_from": turn.continues_from,
            "outcome": turn.outcome,
            "reply": turn.reply if turn.outcome == "completed" else None,
        })
        return turn


class TurnIdAssigner(Middleware):
    """T1, T2, ... in the order turns open, or ids from the injected generator."""

    def __init__(self, app: Any) -> None:
        super().__init__(app)
        self.counter = 0

    def next_id(self) -> str:
        self.counter += 1
        if self.settings.turn_ids == "uuid":
            n = self.env.ids.next("turn")
            name = f"middleware:{self.settings.seed}:{self.settings.thread}:{n}"
            return str(uuid.uuid5(uuid.NAMESPACE_OID, name))
        return f"T{self.counter}"

    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        turn.turn_id = self.next_id()
        turn.started_at = self.env.clock.now()
        self.app.emit("turn.opened", turn_id=turn.turn_id, turn_kind=turn.kind,
                      opening=turn.opening, parent_turn_id=turn.parent_id,
                      continues_from=turn.continues_from)
        return nxt(turn)


class TurnRecorder(Middleware):
    """One turn record per settled turn, written after the inner chain returned."""

    def record(self, turn: Turn) -> TurnRecord:
        metadata: dict[str, Any] = {"kind": turn.kind, "opening": turn.opening,
                                    "agent": turn.spec.get("agent", "main")}
        if turn.refused_at is not None:
            metadata["refused_at"] = turn.refused_at
        if turn.error is not None:
            metadata["error"] = turn.error
        if turn.children:
            metadata["children"] = list(turn.children)
        return TurnRecord(
            turn_id=turn.turn_id, thread_id=self.settings.thread, outcome=str(turn.outcome),
            parent_turn_id=turn.parent_id, continues_from=turn.continues_from,
            grant=turn.grant, steps_used=turn.steps, tier=turn.answered,
            fallbacks=tuple(freeze_json(turn.fallbacks)), usage=freeze_json(turn.usage),
            timing={"started_at": turn.started_at, "settled_at": self.env.clock.now()},
            metadata=freeze_json(metadata),
        )

    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        nxt(turn)
        record = self.record(turn)
        if self.env.store.has("turn-records"):
            self.env.store.append_record(record)
        self.app.records.append(record.to_json())
        return turn


class AssistantWriter(Middleware):
    """A completed root turn's answer, stored after its user message."""

    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        nxt(turn)
        if turn.kind == "root" and turn.outcome == "completed":
            parts = () if turn.payload is None else (
                {"type": "payload", "payload": freeze_json(turn.payload)},)
            self.env.store.append(self.settings.thread, [Message(
                id=self.env.ids.next("msg"), role="assistant", text=turn.reply or "",
                parts=parts, turn_id=turn.turn_id)])
        return turn


class Admission(Middleware):
    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        if not turn.spec.get("admit", True):
            turn.outcome, turn.refused_at = "refused", "admission"
            return turn
        return nxt(turn)


class UserMessageWriter(Middleware):
    """A root turn opened with an envelope stores its user message before assembly."""

    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        if turn.kind == "root" and turn.envelope is not None:
            parts = tuple(freeze_json(list(turn.envelope.get("parts") or [])))
            self.env.store.append(self.settings.thread, [Message(
                id=self.env.ids.next("msg"), role="user", text=turn.brief, parts=parts,
                turn_id=turn.turn_id)])
        return nxt(turn)


class HistoryWindowLoader(Middleware):
    """The newest N stored messages, as role and text."""

    def load(self, turn: Turn) -> list[Message]:
        if self.settings.window == 0:
            return []
        return list(self.env.store.messages(self.settings.thread, self.settings.window))

    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        turn.history = [{"role": m.role, "text": m.text} for m in self.load(turn)]
        return nxt(turn)


class StateLoader(Middleware):
    """The current value of exactly the blocks the turn's agent reads."""

    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        turn.state = []
        if self.env.store.has("state"):
            for block in turn.reads:
                entry = self.env.store.read_state(self.settings.scope, block)
                if entry is not None:
                    turn.state.append({"block": block, "value": freeze_json(entry.value)})
        return nxt(turn)


class FitCheck(Middleware):
    """Refuses a context longer (in characters) than the configured budget."""

    @staticmethod
    def size(turn: Turn) -> int:
        return (len(turn.brief) + sum(len(h["text"]) for h in turn.history)
                + sum(len(compact(s["value"])) for s in turn.state))

    def over(self, turn: Turn) -> bool:
        budget = self.settings.budget
        return budget is not None and self.size(turn) > budget

    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        if self.over(turn):
            turn.outcome, turn.refused_at = "refused", "fit-check"
            return turn
        return nxt(turn)


class Executor(Middleware):
    """The terminal of the turn chain: the model loop of one turn."""

    def start(self, turn: Turn) -> None:
        turn.transcript = []
        turn.tier_pos = 0

    def finish(self, turn: Turn) -> None:
        """Called once the loop settled the turn (nothing to keep in the base)."""

    def __call__(self, turn: Turn) -> Turn:
        self.start(turn)
        turn.outcome = self.loop(turn)
        self.finish(turn)
        return turn

    def loop(self, turn: Turn) -> str:
        grant = turn.grant
        stop = turn.spec.get("stop_after_step")
        while True:
            if turn.steps >= grant["max_steps"]:
                return "cut"
            turn.steps += 1
            answer = self.app.model_chain(ModelCall(turn))
            self.env.clock.advance(self.settings.step_seconds)
            if answer is None:
                return "failed"
            text = str(answer.get("reply") or "")
            limit = grant["max_output_chars"]
            if limit is not None and len(text) > limit:
                self.app.emit("turn.output", turn_id=turn.turn_id, step=turn.steps,
                              text=text[:limit])
                return "truncated"
            if text:
                self.app.emit("turn.output", turn_id=turn.turn_id, step=turn.steps, text=text)
            calls = list(answer.get("tool_calls") or [])
            turn.transcript.append({"role": "assistant", "text": text,
                                    "tool_calls": freeze_json(calls)})
            if not calls:
                turn.reply, turn.payload = text, answer.get("payload")
                return "completed"
            for call in calls:
                if not self.app.tools.run(turn, call):
                    return "failed"
            if stop is not None and turn.steps >= stop:
                return "stopped"


# -- model-call middlewares -------------------------------------------------------------


class TierFallback(Middleware):
    """Tries the turn's tiers in order from where it stands; a failing tier falls back."""

    def handle(self, call: ModelCall, nxt: Callable[[Any], Any]) -> Any:
        turn = call.turn
        while turn.tier_pos < len(turn.tiers):
            call.tier = turn.tiers[turn.tier_pos]
            try:
                answer = nxt(call)
            except ScriptedFailure as failure:
                turn.fallbacks.append({"tier": call.tier, "step": turn.steps,
                                       "error": failure.error})
                turn.error = failure.error
                turn.tier_pos += 1
                continue
            turn.answered, turn.error = call.tier, None
            return answer
        return None


class ViewBuilder(Middleware):
    """Builds what the model is shown and keeps a copy for the caller."""

    def handle(self, call: ModelCall, nxt: Callable[[Any], Any]) -> Any:
        turn = call.turn
        call.view = freeze_json({
            "turn_id": turn.turn_id, "step": turn.steps, "tier": call.tier,
            "history": turn.history, "state": turn.state, "brief": turn.brief,
            "transcript": turn.transcript,
        })
        self.app.views.append(call.view)
        return nxt(call)


class UsageAccounting(Middleware):
    """Adds an answered call's usage to the turn that made it."""

    def charge(self, call: ModelCall, usage: Mapping[str, Any]) -> None:
        add_usage(call.turn.usage, usage)

    def handle(self, call: ModelCall, nxt: Callable[[Any], Any]) -> Any:
        answer = nxt(call)
        self.charge(call, answer.get("usage") or {})
        return answer


# -- tools --------------------------------------------------------------------------------


class Tools:
    """A turn's tool calls: state updates, child turns and scripted tools."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def run(self, turn: Turn, call: Mapping[str, Any]) -> bool:
        name, call_id = call.get("name"), call.get("id")
        args = dict(call.get("args") or {})
        if name == "update_block":
            result = self.update_block(turn, args)
        elif name == "spawn":
            result = self.spawn(turn, args)
        else:
            try:
                result = self.app.env.tool(str(name), freeze_json(args),
                                           None if call_id is None else str(call_id))
            except ScriptedFailure as failure:
                turn.error = failure.error
                return False
        turn.transcript.append({"role": "tool", "call_id": call_id, "name": name,
                                "result": freeze_json(result)})
        return True

    def write(self, block: str, value: Any, expected: int | None) -> Any:
        return self.app.env.store.write_state(self.app.settings.scope, block, value, expected)

    def update_block(self, turn: Turn, args: Mapping[str, Any]) -> dict[str, Any]:
        env, settings = self.app.env, self.app.settings
        block, value = args.get("block"), freeze_json(args.get("value"))
        if not env.store.has("state"):
            return {"ok": False, "error": "unsupported", "block": block}
        kind = settings.blocks.get(block) if isinstance(block, str) else None
        if kind is None or not type_ok(kind, value):
            reason = "undeclared block" if kind is None else f"value is not a {kind}"
            self.app.emit("state.rejected", turn_id=turn.turn_id, block=block, reason=reason)
            return {"ok": False, "error": "invalid", "block": block, "reason": reason}
        if "expected_version" in args:
            expected = args["expected_version"]
        else:
            current = env.store.read_state(settings.scope, block)
            expected = None if current is None else current.version
        try:
            entry = self.write(str(block), value, expected)
        except ConflictError as exc:
            self.app.emit("state.rejected", turn_id=turn.turn_id, block=block, reason=str(exc))
            return {"ok": False, "error": "conflict", "block": block, "reason": str(exc)}
        self.app.emit("state.updated", turn_id=turn.turn_id, block=block, version=entry.version)
        return {"ok": True, "block": block, "version": entry.version}

    def spawn(self, parent: Turn, args: Mapping[str, Any]) -> dict[str, Any]:
        children = parent.spec.get("children") or []
        index = args.get("child")
        if (parent.kind != "root" or not isinstance(index, int) or isinstance(index, bool)
                or not 0 <= index < len(children)):
            raise ScriptError(f"children: child {index!r} was not scripted")
        if index in parent.spawned:
            raise ScriptError(f"children[{index}]: spawned twice")
        parent.spawned.add(index)
        child = self.app.run_turn(children[index], index, "child", parent)
        parent.children.append(child.turn_id)
        return {"turn_id": child.turn_id, "outcome": child.outcome, "reply": child.reply}


class TurnsApp:
    """One ``turns`` script on one environment: the chains and what the caller gets."""

    turn_middlewares: tuple[type[Middleware], ...] = (
        EventBus, TurnIdAssigner, TurnRecorder, AssistantWriter, Admission,
        UserMessageWriter, HistoryWindowLoader, StateLoader, FitCheck,
    )
    executor: type[Executor] = Executor
    model_middlewares: tuple[type[Middleware], ...] = (TierFallback, ViewBuilder, UsageAccounting)
    tools_class: type[Tools] = Tools

    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        self.env = env
        self.settings = TurnsSettings.read(script)
        specs = script.get("turns")
        if not isinstance(specs, list):
            raise ScriptError("turns: expected a list")
        for i, spec in enumerate(specs):
            self._check(spec, f"turns[{i}]")
        self.specs = specs
        self.events: list[dict[str, Any]] = []
        self.observed: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []
        self.views: list[dict[str, Any]] = []
        self.ids_by_index: dict[int, str] = {}
        self.tools = self.tools_class(self)
        self.turn_chain = Chain([m(self) for m in self.turn_middlewares], self.executor(self))
        self.model_chain = Chain([m(self) for m in self.model_middlewares], self.transport)

    def _check(self, spec: Any, where: str) -> None:
        spec = _obj(spec, where)
        if ("envelope" in spec) == ("brief" in spec):
            raise ScriptError(f"{where}: give exactly one of envelope or brief")
        if spec.get("agent", "main") not in self.settings.agents:
            raise ScriptError(f"{where}.agent: unknown agent {spec.get('agent')!r}")
        for i, child in enumerate(spec.get("children") or []):
            self._check(child, f"{where}.children[{i}]")

    def emit(self, name: str, **data: Any) -> None:
        data = freeze_json(data)
        self.env.emit(name, **data)
        self.events.append({"name": name, **data})

    def transport(self, call: ModelCall) -> Mapping[str, Any]:
        return self.env.model(call.tier, call.view)

    def run_turn(self, spec: Mapping[str, Any], index: int, kind: str,
                 parent: Turn | None) -> Turn:
        reads, tiers = self.settings.agents[spec.get("agent", "main")]
        continues = spec.get("continues_from")
        if isinstance(continues, int) and not isinstance(continues, bool):
            continues = self.ids_by_index.get(continues)
        turn = Turn(spec=spec, index=index, kind=kind, parent=parent,
                    continues_from=None if continues is None else str(continues),
                    reads=reads, tiers=tiers)
        self.turn_chain(turn)
        return turn

    def run(self) -> dict[str, Any]:
        for i, spec in enumerate(self.specs):
            self.ids_by_index[i] = self.run_turn(spec, i, "root", None).turn_id
        return {
            "thread": self.settings.thread,
            "config": {"history_window": self.settings.window,
                       "turn_ids": self.settings.turn_ids,
                       "context_budget": self.settings.budget},
            "turns": self.observed, "records": self.records, "views": self.views,
            "events": list(self.events), "export": [dict(e) for e in self.events],
        }


# ========================================================================= strict-write

MODES = ("digest", "exclude_all", "keep_all")
TASK_KINDS = ("write", "tool", "llm", "behavior", "output")
SHUTDOWN = "GracefulShutdown"
NOTICE = "Something went wrong. Try again."
JOURNAL = "strictWrite"
ACTIONS, OUTPUT, TASK_ERRORS = "actions", "output", "taskErrors"
POLICY = "memoryPolicy.strictWriteDiscipline"


@dataclass
class StepState:
    """A conversation step folded from its committed journal entries."""

    input: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)

    def items(self, key: str) -> list[Any]:
        return [value for _, value in self.outputs.get(key, [])]


def entry_of(message: Message) -> Mapping[str, Any] | None:
    meta = message.metadata.get(JOURNAL) if isinstance(message.metadata, Mapping) else None
    return meta if isinstance(meta, Mapping) else None


def fold(messages: Sequence[Message]) -> dict[int, StepState]:
    """Replays the committed journal, in order, into each step's state."""
    steps: dict[int, StepState] = {}
    for message in messages:
        meta = entry_of(message)
        if meta is None or not message.committed:
            continue
        state = steps.setdefault(int(meta.get("step", 0)), StepState())
        kind, key, op = meta.get("kind"), str(meta.get("key")), meta.get("op")
        value = message.parts[0] if message.parts else None
        if kind == "input":
            state.input = message.text
        elif kind == "data":
            if op == "remove":
                state.data.pop(key, None)
            else:
                state.data[key] = value
        elif kind == "output":
            items = state.outputs.get(key)
            target = meta.get("target")
            if op == "append":
                state.outputs.setdefault(key, []).append((message.id, value))
            elif op == "change" and items is not None:
                state.outputs[key] = [(o, value if o == target else v) for o, v in items]
            elif op == "remove" and items is not None:
                if target is None:
                    del state.outputs[key]
                else:
                    state.outputs[key] = [(o, v) for o, v in items if o != target]
    return dict(sorted(steps.items()))


def item_text(value: Any) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return str(value["text"])
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass
class Policy:
    enabled: bool
    on_failure: str
    continue_on_failure: bool

    @classmethod
    def read(cls, script: Mapping[str, Any]) -> Policy:
        memory = _obj(script.get("memoryPolicy") or {}, "memoryPolicy")
        raw = _obj(memory.get("strictWriteDiscipline") or {}, POLICY)
        mode = raw.get("onFailure", "digest")
        if mode not in MODES:
            raise ScriptError(f"{POLICY}.onFailure must be one of {', '.join(MODES)} "
                               f"(got {mode!r})")
        for flag in ("enabled", "continueOnFailure"):
            if not isinstance(raw.get(flag, False), bool):
                raise ScriptError(f"{POLICY}.{flag} must be true or false")
        return cls(bool(raw.get("enabled", False)), str(mode),
                   bool(raw.get("continueOnFailure", False)))

    @property
    def mode(self) -> str | None:
        return self.on_failure if self.enabled else None

    @property
    def hides(self) -> bool:
        return self.mode in ("digest", "exclude_all")

    @property
    def continues(self) -> bool:
        return self.enabled and self.continue_on_failure


@dataclass
class SWTurn:
    number: int
    step: int
    input: str
    streaming: bool
    previous: list[str] = field(default_factory=list)
    state: str = "READY"
    stopped: bool = False
    task_errors: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class TaskRun:
    turn: SWTurn
    task: Mapping[str, Any]


class Journal:
    """Conversation memory as an append-only journal of single-message writes.

    ``dirty`` holds the ids written since the last checkpoint: what the running task
    wrote, and so what a rollback hides. Local copies of commit flags change only
    after the store acknowledged the change."""

    def __init__(self, env: Environment, thread: str) -> None:
        self.env = env
        self.thread = thread
        self.log: list[Message] = []
        self.dirty: list[str] = []

    def checkpoint(self) -> None:
        self.dirty = []

    def write(self, step: int, task: str | None, kind: str, key: str, op: str,
              value: Any = None, target: str | None = None, *, has_value: bool = True) -> Message:
        value = freeze_json(value)
        meta: dict[str, Any] = {"step": step, "task": task, "kind": kind, "key": key, "op": op}
        if target is not None:
            meta["target"] = target
        if kind == "input":
            role, text, parts = "user", str(value), ()
        elif kind == "output" and key == OUTPUT:
            role, text, parts = "assistant", item_text(value), (value,)
        else:
            shown = item_text(value) if has_value else ""
            role, text, parts = "system", f"{key} {op} {shown}".rstrip(), (
                (value,) if has_value else ())
        message = Message(id=self.env.ids.next("mw"), role=role, text=text, parts=parts,
                          turn_id=f"step-{step}", metadata={JOURNAL: meta})
        self.env.store.append(self.thread, [message])
        self.log.append(message)
        self.dirty.append(message.id)
        return message

    def set_committed(self, ids: Sequence[str], committed: bool) -> None:
        if not ids:
            return
        self.env.store.set_committed(self.thread, list(ids), committed)
        wanted = set(ids)
        self.log = [replace(m, committed=committed) if m.id in wanted else m for m in self.log]

    def step(self, step: int) -> StepState:
        return fold(self.log).get(step, StepState())


class TaskMiddleware:
    def __init__(self, app: StrictWriteApp) -> None:
        self.app = app

    def handle(self, run: TaskRun, nxt: Callable[[Any], Any]) -> Any:
        return nxt(run)


class FailurePolicy(TaskMiddleware):
    """Handles a task's scripted failure under the memory policy."""

    def handle(self, run: TaskRun, nxt: Callable[[Any], Any]) -> Any:
        try:
            return nxt(run)
        except ScriptedFailure as failure:
            self.app.status(run, "failed")
            self.fail(run, failure)
            if failure.type_name == SHUTDOWN or not self.app.policy.continues:
                self.app.stop(run.turn)
            return None

    def rollback_ids(self, run: TaskRun) -> list[str]:
        return list(self.app.journal.dirty)

    def fail(self, run: TaskRun, failure: ScriptedFailure) -> None:
        app, journal, policy = self.app, self.app.journal, self.app.policy
        turn, task_id, error = run.turn, str(run.task["id"]), failure.error
        journal.write(turn.step, task_id, "data", f"{task_id}:error", "set",
                      raw_error_text(error))
        entry = app.digester.entry(task_id, error)
        if policy.hides:
            journal.set_committed(self.rollback_ids(run), False)
        if policy.mode == "digest":
            self.store_digest(run, entry, error)
        if policy.mode is not None:
            journal.write(turn.step, None, "output", ACTIONS, "append", f"task_failed_{task_id}")
        self.tell_caller(run, entry, error)

    def store_digest(self, run: TaskRun, entry: dict[str, Any], error: Mapping[str, Any]) -> None:
        self.app.journal.write(run.turn.step, None, "output", TASK_ERRORS, "append", entry)

    def tell_caller(self, run: TaskRun, entry: dict[str, Any], error: Mapping[str, Any]) -> None:
        if self.app.policy.mode == "exclude_all":
            return
        run.turn.task_errors.append(entry)
        self.stream(run, entry, error)

    def stream(self, run: TaskRun, entry: dict[str, Any], error: Mapping[str, Any]) -> None:
        if run.turn.streaming:
            self.app.env.emit("task_failed", turn=run.turn.number, taskId=entry["taskId"],
                              text=entry["text"], reason=self.app.digester.stream_reason(error))


class Checkpointer(TaskMiddleware):
    """Opens a fresh write set for each task, so a rollback hides only its writes."""

    def handle(self, run: TaskRun, nxt: Callable[[Any], Any]) -> Any:
        self.app.journal.checkpoint()
        result = nxt(run)
        self.app.status(run, "done")
        return result


class StrictWriteApp:
    """One ``strict-write`` script: per turn, every task through the task chain."""

    task_middlewares: tuple[type[TaskMiddleware], ...] = (FailurePolicy, Checkpointer)
    digester_class: type[Digester] = Digester

    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        self.env = env
        self.policy = Policy.read(script)
        thread = script.get("thread")
        if not isinstance(thread, str) or not thread:
            raise ScriptError("thread: expected a non-empty string")
        self.thread = thread
        self.pipeline = self._pipeline(script.get("pipeline"))
        self.rules = [(str(r["when"]), [str(a) for a in r.get("actions", [])])
                      for r in script.get("behaviorRules") or []]
        self.output_set = [(str(o["action"]), str(o["text"]))
                           for o in script.get("outputSet") or []]
        turns = script.get("turns")
        if not isinstance(turns, list) or not turns:
            raise ScriptError("turns: expected at least one turn")
        self.turns = [(str(t.get("input", "")), bool(t.get("streaming", False))) for t in turns]
        if self.policy.enabled and not env.store.has("commit-flags"):
            raise ScriptError(f"{POLICY}.enabled: strict write needs a commit-flags store")
        self.digester = self.digester_class()
        self.journal = Journal(env, thread)
        self.task_chain = Chain([m(self) for m in self.task_middlewares], self.perform)

    @staticmethod
    def _pipeline(raw: Any) -> list[dict[str, Any]]:
        if not isinstance(raw, list) or not raw:
            raise ScriptError("pipeline: expected a non-empty list")
        tasks, seen = [], set()
        for n, raw_item in enumerate(raw):
            item = _obj(raw_item, f"pipeline[{n}]")
            task_id = item.get("id")
            if not isinstance(task_id, str) or not task_id or task_id in seen:
                raise ScriptError(f"pipeline[{n}].id: expected a unique task name")
            seen.add(task_id)
            kind = item.get("kind", "write")
            if kind not in TASK_KINDS:
                raise ScriptError(f"pipeline[{n}].kind: unknown kind {kind!r}")
            tasks.append({"id": task_id, "kind": kind, "tool": item.get("tool") or task_id,
                          "writes": list(item.get("writes") or [])})
        return tasks

    # -- bookkeeping -----------------------------------------------------------------------

    def status(self, run: TaskRun, status: str) -> None:
        run.turn.tasks.append({"task": run.task["id"], "status": status})

    def stop(self, turn: SWTurn) -> None:
        turn.stopped, turn.state = True, "ERROR"

    def stored_steps(self) -> dict[int, StepState]:
        return fold(self.env.store.messages(self.thread))

    # -- task bodies -----------------------------------------------------------------------

    def apply(self, run: TaskRun, op: Mapping[str, Any]) -> None:
        step, task_id, journal = run.turn.step, str(run.task["id"]), self.journal
        name = op.get("op")
        if name == "action":
            journal.write(step, task_id, "output", ACTIONS, "append", op.get("action"))
        elif "data" in op:
            if name == "remove":
                journal.write(step, task_id, "data", str(op["data"]), "remove", has_value=False)
            else:
                journal.write(step, task_id, "data", str(op["data"]), str(name), op.get("value"))
        elif name == "append":
            journal.write(step, task_id, "output", str(op["output"]), "append", op.get("item"))
        else:
            key = str(op.get("output"))
            items = journal.step(step).outputs.get(key)
            index = op.get("index")
            if items is None or (index is not None and index >= len(items)):
                return
            target = None if index is None else items[index][0]
            if name == "change":
                journal.write(step, task_id, "output", key, "change", op.get("item"), target)
            else:
                journal.write(step, task_id, "output", key, "remove", None, target,
                              has_value=False)

    def model_view(self) -> dict[str, Any]:
        return {"steps": [
            {"step": n, "input": s.input, "data": dict(s.data),
             "output": {k: [v for _, v in items] for k, items in s.outputs.items()
                        if k != ACTIONS}}
            for n, s in self.stored_steps().items()
        ]}

    def perform(self, run: TaskRun) -> None:
        turn, task = run.turn, run.task
        task_id, step, journal = str(task["id"]), turn.step, self.journal
        for op in task["writes"]:
            self.apply(run, op)
        kind = task["kind"]
        if kind == "tool":
            result = self.env.tool(str(task["tool"]), {"turn": turn.number, "task": task_id},
                                   call_id=f"{task_id}@{turn.number}")
            journal.write(step, task_id, "data", f"{task_id}:result", "set", result)
        elif kind == "llm":
            answer = self.env.model(task_id, {"turn": turn.number, "view": self.model_view()})
            journal.write(step, task_id, "output", OUTPUT, "append",
                          {"type": "text", "text": str(answer.get("reply") or "")})
        elif kind == "behavior":
            current = [str(a) for a in journal.step(step).items(ACTIONS)]
            seen = set(current) | set(turn.previous)
            for when, actions in self.rules:
                if when not in seen:
                    continue
                for action in actions:
                    if action not in current:
                        journal.write(step, task_id, "output", ACTIONS, "append", action)
                        current.append(action)
        elif kind == "output":
            current = {str(a) for a in journal.step(step).items(ACTIONS)}
            for action, text in self.output_set:
                if action in current:
                    journal.write(step, task_id, "output", OUTPUT, "append",
                                  {"type": "text", "text": text})

    # -- turns -------------------------------------------------------------------------------

    def run_turn(self, number: int, text: str, streaming: bool) -> dict[str, Any]:
        stored = self.stored_steps()
        step = max([*stored, 0]) + 1
        previous = stored[max(stored)].items(ACTIONS) if stored else []
        turn = SWTurn(number=number, step=step, input=text, streaming=streaming,
                      previous=[str(a) for a in previous])
        try:
            self.journal.write(step, None, "input", "input", "set", text)
        except StoreError:
            self.stop(turn)
        for task in self.pipeline:
            run = TaskRun(turn, task)
            if turn.stopped:
                self.status(run, "not-run")
                continue
            try:
                self.task_chain(run)
            except StoreError:
                if not any(t["task"] == task["id"] for t in turn.tasks):
                    self.status(run, "failed")
                self.stop(turn)
        memory = self.journal.step(step)
        reply = "" if turn.state == "ERROR" else "\n".join(
            item_text(i) for i in memory.items(OUTPUT))
        return {
            "turn": number, "input": text, "state": turn.state, "reply": reply,
            "taskErrors": freeze_json(turn.task_errors),
            "actions": [str(a) for a in memory.items(ACTIONS)],
            "endUserNotice": NOTICE if turn.state == "ERROR" else None,
            "tasks": turn.tasks,
        }

    def run(self) -> dict[str, Any]:
        turns = [self.run_turn(n, text, streaming)
                 for n, (text, streaming) in enumerate(self.turns, 1)]
        return {
            "thread": self.thread,
            "policy": {"enabled": self.policy.enabled, "onFailure": self.policy.on_failure,
                       "continueOnFailure": self.policy.continue_on_failure},
            "turns": freeze_json(turns),
        }


# ============================================================================== runtime


class MiddlewareRuntime:
    """Declares both profiles and hands each script to its pipeline application."""

    profiles = frozenset({"turns", "strict-write"})
    turns_app: type[TurnsApp] = TurnsApp
    strict_app: type[StrictWriteApp] = StrictWriteApp

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        profile = script.get("profile")
        if profile == "turns":
            return self.turns_app(script, env).run()
        if profile == "strict-write":
            return self.strict_app(script, env).run()
        raise ScriptError(f"profile: expected turns or strict-write, got {profile!r}")


def make() -> MiddlewareRuntime:
    return MiddlewareRuntime()
