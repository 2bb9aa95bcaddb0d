"""Broken ``turns`` runtimes written against the public API only.

Like :mod:`memconform.mutants.public_api`, these runtimes see the kit only
through the ``Runtime`` protocol and what ``env`` offers (``env.store``,
``env.model``, ``env.tool``, ``env.emit``, ``env.ids``, ``env.clock``); nothing of
the kit's simulator is imported. :class:`WindowAgent` runs root turns the way
document 002 describes (user message stored, the history window assembled,
tiers tried in order, the answer and a turn record stored) and builds the
window in one of several ways; each mutant is one wrong way of building it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memconform.contract import Capability
from memconform.mutants import Mutant
from memconform.values import JSONValue, Message, TurnRecord

__all__ = ["HISTORY_SOURCES", "MUTANTS", "WindowAgent"]

PROFILE = "turns"
DEFAULT_WINDOW = 6
FIXED_WINDOW = 6
"""How many recent messages the fixed-size mutant always loads."""

HISTORY_SOURCES = ("store", "process-memory", "loaded-once", "fixed-size")
"""``store``: the newest ``history_window`` messages read from the store at each turn
(correct); ``process-memory``: the messages this process appended itself;
``loaded-once``: the thread read once at start plus what this process appended;
``fixed-size``: the newest :data:`FIXED_WINDOW` stored messages, whatever the window."""


class WindowAgent:
    """A turns runtime on the public API only, building history from ``history``."""

    def __init__(self, history: str = "store") -> None:
        if history not in HISTORY_SOURCES:
            raise ValueError(f"history must be one of {HISTORY_SOURCES}, got {history!r}")
        self.history = history

    @property
    def profiles(self) -> frozenset[str]:
        """The turns profile only."""
        return frozenset({PROFILE})

    def execute(self, script: Mapping[str, Any], env: Any) -> Mapping[str, JSONValue]:
        """Run every root turn of the script in order."""
        return _Run(self.history, script, env).run()


class _Run:
    def __init__(self, history: str, script: Mapping[str, Any], env: Any) -> None:
        self.history = history
        self.script = script
        self.env = env
        self.thread = str(script["thread"])
        config = script.get("config") or {}
        self.window = int(config.get("history_window", DEFAULT_WINDOW))
        if self.window < 0:
            raise ValueError(f"config.history_window: must be 0 or more, got {self.window}")
        self.tiers = [str(t) for t in config.get("tiers") or ["primary"]]
        self.memory: list[Message] = []
        if history == "loaded-once":
            self.memory = list(env.store.messages(self.thread))
        self.counter = 0
        self.turns: list[dict[str, JSONValue]] = []

    def run(self) -> dict[str, JSONValue]:
        for spec in self.script.get("turns") or []:
            self.turn(spec)
        return {"thread": self.thread, "turns": self.turns}

    def append(self, message: Message) -> None:
        self.env.store.append(self.thread, [message])
        self.memory.append(message)

    def select(self) -> list[Message]:
        if self.window == 0:
            return []
        if self.history == "store":
            return list(self.env.store.messages(self.thread, self.window))
        if self.history == "fixed-size":
            return list(self.env.store.messages(self.thread, FIXED_WINDOW))
        return self.memory[-self.window:]

    def turn(self, spec: Mapping[str, Any]) -> None:
        self.counter += 1
        turn_id = f"T{self.counter}"
        envelope = spec.get("envelope")
        brief = str(envelope.get("text", "") if isinstance(envelope, Mapping)
                    else spec.get("brief"))
        self.env.emit("turn.opened", turn_id=turn_id, turn_kind="root",
                      opening="envelope" if envelope else "brief", parent_turn_id=None,
                      continues_from=None)
        if spec.get("admit") is False:
            self.settle(turn_id, "refused", None, None)
            return
        if isinstance(envelope, Mapping):
            self.append(Message(str(self.env.ids.next("msg")), "user", brief, turn_id=turn_id))
        request: dict[str, JSONValue] = {
            "turn_id": turn_id, "brief": brief, "state": [], "transcript": [],
            "history": [{"role": m.role, "text": m.text} for m in self.select()],
        }
        tier = 0
        while True:
            try:
                step = self.env.model(self.tiers[tier], request)
            except Exception as exc:
                if not isinstance(getattr(exc, "error", None), Mapping):
                    raise
                tier += 1
                if tier < len(self.tiers):
                    continue
                self.settle(turn_id, "failed", None, self.tiers[-1])
                return
            calls = list(step.get("tool_calls") or [])
            if not calls:
                break
            transcript = list(request["transcript"])
            transcript.append({"role": "assistant", "text": step.get("reply"),
                               "tool_calls": calls})
            for call in calls:
                result = self.env.tool(call["name"], call.get("args", {}), call.get("id"))
                transcript.append({"role": "tool", "call_id": call.get("id"), "result": result})
            request = {**request, "transcript": transcript}
        payload = step.get("payload")
        parts: tuple[JSONValue, ...] = () if payload is None else (
            {"type": "payload", "payload": payload},)
        self.append(Message(str(self.env.ids.next("msg")), "assistant", str(step.get("reply")),
                            parts=parts, turn_id=turn_id))
        self.settle(turn_id, "completed", str(step.get("reply")), self.tiers[tier])

    def settle(self, turn_id: str, outcome: str, reply: str | None, tier: str | None) -> None:
        if Capability.TURN_RECORDS.value in self.env.store.capabilities:
            self.env.store.append_record(TurnRecord(turn_id, self.thread, outcome, tier=tier))
        self.env.emit("turn.settled", turn_id=turn_id, outcome=outcome, parent_turn_id=None)
        self.turns.append({"turn_id": turn_id, "outcome": outcome, "reply": reply})


def _mutant(name: str, doc: str, kills: set[str], history: str) -> Mutant:
    return Mutant(name=name, kind="runtime", doc=doc, kills=frozenset(kills),
                  build=lambda: WindowAgent(history), profile=PROFILE)


MUTANTS: list[Mutant] = [
    _mutant("public-turns-history-from-process-memory",
            "A runtime on the public API only that builds each turn's history from the "
            "messages it appended itself, never reading the thread.",
            {"TU-016"}, "process-memory"),
    _mutant("public-turns-history-loaded-once",
            "A runtime on the public API only that reads the thread once at start and then "
            "keeps history in its own memory, missing what other writers add between turns.",
            {"TU-016"}, "loaded-once"),
    _mutant("public-turns-fixed-size-history",
            "A runtime on the public API only that loads the newest six stored messages at "
            "every turn instead of the configured window.",
            {"TU-016"}, "fixed-size"),
]
