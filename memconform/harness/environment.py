"""The kit-owned world a runtime executes a script in.

An :class:`Environment` gives a runtime everything it may touch: the store
(behind the recording proxy), a deterministic fake model, scripted tools,
scripted hooks and guardrails, an injected clock and a deterministic id source.
Every call is logged on the same timeline as the store calls, so the kit
observes what happened instead of trusting what the runtime reports.

Scripted behaviour comes from the script's ``model``, ``tools`` and ``hooks``
sections (each profile's script schema, ``spec/schemas/script-<profile>.schema.json``,
lists the names it uses):

- ``model``: ``{component: [step, ...]}``; each call to a component consumes the
  next step. A step is ``{"reply": str, "tool_calls": [...], "payload": {...},
  "usage": {...}}`` or ``{"fail": error}``.
- ``tools``: ``{name: outcome | [outcome, ...]}``; an outcome is
  ``{"result": json, "effect": str}`` or ``{"fail": error}``; a list is consumed
  call by call and its last outcome repeats.
- ``hooks``: ``{name: outcome | [outcome, ...]}`` like tools; an outcome is
  ``{"action": "allow" | "block" | "replace" | "terminate" | "cancel" | "interrupt",
  "text": str}`` or ``{"fail": error}``; an unscripted hook allows.

An ``error`` is ``{"type": str, "message": str, "cause": error, "body": str,
"status": int, "stack": [str]}``: everything but ``message`` is optional.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from memconform.harness.proxy import RecordingStore
from memconform.timeline import Timeline
from memconform.values import JSONValue, freeze_json

__all__ = ["Clock", "Environment", "IdSource", "ScriptError", "ScriptedFailure"]

DEFAULT_START = "2026-01-01T00:00:00Z"


class ScriptError(ValueError):
    """A script is malformed; the message names the field (a JSON path)."""


class ScriptedFailure(Exception):
    """A failure the script asked for; ``error`` is the scripted error object."""

    def __init__(self, error: Mapping[str, JSONValue]) -> None:
        super().__init__(str(error.get("message", "")))
        self.error: dict[str, JSONValue] = freeze_json(dict(error))

    @property
    def type_name(self) -> str:
        """The scripted error type, ``Error`` when none was given."""
        return str(self.error.get("type") or "Error")


class Clock:
    """An injected clock: time moves only when :meth:`advance` is called."""

    def __init__(self, start: str = DEFAULT_START) -> None:
        self._now = _parse_time(start)

    def now(self) -> str:
        """The current time as ISO 8601 UTC (``2026-01-01T00:00:00Z``)."""
        return self._now.strftime("%Y-%m-%dT%H:%M:%SZ")

    def now_datetime(self) -> datetime:
        """The current time as an aware ``datetime``."""
        return self._now

    def advance(self, seconds: float) -> str:
        """Move time forward (never back) and return the new time."""
        if seconds < 0:
            raise ValueError("the clock never moves back")
        self._now += timedelta(seconds=seconds)
        return self.now()


def _parse_time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ScriptError(f"clock: not an ISO 8601 time: {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class IdSource:
    """Deterministic ids: ``next("msg")`` gives ``msg-1``, ``msg-2``, … per prefix.

    ``lifetime`` (the kit's count of processes that ran the same script on the
    same store, 1 for the first) keeps ids of a later process apart:
    ``msg-2.1``, ``msg-2.2``, … as a real id source would not repeat itself
    after a restart."""

    def __init__(self, lifetime: int = 1) -> None:
        self._counters: dict[str, int] = {}
        self.lifetime = lifetime

    def next(self, prefix: str) -> str:
        """The next id for ``prefix``."""
        n = self._counters.get(prefix, 0) + 1
        self._counters[prefix] = n
        if self.lifetime == 1:
            return f"{prefix}-{n}"
        return f"{prefix}-{self.lifetime}.{n}"


def _outcomes(section: Mapping[str, Any], name: str, where: str) -> list[Mapping[str, Any]]:
    raw = section.get(name)
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ScriptError(f"{where}.{name}[{i}]: expected an object")
        if "fail" in item and not isinstance(item["fail"], Mapping):
            raise ScriptError(f"{where}.{name}[{i}].fail: expected an error object")
    return list(items)


class Environment:
    """Everything a runtime may touch while it executes one script.

    ``store`` is the recording proxy; ``timeline`` is shared with it; ``ledger``
    lists every tool effect in order. The kit keeps the ledger itself: ``ledger``
    hands out a copy, so nothing a runtime does to it changes what the kit observed.
    """

    def __init__(self, script: Mapping[str, Any], store: RecordingStore) -> None:
        if not isinstance(script, Mapping):
            raise ScriptError("script: expected an object")
        self.script = script
        self.store = store
        self.timeline: Timeline = store.timeline
        self.clock = Clock(str(script.get("clock", DEFAULT_START)))
        self.ids = IdSource()
        self._effects: list[dict[str, JSONValue]] = []
        self._model = self._section("model")
        self._tools = self._section("tools")
        self._hooks = self._section("hooks")
        self._model_calls: dict[str, int] = {}
        self._tool_calls: dict[str, int] = {}
        self._hook_calls: dict[str, int] = {}

    @property
    def ledger(self) -> list[dict[str, JSONValue]]:
        """Every tool effect so far, in order (a copy: nothing ever removes an entry)."""
        return copy.deepcopy(self._effects)

    def _section(self, key: str) -> Mapping[str, Any]:
        value = self.script.get(key, {})
        if not isinstance(value, Mapping):
            raise ScriptError(f"{key}: expected an object")
        return value

    @staticmethod
    def _pick(outcomes: list[Mapping[str, Any]], n: int) -> Mapping[str, Any] | None:
        if not outcomes:
            return None
        return outcomes[min(n, len(outcomes) - 1)]

    def model(self, component: str, request: JSONValue) -> dict[str, JSONValue]:
        """Call the fake model ``component`` with ``request`` (what it is shown).

        Returns the scripted step (``reply``, ``tool_calls``, ``payload``,
        ``usage``) or raises :class:`ScriptedFailure`. A component called more
        often than scripted raises :class:`ScriptError`.
        """
        n = self._model_calls.get(component, 0)
        self._model_calls[component] = n + 1
        steps = _outcomes(self._model, component, "model")
        if n >= len(steps):
            raise ScriptError(f"model.{component}: call {n + 1} was not scripted")
        step = steps[n]
        if "fail" in step:
            self.timeline.add("model", component, call=n + 1, request=request, failed=step["fail"])
            raise ScriptedFailure(step["fail"])
        reply = {
            "reply": step.get("reply", ""),
            "tool_calls": copy.deepcopy(step.get("tool_calls", [])),
            "payload": copy.deepcopy(step.get("payload")),
            "usage": copy.deepcopy(step.get("usage", {})),
        }
        self.timeline.add("model", component, call=n + 1, request=request, response=reply)
        frozen: dict[str, JSONValue] = freeze_json(reply)
        return frozen

    def model_calls(self, component: str | None = None) -> int:
        """How many times ``component`` (or any component) was called."""
        if component is None:
            return sum(self._model_calls.values())
        return self._model_calls.get(component, 0)

    def tool(self, name: str, args: JSONValue, call_id: str | None = None) -> JSONValue:
        """Run the scripted tool ``name``; its effect goes on the ledger first.

        Returns the scripted ``result`` (default ``"ok"``) or raises
        :class:`ScriptedFailure`. A failing tool with an ``effect`` still leaves
        it on the ledger: side effects are never rolled back.
        """
        n = self._tool_calls.get(name, 0)
        self._tool_calls[name] = n + 1
        outcome = self._pick(_outcomes(self._tools, name, "tools"), n) or {}
        effect = outcome.get("effect")
        if effect is not None:
            self._effects.append({"tool": name, "call_id": call_id, "effect": effect})
        if "fail" in outcome:
            self.timeline.add("tool", name, call_id=call_id, args=args, failed=outcome["fail"])
            raise ScriptedFailure(outcome["fail"])
        result = copy.deepcopy(outcome.get("result", "ok"))
        self.timeline.add("tool", name, call_id=call_id, args=args, result=result)
        return freeze_json(result)

    def hook(self, name: str, payload: JSONValue = None) -> dict[str, JSONValue]:
        """Call the scripted hook or guardrail ``name``.

        Returns ``{"action": ..., "text": ...}`` (``allow`` when unscripted) or
        raises :class:`ScriptedFailure`.
        """
        n = self._hook_calls.get(name, 0)
        self._hook_calls[name] = n + 1
        outcome = self._pick(_outcomes(self._hooks, name, "hooks"), n) or {"action": "allow"}
        if "fail" in outcome:
            self.timeline.add("hook", name, payload=payload, failed=outcome["fail"])
            raise ScriptedFailure(outcome["fail"])
        answer = {"action": outcome.get("action", "allow"), "text": outcome.get("text")}
        self.timeline.add("hook", name, payload=payload, answer=answer)
        frozen: dict[str, JSONValue] = freeze_json(answer)
        return frozen

    def emit(self, name: str, **data: JSONValue) -> None:
        """Record an event the runtime emits (streaming chunks, actions, outcomes)."""
        self.timeline.add("event", name, **data)
