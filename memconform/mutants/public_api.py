"""Broken runtimes written against the public API only.

A vendor's runtime sees the kit through the ``Runtime`` protocol
(``profiles`` and ``execute(script, env)``) and what the environment offers:
``env.store`` (the store, behind the kit's recording proxy), ``env.model``,
``env.tool``, ``env.hook``, ``env.emit``, ``env.ids`` and ``env.clock``. The
runtimes here use nothing else (no import of the kit's simulator), so the bugs
they carry are caught the way a vendor's would be: by what the kit observes.

:class:`PlainAgent` is a small save-policy agent that appends each batch as
soon as it is complete (the ``message`` policy, whatever is configured). Each
mutant is that agent with one bug: about a store refusal the kit injected, or a
self-report lie (a broken behaviour behind a correct-looking claim in the
observation, which the kit never reads to decide a verdict).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from memconform.contract import Capability, StoreError
from memconform.mutants import Mutant
from memconform.values import ErrorRecord, JSONValue, Message, Role

__all__ = ["MUTANTS", "PlainAgent"]

PROFILE = "save-policy"


class _Ended(Exception):
    """Ends a run as failed with ``error``."""

    def __init__(self, error: dict[str, JSONValue]) -> None:
        super().__init__(str(error.get("message", "")))
        self.error = error


def _error_of(exc: BaseException) -> dict[str, JSONValue]:
    scripted = getattr(exc, "error", None)
    if isinstance(scripted, Mapping):
        return {"type": str(scripted.get("type") or "Error"),
                "message": str(scripted.get("message", ""))}
    return {"type": "StoreError" if isinstance(exc, StoreError) else type(exc).__name__,
            "message": str(exc)}


class _Run:
    """One run of :class:`PlainAgent` on one thread."""

    def __init__(self, agent: PlainAgent, env: Any, thread: str) -> None:
        self.agent = agent
        self.env = env
        self.thread = thread
        self.run_id = str(env.ids.next("run"))
        self.round = 1
        self.new: list[Message] = []
        self.history: list[Message] = list(env.store.messages(thread))
        self.view: list[Message] = [] if agent.hide_history else list(self.history)
        self.claimed: list[JSONValue] = []

    def message(self, role: Role, text: str, parts: Sequence[JSONValue] = ()) -> Message:
        made = Message(id=str(self.env.ids.next("msg")), role=role, text=text,
                       parts=tuple(parts), run_id=self.run_id, round=self.round)
        self.new.append(made)
        self.view.append(made)
        return made

    def claim_context(self) -> None:
        """What the run says the model saw: the stored history, then its new messages."""
        self.claimed.append({"round": self.round, "attempt": 1, "context": [
            {"id": m.id, "role": m.role, "text": m.text, "parts": list(m.parts)}
            for m in [*self.history, *self.new]]})

    def append(self, batch: list[Message]) -> None:
        try:
            self.env.store.append(self.thread, batch)
        except StoreError:
            if not self.agent.swallow_refused_appends:
                raise

    def outcome(self, outcome: str, *, stage: str | None = None, reply: JSONValue = None,
                error: JSONValue = None) -> dict[str, JSONValue]:
        self.env.emit("outcome", run_id=self.run_id, outcome=outcome, stage=stage, error=error)
        return {"run_id": self.run_id, "kind": "input", "outcome": outcome, "stage": stage,
                "reply": reply, "error": error, "pending_tool_calls": [], "events": [],
                "model_calls": self.claimed, "new_messages": [m.to_json() for m in self.new]}

    def execute(self, text: str) -> dict[str, JSONValue]:
        try:
            return self.body(text)
        except (_Ended, StoreError) as exc:
            return self.fail(exc.error if isinstance(exc, _Ended) else _error_of(exc))
        except Exception as exc:
            if not isinstance(getattr(exc, "error", None), Mapping):
                raise  # not a scripted failure: the kit's problem, not the run's
            return self.fail(_error_of(exc))

    def body(self, text: str) -> dict[str, JSONValue]:
        guard = self.env.hook("input_guardrail", {"run_id": self.run_id, "text": text})
        if guard["action"] == "block":
            return self.outcome("blocked", stage="input", reply=guard.get("text"))
        self.append([self.message("user", text)])
        while True:
            request = {"run_id": self.run_id, "round": self.round,
                       "messages": [m.to_json() for m in self.view]}
            self.claim_context()
            step = self.env.model("agent", request)
            calls = list(step.get("tool_calls") or [])
            if not calls:
                return self.answer(str(step.get("reply") or ""))
            parts = [{"type": "tool_call", "id": c.get("id") or self.env.ids.next("call"),
                      "name": c["name"], "args": c.get("args", {})} for c in calls]
            assistant = self.message("assistant", str(step.get("reply") or ""), parts)
            results = [self.tool(p) for p in parts]
            texts = [str(r.get("error", r.get("result"))) for r in results]
            self.append([assistant, self.message("tool", "\n".join(texts), results)])
            self.round += 1

    def tool(self, call: Mapping[str, Any]) -> dict[str, JSONValue]:
        result: dict[str, JSONValue] = {"type": "tool_result", "call_id": call["id"],
                                        "name": call["name"]}
        try:
            result["result"] = self.env.tool(call["name"], call["args"], call["id"])
        except Exception as exc:
            if not isinstance(getattr(exc, "error", None), Mapping):
                raise
            error = _error_of(exc)
            verdict = self.env.hook("tool_error", {"run_id": self.run_id, "tool": call["name"],
                                                   "error": error})
            if verdict.get("action") == "terminate":
                raise _Ended({**error, "type": "ToolCallError"}) from None
            result["error"] = f"ToolCallError: {error['message']}"
        return result

    def answer(self, raw: str) -> dict[str, JSONValue]:
        verdict = self.env.hook("output_guardrail", {"run_id": self.run_id, "text": raw})
        text, stage = raw, None
        if verdict["action"] in ("replace", "block"):
            text = str(verdict.get("text") or "")
            stage = "output" if verdict["action"] == "block" else None
        self.append([self.message("assistant", text)])
        end = self.env.hook("run_end", {"run_id": self.run_id, "reply": text})
        if end.get("action") == "cancel":
            raise _Ended({"type": "RunCancelledError", "message": "cancelled by run_end"})
        return self.outcome("completed" if stage is None else "blocked", stage=stage, reply=text)

    def fail(self, error: dict[str, JSONValue]) -> dict[str, JSONValue]:
        with contextlib.suppress(Exception):
            self.env.hook("run_error", {"run_id": self.run_id, "error": error})
        if Capability.ERRORS.value in self.env.store.capabilities:
            record = ErrorRecord(run_id=self.run_id, error=error, messages=tuple(self.new),
                                 scope=self.thread, recorded_at=self.env.clock.now())
            try:
                self.env.store.record_error(self.thread, record)
            except StoreError as refused:
                if self.agent.error_from_record_error:
                    error = _error_of(refused)
        cancelled = error.get("type") == "RunCancelledError"
        return self.outcome("cancelled" if cancelled else "failed", error=error)


class PlainAgent:
    """A plain save-policy agent; each switch adds one bug.

    ``swallow_refused_appends``: an append the store refused is ignored and the
    run goes on as if it had been stored (success reported, data lost).
    ``error_from_record_error``: a refused ``record_error`` replaces the run's
    own error with the store's.
    ``hide_history``: the model is sent only the run's own messages, never the
    stored history, while the run's ``model_calls`` claim it saw the history
    first (a self-report lie).
    """

    def __init__(self, *, swallow_refused_appends: bool = False,
                 error_from_record_error: bool = False, hide_history: bool = False) -> None:
        self.swallow_refused_appends = swallow_refused_appends
        self.error_from_record_error = error_from_record_error
        self.hide_history = hide_history

    @property
    def profiles(self) -> frozenset[str]:
        """The save-policy profile only."""
        return frozenset({PROFILE})

    def execute(self, script: Mapping[str, Any], env: Any) -> Mapping[str, JSONValue]:
        """Run every run of the script, one after another, on the script's thread."""
        thread = str(script["thread"])
        runs: list[JSONValue] = [
            _Run(self, env, thread).execute(str(spec.get("input", ""))) for spec in script["runs"]
        ]
        return {"save_policy": script.get("save_policy") or "message", "thread": thread,
                "variant": None, "construction_error": None, "runs": runs}


MUTANTS: list[Mutant] = [
    Mutant(
        "public-swallows-refused-append", "runtime",
        "A runtime on the public API only that ignores a refused append and reports success.",
        frozenset({"SP-020"}), lambda: PlainAgent(swallow_refused_appends=True), PROFILE,
    ),
    Mutant(
        "public-record-error-replaces-error", "runtime",
        "A runtime on the public API only whose refused record_error replaces the run's error.",
        frozenset({"SP-016"}), lambda: PlainAgent(error_from_record_error=True), PROFILE,
    ),
    Mutant(
        "public-claims-history-it-hid", "runtime",
        "A runtime on the public API only that sends the model no stored history while "
        "its report claims the model saw it (a self-report lie).",
        frozenset({"SP-031"}), lambda: PlainAgent(hide_history=True), PROFILE,
    ),
]
