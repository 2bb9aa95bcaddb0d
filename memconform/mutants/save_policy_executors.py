"""The broken parts of the ``save-policy`` runtime mutants: policies,
gateways and executors, each the reference one with one behaviour broken (a
subclass overriding one method, policy or gateway).

Each public executor here is the broken executor of one mutant of
:mod:`memconform.mutants.save_policy`, which names it in its catalogue and runs
it through :class:`~memconform.mutants.save_policy.BrokenSavePolicyRuntime`;
the private classes are the parts they share. This module declares no mutant
of its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memconform.contract import StoreError
from memconform.harness.environment import Environment, ScriptedFailure
from memconform.simulator.save_policy import (
    RunFailure,
    RunState,
    SavePolicyExecutor,
)
from memconform.simulator.save_policy_persistence import (
    POLICY_CLASSES,
    EarlyToolCallMessagePolicy,
    MemoryGateway,
    MessagePolicy,
    NullPolicy,
    RunPolicy,
    SavePolicy,
    TurnPolicy,
)
from memconform.values import ErrorRecord, JSONValue, Message, Role

__all__ = [
    "ApprovalAnswerAsText",
    "BlockedInputStored",
    "CompensatesFailedRun",
    "DefaultTurn",
    "FailedAppendSwallowed",
    "GuardrailFailureRecordEmpty",
    "GuardrailFailureRecordedTwice",
    "HistoryFromOwnMemory",
    "HistoryNotLoaded",
    "IdsPerInstance",
    "MessageApprovalAfterToolExecutor",
    "MessageDefersInputExecutor",
    "MessageFlushesAtStop",
    "MessageWaitsForRun",
    "PolicyChangesContext",
    "RawModelTextStored",
    "RecordErrorIgnoresCapability",
    "RecordErrorOnBlocks",
    "RecordErrorSkipped",
    "RecordErrorTwice",
    "RecordErrorWithoutInput",
    "ResumeSeesOwnRunOnly",
    "ResumesFromProcessMemory",
    "RetryDuplicatesAssistant",
    "RoundsAcrossRuns",
    "RunDropsOutputBlock",
    "RunEndCancelIgnored",
    "RunErrorHookReplacesError",
    "RunGuardrailFailsOpen",
    "RunIdPerThread",
    "RunOutboxKeepsFailedRuns",
    "RunPerRound",
    "RunRoundsPerMessageExecutor",
    "RunStoresFailedRun",
    "StreamedRefusalRetried",
    "StreamingDropsAnswer",
    "SuccessBeforeAppend",
    "SuspensionFailsRun",
    "ToolCallBeforeTools",
    "ToolCallsWithoutArguments",
    "ToolErrorHookIgnored",
    "ToolErrorTerminateFails",
    "ToolFailureFailsRun",
    "TurnBufferSurvivesCancel",
    "TurnFlushesAtStop",
    "TurnFlushesUnfinishedRound",
    "TurnPerMessageExecutor",
    "TurnResumeWaitsForAnswerExecutor",
    "TurnSplitsRoundExecutor",
    "TurnStreamSavedAtFinish",
    "ZeroBasedRounds",
]


def _policies(**changed: type[SavePolicy]) -> dict[str, type[SavePolicy]]:
    return {**POLICY_CLASSES, **changed}


# -- broken policies -----------------------------------------------------------------


class _MessageDefersInput(MessagePolicy):
    """Holds the input back and appends it with the first completed batch."""

    def __init__(self, gateway: MemoryGateway) -> None:
        super().__init__(gateway)
        self.held: list[Message] = []

    def input_accepted(self, messages: Sequence[Message]) -> None:
        self.held.extend(messages)

    def _with_held(self, messages: Sequence[Message]) -> list[Message]:
        batch, self.held = [*self.held, *messages], []
        return batch

    def round_completed(self, messages: Sequence[Message]) -> None:
        self.gateway.append(self._with_held(messages))

    def answer_completed(self, answer: Message) -> None:
        self.gateway.append(self._with_held([answer]))

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        self.gateway.append(self._with_held(messages))


class _TurnPerMessage(TurnPolicy):
    """Appends each message of a completed round as a batch of its own."""

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        for message in batch:
            self.gateway.append([message])


class _TurnSplitsRound(TurnPolicy):
    """Appends a completed round in two batches: everything up to the assistant's
    tool call first, the tool results after."""

    def round_completed(self, messages: Sequence[Message]) -> None:
        self.pending.extend(messages)
        batch, self.pending = self.pending, []
        self.gateway.append([m for m in batch if m.role != "tool"])
        self.gateway.append([m for m in batch if m.role == "tool"])


class _HeldGateway(MemoryGateway):
    """Keeps every batch in process memory until :meth:`flush`: the batches reach
    the store in order and whole, but only when the run stops."""

    def __init__(self, env: Environment, thread: str) -> None:
        super().__init__(env, thread)
        self.held: list[list[Message]] = []

    def append(self, batch: Sequence[Message]) -> None:
        if batch:
            self.held.append(list(batch))

    def flush(self) -> None:
        """Append the held batches, oldest first."""
        held, self.held = self.held, []
        for batch in held:
            super().append(batch)


# -- broken executors ----------------------------------------------------------------


class _FlushesAtStop(SavePolicyExecutor):
    """Holds the batches of the policies in :attr:`held_policies` in memory and
    appends them just before the outcome is reported, or in the cleanup of a
    failed run: every in-process run stores what it should, a killed one
    loses everything it held."""

    held_policies: frozenset[str] = frozenset()

    def __init__(self, script: Any, env: Environment) -> None:
        super().__init__(script, env)
        if self.script.policy in self.held_policies:
            self.gateway = _HeldGateway(env, self.script.thread)

    def _flush(self) -> None:
        if isinstance(self.gateway, _HeldGateway):
            self.gateway.flush()

    def report(
        self, run: RunState, outcome: str, *, stage: str | None = None,
        reply: JSONValue = None, error: JSONValue = None, **extra: JSONValue,
    ) -> dict[str, JSONValue]:
        self._flush()
        return super().report(run, outcome, stage=stage, reply=reply, error=error, **extra)

    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        with contextlib.suppress(StoreError):
            self._flush()
        return super().fail(run, failure)


class MessageFlushesAtStop(_FlushesAtStop):
    held_policies = frozenset({"message"})


class TurnFlushesAtStop(_FlushesAtStop):
    held_policies = frozenset({"turn"})


class TurnSplitsRoundExecutor(SavePolicyExecutor):
    policy_classes = _policies(turn=_TurnSplitsRound)


class DefaultTurn(SavePolicyExecutor):
    def policy_class(self) -> type[SavePolicy] | None:
        if not self.script.policy_configured:
            return TurnPolicy
        return super().policy_class()


class ToolCallBeforeTools(SavePolicyExecutor):
    policy_classes = _policies(message=EarlyToolCallMessagePolicy)


class MessageDefersInputExecutor(SavePolicyExecutor):
    policy_classes = _policies(message=_MessageDefersInput)


class MessageWaitsForRun(SavePolicyExecutor):
    policy_classes = _policies(message=RunPolicy)


class TurnPerMessageExecutor(SavePolicyExecutor):
    policy_classes = _policies(turn=_TurnPerMessage)


class RunPerRound(SavePolicyExecutor):
    policy_classes = _policies(run=TurnPolicy)


class TurnFlushesUnfinishedRound(SavePolicyExecutor):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if isinstance(run.policy, TurnPolicy) and run.policy.pending:
            with contextlib.suppress(StoreError):
                run.policy._flush()
        return super().fail(run, failure)


class _OutboxGateway(MemoryGateway):
    """Puts the messages waiting in :attr:`outbox` in front of the next batch."""

    def __init__(self, env: Environment, thread: str) -> None:
        super().__init__(env, thread)
        self.outbox: list[Message] = []

    def append(self, batch: Sequence[Message]) -> None:
        waiting, self.outbox = self.outbox, []
        super().append([*waiting, *batch])


class RunOutboxKeepsFailedRuns(SavePolicyExecutor):
    """Under run, a failed run's messages wait in an outbox and join the next
    batch appended on the thread."""

    gateway_class = _OutboxGateway

    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if isinstance(run.policy, RunPolicy) and isinstance(self.gateway, _OutboxGateway):
            self.gateway.outbox.extend(run.new)
        return super().fail(run, failure)


class RunStoresFailedRun(SavePolicyExecutor):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if isinstance(run.policy, RunPolicy):
            with contextlib.suppress(StoreError):
                self.gateway.append(run.new)
        return super().fail(run, failure)


class RecordErrorTwice(SavePolicyExecutor):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if self.records_errors():
            with contextlib.suppress(StoreError):
                self.gateway.record_error(self.error_record(run, failure.error))
        return super().fail(run, failure)


class RecordErrorSkipped(SavePolicyExecutor):
    def records_errors(self) -> bool:
        return False


class RecordErrorIgnoresCapability(SavePolicyExecutor):
    def records_errors(self) -> bool:
        return True


class RecordErrorWithoutInput(SavePolicyExecutor):
    def error_record(self, run: RunState, error: Mapping[str, JSONValue]) -> ErrorRecord:
        record = super().error_record(run, error)
        kept = tuple(m for m in record.messages if m.role != "user")
        return ErrorRecord(record.run_id, record.error, kept, record.scope, record.recorded_at)


class RecordErrorOnBlocks(SavePolicyExecutor):
    def report(
        self, run: RunState, outcome: str, *, stage: str | None = None,
        reply: JSONValue = None, error: JSONValue = None, **extra: JSONValue,
    ) -> dict[str, JSONValue]:
        if outcome in ("blocked", "suspended") and self.records_errors():
            with contextlib.suppress(StoreError):
                self.gateway.record_error(
                    self.error_record(run, {"type": "Blocked", "message": outcome})
                )
        return super().report(run, outcome, stage=stage, reply=reply, error=error, **extra)


class RawModelTextStored(SavePolicyExecutor):
    @staticmethod
    def stored_answer_text(raw_text: str, guarded_text: str) -> str:
        return raw_text


class SuccessBeforeAppend(SavePolicyExecutor):
    def answer(self, run: RunState, raw_text: str) -> dict[str, JSONValue]:
        self.emit(run, "outcome", outcome="completed", stage=None, error=None)
        return super().answer(run, raw_text)


class BlockedInputStored(SavePolicyExecutor):
    def input_guard(self, run: RunState) -> dict[str, JSONValue]:
        verdict = super().input_guard(run)
        if verdict["action"] == "block" and run.spec.input is not None:
            self.gateway.append([Message(
                id=self.env.ids.next("msg"), role="user", text=run.spec.input,
                run_id=run.run_id, round=1,
            )])
        return verdict


class RetryDuplicatesAssistant(SavePolicyExecutor):
    def call_model(self, run: RunState) -> dict[str, JSONValue]:
        step = super().call_model(run)
        last = run.model_calls[-1]
        if isinstance(last, Mapping) and last.get("attempt", 1) != 1:
            self.gateway.append([Message(
                id=self.env.ids.next("msg"), role="assistant", text=str(step.get("reply") or ""),
                run_id=run.run_id, round=run.round,
            )])
        return step


class ToolFailureFailsRun(SavePolicyExecutor):
    def run_tool(self, run: RunState, call: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
        try:
            result = self.env.tool(str(call["name"]), call.get("args"), str(call["id"]))
        except ScriptedFailure as failure:
            raise RunFailure({"type": failure.type_name, "message": str(failure)}) from None
        return {"type": "tool_result", "call_id": call["id"], "name": call["name"],
                "result": result}


class ToolErrorHookIgnored(SavePolicyExecutor):
    @staticmethod
    def tool_error_terminates(verdict: Mapping[str, JSONValue]) -> bool:
        return False


class ToolErrorTerminateFails(SavePolicyExecutor):
    def run_tool(self, run: RunState, call: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
        try:
            return super().run_tool(run, call)
        except RunFailure as failure:
            if not failure.cancelled:
                raise
            raise RunFailure(
                {"type": "ToolCallError", "message": "the tool failed", "tool": call["name"]}
            ) from None


class _TurnResumeWaitsForAnswer(TurnPolicy):
    def approved_tools_ran(self, results: Sequence[Message]) -> None:
        self.pending.extend(results)


class TurnResumeWaitsForAnswerExecutor(SavePolicyExecutor):
    policy_classes = _policies(turn=_TurnResumeWaitsForAnswer)


class _MessageApprovalAfterTool(MessagePolicy):
    held: list[Message]

    def approval_answered(self, approval: Message) -> None:
        self.held = [approval]

    def approved_tools_ran(self, results: Sequence[Message]) -> None:
        for message in [*self.held, *results]:
            self.gateway.append([message])


class MessageApprovalAfterToolExecutor(SavePolicyExecutor):
    policy_classes = _policies(message=_MessageApprovalAfterTool)


class RunEndCancelIgnored(SavePolicyExecutor):
    @staticmethod
    def cancelled_by(verdict: Mapping[str, JSONValue]) -> bool:
        return False


class SuspensionFailsRun(SavePolicyExecutor):
    def suspend(
        self, run: RunState, assistant: Message, calls: list[dict[str, JSONValue]]
    ) -> dict[str, JSONValue]:
        raise RunFailure({"type": "ApprovalRequired", "message": "a tool call needs approval"})


_SUSPENDED: dict[str, Any] = {}
"""The suspended runs of :class:`ResumesFromProcessMemory`, by thread: this
process's memory only."""


class ResumesFromProcessMemory(SavePolicyExecutor):
    """Keeps a suspended run's pending state in process memory and resumes only
    from there, never from the caller's continuation and the store."""

    def suspend(
        self, run: RunState, assistant: Message, calls: list[dict[str, JSONValue]]
    ) -> dict[str, JSONValue]:
        result = super().suspend(run, assistant, calls)
        _SUSPENDED[self.script.thread] = self.continuation
        return result

    def stored_continuation(self, given: Mapping[str, Any]) -> Any:
        held = _SUSPENDED.pop(self.script.thread, None)
        if held is None:
            raise RunFailure({"type": "NothingToResumeError",
                              "message": "no run of this thread is suspended in this process"})
        return held


class StreamingDropsAnswer(SavePolicyExecutor):
    def answer(self, run: RunState, raw_text: str) -> dict[str, JSONValue]:
        if run.spec.stream:
            setattr(run.policy, "answer_completed", lambda answer: None)  # noqa: B010
        return super().answer(run, raw_text)


class TurnStreamSavedAtFinish(SavePolicyExecutor):
    """Under turn, a streamed answer is saved with its round as soon as the stream
    finishes, before the run-end hook: a hook that cancels leaves it stored."""

    def answer(self, run: RunState, raw_text: str) -> dict[str, JSONValue]:
        policy = run.policy
        if run.spec.stream and isinstance(policy, TurnPolicy):
            def saved_at_once(answer: Message) -> None:
                policy.pending.append(answer)
                batch, policy.pending = policy.pending, []
                policy.gateway.append(batch)
            setattr(policy, "answer_completed", saved_at_once)  # noqa: B010
            setattr(policy, "response_outcome", lambda run_messages: None)  # noqa: B010
        return super().answer(run, raw_text)


class ZeroBasedRounds(SavePolicyExecutor):
    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        run.round -= 1
        try:
            return super().new_message(run, role, text, parts)
        finally:
            run.round += 1


class RunIdPerThread(SavePolicyExecutor):
    """Every run of the thread reuses the first run's id."""

    first_run_id: str | None = None

    def body(self, run: RunState) -> dict[str, JSONValue]:
        if self.first_run_id is None:
            self.first_run_id = run.run_id
        run.run_id = self.first_run_id
        return super().body(run)


class _RunRoundsPerMessage(RunPolicy):
    """Under run, each message of the run's one batch keeps the round it was made in."""

    def response_outcome(self, run_messages: Sequence[Message]) -> None:
        self.gateway.append(run_messages)

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        self.gateway.append(run_messages)


class RunRoundsPerMessageExecutor(SavePolicyExecutor):
    policy_classes = _policies(run=_RunRoundsPerMessage)


class ApprovalAnswerAsText(SavePolicyExecutor):
    """A resumed run's approval answer is stored as text alone, without the
    ``tool_approval`` part that says which call it answers and how."""

    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        if role == "tool" and parts and all(
                isinstance(p, Mapping) and p.get("type") == "tool_approval" for p in parts):
            parts = ()
        return super().new_message(run, role, text, parts)


class RoundsAcrossRuns(SavePolicyExecutor):
    """Rounds go on counting from the previous run instead of starting at 1."""

    next_round = 1

    def body(self, run: RunState) -> dict[str, JSONValue]:
        run.round = self.next_round
        try:
            return super().body(run)
        finally:
            self.next_round = run.round + 1


class RunErrorHookReplacesError(SavePolicyExecutor):
    """A failing run_error hook's error replaces the run's error."""

    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        error: dict[str, JSONValue] = failure.error
        reported = error
        try:
            self.env.hook("run_error", {"run_id": run.run_id, "error": error})
        except ScriptedFailure as exc:
            reported = {"type": exc.type_name,
                        **{k: v for k, v in exc.error.items() if k != "type"}}
        if self.records_errors():
            with contextlib.suppress(StoreError):
                self.gateway.record_error(self.error_record(run, error))
        return self.report(run, "cancelled" if failure.cancelled else "failed", error=reported)


class HistoryNotLoaded(SavePolicyExecutor):
    def load_history(self, run: RunState) -> list[Message]:
        super().load_history(run)
        return []


class _KeepingGateway(MemoryGateway):
    """Remembers, in this executor's memory, every batch it appended."""

    def __init__(self, env: Environment, thread: str) -> None:
        super().__init__(env, thread)
        self.kept: list[Message] = []

    def append(self, batch: Sequence[Message]) -> None:
        super().append(batch)
        self.kept += batch


class HistoryFromOwnMemory(SavePolicyExecutor):
    """Reads the thread from the store as it should, then shows the model the
    messages this instance appended itself: right while one instance serves the
    thread, empty on a fresh instance."""

    gateway_class = _KeepingGateway

    def load_history(self, run: RunState) -> list[Message]:
        super().load_history(run)
        assert isinstance(self.gateway, _KeepingGateway)
        return list(self.gateway.kept)


class ResumeSeesOwnRunOnly(SavePolicyExecutor):
    """A resume rebuilds the model's context from the suspended run's own stored
    messages: right on a thread with one run, the earlier runs lost otherwise."""

    def stored_continuation(self, given: Mapping[str, Any]) -> Any:
        found = super().stored_continuation(given)
        own = [m for m in found.view if m.run_id == given.get("run_id")]
        return type(found)(own, found.pending)


class IdsPerInstance(SavePolicyExecutor):
    """Numbers its messages from a counter of its own instance (m1, m2, ...):
    unique while one instance serves the thread, repeated by the next one."""

    counter = 0

    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        message = super().new_message(run, role, text, parts)
        self.counter += 1
        renamed = replace(message, id=f"m{self.counter}")
        run.new[-1] = run.view[-1] = renamed
        return renamed


class ToolCallsWithoutArguments(SavePolicyExecutor):
    """Stores an assistant's tool calls without their arguments (the tools run
    in the run itself still get them; a resume reads the calls from the store)."""

    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        if role == "assistant":
            parts = tuple({k: v for k, v in p.items() if k != "args"}
                          if isinstance(p, Mapping) and p.get("type") == "tool_call" else p
                          for p in parts)
        return super().new_message(run, role, text, parts)


class TurnBufferSurvivesCancel(SavePolicyExecutor):
    """Under turn, the batch held back lives in one buffer for every run of the
    executor, emptied when it is appended or when a run fails, but not when a
    run is cancelled (a handler for errors that a cancellation skips): a
    cancelled run's unfinished round opens the next run's first batch."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held: list[Message] = []

    def policy_class(self) -> type[SavePolicy] | None:
        cls = super().policy_class()
        if cls is not TurnPolicy:
            return cls
        held = self.held

        class SharedBuffer(TurnPolicy):
            def __init__(self, gateway: MemoryGateway) -> None:
                super().__init__(gateway)
                self.pending = held

            def _flush(self) -> None:
                batch = list(self.pending)
                self.pending.clear()
                self.gateway.append(batch)

        return SharedBuffer

    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if not failure.cancelled and isinstance(run.policy, TurnPolicy):
            run.policy.pending.clear()
        return super().fail(run, failure)


class _SwallowingGateway(MemoryGateway):
    def append(self, batch: Sequence[Message]) -> None:
        with contextlib.suppress(StoreError):
            super().append(batch)


class FailedAppendSwallowed(SavePolicyExecutor):
    gateway_class = _SwallowingGateway


class CompensatesFailedRun(SavePolicyExecutor):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        for message in run.new:
            for part in message.parts:
                if isinstance(part, Mapping) and part.get("type") == "tool_call":
                    self.env.tool(f"undo_{part['name']}", part.get("args"), str(part["id"]))
        return super().fail(run, failure)


class PolicyChangesContext(SavePolicyExecutor):
    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        message = super().new_message(run, role, text, parts)
        if run.policy.name != "message" and role != "user":
            run.view.remove(message)
        return message


# -- broken only under a second condition ----------------------------------------------


class RunGuardrailFailsOpen(SavePolicyExecutor):
    """Under run, a failing output guardrail lets the model's answer through."""

    def output_guard(self, run: RunState, text: str) -> dict[str, JSONValue]:
        try:
            return super().output_guard(run, text)
        except ScriptedFailure:
            if not isinstance(run.policy, RunPolicy):
                raise
            return {"action": "allow", "text": None}


class RunDropsOutputBlock(SavePolicyExecutor):
    """Under run, a run the output guardrail blocked stores nothing."""

    def output_guard(self, run: RunState, text: str) -> dict[str, JSONValue]:
        verdict = super().output_guard(run, text)
        if verdict.get("action") == "block" and isinstance(run.policy, RunPolicy):
            run.policy = NullPolicy(self.gateway)
        return verdict


class _GuardrailFailureNoted(SavePolicyExecutor):
    """Notes on the executor whether a run's guardrail raised."""

    guardrail_failed = False

    def input_guard(self, run: RunState) -> dict[str, JSONValue]:
        try:
            return super().input_guard(run)
        except ScriptedFailure:
            self.guardrail_failed = True
            raise

    def output_guard(self, run: RunState, text: str) -> dict[str, JSONValue]:
        try:
            return super().output_guard(run, text)
        except ScriptedFailure:
            self.guardrail_failed = True
            raise


class GuardrailFailureRecordedTwice(_GuardrailFailureNoted):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if self.guardrail_failed and self.records_errors():
            with contextlib.suppress(StoreError):
                self.gateway.record_error(self.error_record(run, failure.error))
        return super().fail(run, failure)


class GuardrailFailureRecordEmpty(_GuardrailFailureNoted):
    def error_record(self, run: RunState, error: Mapping[str, JSONValue]) -> ErrorRecord:
        record = super().error_record(run, error)
        if not self.guardrail_failed:
            return record
        return ErrorRecord(record.run_id, record.error, (), record.scope, record.recorded_at)


class _RetryingGateway(MemoryGateway):
    """Appends a batch the store refused a second time."""

    def append(self, batch: Sequence[Message]) -> None:
        try:
            super().append(batch)
        except StoreError:
            super().append(batch)


class StreamedRefusalRetried(SavePolicyExecutor):
    """While streaming, a refused append is tried again; buffered runs fail on it."""

    def __init__(self, script: Any, env: Environment) -> None:
        super().__init__(script, env)
        if any(spec.stream for spec in self.script.runs):
            self.gateway = _RetryingGateway(env, self.script.thread)
