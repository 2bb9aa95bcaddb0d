"""Deliberately broken runtimes and stores for the ``save-policy`` profile.

Each runtime mutant is the reference executor with one behaviour broken (a
subclass overriding one method, policy or gateway, in
:mod:`memconform.mutants.save_policy_executors` and, for rounds of several
tool calls, :mod:`memconform.mutants.save_policy_tool_rounds`), run by
:class:`BrokenSavePolicyRuntime`; ``anvia-main`` is the simulator's own named
variant. The store mutant (:class:`ErrorsInMessagesStore`) wraps a working
store. Every MUST rule of the profile is in some mutant's ``kills``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memconform.harness.environment import Environment
from memconform.harness.wrapper import StoreWrapper
from memconform.mutants import Mutant
from memconform.mutants.save_policy_executors import (
    ApprovalAnswerAsText,
    BlockedInputStored,
    CompensatesFailedRun,
    DefaultTurn,
    FailedAppendSwallowed,
    GuardrailFailureRecordedTwice,
    GuardrailFailureRecordEmpty,
    HistoryFromOwnMemory,
    HistoryNotLoaded,
    IdsPerInstance,
    MessageApprovalAfterToolExecutor,
    MessageDefersInputExecutor,
    MessageFlushesAtStop,
    MessageWaitsForRun,
    PolicyChangesContext,
    RawModelTextStored,
    RecordErrorIgnoresCapability,
    RecordErrorOnBlocks,
    RecordErrorSkipped,
    RecordErrorTwice,
    RecordErrorWithoutInput,
    ResumeSeesOwnRunOnly,
    ResumesFromProcessMemory,
    RetryDuplicatesAssistant,
    RoundsAcrossRuns,
    RunDropsOutputBlock,
    RunEndCancelIgnored,
    RunErrorHookReplacesError,
    RunGuardrailFailsOpen,
    RunIdPerThread,
    RunOutboxKeepsFailedRuns,
    RunPerRound,
    RunRoundsPerMessageExecutor,
    RunStoresFailedRun,
    StreamedRefusalRetried,
    StreamingDropsAnswer,
    SuccessBeforeAppend,
    SuspensionFailsRun,
    ToolCallBeforeTools,
    ToolCallsWithoutArguments,
    ToolErrorHookIgnored,
    ToolErrorTerminateFails,
    ToolFailureFailsRun,
    TurnBufferSurvivesCancel,
    TurnFlushesAtStop,
    TurnFlushesUnfinishedRound,
    TurnPerMessageExecutor,
    TurnResumeWaitsForAnswerExecutor,
    TurnSplitsRoundExecutor,
    TurnStreamSavedAtFinish,
    ZeroBasedRounds,
)
from memconform.mutants.save_policy_tool_rounds import (
    LastToolResultOnly,
    SinglePendingContinuation,
    ToolResultsByName,
    ToolResultsInCompletionOrder,
)
from memconform.simulator.runtime import Simulator
from memconform.simulator.save_policy import SavePolicyExecutor, execute
from memconform.values import JSONValue, Message

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


# -- the store mutant ------------------------------------------------------------------


class ErrorsInMessagesStore(StoreWrapper):
    """A store that returns its error records as system messages of the thread."""

    def messages(self, thread_id: str, limit: int | None = None, **kwargs: Any) -> list[Message]:
        """The thread's messages followed by one system message per error record."""
        stored = list(self.inner.messages(thread_id, None, **kwargs))
        records = self.inner.errors(thread_id) if hasattr(self.inner, "errors") else []
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
             {"SP-006", "SP-025"}, ToolCallBeforeTools),
    _runtime("sp-turn-flushes-unfinished-round",
             "Under turn, a failing run flushes its unfinished round (prompt included).",
             {"SP-009"}, TurnFlushesUnfinishedRound),
    _runtime("sp-run-stores-failed-run",
             "Under run, a failed or cancelled run still appends its messages.",
             {"SP-011"}, RunStoresFailedRun),
    _runtime("sp-run-outbox-keeps-failed-runs",
             "Under run, a failed run's messages wait in an outbox and are appended with "
             "the next completed run's batch.",
             {"SP-011"}, RunOutboxKeepsFailedRuns),
    _runtime("sp-record-error-twice", "record_error is called twice per failed run.",
             {"SP-013"}, RecordErrorTwice),
    _runtime("sp-record-error-skipped", "record_error is never called.",
             {"SP-013", "SP-014"}, RecordErrorSkipped),
    _runtime("sp-record-error-without-input",
             "The error record leaves out the run's user input.",
             {"SP-014"}, RecordErrorWithoutInput),
    _runtime("sp-record-error-on-blocks",
             "Blocks and suspensions are recorded as errors.",
             {"SP-015"}, RecordErrorOnBlocks),
    _runtime("sp-record-error-ignores-capability",
             "record_error is called even when the store does not declare errors.",
             {"SP-017"}, RecordErrorIgnoresCapability),
    _runtime("sp-raw-model-text-stored",
             "The model's raw answer is stored instead of the guardrail's text.",
             {"SP-007", "SP-026"}, RawModelTextStored),
    _runtime("sp-success-before-append",
             "Success is reported before the answer is appended.",
             {"SP-019"}, SuccessBeforeAppend),
    _runtime("sp-blocked-input-stored",
             "An input the input guardrail blocked is stored anyway.",
             {"SP-004"}, BlockedInputStored),
    _runtime("sp-retry-duplicates-assistant",
             "A retried model call appends its assistant message a second time.",
             {"SP-021"}, RetryDuplicatesAssistant),
    _runtime("sp-default-turn", "With no policy configured, turn is used.",
             {"SP-001"}, DefaultTurn),
    _runtime("sp-message-defers-input",
             "Under message, the input waits for the first completed batch.",
             {"SP-005"}, MessageDefersInputExecutor),
    _runtime("sp-message-waits-for-run",
             "Under message, nothing is appended until the run has a response outcome.",
             {"SP-012", "SP-005"}, MessageWaitsForRun),
    _runtime("sp-turn-per-message",
             "Under turn, each message of a round is appended as its own batch.",
             {"SP-008"}, TurnPerMessageExecutor),
    _runtime("sp-message-flushes-at-stop",
             "Under message, completed batches are kept in memory and appended only when "
             "the run reports its outcome or cleans up after a failure; a killed run "
             "loses them.",
             {"SP-005", "SP-006"}, MessageFlushesAtStop),
    _runtime("sp-turn-flushes-at-stop",
             "Under turn, completed rounds are kept in memory and appended only when the "
             "run reports its outcome or cleans up after a failure; a killed run loses "
             "them, and a resumed run's approval and tool result reach the store only "
             "after its last model call.",
             {"SP-009", "SP-028"}, TurnFlushesAtStop),
    _runtime("sp-turn-splits-round",
             "Under turn, a round's tool call is appended in one batch and its result in "
             "the next, so a kill in between leaves a tool call without its result.",
             {"SP-008", "SP-025"}, TurnSplitsRoundExecutor),
    _runtime("sp-run-per-round", "Under run, each completed round is appended on its own.",
             {"SP-010", "SP-011"}, RunPerRound),
    _runtime("sp-tool-failure-fails-run", "A tool that throws fails the run.",
             {"SP-023"}, ToolFailureFailsRun),
    _runtime("sp-tool-error-hook-ignored",
             "A tool-error hook's terminate is ignored and the run goes on.",
             {"SP-024"}, ToolErrorHookIgnored),
    _runtime("sp-tool-error-terminate-fails-run",
             "A tool-error hook that terminates the run fails it with the tool's error "
             "instead of cancelling it with the hook's reason.",
             {"SP-024"}, ToolErrorTerminateFails),
    _runtime("sp-turn-resume-waits-for-answer",
             "Under turn, a resumed run holds the approval and the tool result back until "
             "the answer, so a failing resumed model call loses the approved tool's result.",
             {"SP-009", "SP-028"}, TurnResumeWaitsForAnswerExecutor),
    _runtime("sp-message-approval-after-tool",
             "Under message, a resumed run appends the approval response only after the "
             "approved tool ran.",
             {"SP-028"}, MessageApprovalAfterToolExecutor),
    _runtime("sp-run-end-cancel-ignored",
             "A run-end hook's cancel is ignored and the run completes.",
             {"SP-032"}, RunEndCancelIgnored),
    _runtime("sp-suspension-fails-run",
             "A tool call needing approval fails the run instead of suspending it.",
             {"SP-027"}, SuspensionFailsRun),
    _runtime("sp-resume-from-process-memory",
             "A suspended run's pending tool call is kept in process memory and a resume "
             "looks only there: resumed in another process (given the caller's "
             "continuation and the store), the run has nothing to resume.",
             {"SP-028"}, ResumesFromProcessMemory),
    _runtime("sp-streaming-drops-answer",
             "A streamed run does not hand its answer to the save policy.",
             {"SP-029"}, StreamingDropsAnswer),
    _runtime("sp-zero-based-rounds", "Rounds are counted from 0.",
             {"SP-030"}, ZeroBasedRounds),
    _runtime("sp-run-id-per-thread", "Every run of a thread carries the first run's id.",
             {"SP-030"}, RunIdPerThread),
    _runtime("sp-run-rounds-per-message",
             "Under run, each message of the run's one batch keeps the round it was made in "
             "instead of the round the batch is appended in.",
             {"SP-030"}, RunRoundsPerMessageExecutor),
    _runtime("sp-approval-answer-as-text",
             "A resumed run stores its approval answer as text alone, without the part naming "
             "the call it answers and whether it was approved.",
             {"SP-028"}, ApprovalAnswerAsText),
    _runtime("sp-rounds-across-runs",
             "Rounds go on counting from the previous run instead of starting at 1.",
             {"SP-030"}, RoundsAcrossRuns),
    _runtime("sp-run-error-hook-replaces-error",
             "A failing run_error hook's error replaces the run's error.",
             {"SP-016"}, RunErrorHookReplacesError),
    _runtime("sp-history-not-loaded", "The model never sees the stored history.",
             {"SP-031"}, HistoryNotLoaded),
    _runtime("sp-history-from-own-memory",
             "Reads the stored history, then shows the model only what this runtime "
             "instance appended itself: a fresh instance shows none of it.",
             {"SP-031"}, HistoryFromOwnMemory),
    _runtime("sp-ids-per-instance",
             "Message ids come from a counter of the runtime instance, so the next "
             "instance serving the thread repeats ids already stored.",
             {"SP-021"}, IdsPerInstance),
    _runtime("sp-tool-calls-without-arguments",
             "Stored tool calls lose their arguments: a resumed run runs the approved "
             "tool without them.",
             {"SP-028"}, ToolCallsWithoutArguments),
    _runtime("sp-last-tool-result-only",
             "When the model calls several tools at once, the round's tool message keeps "
             "only the last result.",
             {"SP-025"}, LastToolResultOnly),
    _runtime("sp-resume-sees-own-run-only",
             "A resume in a fresh process rebuilds the model's context from the suspended "
             "run's own messages: the runs before it on the thread are lost.",
             {"SP-028"}, ResumeSeesOwnRunOnly),
    _runtime("sp-turn-stream-saved-at-finish",
             "Under turn, a streamed answer is saved when the stream finishes, before the "
             "run-end hook: a hook that cancels leaves it stored.",
             {"SP-029"}, TurnStreamSavedAtFinish),
    _runtime("sp-tool-results-by-name",
             "A round's tool results are kept by tool name: of two calls to one tool at "
             "once, only the last call's result is stored.",
             {"SP-025"}, ToolResultsByName),
    _runtime("sp-single-pending-continuation",
             "A suspended run's continuation names only the first call awaiting approval: "
             "the resume answers it alone, the other call gets no approval or result.",
             {"SP-028"}, SinglePendingContinuation),
    _runtime("sp-turn-buffer-survives-cancel",
             "Under turn, one held-back buffer serves every run and a cancellation does "
             "not empty it: the cancelled run's input opens the next run's first batch.",
             {"SP-008", "SP-032"}, TurnBufferSurvivesCancel),
    _runtime("sp-tool-results-in-completion-order",
             "A round's tools run at once and their results are kept as they complete: a "
             "tool that throws finishes last, its result behind the later calls'.",
             {"SP-025"}, ToolResultsInCompletionOrder),
    _runtime("sp-failed-append-swallowed",
             "A refused append is ignored and the run carries on as if stored.",
             {"SP-020"}, FailedAppendSwallowed),
    _runtime("sp-compensates-failed-run",
             "A failed run calls the compensating undo tool for every tool it ran.",
             {"SP-022"}, CompensatesFailedRun),
    _runtime("sp-policy-changes-context",
             "Under turn and run, the model does not see the run's own tool rounds.",
             {"SP-003"}, PolicyChangesContext),
    _runtime("sp-run-guardrail-fails-open",
             "Under run, a failing output guardrail lets the model's own answer through and "
             "the run completes; under message and turn the run fails.",
             {"SP-003"}, RunGuardrailFailsOpen),
    _runtime("sp-run-drops-output-block",
             "Under run, a run the output guardrail blocked stores nothing: the block is not "
             "taken for a response outcome.",
             {"SP-010"}, RunDropsOutputBlock),
    _runtime("sp-guardrail-failure-recorded-twice",
             "A run failing at a guardrail is handed to record_error twice.",
             {"SP-013"}, GuardrailFailureRecordedTwice),
    _runtime("sp-guardrail-failure-record-empty",
             "The error record of a run failing at a guardrail holds none of its messages.",
             {"SP-014"}, GuardrailFailureRecordEmpty),
    _runtime("sp-streamed-refusal-retried",
             "While the run streams, an append the store refused is tried again (and the run "
             "goes on); a buffered run fails on the refusal.",
             {"SP-029"}, StreamedRefusalRetried),
    Mutant(
        "sp-store-errors-in-messages", "store",
        "The store returns its error records among the thread's messages.",
        frozenset({"SP-018"}), ErrorsInMessagesStore, PROFILE,
    ),
]
