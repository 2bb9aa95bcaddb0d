"""The reference runtime for the ``save-policy`` profile (document 000).

:func:`execute` runs every run of a ``save-policy`` script on one thread, using
only the :class:`~memconform.harness.environment.Environment`, and returns
the observation (see ``spec/schemas/observation-save-policy.schema.json``).

One run, in order:

1. load the thread's stored history (a resumed run carries the suspended run's
   view instead: from the same script's suspended run, or, given the caller's
   ``continuation`` in another process, from the store);
2. the input guardrail (``block`` ends the run as ``blocked`` at stage
   ``input`` with nothing stored);
3. the accepted input is handed to the save policy;
4. rounds: a model call (retryable failures retried); tool calls run the
   tools (a thrown tool becomes a ``ToolCallError: …`` result unless the
   ``tool_error`` hook terminates the run, which ends it ``cancelled`` with
   the hook's reason); a call needing approval suspends
   the run; a final answer passes the output guardrail (``replace`` or
   ``block``) and then the run-end hook (``cancel`` cancels the run);
5. the outcome is reported (an ``outcome`` event) only after the save policy
   persisted what it owes.

A suspended run's observation carries ``continuation`` (its run id and the
pending tool-call ids): what its caller hands back, as a later script's
``resume.continuation``, to resume it on a fresh instance. The pending calls
are then the named run's stored tool calls without a result, and the model's
view is the thread as stored.

A failed or cancelled run calls the ``run_error`` hook, then the store's
``record_error`` (when the store declares ``errors``) with every new message of
the run and the run's error, then reports the outcome; a failure of either
cleanup step never replaces the run's error. A guardrail that fails leaves the
text it was shown among the run's new messages (the prompt, or the model's
answer), so the record holds it, though nothing of it is appended. The save policy changes what is
persisted and when, never what the run does.

The variant ``anvia-main`` reproduces the Anvia ``main`` line: a tool call is
appended before its tools run, a failing ``record_error`` replaces the run's
error, an unknown policy name is accepted and persists nothing, approvals are
answered synchronously (the run never suspends: the script's answer to the
approval, given as the next run's ``resume``, is taken during the run, and a
rejection becomes the tool's result), and ``max_rounds`` lets two more model
calls through (the real runtime's ``maxTurns: 1`` allowed three).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memconform.harness.environment import Environment, ScriptedFailure, ScriptError
from memconform.harness.proxy import AdapterContractError
from memconform.harness.runtime import RETRYABLE_STATUSES
from memconform.simulator.save_policy_persistence import (
    POLICY_CLASSES,
    EarlyToolCallMessagePolicy,
    MemoryGateway,
    NullPolicy,
    SavePolicy,
)
from memconform.simulator.save_policy_script import (
    MODEL_COMPONENT,
    POLICIES,
    RunSpec,
    SavePolicyScript,
    parse_script,
)
from memconform.values import ErrorRecord, JSONValue, Message, Role

__all__ = ["RETRYABLE_STATUSES", "RunFailure", "RunState", "SavePolicyExecutor", "execute"]


class RunFailure(Exception):
    """Ends a run as failed (or cancelled) with ``error`` as the run's error."""

    def __init__(self, error: Mapping[str, JSONValue], *, cancelled: bool = False) -> None:
        super().__init__(str(error.get("message", "")))
        self.error: dict[str, JSONValue] = dict(error)
        self.cancelled = cancelled


def _error_of(exc: Exception) -> dict[str, JSONValue]:
    if isinstance(exc, ScriptedFailure):
        return {"type": exc.type_name, **{k: v for k, v in exc.error.items() if k != "type"}}
    return {"type": type(exc).__name__, "message": str(exc)}


def _text_of(value: JSONValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


@dataclass
class _Continuation:
    """What a suspended run leaves for its resume: the model's view so far and
    the tool calls still waiting for approval."""

    view: list[Message]
    pending: list[dict[str, JSONValue]]


@dataclass
class RunState:
    """The state of one run while it executes."""

    spec: RunSpec
    run_id: str
    policy: SavePolicy
    view: list[Message] = field(default_factory=list)
    new: list[Message] = field(default_factory=list)
    events: list[dict[str, JSONValue]] = field(default_factory=list)
    model_calls: list[dict[str, JSONValue]] = field(default_factory=list)
    round: int = 1
    calls: int = 0


class SavePolicyExecutor:
    """Executes one parsed script. Subclasses (the kit's mutants) override one
    method or :attr:`policy_classes` to break one rule."""

    policy_classes: Mapping[str, type[SavePolicy]] = POLICY_CLASSES
    gateway_class: type[MemoryGateway] = MemoryGateway

    def __init__(self, script: SavePolicyScript, env: Environment) -> None:
        self.script = script
        self.env = env
        self.variant = script.variant
        self.gateway = self.gateway_class(env, script.thread)
        self.continuation: _Continuation | None = None

    # -- configuration --------------------------------------------------------------

    def policy_class(self) -> type[SavePolicy] | None:
        """The class for the configured policy; ``None`` rejects the configuration."""
        name = self.script.policy
        if self.variant == "anvia-main":
            if name == "message":
                return EarlyToolCallMessagePolicy
            return self.policy_classes.get(name, NullPolicy)
        return self.policy_classes.get(name)

    def construction_error(self) -> dict[str, JSONValue] | None:
        """The error refusing the configuration, or ``None`` when it is valid."""
        if self.policy_class() is not None:
            return None
        return {
            "type": "ConfigurationError",
            "field": "save_policy",
            "message": (
                f"save_policy must be one of {', '.join(POLICIES)}, "
                f"got {self.script.policy!r}"
            ),
        }

    # -- the script -----------------------------------------------------------------

    def execute(self) -> dict[str, JSONValue]:
        """Run every run in order and return the observation."""
        problem = self.construction_error()
        runs: list[JSONValue] = []
        if problem is None:
            runs = [self.run(spec) for spec in self.script.runs]
        return {
            "save_policy": self.script.policy,
            "thread": self.script.thread,
            "variant": self.variant,
            "construction_error": problem,
            "runs": runs,
        }

    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        """A new message of the run (unique id, run id, current round); it joins
        the run's new messages and the model's view."""
        message = Message(
            id=self.env.ids.next("msg"), role=role, text=text, parts=parts,
            run_id=run.run_id, round=run.round,
        )
        run.new.append(message)
        run.view.append(message)
        return message

    def emit(self, run: RunState, name: str, **data: JSONValue) -> None:
        """Emit an event and keep it in the run's observation."""
        self.env.emit(name, run_id=run.run_id, **data)
        run.events.append({"name": name, "run_id": run.run_id, **data})

    def run(self, spec: RunSpec) -> dict[str, JSONValue]:
        """Execute one run and return its observation."""
        cls = self.policy_class()
        assert cls is not None  # execute() checked the configuration
        run = RunState(spec, self.env.ids.next("run"), cls(self.gateway))
        self.emit(run, "run_started", run_index=spec.index)
        result: dict[str, JSONValue]
        try:
            result = self.body(run)
        except RunFailure as failure:
            result = self.fail(run, failure)
        except (AdapterContractError, ScriptError):
            raise
        except Exception as exc:  # a store refusal or a scripted failure
            result = self.fail(run, RunFailure(_error_of(exc)))
        return {
            "run_id": run.run_id,
            "kind": "input" if spec.resume is None else "resume",
            **result,
            "events": list(run.events),
            "model_calls": run.model_calls,
            "new_messages": [m.to_json() for m in run.new],
        }

    def body(self, run: RunState) -> dict[str, JSONValue]:
        """The run up to its outcome; failures raise."""
        if run.spec.resume is not None:
            return self.resume(run)
        assert run.spec.input is not None
        run.view = self.load_history(run)
        try:
            verdict = self.input_guard(run)
        except ScriptedFailure:
            # the failed run's record holds the prompt the guardrail was shown
            self.new_message(run, "user", run.spec.input)
            raise
        if verdict["action"] == "block":
            return self.report(run, "blocked", stage="input", reply=verdict.get("text"))
        user = self.new_message(run, "user", run.spec.input)
        run.policy.input_accepted([user])
        return self.rounds(run)

    def load_history(self, run: RunState) -> list[Message]:
        """The thread's stored history, loaded once when a new run starts."""
        return self.gateway.load()

    def input_guard(self, run: RunState) -> dict[str, JSONValue]:
        """Ask the input guardrail about the run's input."""
        return self.env.hook("input_guardrail", {"run_id": run.run_id, "text": run.spec.input})

    def output_guard(self, run: RunState, text: str) -> dict[str, JSONValue]:
        """Ask the output guardrail about the model's answer ``text``."""
        return self.env.hook("output_guardrail", {"run_id": run.run_id, "text": text})

    def resume(self, run: RunState) -> dict[str, JSONValue]:
        """Answer the pending approval: the approval response and the tool result
        are the resumed run's input (two tool messages), handed to the save policy
        before the next model call (the response before the approved tool runs);
        history is not reloaded."""
        answer = run.spec.resume
        if self.variant == "anvia-main" and answer is not None and self.continuation is None:
            raise RunFailure({
                "type": "NothingToResumeError",
                "message": "approvals are answered during the run; nothing is suspended",
            })
        if self.continuation is None and answer is not None and answer.continuation is not None:
            self.continuation = self.stored_continuation(answer.continuation)
        if self.continuation is None or answer is None:
            raise ScriptError(f"runs[{run.spec.index}].resume: no suspended run to resume")
        continuation, self.continuation = self.continuation, None
        run.view = list(continuation.view)
        results: list[Message] = []
        for call in continuation.pending:
            decision = "approved" if answer.approved else "denied"
            note = f": {answer.reason}" if answer.reason else ""
            run.policy.approval_answered(self.new_message(
                run, "tool", f"approval {decision}{note}",
                ({"type": "tool_approval", "call_id": call["id"], "approved": answer.approved},),
            ))
            if answer.approved:
                part = self.run_tool(run, call)
            else:
                part = {
                    "type": "tool_result", "call_id": call["id"], "name": call["name"],
                    "error": f"ToolApprovalDenied: {answer.reason or 'not approved'}",
                }
            results.append(self.new_message(run, "tool", self.result_text(part), (part,)))
        run.policy.approved_tools_ran(results)
        return self.rounds(run)

    def stored_continuation(self, given: Mapping[str, Any]) -> _Continuation:
        """The suspended run named by the caller's ``given`` continuation, rebuilt
        from the store alone (a fresh instance in a fresh process): the model's
        view is the thread as stored, the pending calls are the named run's stored
        tool calls among ``tool_call_ids`` that have no result in the thread."""
        run_id, wanted = given.get("run_id"), given.get("tool_call_ids")
        view = self.gateway.load()
        answered = {
            str(part.get("call_id")) for m in view for part in m.parts
            if isinstance(part, Mapping) and part.get("type") in ("tool_result", "tool_approval")
        }
        pending = [
            dict(part) for m in view if m.role == "assistant" and m.run_id == run_id
            for part in m.parts
            if isinstance(part, Mapping) and part.get("type") == "tool_call"
            and (not isinstance(wanted, list) or part.get("id") in wanted)
            and str(part.get("id")) not in answered
        ]
        if not pending:
            raise RunFailure({
                "type": "NothingToResumeError",
                "message": f"run {run_id!r} has no pending tool call in the store",
            })
        return _Continuation(view, pending)

    def rounds(self, run: RunState) -> dict[str, JSONValue]:
        """Model calls and tool rounds until a response outcome or a suspension."""
        while True:
            if run.round > self.round_limit():
                raise RunFailure({
                    "type": "MaxRoundsError",
                    "message": f"the run needed more than {self.round_limit()} rounds",
                })
            step = self.call_model(run)
            raw_calls = step.get("tool_calls") or []
            assert isinstance(raw_calls, list)
            reply = str(step.get("reply") or "")
            if not raw_calls:
                return self.answer(run, reply)
            calls = [self.tool_call(c, i) for i, c in enumerate(raw_calls)]
            parts = tuple({k: v for k, v in c.items() if k != "needs_approval"} for c in calls)
            assistant = self.new_message(run, "assistant", reply, parts)
            if any(c.get("needs_approval") for c in calls) and self.variant != "anvia-main":
                return self.suspend(run, assistant, calls)
            run.policy.tool_call_made(assistant)
            results = tuple(
                self.approve_now(run, c) if c.get("needs_approval") else self.run_tool(run, c)
                for c in calls
            )
            tool = self.new_message(
                run, "tool", "\n".join(self.result_text(p) for p in results), results
            )
            run.policy.round_completed([assistant, tool])
            run.round += 1

    def round_limit(self) -> int:
        """The last round a run may open: ``max_rounds``, two more in ``anvia-main``."""
        if self.variant == "anvia-main":
            return self.script.max_rounds + 2
        return self.script.max_rounds

    def approve_now(self, run: RunState, call: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
        """``anvia-main``: answer an approval during the run. The answer is the one the
        script gives as the next run's ``resume`` (none given: not approved); an
        approved tool runs, a rejection becomes the tool's result."""
        later = self.script.runs[run.spec.index + 1:run.spec.index + 2]
        answer = later[0].resume if later else None
        if answer is not None and answer.approved:
            return self.run_tool(run, call)
        reason = (answer.reason if answer is not None else None) or "not approved"
        return {"type": "tool_result", "call_id": call["id"], "name": call["name"],
                "error": f"ToolApprovalDenied: {reason}"}

    def tool_call(self, raw: JSONValue, index: int) -> dict[str, JSONValue]:
        """A scripted tool call with its id (generated when the script gives none)."""
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
            raise ScriptError(f"model.{MODEL_COMPONENT}: tool_calls[{index}] needs a 'name'")
        call_id = raw.get("id") or self.env.ids.next("call")
        return {
            "type": "tool_call", "id": call_id, "name": raw["name"],
            "args": raw.get("args", {}), "needs_approval": bool(raw.get("needs_approval")),
        }

    def call_model(self, run: RunState) -> dict[str, JSONValue]:
        """One model call of the current round, retried on retryable failures."""
        run.calls += 1
        if run.spec.cancel_before_model_call == run.calls:
            raise RunFailure(
                {"type": "RunCancelledError",
                 "message": f"cancelled before model call {run.calls}"},
                cancelled=True,
            )
        attempt = 0
        while True:
            attempt += 1
            context: list[JSONValue] = [
                {"id": m.id, "role": m.role, "text": m.text, "parts": list(m.parts)}
                for m in run.view
            ]
            run.model_calls.append({"round": run.round, "attempt": attempt, "context": context})
            request = {"run_id": run.run_id, "round": run.round, "attempt": attempt,
                       "messages": context}
            try:
                step = self.env.model(MODEL_COMPONENT, request)
            except ScriptedFailure as failure:
                if self.retryable(failure) and attempt <= self.script.max_retries:
                    continue
                raise
            if run.spec.stream:
                for word in str(step.get("reply") or "").split():
                    self.emit(run, "chunk", round=run.round, text=word)
            return step

    @staticmethod
    def retryable(failure: ScriptedFailure) -> bool:
        """Whether a scripted model failure is one a provider retry may fix."""
        return failure.error.get("status") in RETRYABLE_STATUSES

    def run_tool(self, run: RunState, call: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
        """Run one tool; a thrown error becomes the result unless the tool-error
        hook terminates the run."""
        name, call_id = str(call["name"]), str(call["id"])
        part: dict[str, JSONValue] = {"type": "tool_result", "call_id": call_id, "name": name}
        try:
            part["result"] = self.env.tool(name, call.get("args"), call_id)
        except ScriptedFailure as failure:
            error = _error_of(failure)
            verdict = self.env.hook(
                "tool_error", {"run_id": run.run_id, "tool": name, "error": error}
            )
            if self.tool_error_terminates(verdict):
                reason = verdict.get("text") or f"the tool-error hook terminated {name}"
                raise RunFailure(
                    {"type": "RunCancelledError", "message": str(reason), "tool": name},
                    cancelled=True,
                ) from None
            part["error"] = f"ToolCallError: {error.get('message', '')}"
        return part

    @staticmethod
    def tool_error_terminates(verdict: Mapping[str, JSONValue]) -> bool:
        """Whether the tool-error hook's answer ends the run."""
        return verdict.get("action") == "terminate"

    @staticmethod
    def cancelled_by(verdict: Mapping[str, JSONValue]) -> bool:
        """Whether the run-end hook's answer cancels the run."""
        return verdict.get("action") == "cancel"

    @staticmethod
    def stored_answer_text(raw_text: str, guarded_text: str) -> str:
        """The text of the answer message: what the output guardrail let through."""
        return guarded_text

    @staticmethod
    def result_text(part: Mapping[str, JSONValue]) -> str:
        """The text of a tool result as the model and the transcript see it."""
        if "error" in part:
            return str(part["error"])
        return _text_of(part.get("result"))

    def suspend(
        self, run: RunState, assistant: Message, calls: list[dict[str, JSONValue]]
    ) -> dict[str, JSONValue]:
        """Stop for approval: tools that need none run, the pending call is persisted
        without a result, and the run ends ``suspended``."""
        pending = [c for c in calls if c.get("needs_approval")]
        run.policy.tool_call_made(assistant)
        done = tuple(self.run_tool(run, c) for c in calls if not c.get("needs_approval"))
        round_messages = [assistant]
        if done:
            round_messages.append(self.new_message(
                run, "tool", "\n".join(self.result_text(p) for p in done), done
            ))
        run.policy.suspended(round_messages, list(run.new))
        self.continuation = _Continuation(list(run.view), pending)
        return self.report(
            run, "suspended",
            pending_tool_calls=[{k: v for k, v in c.items() if k != "needs_approval"}
                                for c in pending],
            continuation={"run_id": run.run_id, "tool_call_ids": [c["id"] for c in pending]},
        )

    def answer(self, run: RunState, raw_text: str) -> dict[str, JSONValue]:
        """The final answer: output guardrail, persistence, run-end hook, outcome."""
        try:
            verdict = self.output_guard(run, raw_text)
        except ScriptedFailure:
            # the failed run's record holds the answer the guardrail was shown
            self.new_message(run, "assistant", raw_text)
            raise
        text, stage = raw_text, None
        if verdict["action"] in ("replace", "block"):
            text = str(verdict.get("text") or "")
            stage = "output" if verdict["action"] == "block" else None
        answer = self.new_message(run, "assistant", self.stored_answer_text(raw_text, text))
        run.policy.answer_completed(answer)
        end = self.env.hook("run_end", {"run_id": run.run_id, "reply": text})
        if self.cancelled_by(end):
            raise RunFailure(
                {"type": "RunCancelledError", "message": "cancelled by the run-end hook"},
                cancelled=True,
            )
        run.policy.response_outcome(list(run.new))
        outcome = "completed" if stage is None else "blocked"
        return self.report(run, outcome, stage=stage, reply=text)

    def report(
        self, run: RunState, outcome: str, *, stage: str | None = None,
        reply: JSONValue = None, error: JSONValue = None, **extra: JSONValue,
    ) -> dict[str, JSONValue]:
        """Report the outcome to the caller (the ``outcome`` event) and describe it."""
        self.emit(run, "outcome", outcome=outcome, stage=stage, error=error)
        return {"outcome": outcome, "stage": stage, "reply": reply, "error": error,
                "pending_tool_calls": [], **extra}

    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        """The failure path: error hook, then ``record_error``, then the outcome.
        Neither cleanup step can replace the run's error (except in ``anvia-main``)."""
        error: dict[str, JSONValue] = failure.error
        with contextlib.suppress(ScriptedFailure):
            self.env.hook("run_error", {"run_id": run.run_id, "error": error})
        if self.records_errors():
            try:
                self.gateway.record_error(self.error_record(run, error))
            except AdapterContractError:
                raise
            except Exception as exc:
                if self.variant == "anvia-main":
                    error = _error_of(exc)
        outcome = "cancelled" if failure.cancelled else "failed"
        return self.report(run, outcome, error=error)

    def records_errors(self) -> bool:
        """Whether to call ``record_error``: only when the store declares ``errors``."""
        return self.gateway.records_errors

    def error_record(self, run: RunState, error: Mapping[str, JSONValue]) -> ErrorRecord:
        """The record of a failed run: its error and every new message, in order."""
        return ErrorRecord(
            run_id=run.run_id, error=error, messages=tuple(run.new),
            scope=self.script.thread, recorded_at=self.env.clock.now(),
        )


def execute(
    script: Mapping[str, Any], env: Environment,
    executor: type[SavePolicyExecutor] = SavePolicyExecutor,
) -> dict[str, JSONValue]:
    """Execute a ``save-policy`` script with ``env``; ``executor`` lets the kit's
    mutants substitute a deliberately broken executor."""
    return executor(parse_script(script), env).execute()
