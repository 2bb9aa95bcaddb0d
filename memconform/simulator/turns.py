"""The reference runtime of document 002 ("History and records"): turns.

A script of profile ``turns`` (``spec/schemas/script-turns.schema.json``) lists
the turns one runtime settles on one thread. For every turn the runtime follows
one fixed order:

1. **admission**: a turn with ``"admit": false`` is refused here; nothing is
   stored but its turn record;
2. **persist the user message**: only a *root* turn opened with an
   ``envelope`` appends one (a brief-only root and every child append nothing);
3. **assemble the context**: the newest ``history_window`` stored messages
   (messages, not pairs, the message just stored included), rendered as role
   and text only; the state blocks the turn's agent reads; the brief; and an
   empty current-turn transcript;
4. **fit check**: when ``context_budget`` is set and the assembled context is
   longer (in characters), the turn settles ``refused`` without a model call;
   the user message of step 2 stays stored;
5. **execute**: model steps along the agent's tier chain (a failing tier falls
   back to the next and is noted in the fallback history), tools, block
   updates and child turns, until the turn settles ``completed``, ``failed``,
   ``cut`` (step budget spent), ``stopped`` (the caller stopped it) or
   ``truncated`` (a reply longer than the grant's output limit).

On settling, a completed root appends its assistant message (final text and
payload parts); no other outcome appends one, and partial output stays in the
emitted ``turn.output`` events. Every settled turn, refused ones and children
included, appends one :class:`~memconform.values.TurnRecord` (when the store
declares ``turn-records``). A child's usage stays on the child's record.

State changes only through block updates that pass validation and the store's
compare-and-set; a failed update changes nothing, and nothing is undone when a
turn later fails. ``continues_from`` is written on the record and restores
nothing. Turn ids come from a per-runtime counter (``T1``, ``T2``, …: a runtime
in a new process starts again at ``T1``; the kit runs the turns after a restart
in a fresh process) or from a deterministic UUID generator.

Configuration is checked before any turn runs: a malformed script raises
:class:`~memconform.harness.environment.ScriptError`, a negative history
window raises :class:`ConfigurationError`; in both cases nothing is stored.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memconform.contract import Capability, ConflictError
from memconform.harness.environment import Environment, ScriptedFailure, ScriptError
from memconform.values import JSONValue, Message, TurnRecord, freeze_json

__all__ = [
    "BLOCK_TYPES",
    "DEFAULT_HISTORY_WINDOW",
    "DEFAULT_MAX_STEPS",
    "OUTCOMES",
    "SPAWN_TOOL",
    "UPDATE_TOOL",
    "AgentSpec",
    "ConfigurationError",
    "TurnSpec",
    "TurnState",
    "TurnsConfig",
    "TurnsRuntime",
    "context_size",
    "execute",
    "parse_script",
]

DEFAULT_HISTORY_WINDOW = 6
"""Stored messages a turn sees when the script sets no ``history_window``."""

DEFAULT_MAX_STEPS = 8
"""Model steps a turn may take when its grant names no ``max_steps``."""

OUTCOMES = ("completed", "failed", "cut", "stopped", "truncated", "refused")
"""Every way a turn settles."""

SPAWN_TOOL = "spawn"
"""The tool call that starts child turn ``args.child`` of the calling root."""

UPDATE_TOOL = "update_block"
"""The tool call that updates a state block: ``args.block``, ``args.value`` and
optionally ``args.expected_version`` (otherwise the current version is used)."""

BLOCK_TYPES = ("any", "string", "number", "integer", "boolean", "object", "array")
"""Value types a declared state block can require."""

_DEFAULT_AGENT = "main"


class ConfigurationError(ValueError):
    """The runtime refuses its configuration at construction (before any turn);
    the message names the field, for example ``config.history_window``."""


# -- the script, parsed ----------------------------------------------------------------


@dataclass(frozen=True)
class AgentSpec:
    """One agent: the state blocks it reads and its model tier chain."""

    name: str
    reads: tuple[str, ...]
    tiers: tuple[str, ...]


@dataclass(frozen=True)
class TurnSpec:
    """One scripted turn (root or child) as the script describes it."""

    path: str
    index: int
    agent: str
    envelope: Mapping[str, JSONValue] | None
    brief: str | None
    admit: bool
    grant: Mapping[str, JSONValue]
    continues_from: int | str | None
    stop_after_step: int | None
    children: tuple[TurnSpec, ...] = ()

    @property
    def opening(self) -> str:
        """``envelope`` or ``brief``."""
        return "envelope" if self.envelope is not None else "brief"

    @property
    def brief_text(self) -> str:
        """The text the model is asked about: the envelope's text or the brief."""
        if self.envelope is not None:
            return str(self.envelope.get("text", ""))
        return self.brief or ""

    @property
    def max_steps(self) -> int:
        """The grant's step budget."""
        return int(self.grant.get("max_steps", DEFAULT_MAX_STEPS))

    @property
    def max_output_chars(self) -> int | None:
        """The grant's output limit per reply, ``None`` for none."""
        value = self.grant.get("max_output_chars")
        return None if value is None else int(value)


@dataclass(frozen=True)
class TurnsConfig:
    """The runtime configuration of a ``turns`` script."""

    thread: str
    history_window: int = DEFAULT_HISTORY_WINDOW
    turn_ids: str = "counter"
    seed: int = 0
    context_budget: int | None = None
    step_seconds: float = 1.0
    blocks: Mapping[str, str] = field(default_factory=dict)
    agents: Mapping[str, AgentSpec] = field(default_factory=dict)
    scope: str = ""


def _int(value: Any, where: str, minimum: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ScriptError(f"{where}: expected an integer, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ScriptError(f"{where}: must be at least {minimum}, got {value}")
    return value


def _str_list(value: Any, where: str, *, non_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ScriptError(f"{where}: expected a list of names")
    if non_empty and not value:
        raise ScriptError(f"{where}: must name at least one")
    return tuple(value)


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScriptError(f"{where}: expected an object")
    return value


def _config(script: Mapping[str, Any]) -> TurnsConfig:
    thread = script.get("thread")
    if not isinstance(thread, str) or not thread:
        raise ScriptError("thread: expected a non-empty string")
    raw = _object(script.get("config", {}), "config")
    known = {"history_window", "turn_ids", "seed", "context_budget", "tiers", "blocks",
             "step_seconds", "state_scope"}
    for key in raw:
        if key not in known:
            raise ScriptError(f"config.{key}: unknown setting")
    window = raw.get("history_window", DEFAULT_HISTORY_WINDOW)
    window = _int(window, "config.history_window")
    if window < 0:
        raise ConfigurationError(
            f"config.history_window: must be 0 or more, got {window} "
            "(a negative window is rejected, not read as 'all')"
        )
    turn_ids = raw.get("turn_ids", "counter")
    if turn_ids not in ("counter", "uuid"):
        raise ScriptError(f"config.turn_ids: must be 'counter' or 'uuid', got {turn_ids!r}")
    budget = raw.get("context_budget")
    if budget is not None:
        budget = _int(budget, "config.context_budget", 0)
    step_seconds = raw.get("step_seconds", 1.0)
    if isinstance(step_seconds, bool) or not isinstance(step_seconds, int | float) or (
        step_seconds < 0
    ):
        raise ScriptError("config.step_seconds: expected a number of seconds, 0 or more")
    tiers = _str_list(raw.get("tiers", ["primary"]), "config.tiers", non_empty=True)
    blocks: dict[str, str] = {}
    for name, spec in _object(raw.get("blocks", {}), "config.blocks").items():
        kind = _object(spec, f"config.blocks.{name}").get("type", "any")
        if kind not in BLOCK_TYPES:
            raise ScriptError(
                f"config.blocks.{name}.type: must be one of {', '.join(BLOCK_TYPES)}"
            )
        blocks[name] = str(kind)
    agents: dict[str, AgentSpec] = {
        _DEFAULT_AGENT: AgentSpec(_DEFAULT_AGENT, tuple(blocks), tiers)
    }
    for name, raw_agent in _object(script.get("agents", {}), "agents").items():
        where = f"agents.{name}"
        spec = _object(raw_agent, where)
        for key in spec:
            if key not in ("reads", "tiers"):
                raise ScriptError(f"{where}.{key}: unknown setting")
        reads = _str_list(spec.get("reads", []), f"{where}.reads")
        for block in reads:
            if block not in blocks:
                raise ScriptError(f"{where}.reads: block {block!r} is not declared")
        agent_tiers = _str_list(spec.get("tiers", list(tiers)), f"{where}.tiers", non_empty=True)
        agents[name] = AgentSpec(name, reads, agent_tiers)
    scope = raw.get("state_scope", thread)
    if not isinstance(scope, str) or not scope:
        raise ScriptError("config.state_scope: expected a non-empty string")
    return TurnsConfig(
        thread=thread,
        history_window=window,
        turn_ids=str(turn_ids),
        seed=_int(raw.get("seed", 0), "config.seed"),
        context_budget=budget,
        step_seconds=float(step_seconds),
        blocks=blocks,
        agents=agents,
        scope=scope,
    )


_TURN_KEYS = {"agent", "envelope", "brief", "admit", "grant", "continues_from",
              "stop_after_step", "children"}


def _turn(raw: Any, where: str, index: int, agents: Mapping[str, AgentSpec], *,
          child: bool) -> TurnSpec:
    raw = _object(raw, where)
    for key in raw:
        if key not in _TURN_KEYS:
            raise ScriptError(f"{where}.{key}: unknown field")
    if ("envelope" in raw) == ("brief" in raw):
        raise ScriptError(f"{where}: give exactly one of 'envelope' or 'brief'")
    envelope = None
    brief = None
    if "envelope" in raw:
        envelope = _object(raw["envelope"], f"{where}.envelope")
        if not isinstance(envelope.get("text"), str):
            raise ScriptError(f"{where}.envelope.text: expected a string")
        if not isinstance(envelope.get("parts", []), list):
            raise ScriptError(f"{where}.envelope.parts: expected a list")
        envelope = freeze_json(envelope)
    else:
        brief = raw["brief"]
        if not isinstance(brief, str):
            raise ScriptError(f"{where}.brief: expected a string")
    agent = raw.get("agent", _DEFAULT_AGENT)
    if agent not in agents:
        raise ScriptError(f"{where}.agent: unknown agent {agent!r}")
    admit = raw.get("admit", True)
    if not isinstance(admit, bool):
        raise ScriptError(f"{where}.admit: expected true or false")
    grant = dict(_object(raw.get("grant", {}), f"{where}.grant"))
    for key in grant:
        if key not in ("max_steps", "max_output_chars"):
            raise ScriptError(f"{where}.grant.{key}: unknown field")
    grant["max_steps"] = _int(grant.get("max_steps", DEFAULT_MAX_STEPS),
                              f"{where}.grant.max_steps", 1)
    if grant.get("max_output_chars") is not None:
        _int(grant["max_output_chars"], f"{where}.grant.max_output_chars", 1)
    else:
        grant["max_output_chars"] = None
    continues = raw.get("continues_from")
    if continues is not None and not (
        isinstance(continues, str) or (isinstance(continues, int) and not isinstance(
            continues, bool))
    ):
        raise ScriptError(f"{where}.continues_from: expected a turn id or a turn index")
    if isinstance(continues, int) and not 0 <= continues < index:
        raise ScriptError(f"{where}.continues_from: index {continues} names no earlier turn")
    stop = raw.get("stop_after_step")
    if stop is not None:
        stop = _int(stop, f"{where}.stop_after_step", 1)
    children_raw = raw.get("children", [])
    if not isinstance(children_raw, list):
        raise ScriptError(f"{where}.children: expected a list")
    if child and children_raw:
        raise ScriptError(f"{where}.children: only a root turn spawns children")
    children = tuple(
        _turn(c, f"{where}.children[{i}]", i, agents, child=True)
        for i, c in enumerate(children_raw)
    )
    return TurnSpec(
        path=where,
        index=index,
        agent=str(agent),
        envelope=envelope,
        brief=brief,
        admit=admit,
        grant=freeze_json(grant),
        continues_from=continues,
        stop_after_step=stop,
        children=children,
    )


def parse_script(script: Mapping[str, Any]) -> tuple[TurnsConfig, list[TurnSpec]]:
    """Check a ``turns`` script and return its configuration and its turns.

    Raises :class:`ScriptError` naming the field for a malformed script and
    :class:`ConfigurationError` for a configuration the runtime refuses.
    """
    if not isinstance(script, Mapping):
        raise ScriptError("script: expected an object")
    config = _config(script)
    raw_turns = script.get("turns")
    if not isinstance(raw_turns, list):
        raise ScriptError("turns: expected a list")
    turns = [
        _turn(raw, f"turns[{i}]", i, config.agents, child=False)
        for i, raw in enumerate(raw_turns)
    ]
    return config, turns


# -- the context ------------------------------------------------------------------------


def _compact(value: JSONValue) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def context_size(view: Mapping[str, Any]) -> int:
    """The size the fit check compares with ``context_budget``: the characters of
    the brief, of every history text and of every state value as compact JSON."""
    size = len(str(view.get("brief", "")))
    size += sum(len(str(h.get("text", ""))) for h in view.get("history", []))
    size += sum(len(_compact(s.get("value"))) for s in view.get("state", []))
    return size


def _valid(kind: str, value: JSONValue) -> bool:
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


def _add_usage(total: dict[str, JSONValue], usage: Mapping[str, JSONValue]) -> None:
    for key, value in usage.items():
        old = total.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and isinstance(
            old, int | float
        ) and not isinstance(old, bool):
            total[key] = old + value
        else:
            total[key] = value


# -- execution -------------------------------------------------------------------------


@dataclass
class TurnState:
    """The mutable state of one turn while it runs."""

    spec: TurnSpec
    turn_id: str
    kind: str
    parent_turn_id: str | None
    continues_from: str | None
    started_at: str
    tiers: tuple[str, ...]
    tier_index: int = 0
    answered_tier: str | None = None
    steps_used: int = 0
    usage: dict[str, JSONValue] = field(default_factory=dict)
    fallbacks: list[JSONValue] = field(default_factory=list)
    transcript: list[dict[str, JSONValue]] = field(default_factory=list)
    outcome: str | None = None
    reply: str | None = None
    payload: JSONValue = None
    error: JSONValue = None
    refused_at: str | None = None
    children: list[str] = field(default_factory=list)
    spawned: set[int] = field(default_factory=set)
    base_view: dict[str, JSONValue] = field(default_factory=dict)


class TurnsRuntime:
    """Executes one ``turns`` script against one environment.

    The methods named ``_…`` are the runtime's seams: each one implements one
    step of the order above, so a deliberately broken runtime (a mutant) can
    replace exactly one of them.
    """

    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        self.env = env
        self.config, self.turns = parse_script(script)
        self.counter = 0
        self.ids_by_index: dict[int, str] = {}
        self.observed_turns: list[dict[str, JSONValue]] = []
        self.records: list[dict[str, JSONValue]] = []
        self.views: list[dict[str, JSONValue]] = []
        self.events: list[dict[str, JSONValue]] = []
        self.settled: list[TurnState] = []

    # -- the seams ------------------------------------------------------------------

    def _next_turn_id(self) -> str:
        """The next turn id from the configured generator."""
        self.counter += 1
        if self.config.turn_ids == "uuid":
            n = self.env.ids.next("turn-uuid")
            name = f"memconform:turns:{self.config.seed}:{self.config.thread}:{n}"
            return str(uuid.uuid5(uuid.NAMESPACE_URL, name))
        return f"T{self.counter}"

    def _admits(self, turn: TurnState) -> bool:
        """Admission: whether the turn may run at all."""
        return turn.spec.admit

    def _stores_user_message(self, turn: TurnState) -> bool:
        """Only a root opened with an envelope stores a user message."""
        return turn.kind == "root" and turn.spec.envelope is not None

    def _stores_assistant_message(self, turn: TurnState) -> bool:
        """Only a root that settled ``completed`` stores an assistant message."""
        return turn.kind == "root" and turn.outcome == "completed"

    def _persist_user_message(self, turn: TurnState) -> None:
        envelope = turn.spec.envelope or {}
        parts = envelope.get("parts", [])
        message = Message(
            id=self.env.ids.next("msg"),
            role="user",
            text=str(envelope.get("text", turn.spec.brief_text)),
            parts=tuple(parts) if isinstance(parts, list) else (),
            turn_id=turn.turn_id,
        )
        self.env.store.append(self.config.thread, [message])

    def _persist_assistant_message(self, turn: TurnState) -> None:
        parts: tuple[JSONValue, ...] = ()
        if turn.payload is not None:
            parts = ({"type": "payload", "payload": turn.payload},)
        message = Message(
            id=self.env.ids.next("msg"),
            role="assistant",
            text=turn.reply or "",
            parts=parts,
            turn_id=turn.turn_id,
        )
        self.env.store.append(self.config.thread, [message])

    def _window(self) -> int | None:
        """How many stored messages to select (``None`` would mean all)."""
        return self.config.history_window

    def _select_history(self, turn: TurnState) -> list[Message]:
        """The newest ``window`` stored messages, oldest first; none for 0."""
        window = self._window()
        if window == 0:
            return []
        return self.env.store.messages(self.config.thread, window)

    def _render_history(self, messages: Sequence[Message]) -> list[dict[str, JSONValue]]:
        """Role and text only: structured parts are not replayed."""
        return [{"role": m.role, "text": m.text} for m in messages]

    def _state_views(self, turn: TurnState) -> list[dict[str, JSONValue]]:
        """The blocks the turn's agent reads, in its order; unwritten ones are left out."""
        if not self.env.store.has(Capability.STATE):
            return []
        views: list[dict[str, JSONValue]] = []
        for block in self.config.agents[turn.spec.agent].reads:
            entry = self.env.store.read_state(self.config.scope, block)
            if entry is not None:
                views.append({"block": block, "value": entry.value})
        return views

    def _initial_transcript(self, turn: TurnState) -> list[dict[str, JSONValue]]:
        """Every turn starts with an empty current-turn transcript."""
        return []

    def _initial_tier(self, turn: TurnState) -> int:
        """Every turn starts its chain at the first tier."""
        return 0

    def _over_budget(self, view: Mapping[str, Any]) -> bool:
        budget = self.config.context_budget
        return budget is not None and context_size(view) > budget

    def _on_child_settled(self, parent: TurnState, child: TurnState) -> None:
        """A child's usage stays on the child: the parent only notes its id."""
        parent.children.append(child.turn_id)

    def _emit_output(self, turn: TurnState, step: int, text: str) -> None:
        """Partial and final output goes out as events while the turn runs."""
        self._emit("turn.output", turn_id=turn.turn_id, step=step, text=text)

    def _apply_update(self, turn: TurnState, args: Mapping[str, Any]) -> dict[str, JSONValue]:
        """Validate one block update, then compare-and-set it; a rejected update
        changes nothing."""
        block = args.get("block")
        value = freeze_json(args.get("value"))
        if not self.env.store.has(Capability.STATE):
            return {"ok": False, "error": "unsupported", "block": block}
        kind = self.config.blocks.get(str(block)) if isinstance(block, str) else None
        if kind is None or not _valid(kind, value):
            reason = "unknown block" if kind is None else f"value is not of type {kind}"
            self._emit("state.rejected", turn_id=turn.turn_id, block=block, reason=reason)
            return {"ok": False, "error": "invalid", "reason": reason, "block": block}
        if "expected_version" in args:
            expected = args["expected_version"]
        else:
            current = self.env.store.read_state(self.config.scope, str(block))
            expected = None if current is None else current.version
        try:
            entry = self.env.store.write_state(self.config.scope, str(block), value, expected)
        except ConflictError as exc:
            self._emit("state.rejected", turn_id=turn.turn_id, block=block, reason=str(exc))
            return {"ok": False, "error": "conflict", "reason": str(exc), "block": block}
        self._emit("state.updated", turn_id=turn.turn_id, block=block, version=entry.version)
        return {"ok": True, "block": block, "version": entry.version}

    def _on_settle(self, turn: TurnState) -> None:
        """Runs after a turn's outcome is known and before anything is stored."""

    def _append_record(self, record: TurnRecord) -> None:
        if self.env.store.has(Capability.TURN_RECORDS):
            self.env.store.append_record(record)

    def _make_record(self, turn: TurnState) -> TurnRecord:
        metadata: dict[str, JSONValue] = {
            "kind": turn.kind,
            "opening": turn.spec.opening,
            "agent": turn.spec.agent,
        }
        if turn.children:
            metadata["children"] = list(turn.children)
        if turn.refused_at is not None:
            metadata["refused_at"] = turn.refused_at
        if turn.error is not None:
            metadata["error"] = turn.error
        return TurnRecord(
            turn_id=turn.turn_id,
            thread_id=self.config.thread,
            outcome=str(turn.outcome),
            parent_turn_id=turn.parent_turn_id,
            continues_from=turn.continues_from,
            grant=dict(turn.spec.grant),
            steps_used=turn.steps_used,
            tier=turn.answered_tier,
            fallbacks=tuple(turn.fallbacks),
            usage=dict(turn.usage),
            timing={"started_at": turn.started_at, "settled_at": self.env.clock.now()},
            metadata=metadata,
        )

    # -- plumbing -------------------------------------------------------------------

    def _emit(self, name: str, **data: JSONValue) -> None:
        self.env.emit(name, **data)
        self.events.append(freeze_json({"name": name, **data}))

    def _resolve_continues(self, spec: TurnSpec) -> str | None:
        if spec.continues_from is None or isinstance(spec.continues_from, str):
            return spec.continues_from
        return self.ids_by_index.get(spec.continues_from)

    def run(self) -> dict[str, JSONValue]:
        """Settle every scripted turn in order and return the observation."""
        for spec in self.turns:
            turn = self._run_turn(spec, kind="root", parent=None)
            self.ids_by_index[spec.index] = turn.turn_id
        return {
            "thread": self.config.thread,
            "config": {
                "history_window": self.config.history_window,
                "turn_ids": self.config.turn_ids,
                "context_budget": self.config.context_budget,
            },
            "turns": self.observed_turns,
            "records": self.records,
            "views": self.views,
            "events": self.events,
            "export": self.export_events(),
        }

    def export_events(self) -> list[dict[str, JSONValue]]:
        """The event bus's export: every event emitted on the thread, in order."""
        return list(self.events)

    def _run_turn(self, spec: TurnSpec, *, kind: str, parent: TurnState | None) -> TurnState:
        turn = TurnState(
            spec=spec,
            turn_id=self._next_turn_id(),
            kind=kind,
            parent_turn_id=None if parent is None else parent.turn_id,
            continues_from=self._resolve_continues(spec),
            started_at=self.env.clock.now(),
            tiers=self.config.agents[spec.agent].tiers,
        )
        self._emit(
            "turn.opened", turn_id=turn.turn_id, turn_kind=kind, opening=spec.opening,
            parent_turn_id=turn.parent_turn_id, continues_from=turn.continues_from,
        )
        if not self._admits(turn):
            turn.refused_at = "admission"
            return self._settle(turn, "refused")
        if self._stores_user_message(turn):
            self._persist_user_message(turn)
        turn.base_view = {
            "history": self._render_history(self._select_history(turn)),
            "state": self._state_views(turn),
            "brief": spec.brief_text,
        }
        if self._over_budget(turn.base_view):
            turn.refused_at = "fit-check"
            return self._settle(turn, "refused")
        turn.transcript = self._initial_transcript(turn)
        turn.tier_index = self._initial_tier(turn)
        return self._settle(turn, self._execute(turn))

    def _execute(self, turn: TurnState) -> str:
        spec = turn.spec
        while True:
            if turn.steps_used >= spec.max_steps:
                return "cut"
            turn.steps_used += 1
            answer = self._call_model(turn)
            self.env.clock.advance(self.config.step_seconds)
            if answer is None:
                return "failed"
            _add_usage(turn.usage, _object(answer.get("usage") or {}, "model usage"))
            text = str(answer.get("reply") or "")
            limit = spec.max_output_chars
            if limit is not None and len(text) > limit:
                self._emit_output(turn, turn.steps_used, text[:limit])
                return "truncated"
            if text:
                self._emit_output(turn, turn.steps_used, text)
            calls = answer.get("tool_calls") or []
            if not isinstance(calls, list):
                raise ScriptError("model: tool_calls must be a list")
            turn.transcript.append({"role": "assistant", "text": text, "tool_calls": calls})
            if not calls:
                turn.reply = text
                turn.payload = answer.get("payload")
                return "completed"
            for call in calls:
                if not self._run_tool(turn, call):
                    return "failed"
            if spec.stop_after_step is not None and turn.steps_used >= spec.stop_after_step:
                return "stopped"

    def _call_model(self, turn: TurnState) -> Mapping[str, JSONValue] | None:
        while turn.tier_index < len(turn.tiers):
            tier = turn.tiers[turn.tier_index]
            view: dict[str, JSONValue] = {
                "turn_id": turn.turn_id,
                "step": turn.steps_used,
                "tier": tier,
                **turn.base_view,
                "transcript": freeze_json(turn.transcript),
            }
            self.views.append(freeze_json(view))
            try:
                answer = self.env.model(tier, view)
            except ScriptedFailure as failure:
                turn.fallbacks.append(
                    {"tier": tier, "step": turn.steps_used, "error": failure.error}
                )
                turn.error = failure.error
                turn.tier_index += 1
                continue
            turn.answered_tier = tier
            turn.error = None
            return answer
        return None

    def _run_tool(self, turn: TurnState, call: Any) -> bool:
        call = _object(call, "model tool call")
        name = call.get("name")
        call_id = call.get("id")
        args = _object(call.get("args", {}), f"model tool call {name}.args")
        if not isinstance(name, str):
            raise ScriptError("model tool call: 'name' must be a string")
        result: JSONValue
        if name == UPDATE_TOOL:
            result = self._apply_update(turn, args)
        elif name == SPAWN_TOOL:
            result = self._spawn(turn, args)
        else:
            try:
                result = self.env.tool(name, freeze_json(args), None if call_id is None else
                                       str(call_id))
            except ScriptedFailure as failure:
                turn.error = failure.error
                return False
        turn.transcript.append(
            {"role": "tool", "call_id": call_id, "name": name, "result": result}
        )
        return True

    def _spawn(self, parent: TurnState, args: Mapping[str, Any]) -> dict[str, JSONValue]:
        if parent.kind != "root":
            raise ScriptError(f"{parent.spec.path}: only a root turn spawns children")
        index = args.get("child")
        children = parent.spec.children
        if not isinstance(index, int) or isinstance(index, bool) or not (
            0 <= index < len(children)
        ):
            raise ScriptError(f"{parent.spec.path}.children: the model spawned child {index!r}, "
                              "which is not scripted")
        if index in parent.spawned:
            raise ScriptError(f"{parent.spec.path}.children[{index}]: spawned twice")
        parent.spawned.add(index)
        child = self._run_turn(children[index], kind="child", parent=parent)
        self._on_child_settled(parent, child)
        return {"turn_id": child.turn_id, "outcome": child.outcome, "reply": child.reply}

    def _settle(self, turn: TurnState, outcome: str) -> TurnState:
        turn.outcome = outcome
        self._on_settle(turn)
        if self._stores_assistant_message(turn):
            self._persist_assistant_message(turn)
        record = self._make_record(turn)
        self._append_record(record)
        self.records.append(record.to_json())
        self._emit(
            "turn.settled", turn_id=turn.turn_id, outcome=outcome,
            parent_turn_id=turn.parent_turn_id,
        )
        self.observed_turns.append(
            {
                "turn_id": turn.turn_id,
                "kind": turn.kind,
                "opening": turn.spec.opening,
                "parent_turn_id": turn.parent_turn_id,
                "continues_from": turn.continues_from,
                "outcome": outcome,
                "reply": turn.reply if outcome == "completed" else None,
            }
        )
        self.settled.append(turn)
        return turn


def execute(script: Mapping[str, Any], env: Environment) -> dict[str, JSONValue]:
    """Execute a ``turns`` script (see the module docstring) and return the
    observation: ``turns`` (in settle order), ``records``, ``views`` (what the
    model saw at each call), ``events`` and the effective ``config``."""
    return TurnsRuntime(script, env).run()
