"""A save-policy runtime that behaves as the Anvia runtime was observed to,
written against the public ``Runtime``/``Environment`` API only (no import of
the kit's simulator), opened as ``tests.anvia_like_runtime:anvia_like_runtime``.

It is the kit's guard against false failures: an implementation that does what
document 000 and the observed Anvia runtime do must pass the save-policy rules.
The observed behaviours it carries:

- a tool-error hook that terminates the run ends it ``cancelled`` with the
  hook's reason; it is stored and recorded like a failure;
- a run resumed after an approval under ``turn`` appends the approval response
  and the tool result as one batch before the next model call, the answer after;
- under ``message`` the approval response is appended before the approved tool
  runs, the tool result after it;
- Anvia's own names and wording, where document 000 gives none: a cancelled
  run ends with ``AgentRunCancelledError``, the approval response is a
  structured part with no text, a denied call's result is ``Tool execution was
  denied.``, and the model is sent only the tool results of tool messages (never
  the approval response);
- a guardrail that fails leaves what it was shown in the error record (the
  prompt, or the model's answer);
- under ``run`` the run's one append carries one round, the run's last.

A suspended run gives its caller a continuation of its own shape
(``{"suspended_run": run id, "awaiting": [tool-call ids]}``); a resume given it
(a fresh instance, maybe in another process) finds the pending calls and the
context in the store.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memconform.approvals import answers_approval
from memconform.contract import Capability, StoreError
from memconform.values import ErrorRecord, JSONValue, Message, Role

__all__ = ["AnviaLikeRuntime", "anvia_like_runtime"]

PROFILE = "save-policy"
POLICIES = ("message", "turn", "run")
RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})


class _Ended(Exception):
    """Ends a run as failed (or cancelled) with ``error``."""

    def __init__(self, error: dict[str, JSONValue], *, cancelled: bool = False) -> None:
        super().__init__(str(error.get("message", "")))
        self.error = error
        self.cancelled = cancelled


def _scripted(exc: BaseException) -> Mapping[str, Any] | None:
    error = getattr(exc, "error", None)
    return error if isinstance(error, Mapping) else None


def _error_of(exc: BaseException) -> dict[str, JSONValue]:
    scripted = _scripted(exc)
    if scripted is not None:
        return {"type": str(getattr(exc, "type_name", None) or scripted.get("type") or "Error"),
                "message": str(scripted.get("message", ""))}
    return {"type": "StoreError" if isinstance(exc, StoreError) else type(exc).__name__,
            "message": str(exc)}


class _Memory:
    """The save policy: which batches reach the store, and when."""

    def __init__(self, env: Any, thread: str, policy: str) -> None:
        self.env, self.thread, self.policy = env, thread, policy
        self.buffer: list[Message] = []

    def append(self, batch: Sequence[Message]) -> None:
        if batch:
            self.env.store.append(self.thread, list(batch))

    def flush(self) -> None:
        batch, self.buffer = self.buffer, []
        self.append(batch)

    def input(self, message: Message) -> None:
        if self.policy == "message":
            self.append([message])
        elif self.policy == "turn":
            self.buffer.append(message)

    def approval(self, message: Message) -> None:
        self.input(message)

    def approved_results(self, results: Sequence[Message]) -> None:
        if self.policy == "message":
            for message in results:
                self.append([message])
        elif self.policy == "turn":
            self.buffer.extend(results)
            self.flush()

    def round(self, messages: Sequence[Message]) -> None:
        if self.policy == "message":
            self.append(messages)
        elif self.policy == "turn":
            self.buffer.extend(messages)
            self.flush()

    def answer(self, message: Message) -> None:
        if self.policy == "message":
            self.append([message])
        elif self.policy == "turn":
            self.buffer.append(message)

    def whole_run(self, run_messages: Sequence[Message]) -> None:
        turn = run_messages[-1].round if run_messages else None
        self.append([replace(m, round=turn) for m in run_messages])

    def outcome(self, run_messages: Sequence[Message]) -> None:
        if self.policy == "turn":
            self.flush()
        elif self.policy == "run":
            self.whole_run(run_messages)

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        if self.policy == "message":
            self.append(messages)
        elif self.policy == "turn":
            self.buffer.extend(messages)
            self.flush()
        else:
            self.whole_run(run_messages)


class _Run:
    """One run on the script's thread."""

    def __init__(self, agent: AnviaLikeRuntime, spec: Mapping[str, Any]) -> None:
        self.agent, self.env, self.spec = agent, agent.env, spec
        self.run_id = str(self.env.ids.next("run"))
        self.round = 1
        self.calls = 0
        self.new: list[Message] = []
        self.view: list[Message] = []
        self.model_calls: list[JSONValue] = []
        self.memory = _Memory(self.env, agent.thread, agent.policy)

    def message(self, role: Role, text: str, parts: Sequence[JSONValue] = ()) -> Message:
        made = Message(id=str(self.env.ids.next("msg")), role=role, text=text,
                       parts=tuple(parts), run_id=self.run_id, round=self.round)
        self.new.append(made)
        self.view.append(made)
        return made

    def outcome(self, outcome: str, *, stage: str | None = None, reply: JSONValue = None,
                error: JSONValue = None, pending: list[JSONValue] | None = None,
                ) -> dict[str, JSONValue]:
        self.env.emit("outcome", run_id=self.run_id, outcome=outcome, stage=stage, error=error)
        continuation: JSONValue = None
        if pending:
            continuation = {"suspended_run": self.run_id,
                            "awaiting": [c["id"] for c in pending if isinstance(c, Mapping)]}
        return {"run_id": self.run_id, "kind": "resume" if "resume" in self.spec else "input",
                "outcome": outcome, "stage": stage, "reply": reply, "error": error,
                "pending_tool_calls": pending or [], "continuation": continuation,
                "events": [], "model_calls": self.model_calls,
                "new_messages": [m.to_json() for m in self.new]}

    def execute(self) -> dict[str, JSONValue]:
        self.env.emit("run_started", run_id=self.run_id)
        try:
            return self.body()
        except _Ended as ended:
            return self.fail(ended.error, cancelled=ended.cancelled)
        except StoreError as refused:
            return self.fail(_error_of(refused))
        except Exception as exc:
            if _scripted(exc) is None:
                raise  # not a scripted failure: the kit's problem, not the run's
            return self.fail(_error_of(exc))

    def body(self) -> dict[str, JSONValue]:
        if "resume" in self.spec:
            return self.resume(self.spec["resume"])
        self.view = list(self.env.store.messages(self.agent.thread))
        text = str(self.spec["input"])
        try:
            guard = self.env.hook("input_guardrail", {"run_id": self.run_id, "text": text})
        except Exception:
            self.message("user", text)  # recorded with the failure, never appended
            raise
        if guard["action"] == "block":
            return self.outcome("blocked", stage="input", reply=guard.get("text"))
        self.memory.input(self.message("user", text))
        return self.loop()

    def from_store(self, given: Mapping[str, Any]) -> tuple[list[Message], list[Any]]:
        """The context and the pending calls of the suspended run ``given`` names."""
        view = list(self.env.store.messages(self.agent.thread))
        answered = {p.get("call_id") for m in view for p in m.parts if isinstance(p, Mapping)}
        awaiting = list(given.get("awaiting") or [])
        pending = [dict(p) for m in view if m.run_id == given.get("suspended_run")
                   for p in m.parts if isinstance(p, Mapping) and p.get("type") == "tool_call"
                   and p.get("id") in awaiting and p.get("id") not in answered]
        return view, pending

    def resume(self, answer: Mapping[str, Any]) -> dict[str, JSONValue]:
        given = answer.get("continuation")
        if self.agent.continuation is None and isinstance(given, Mapping):
            self.agent.continuation = self.from_store(given)
        view, pending = self.agent.continuation or ([], [])
        self.agent.continuation = None
        self.view = list(view)
        approved = bool(answer.get("approved"))
        reason = str(answer.get("reason") or "")
        results: list[Message] = []
        for call in pending:
            answer_part: dict[str, JSONValue] = {
                "type": "tool_approval", "call_id": call["id"], "approved": approved}
            if reason:
                answer_part["reason"] = reason
            self.memory.approval(self.message("tool", "", [answer_part]))
            if approved:
                part = self.tool(call)
            else:
                part = {"type": "tool_result", "call_id": call["id"], "name": call["name"],
                        "error": "Tool execution was denied."}
            results.append(self.message("tool", self.text_of(part), [part]))
        self.memory.approved_results(results)
        return self.loop()

    @staticmethod
    def text_of(part: Mapping[str, Any]) -> str:
        if "error" in part:
            return str(part["error"])
        result = part.get("result")
        if isinstance(result, str):
            return result
        return json.dumps(result, sort_keys=True)

    def model(self) -> Mapping[str, Any]:
        self.calls += 1
        if self.spec.get("cancel_before_model_call") == self.calls:
            raise _Ended({"type": "AgentRunCancelledError",
                          "message": f"cancelled before model call {self.calls}"},
                         cancelled=True)
        attempt = 0
        while True:
            attempt += 1
            request = {"run_id": self.run_id, "round": self.round, "attempt": attempt,
                       "messages": [{"id": m.id, "role": m.role, "text": m.text,
                                     "parts": list(m.parts)} for m in self.view
                                    if not answers_approval(m)]}
            self.model_calls.append({"round": self.round, "attempt": attempt,
                                     "context": request["messages"]})
            try:
                step: Mapping[str, Any] = self.env.model("agent", request)
            except Exception as exc:
                scripted = _scripted(exc)
                if scripted is not None and scripted.get("status") in RETRYABLE \
                        and attempt <= self.agent.max_retries:
                    continue
                raise
            if self.spec.get("stream", self.agent.stream):
                for word in str(step.get("reply") or "").split():
                    self.env.emit("chunk", run_id=self.run_id, round=self.round, text=word)
            return step

    def loop(self) -> dict[str, JSONValue]:
        while True:
            if self.round > self.agent.max_rounds:
                raise _Ended({"type": "MaxRoundsError", "message": "too many rounds"})
            step = self.model()
            raw_calls = list(step.get("tool_calls") or [])
            if not raw_calls:
                return self.answer(str(step.get("reply") or ""))
            calls = [{"type": "tool_call", "id": c.get("id") or str(self.env.ids.next("call")),
                      "name": c["name"], "args": c.get("args", {}),
                      "needs_approval": bool(c.get("needs_approval"))} for c in raw_calls]
            parts = [{k: v for k, v in c.items() if k != "needs_approval"} for c in calls]
            assistant = self.message("assistant", str(step.get("reply") or ""), parts)
            if any(c["needs_approval"] for c in calls):
                return self.suspend(assistant, calls)
            results = [self.tool(c) for c in calls]
            tool = self.message("tool", "\n".join(self.text_of(r) for r in results), results)
            self.memory.round([assistant, tool])
            self.round += 1

    def tool(self, call: Mapping[str, Any]) -> dict[str, JSONValue]:
        part: dict[str, JSONValue] = {"type": "tool_result", "call_id": call["id"],
                                      "name": call["name"]}
        try:
            part["result"] = self.env.tool(call["name"], call.get("args"), call["id"])
        except Exception as exc:
            if _scripted(exc) is None:
                raise
            error = _error_of(exc)
            verdict = self.env.hook("tool_error", {"run_id": self.run_id, "tool": call["name"],
                                                   "error": error})
            if verdict.get("action") == "terminate":
                reason = verdict.get("text") or "terminated by the tool-error hook"
                raise _Ended({"type": "AgentRunCancelledError", "message": str(reason)},
                             cancelled=True) from None
            part["error"] = f"ToolCallError: {error['message']}"
        return part

    def suspend(self, assistant: Message, calls: list[dict[str, Any]]) -> dict[str, JSONValue]:
        pending = [c for c in calls if c["needs_approval"]]
        done = [self.tool(c) for c in calls if not c["needs_approval"]]
        messages = [assistant]
        if done:
            messages.append(self.message(
                "tool", "\n".join(self.text_of(r) for r in done), done))
        self.memory.suspended(messages, self.new)
        self.agent.continuation = (list(self.view), pending)
        return self.outcome("suspended", pending=[
            {k: v for k, v in c.items() if k != "needs_approval"} for c in pending])

    def answer(self, raw: str) -> dict[str, JSONValue]:
        try:
            verdict = self.env.hook("output_guardrail", {"run_id": self.run_id, "text": raw})
        except Exception:
            self.message("assistant", raw)  # recorded with the failure, never appended
            raise
        text, stage = raw, None
        if verdict["action"] in ("replace", "block"):
            text = str(verdict.get("text") or "")
            stage = "output" if verdict["action"] == "block" else None
        self.memory.answer(self.message("assistant", text))
        end = self.env.hook("run_end", {"run_id": self.run_id, "reply": text})
        if end.get("action") == "cancel":
            raise _Ended({"type": "AgentRunCancelledError", "message": "cancelled by run_end"},
                         cancelled=True)
        self.memory.outcome(self.new)
        return self.outcome("completed" if stage is None else "blocked", stage=stage, reply=text)

    def fail(self, error: dict[str, JSONValue], *, cancelled: bool = False
             ) -> dict[str, JSONValue]:
        with contextlib.suppress(Exception):
            self.env.hook("run_error", {"run_id": self.run_id, "error": error})
        if Capability.ERRORS.value in self.env.store.capabilities:
            record = ErrorRecord(run_id=self.run_id, error=error, messages=tuple(self.new),
                                 scope=self.agent.thread, recorded_at=self.env.clock.now())
            with contextlib.suppress(StoreError):
                self.env.store.record_error(self.agent.thread, record)
        return self.outcome("cancelled" if cancelled else "failed", error=error)


class AnviaLikeRuntime:
    """Executes ``save-policy`` scripts as the observed Anvia runtime does."""

    env: Any
    thread: str
    policy: str
    continuation: tuple[list[Message], list[dict[str, Any]]] | None

    @property
    def profiles(self) -> frozenset[str]:
        """The save-policy profile only."""
        return frozenset({PROFILE})

    def execute(self, script: Mapping[str, Any], env: Any) -> Mapping[str, JSONValue]:
        """Run every run of the script in order on the script's thread."""
        self.env, self.thread = env, str(script["thread"])
        configured = script.get("save_policy")
        self.policy = "message" if configured is None else str(configured)
        self.stream = bool(script.get("stream", False))
        self.max_rounds = int(script.get("max_rounds", 8))
        self.max_retries = int(script.get("max_retries", 2))
        self.continuation = None
        head: dict[str, JSONValue] = {"save_policy": configured or "message",
                                      "thread": self.thread, "variant": None}
        if self.policy not in POLICIES:
            return {**head, "runs": [], "construction_error": {
                "type": "ConfigurationError", "field": "save_policy",
                "message": f"save_policy must be one of {', '.join(POLICIES)}"}}
        runs: list[JSONValue] = [_Run(self, spec).execute() for spec in script["runs"]]
        return {**head, "construction_error": None, "runs": runs}


def anvia_like_runtime() -> AnviaLikeRuntime:
    """The runtime factory ``--memconform-runtime`` opens."""
    return AnviaLikeRuntime()
