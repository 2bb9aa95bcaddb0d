"""Deliberately broken runtimes and stores for the ``save-policy`` profile.

Each runtime mutant is the reference executor with one behaviour broken (a
subclass overriding one method, policy or gateway); ``anvia-main`` is the
simulator's own named variant. The store mutant wraps a working store. Every
MUST rule of the profile is in some mutant's ``kills``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memconform.adapters.contract import StoreError
from memconform.mutants import Mutant
from memconform.simulator.environment import Environment, ScriptedFailure
from memconform.simulator.runtime import Simulator
from memconform.simulator.save_policy import (
    RunFailure,
    RunState,
    SavePolicyExecutor,
    execute,
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

__all__ = ["MUTANTS", "BrokenSavePolicyRuntime", "ErrorsInMessagesStore"]

PROFILE = "save-policy"


class BrokenSavePolicyRuntime:
    """The simulator, except that ``save-policy`` scripts run on a broken executor
    (or as a named variant); scripts of other profiles run unchanged."""

    def __init__(
        self, executor: type[SavePolicyExecutor] = SavePolicyExecutor, variant: str | None = None
    ) -> None:
        self.executor = executor
        self.variant = variant
        self._simulator = Simulator()

    @property
    def profiles(self) -> frozenset[str]:
        """Every profile the simulator executes."""
        return self._simulator.profiles

    @property
    def policies(self) -> frozenset[str]:
        """Every save policy the simulator declares (a mutant breaks one, it does
        not stop declaring it)."""
        return self._simulator.policies

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """Run ``save-policy`` scripts on the broken executor, others on the simulator."""
        if script.get("profile") == PROFILE:
            if self.variant is not None:
                script = {**script, "variant": self.variant}
            return execute(script, env, executor=self.executor)
        return self._simulator.execute(script, env)


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


class _MessageFlushesAtStop(_FlushesAtStop):
    held_policies = frozenset({"message"})


class _TurnFlushesAtStop(_FlushesAtStop):
    held_policies = frozenset({"turn"})


class _TurnSplitsRoundExecutor(SavePolicyExecutor):
    policy_classes = _policies(turn=_TurnSplitsRound)


class _DefaultTurn(SavePolicyExecutor):
    def policy_class(self) -> type[SavePolicy] | None:
        if not self.script.policy_configured:
            return TurnPolicy
        return super().policy_class()


class _ToolCallBeforeTools(SavePolicyExecutor):
    policy_classes = _policies(message=EarlyToolCallMessagePolicy)


class _MessageDefersInputExecutor(SavePolicyExecutor):
    policy_classes = _policies(message=_MessageDefersInput)


class _MessageWaitsForRun(SavePolicyExecutor):
    policy_classes = _policies(message=RunPolicy)


class _TurnPerMessageExecutor(SavePolicyExecutor):
    policy_classes = _policies(turn=_TurnPerMessage)


class _RunPerRound(SavePolicyExecutor):
    policy_classes = _policies(run=TurnPolicy)


class _TurnFlushesUnfinishedRound(SavePolicyExecutor):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if isinstance(run.policy, TurnPolicy) and run.policy.pending:
            with contextlib.suppress(StoreError):
                run.policy._flush()
        return super().fail(run, failure)


class _RunStoresFailedRun(SavePolicyExecutor):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if isinstance(run.policy, RunPolicy):
            with contextlib.suppress(StoreError):
                self.gateway.append(run.new)
        return super().fail(run, failure)


class _RecordErrorTwice(SavePolicyExecutor):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if self.records_errors():
            with contextlib.suppress(StoreError):
                self.gateway.record_error(self.error_record(run, failure.error))
        return super().fail(run, failure)


class _RecordErrorSkipped(SavePolicyExecutor):
    def records_errors(self) -> bool:
        return False


class _RecordErrorIgnoresCapability(SavePolicyExecutor):
    def records_errors(self) -> bool:
        return True


class _RecordErrorWithoutInput(SavePolicyExecutor):
    def error_record(self, run: RunState, error: Mapping[str, JSONValue]) -> ErrorRecord:
        record = super().error_record(run, error)
        kept = tuple(m for m in record.messages if m.role != "user")
        return ErrorRecord(record.run_id, record.error, kept, record.scope, record.recorded_at)


class _RecordErrorOnBlocks(SavePolicyExecutor):
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


class _RawModelTextStored(SavePolicyExecutor):
    @staticmethod
    def stored_answer_text(raw_text: str, guarded_text: str) -> str:
        return raw_text


class _SuccessBeforeAppend(SavePolicyExecutor):
    def answer(self, run: RunState, raw_text: str) -> dict[str, JSONValue]:
        self.emit(run, "outcome", outcome="completed", stage=None, error=None)
        return super().answer(run, raw_text)


class _BlockedInputStored(SavePolicyExecutor):
    def input_guard(self, run: RunState) -> dict[str, JSONValue]:
        verdict = super().input_guard(run)
        if verdict["action"] == "block" and run.spec.input is not None:
            self.gateway.append([Message(
                id=self.env.ids.next("msg"), role="user", text=run.spec.input,
                run_id=run.run_id, round=1,
            )])
        return verdict


class _RetryDuplicatesAssistant(SavePolicyExecutor):
    def call_model(self, run: RunState) -> dict[str, JSONValue]:
        step = super().call_model(run)
        last = run.model_calls[-1]
        if isinstance(last, Mapping) and last.get("attempt", 1) != 1:
            self.gateway.append([Message(
                id=self.env.ids.next("msg"), role="assistant", text=str(step.get("reply") or ""),
                run_id=run.run_id, round=run.round,
            )])
        return step


class _ToolFailureFailsRun(SavePolicyExecutor):
    def run_tool(self, run: RunState, call: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
        try:
            result = self.env.tool(str(call["name"]), call.get("args"), str(call["id"]))
        except ScriptedFailure as failure:
            raise RunFailure({"type": failure.type_name, "message": str(failure)}) from None
        return {"type": "tool_result", "call_id": call["id"], "name": call["name"],
                "result": result}


class _ToolErrorHookIgnored(SavePolicyExecutor):
    @staticmethod
    def tool_error_terminates(verdict: Mapping[str, JSONValue]) -> bool:
        return False


class _ToolErrorTerminateFails(SavePolicyExecutor):
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


class _TurnResumeWaitsForAnswerExecutor(SavePolicyExecutor):
    policy_classes = _policies(turn=_TurnResumeWaitsForAnswer)


class _MessageApprovalAfterTool(MessagePolicy):
    held: list[Message]

    def approval_answered(self, approval: Message) -> None:
        self.held = [approval]

    def approved_tools_ran(self, results: Sequence[Message]) -> None:
        for message in [*self.held, *results]:
            self.gateway.append([message])


class _MessageApprovalAfterToolExecutor(SavePolicyExecutor):
    policy_classes = _policies(message=_MessageApprovalAfterTool)


class _RunEndCancelIgnored(SavePolicyExecutor):
    @staticmethod
    def cancelled_by(verdict: Mapping[str, JSONValue]) -> bool:
        return False


class _SuspensionFailsRun(SavePolicyExecutor):
    def suspend(
        self, run: RunState, assistant: Message, calls: list[dict[str, JSONValue]]
    ) -> dict[str, JSONValue]:
        raise RunFailure({"type": "ApprovalRequired", "message": "a tool call needs approval"})


_SUSPENDED: dict[str, Any] = {}
"""The suspended runs of :class:`_ResumesFromProcessMemory`, by thread: this
process's memory only."""


class _ResumesFromProcessMemory(SavePolicyExecutor):
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


class _StreamingDropsAnswer(SavePolicyExecutor):
    def answer(self, run: RunState, raw_text: str) -> dict[str, JSONValue]:
        if run.spec.stream:
            setattr(run.policy, "answer_completed", lambda answer: None)  # noqa: B010
        return super().answer(run, raw_text)


class _ZeroBasedRounds(SavePolicyExecutor):
    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        run.round -= 1
        try:
            return super().new_message(run, role, text, parts)
        finally:
            run.round += 1


class _RunIdPerThread(SavePolicyExecutor):
    """Every run of the thread reuses the first run's id."""

    first_run_id: str | None = None

    def body(self, run: RunState) -> dict[str, JSONValue]:
        if self.first_run_id is None:
            self.first_run_id = run.run_id
        run.run_id = self.first_run_id
        return super().body(run)


class _RoundsAcrossRuns(SavePolicyExecutor):
    """Rounds go on counting from the previous run instead of starting at 1."""

    next_round = 1

    def body(self, run: RunState) -> dict[str, JSONValue]:
        run.round = self.next_round
        try:
            return super().body(run)
        finally:
            self.next_round = run.round + 1


class _RunErrorHookReplacesError(SavePolicyExecutor):
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


class _HistoryNotLoaded(SavePolicyExecutor):
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


class _HistoryFromOwnMemory(SavePolicyExecutor):
    """Reads the thread from the store as it should, then shows the model the
    messages this instance appended itself: right while one instance serves the
    thread, empty on a fresh instance."""

    gateway_class = _KeepingGateway

    def load_history(self, run: RunState) -> list[Message]:
        super().load_history(run)
        assert isinstance(self.gateway, _KeepingGateway)
        return list(self.gateway.kept)


class _IdsPerInstance(SavePolicyExecutor):
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


class _ToolCallsWithoutArguments(SavePolicyExecutor):
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


class _LastToolResultOnly(SavePolicyExecutor):
    """A round's tool message keeps only the last of its tool results."""

    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        if role == "tool" and len(parts) > 1:
            parts = parts[-1:]
        return super().new_message(run, role, text, parts)


class _SwallowingGateway(MemoryGateway):
    def append(self, batch: Sequence[Message]) -> None:
        with contextlib.suppress(StoreError):
            super().append(batch)


class _FailedAppendSwallowed(SavePolicyExecutor):
    gateway_class = _SwallowingGateway


class _CompensatesFailedRun(SavePolicyExecutor):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        for message in run.new:
            for part in message.parts:
                if isinstance(part, Mapping) and part.get("type") == "tool_call":
                    self.env.tool(f"undo_{part['name']}", part.get("args"), str(part["id"]))
        return super().fail(run, failure)


class _PolicyChangesContext(SavePolicyExecutor):
    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        message = super().new_message(run, role, text, parts)
        if run.policy.name != "message" and role != "user":
            run.view.remove(message)
        return message


# -- broken only under a second condition ----------------------------------------------


class _RunGuardrailFailsOpen(SavePolicyExecutor):
    """Under run, a failing output guardrail lets the model's answer through."""

    def output_guard(self, run: RunState, text: str) -> dict[str, JSONValue]:
        try:
            return super().output_guard(run, text)
        except ScriptedFailure:
            if not isinstance(run.policy, RunPolicy):
                raise
            return {"action": "allow", "text": None}


class _RunDropsOutputBlock(SavePolicyExecutor):
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


class _GuardrailFailureRecordedTwice(_GuardrailFailureNoted):
    def fail(self, run: RunState, failure: RunFailure) -> dict[str, JSONValue]:
        if self.guardrail_failed and self.records_errors():
            with contextlib.suppress(StoreError):
                self.gateway.record_error(self.error_record(run, failure.error))
        return super().fail(run, failure)


class _GuardrailFailureRecordEmpty(_GuardrailFailureNoted):
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


class _StreamedRefusalRetried(SavePolicyExecutor):
    """While streaming, a refused append is tried again; buffered runs fail on it."""

    def __init__(self, script: Any, env: Environment) -> None:
        super().__init__(script, env)
        if any(spec.stream for spec in self.script.runs):
            self.gateway = _RetryingGateway(env, self.script.thread)


# -- the store mutant ------------------------------------------------------------------


class ErrorsInMessagesStore:
    """A store that returns its error records as system messages of the thread."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def messages(self, thread_id: str, limit: int | None = None, **kwargs: Any) -> list[Message]:
        """The thread's messages followed by one system message per error record."""
        stored = list(self._inner.messages(thread_id, None, **kwargs))
        records = self._inner.errors(thread_id) if hasattr(self._inner, "errors") else []
        for n, record in enumerate(records, 1):
            stored.append(Message(
                id=f"error-record-{n}", role="system",
                text=f"run {record.run_id} failed: {record.error.get('message', '')}",
                run_id=record.run_id,
            ))
        if limit is None:
            return stored
        return stored[len(stored) - limit:] if limit else []


def _runtime(name: str, doc: str, kills: set[str], executor: type[SavePolicyExecutor]) -> Mutant:
    return Mutant(name, "runtime", doc, frozenset(kills),
                  lambda: BrokenSavePolicyRuntime(executor), PROFILE)


MUTANTS: list[Mutant] = [
    Mutant(
        "anvia-main", "runtime",
        "The Anvia main line: tool call appended before its tools run, a failing "
        "record_error replaces the run's error, an unknown policy silently stores nothing, "
        "approvals answered during the run, maxTurns letting two more model calls through.",
        frozenset({"SP-002", "SP-006", "SP-016", "SP-025", "SP-027", "SP-028"}),
        lambda: BrokenSavePolicyRuntime(variant="anvia-main"), PROFILE,
    ),
    _runtime("sp-tool-call-before-tools",
             "Under message, the tool call is appended before its tools run.",
             {"SP-006", "SP-025"}, _ToolCallBeforeTools),
    _runtime("sp-turn-flushes-unfinished-round",
             "Under turn, a failing run flushes its unfinished round (prompt included).",
             {"SP-009"}, _TurnFlushesUnfinishedRound),
    _runtime("sp-run-stores-failed-run",
             "Under run, a failed or cancelled run still appends its messages.",
             {"SP-011"}, _RunStoresFailedRun),
    _runtime("sp-record-error-twice", "record_error is called twice per failed run.",
             {"SP-013"}, _RecordErrorTwice),
    _runtime("sp-record-error-skipped", "record_error is never called.",
             {"SP-013", "SP-014"}, _RecordErrorSkipped),
    _runtime("sp-record-error-without-input",
             "The error record leaves out the run's user input.",
             {"SP-014"}, _RecordErrorWithoutInput),
    _runtime("sp-record-error-on-blocks",
             "Blocks and suspensions are recorded as errors.",
             {"SP-015"}, _RecordErrorOnBlocks),
    _runtime("sp-record-error-ignores-capability",
             "record_error is called even when the store does not declare errors.",
             {"SP-017"}, _RecordErrorIgnoresCapability),
    _runtime("sp-raw-model-text-stored",
             "The model's raw answer is stored instead of the guardrail's text.",
             {"SP-007", "SP-026"}, _RawModelTextStored),
    _runtime("sp-success-before-append",
             "Success is reported before the answer is appended.",
             {"SP-019"}, _SuccessBeforeAppend),
    _runtime("sp-blocked-input-stored",
             "An input the input guardrail blocked is stored anyway.",
             {"SP-004"}, _BlockedInputStored),
    _runtime("sp-retry-duplicates-assistant",
             "A retried model call appends its assistant message a second time.",
             {"SP-021"}, _RetryDuplicatesAssistant),
    _runtime("sp-default-turn", "With no policy configured, turn is used.",
             {"SP-001"}, _DefaultTurn),
    _runtime("sp-message-defers-input",
             "Under message, the input waits for the first completed batch.",
             {"SP-005"}, _MessageDefersInputExecutor),
    _runtime("sp-message-waits-for-run",
             "Under message, nothing is appended until the run has a response outcome.",
             {"SP-012", "SP-005"}, _MessageWaitsForRun),
    _runtime("sp-turn-per-message",
             "Under turn, each message of a round is appended as its own batch.",
             {"SP-008"}, _TurnPerMessageExecutor),
    _runtime("sp-message-flushes-at-stop",
             "Under message, completed batches are kept in memory and appended only when "
             "the run reports its outcome or cleans up after a failure; a killed run "
             "loses them.",
             {"SP-005", "SP-006"}, _MessageFlushesAtStop),
    _runtime("sp-turn-flushes-at-stop",
             "Under turn, completed rounds are kept in memory and appended only when the "
             "run reports its outcome or cleans up after a failure; a killed run loses "
             "them, and a resumed run's approval and tool result reach the store only "
             "after its last model call.",
             {"SP-009", "SP-028"}, _TurnFlushesAtStop),
    _runtime("sp-turn-splits-round",
             "Under turn, a round's tool call is appended in one batch and its result in "
             "the next, so a kill in between leaves a tool call without its result.",
             {"SP-008", "SP-025"}, _TurnSplitsRoundExecutor),
    _runtime("sp-run-per-round", "Under run, each completed round is appended on its own.",
             {"SP-010", "SP-011"}, _RunPerRound),
    _runtime("sp-tool-failure-fails-run", "A tool that throws fails the run.",
             {"SP-023"}, _ToolFailureFailsRun),
    _runtime("sp-tool-error-hook-ignored",
             "A tool-error hook's terminate is ignored and the run goes on.",
             {"SP-024"}, _ToolErrorHookIgnored),
    _runtime("sp-tool-error-terminate-fails-run",
             "A tool-error hook that terminates the run fails it with the tool's error "
             "instead of cancelling it with the hook's reason.",
             {"SP-024"}, _ToolErrorTerminateFails),
    _runtime("sp-turn-resume-waits-for-answer",
             "Under turn, a resumed run holds the approval and the tool result back until "
             "the answer, so a failing resumed model call loses the approved tool's result.",
             {"SP-009", "SP-028"}, _TurnResumeWaitsForAnswerExecutor),
    _runtime("sp-message-approval-after-tool",
             "Under message, a resumed run appends the approval response only after the "
             "approved tool ran.",
             {"SP-028"}, _MessageApprovalAfterToolExecutor),
    _runtime("sp-run-end-cancel-ignored",
             "A run-end hook's cancel is ignored and the run completes.",
             {"SP-032"}, _RunEndCancelIgnored),
    _runtime("sp-suspension-fails-run",
             "A tool call needing approval fails the run instead of suspending it.",
             {"SP-027"}, _SuspensionFailsRun),
    _runtime("sp-resume-from-process-memory",
             "A suspended run's pending tool call is kept in process memory and a resume "
             "looks only there: resumed in another process (given the caller's "
             "continuation and the store), the run has nothing to resume.",
             {"SP-028"}, _ResumesFromProcessMemory),
    _runtime("sp-streaming-drops-answer",
             "A streamed run does not hand its answer to the save policy.",
             {"SP-029"}, _StreamingDropsAnswer),
    _runtime("sp-zero-based-rounds", "Rounds are counted from 0.",
             {"SP-030"}, _ZeroBasedRounds),
    _runtime("sp-run-id-per-thread", "Every run of a thread carries the first run's id.",
             {"SP-030"}, _RunIdPerThread),
    _runtime("sp-rounds-across-runs",
             "Rounds go on counting from the previous run instead of starting at 1.",
             {"SP-030"}, _RoundsAcrossRuns),
    _runtime("sp-run-error-hook-replaces-error",
             "A failing run_error hook's error replaces the run's error.",
             {"SP-016"}, _RunErrorHookReplacesError),
    _runtime("sp-history-not-loaded", "The model never sees the stored history.",
             {"SP-031"}, _HistoryNotLoaded),
    _runtime("sp-history-from-own-memory",
             "Reads the stored history, then shows the model only what this runtime "
             "instance appended itself: a fresh instance shows none of it.",
             {"SP-031"}, _HistoryFromOwnMemory),
    _runtime("sp-ids-per-instance",
             "Message ids come from a counter of the runtime instance, so the next "
             "instance serving the thread repeats ids already stored.",
             {"SP-021"}, _IdsPerInstance),
    _runtime("sp-tool-calls-without-arguments",
             "Stored tool calls lose their arguments: a resumed run runs the approved "
             "tool without them.",
             {"SP-028"}, _ToolCallsWithoutArguments),
    _runtime("sp-last-tool-result-only",
             "When the model calls several tools at once, the round's tool message keeps "
             "only the last result.",
             {"SP-025"}, _LastToolResultOnly),
    _runtime("sp-failed-append-swallowed",
             "A refused append is ignored and the run carries on as if stored.",
             {"SP-020"}, _FailedAppendSwallowed),
    _runtime("sp-compensates-failed-run",
             "A failed run calls the compensating undo tool for every tool it ran.",
             {"SP-022"}, _CompensatesFailedRun),
    _runtime("sp-policy-changes-context",
             "Under turn and run, the model does not see the run's own tool rounds.",
             {"SP-003"}, _PolicyChangesContext),
    _runtime("sp-run-guardrail-fails-open",
             "Under run, a failing output guardrail lets the model's own answer through and "
             "the run completes; under message and turn the run fails.",
             {"SP-003"}, _RunGuardrailFailsOpen),
    _runtime("sp-run-drops-output-block",
             "Under run, a run the output guardrail blocked stores nothing: the block is not "
             "taken for a response outcome.",
             {"SP-010"}, _RunDropsOutputBlock),
    _runtime("sp-guardrail-failure-recorded-twice",
             "A run failing at a guardrail is handed to record_error twice.",
             {"SP-013"}, _GuardrailFailureRecordedTwice),
    _runtime("sp-guardrail-failure-record-empty",
             "The error record of a run failing at a guardrail holds none of its messages.",
             {"SP-014"}, _GuardrailFailureRecordEmpty),
    _runtime("sp-streamed-refusal-retried",
             "While the run streams, an append the store refused is tried again (and the run "
             "goes on); a buffered run fails on the refusal.",
             {"SP-029"}, _StreamedRefusalRetried),
    Mutant(
        "sp-store-errors-in-messages", "store",
        "The store returns its error records among the thread's messages.",
        frozenset({"SP-018"}), ErrorsInMessagesStore, PROFILE,
    ),
]
