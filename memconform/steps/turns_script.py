"""Build ``turns`` scripts (``spec/schemas/script-turns.schema.json``) from outcomes.

A scenario says *what* a turn does ("a root turn opened with an envelope that
settles cut"); :class:`TurnsScript` turns that into the mechanism that makes a
runtime settle that way, scripting the fake model in the order the calls
happen:

- ``completed``: a final reply (with a payload and usage);
- ``failed``: a first step that emits partial output and calls a tool, then a
  failure on every tier of the agent's chain;
- ``cut``: the same first step under a grant of one step;
- ``stopped``: the same first step, and the caller stops the turn after it;
- ``truncated``: a reply longer than the grant's output limit;
- ``refused``: the runtime refuses the turn at admission.

Every partial text starts with ``partial <label>`` so a step can find it in the
emitted events. The builder produces plain JSON; it does not run anything.

A restart is not part of the script: :meth:`TurnsScript.restart` marks where a
new runtime lifetime begins, and :func:`lifetime_script` cuts the script into
the part one process runs (the kit runs each part after a restart in a fresh
process on the same store).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memconform.values import JSONValue

__all__ = [
    "CHILD_USAGE",
    "OPENINGS",
    "ROOT_USAGE",
    "STEP_OUTCOMES",
    "TurnsScript",
    "lifetime_script",
]

STEP_OUTCOMES = ("completed", "failed", "cut", "stopped", "truncated", "refused")
OPENINGS = ("envelope", "brief")
ROOT_USAGE: dict[str, JSONValue] = {"input_tokens": 100, "output_tokens": 20}
"""Usage of every scripted root model step."""
CHILD_USAGE: dict[str, JSONValue] = {"input_tokens": 7, "output_tokens": 3}
"""Usage of every scripted child model step."""


def _tool_call(call_id: str, name: str, args: dict[str, JSONValue]) -> dict[str, JSONValue]:
    return {"id": call_id, "name": name, "args": args}


@dataclass
class TurnsScript:
    """A ``turns`` script under construction for one thread."""

    thread: str
    config: dict[str, JSONValue] = field(default_factory=dict)
    agents: dict[str, dict[str, JSONValue]] = field(default_factory=dict)
    turns: list[dict[str, JSONValue]] = field(default_factory=list)
    model: dict[str, list[dict[str, JSONValue]]] = field(default_factory=dict)
    tools: dict[str, JSONValue] = field(default_factory=dict)
    clock: str | None = None
    writes_after_each_answer: int = 0
    """Messages another writer appends to the thread right after the store took each
    assistant message of the run (the kit does it; never part of the script)."""
    other_writer_count: int = 0
    """How many messages that other writer has stored so far."""
    restarts: list[int] = field(default_factory=list)
    """Indices in ``turns`` where a new runtime lifetime (a fresh process) begins."""
    _calls: int = 0

    # -- configuration ----------------------------------------------------------------

    def tiers_of(self, agent: str) -> list[str]:
        """The tier chain ``agent`` runs on (the configured default otherwise)."""
        spec = self.agents.get(agent, {})
        tiers = spec.get("tiers") or self.config.get("tiers") or ["primary"]
        return [str(t) for t in tiers]

    def declare_block(self, name: str, kind: str = "any") -> None:
        """Declare a state block and its value type."""
        blocks = self.config.setdefault("blocks", {})
        assert isinstance(blocks, dict)
        blocks[name] = {"type": kind}

    def add_agent(self, name: str, reads: list[str] | None = None,
                  tiers: list[str] | None = None) -> None:
        """Declare an agent with the blocks it reads and, optionally, its own tiers."""
        spec: dict[str, JSONValue] = {"reads": list(reads or [])}
        if tiers is not None:
            spec["tiers"] = list(tiers)
        self.agents[name] = spec

    def to_json(self) -> dict[str, JSONValue]:
        """The script as plain JSON (a deep copy)."""
        script: dict[str, JSONValue] = {
            "schema": "memconform.script/1",
            "profile": "turns",
            "thread": self.thread,
            "config": self.config,
            "agents": self.agents,
            "turns": self.turns,
            "model": self.model,
            "tools": self.tools,
        }
        if self.clock is not None:
            script["clock"] = self.clock
        return copy.deepcopy(script)

    # -- model steps ------------------------------------------------------------------

    def _call_id(self) -> str:
        self._calls += 1
        return f"call-{self._calls}"

    def _step(self, component: str, step: dict[str, JSONValue]) -> None:
        self.model.setdefault(component, []).append(step)

    def fail_tier(self, tier: str, message: str = "tier unavailable") -> None:
        """Script the next call of ``tier`` to fail."""
        self._step(tier, {"fail": {"type": "ModelError", "message": f"{tier}: {message}"}})

    # -- turns ------------------------------------------------------------------------

    def turn(
        self,
        *,
        opening: str = "envelope",
        text: str | None = None,
        outcome: str = "completed",
        agent: str = "main",
        parts: list[JSONValue] | None = None,
        payload: JSONValue = None,
        calls: list[dict[str, JSONValue]] | None = None,
        children: list[dict[str, Any]] | None = None,
        continues_from: int | str | None = None,
        usage: dict[str, JSONValue] | None = None,
        failing_tiers: int = 0,
    ) -> int:
        """Add a root turn settling ``outcome`` and return its index in ``turns``.

        ``calls`` are tool calls the turn makes in its first step (block
        updates, tools); ``children`` are keyword sets for :meth:`child_spec`,
        spawned in the first step. ``text`` is the envelope text or the brief.
        ``failing_tiers`` leading tiers of the chain fail on the first call, so
        the turn runs on the next tier.
        """
        index = len(self.turns)
        label = text or f"request {index + 1}"
        spec = self._spec(opening, label, agent, parts, continues_from)
        first: list[dict[str, JSONValue]] = list(calls or [])
        child_specs: list[dict[str, JSONValue]] = []
        for i in range(len(children or [])):
            first.append(_tool_call(self._call_id(), "spawn", {"child": i}))

        def spawn_children() -> None:
            child_specs.extend(self.child_spec(**kw) for kw in children or [])

        self._script_outcome(
            spec, label, agent, outcome, first, payload, usage or ROOT_USAGE, spawn_children,
            failing_tiers,
        )
        if children:
            spec["children"] = child_specs
        self.turns.append(spec)
        return index

    def child_spec(
        self, *, opening: str = "brief", text: str = "subtask", outcome: str = "completed",
        agent: str = "helper",
    ) -> dict[str, JSONValue]:
        """A child turn spec whose model steps are scripted now (call order)."""
        if agent not in self.agents:
            self.add_agent(agent, tiers=[agent])
        spec = self._spec(opening, text, agent, None, None)
        self._script_outcome(spec, text, agent, outcome, [], {"child": text}, CHILD_USAGE)
        return spec

    def restart(self) -> None:
        """The runtime restarts here: the turns added after this run in a fresh
        process on the same store (the script itself says nothing of it)."""
        if self.turns and (not self.restarts or self.restarts[-1] < len(self.turns)):
            self.restarts.append(len(self.turns))

    def lifetimes(self) -> list[tuple[int, int]]:
        """The ``(start, end)`` slices of ``turns`` each runtime lifetime runs."""
        bounds = [0, *self.restarts, len(self.turns)]
        return [(a, b) for a, b in itertools.pairwise(bounds) if a < b]

    def _spec(self, opening: str, text: str, agent: str, parts: list[JSONValue] | None,
              continues_from: int | str | None) -> dict[str, JSONValue]:
        if opening not in OPENINGS:
            raise ValueError(f"opening must be one of {OPENINGS}, got {opening!r}")
        spec: dict[str, JSONValue] = {}
        if agent != "main":
            spec["agent"] = agent
        if opening == "envelope":
            envelope: dict[str, JSONValue] = {"text": text}
            if parts:
                envelope["parts"] = list(parts)
            spec["envelope"] = envelope
        else:
            spec["brief"] = text
        if continues_from is not None:
            spec["continues_from"] = continues_from
        return spec

    def _script_outcome(
        self, spec: dict[str, JSONValue], label: str, agent: str, outcome: str,
        first_calls: list[dict[str, JSONValue]], payload: JSONValue,
        usage: dict[str, JSONValue], between: Callable[[], None] | None = None,
        failing_tiers: int = 0,
    ) -> None:
        """Script ``spec``'s model steps for ``outcome``; ``between`` runs right
        after the first step is scripted (children scripted in call order)."""
        if outcome not in STEP_OUTCOMES:
            raise ValueError(f"outcome must be one of {STEP_OUTCOMES}, got {outcome!r}")
        tiers = self.tiers_of(agent)
        if not 0 <= failing_tiers < len(tiers):
            raise ValueError(f"{failing_tiers} failing tiers leave none of {tiers} to answer")
        partial = f"partial {label}"
        if outcome == "refused":
            spec["admit"] = False
            return
        for name in tiers[:failing_tiers]:
            self.fail_tier(name)
        tier = tiers[failing_tiers]
        if outcome == "truncated":
            spec["grant"] = {"max_output_chars": len(partial)}
        if outcome == "completed" and not first_calls:
            self._step(tier, {"reply": f"answer to {label}", "payload": payload,
                              "usage": dict(usage)})
            if between:
                between()
            return
        if outcome == "truncated" and not first_calls:
            self._step(tier, {"reply": partial + " and far more than the grant allows",
                              "usage": dict(usage)})
            return
        calls = first_calls or [_tool_call(self._call_id(), "lookup", {"q": label})]
        self._step(tier, {"reply": partial, "tool_calls": calls, "usage": dict(usage)})
        if between:
            between()
        if outcome == "completed":
            self._step(tier, {"reply": f"answer to {label}", "payload": payload,
                              "usage": dict(usage)})
        elif outcome == "failed":
            for name in tiers[failing_tiers:]:
                self.fail_tier(name)
        elif outcome == "cut":
            spec["grant"] = {"max_steps": 1}
        elif outcome == "stopped":
            spec["stop_after_step"] = 1
        else:  # truncated after a first step
            self._step(tier, {"reply": partial + " and far more than the grant allows",
                              "usage": dict(usage)})


def lifetime_script(
    script: dict[str, JSONValue], start: int, end: int, used: dict[str, dict[str, int]]
) -> dict[str, JSONValue]:
    """The part of ``script`` (from :meth:`TurnsScript.to_json`) a lifetime runs:
    its turns ``start:end``, the model steps and tool outcomes from the point
    ``used`` (calls made so far, per ``"model"``/``"tool"`` and name) on, and
    ``continues_from`` indices counted within the part. A turn continuing one of
    an earlier lifetime cannot be expressed by index and is refused."""
    part = copy.deepcopy(script)
    turns = list(part["turns"])[start:end]
    for i, turn in enumerate(turns):
        assert isinstance(turn, dict)
        ref = turn.get("continues_from")
        if isinstance(ref, int):
            if ref < start:
                raise ValueError(f"turn {start + i} continues turn {ref} of an earlier lifetime")
            turn["continues_from"] = ref - start
    part["turns"] = turns
    model = part.get("model") or {}
    assert isinstance(model, dict)
    part["model"] = {
        name: list(steps)[used.get("model", {}).get(name, 0):]
        for name, steps in model.items()
    }
    tools = part.get("tools") or {}
    assert isinstance(tools, dict)
    part["tools"] = {
        name: (list(outcome)[min(used.get("tool", {}).get(name, 0), len(outcome) - 1):]
               if isinstance(outcome, list) and outcome else outcome)
        for name, outcome in tools.items()
    }
    return part
