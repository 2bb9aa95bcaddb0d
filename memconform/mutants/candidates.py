"""Deliberately broken agent packages for the ``candidates`` profile.

Each mutant is the reference package (:class:`memconform.simulator.candidates.Package`)
with one part replaced by a plausible mistake; the service around it (the
:class:`~memconform.simulator.candidates.Executor`) stays correct, so whatever
the scenarios reject comes from the package alone.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from memconform.harness.environment import Environment
from memconform.mutants import Mutant
from memconform.simulator.candidates import (
    Call,
    Entry,
    Executor,
    IncompatibleMemory,
    Package,
    Prompt,
    Turn,
    render_summarizer_prompt,
)
from memconform.simulator.runtime import Simulator
from memconform.values import JSONValue

__all__ = ["MUTANTS", "CandidatesMutantRuntime"]


class CandidatesMutantRuntime:
    """A runtime answering ``candidates`` scripts with a broken package type and
    every other profile with the reference simulator."""

    def __init__(self, package_type: type[Package]) -> None:
        self.package_type = package_type
        self._fallback = Simulator()

    @property
    def profiles(self) -> frozenset[str]:
        """Every profile (only ``candidates`` is broken)."""
        return self._fallback.profiles

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """Answer the script; ``candidates`` scripts go to the broken package."""
        if script.get("profile") == "candidates":
            return Executor(self.package_type).run(script, env)
        return self._fallback.execute(script, env)


# -- memory ---------------------------------------------------------------------------


class SharedCandidateMemory(Package):
    """Appends every candidate's exchange to one base memory object shared by all."""

    def candidate_memory(
        self, base: Mapping[str, JSONValue], instruction: str, output: str
    ) -> dict[str, JSONValue]:
        shared: Any = base
        shared["history"].append({"role": "user", "content": instruction})
        shared["history"].append({"role": "assistant", "content": output})
        return shared  # type: ignore[no-any-return]


class InputIdCache(Package):
    """Keeps the last returned memory per input id and prefers it to the supplied one."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.cache: dict[str, dict[str, JSONValue]] = {}

    def load_memory(self, turn: Turn) -> dict[str, JSONValue]:
        cached = self.cache.get(turn.spec.input_id)
        return copy.deepcopy(cached) if cached is not None else super().load_memory(turn)

    def sample_candidate(
        self, turn: Turn, candidate: int, memory: Mapping[str, JSONValue], prompt: Prompt,
        shared: Sequence[dict[str, JSONValue]],
    ) -> Entry:
        entry = super().sample_candidate(turn, candidate, memory, prompt, shared)
        if isinstance(entry.get("memory"), dict):
            self.cache[turn.spec.input_id] = copy.deepcopy(entry["memory"])
        return entry


class GlobalConversation(Package):
    """Treats one package-wide conversation list as the history of every input."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.conversation: list[JSONValue] = []

    def load_memory(self, turn: Turn) -> dict[str, JSONValue]:
        memory = super().load_memory(turn)
        memory["history"] = copy.deepcopy(self.conversation)
        return memory

    def candidate_memory(
        self, base: Mapping[str, JSONValue], instruction: str, output: str
    ) -> dict[str, JSONValue]:
        self.conversation.append({"role": "user", "content": instruction})
        self.conversation.append({"role": "assistant", "content": output})
        return super().candidate_memory(base, instruction, output)


class PatchMemory(Package):
    """Returns only the new exchange instead of the whole memory."""

    def candidate_memory(
        self, base: Mapping[str, JSONValue], instruction: str, output: str
    ) -> dict[str, JSONValue]:
        return {
            "history": [
                {"role": "user", "content": instruction},
                {"role": "assistant", "content": output},
            ]
        }


class SummaryKeptInProcess(Package):
    """Keeps summaries in the process, keyed by input id, instead of in the memory."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.summaries: dict[str, str] = {}

    def load_memory(self, turn: Turn) -> dict[str, JSONValue]:
        memory = super().load_memory(turn)
        if memory.get("summary") is None and turn.spec.input_id in self.summaries:
            memory["summary"] = self.summaries[turn.spec.input_id]
        return memory

    def summarize(self, memory: Mapping[str, JSONValue], turn: Turn) -> Call:
        call = super().summarize(memory, turn)
        if call.output is not None:
            self.summaries[turn.spec.input_id] = call.output
        return call

    def candidate_memory(
        self, base: Mapping[str, JSONValue], instruction: str, output: str
    ) -> dict[str, JSONValue]:
        memory = super().candidate_memory(base, instruction, output)
        if memory.get("summary") in self.summaries.values():
            memory["summary"] = None
        return memory


_PROCESS_SUMMARIES: dict[str, str] = {}
"""Where :class:`SummaryKeptInModule` keeps summaries: a module global, so every
package instance of the process shares it and a fresh process starts without it."""


class SummaryKeptInModule(SummaryKeptInProcess):
    """Keeps summaries in a module global (one per process) instead of in the memory.

    Every package instance of the process shares them, keyed by input id: the
    package answers right as long as one process answers every request, and only
    a fresh process shows that the returned memory is not enough."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.summaries = _PROCESS_SUMMARIES


class SummaryCachedByInput(Package):
    """Memoises summaries by input id and previous summary, so an input id that
    comes back with another over-long history gets the earlier history's summary.

    Right whenever an input id names one trajectory only, as it does in most
    tests; the cache lives in the package instance, so it hits within one
    script's requests."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.summaries: dict[tuple[str, JSONValue], Call] = {}

    def summarize(self, memory: Mapping[str, JSONValue], turn: Turn) -> Call:
        key = (turn.spec.input_id, memory.get("summary"))
        cached = self.summaries.get(key)
        if cached is not None:
            return copy.deepcopy(cached)
        call = super().summarize(memory, turn)
        if call.output is not None:
            self.summaries[key] = copy.deepcopy(call)
        return call


class UnknownKeysDropped(Package):
    """Keeps only the keys of its own schema from the supplied memory."""

    def load_memory(self, turn: Turn) -> dict[str, JSONValue]:
        memory = super().load_memory(turn)
        return {key: memory[key] for key in ("history", "summary", "memory_list")}


class IncompatibleMemoryMixed(Package):
    """Reads an incompatible memory as best it can instead of reporting it."""

    def load_memory(self, turn: Turn) -> dict[str, JSONValue]:
        try:
            return super().load_memory(turn)
        except IncompatibleMemory:
            raw = turn.memory if isinstance(turn.memory, dict) else {}
            memory = {k: v for k, v in raw.items() if k not in ("history", "summary")}
            memory.update(history=[], summary=None, memory_list=[])
            return memory


# -- summarizing --------------------------------------------------------------------------


class ThresholdInclusive(Package):
    """Summarizes a prompt of exactly the threshold (``>=`` instead of ``>``)."""

    def needs_summary(self, prompt: Prompt, memory: Mapping[str, JSONValue]) -> bool:
        return len(prompt.text) >= self.config.summary_threshold and bool(memory["history"])


class ThresholdInBytes(Package):
    """Measures the commander prompt in UTF-8 bytes instead of characters."""

    def needs_summary(self, prompt: Prompt, memory: Mapping[str, JSONValue]) -> bool:
        size = len(prompt.text.encode("utf-8"))
        return size > self.config.summary_threshold and bool(memory["history"])


class EmptyHistorySummarized(Package):
    """Calls the summarizer on a long prompt even when there is no history."""

    def needs_summary(self, prompt: Prompt, memory: Mapping[str, JSONValue]) -> bool:
        return len(prompt.text) > self.config.summary_threshold


class SummarizerSeesInstruction(Package):
    """Shows the summarizer the current instruction along with the history."""

    def summarizer_prompt(self, memory: Mapping[str, JSONValue], turn: Turn) -> Prompt:
        history: Any = memory["history"]
        with_instruction = {
            **memory,
            "history": [*history, {"role": "user", "content": turn.spec.instruction}],
        }
        return render_summarizer_prompt(with_instruction)


class HistoryKeptAfterSummary(Package):
    """Replaces the summary but keeps the history it summarized."""

    def apply_summary(self, memory: Mapping[str, JSONValue], summary: str) -> dict[str, JSONValue]:
        updated = copy.deepcopy(dict(memory))
        updated["summary"] = summary
        return updated


class SummaryPerCandidate(Package):
    """Summarizes once for every candidate instead of once per input."""

    def needs_summary(self, prompt: Prompt, memory: Mapping[str, JSONValue]) -> bool:
        return False

    def sample_candidate(
        self, turn: Turn, candidate: int, memory: Mapping[str, JSONValue], prompt: Prompt,
        shared: Sequence[dict[str, JSONValue]],
    ) -> Entry:
        if Package.needs_summary(self, prompt, memory):
            call = self.summarize(memory, turn)
            if call.output is None:
                error = self.component_error("summary-failed", call.step)
                return self.error_entry(error, [call.step])
            memory = self.apply_summary(memory, call.output)
            prompt = self.commander_prompt(memory, turn)
            shared = [call.step]
        return super().sample_candidate(turn, candidate, memory, prompt, shared)


class CommanderAfterFailedSummary(Package):
    """Carries on to the commander with the unsummarized memory when the summary fails."""

    def summary_failed(
        self, turn: Turn, memory: Mapping[str, JSONValue], shared: Sequence[dict[str, JSONValue]]
    ) -> list[Entry]:
        prompt = self.commander_prompt(memory, turn)
        computed = [
            (k, self.sample_candidate(turn, k, memory, prompt, shared))
            for k in self.processing_order(turn.spec.candidates)
        ]
        return self.arrange(computed)


class BlankSummaryAccepted(Package):
    """Accepts a blank summary as valid."""

    def summarize(self, memory: Mapping[str, JSONValue], turn: Turn) -> Call:
        return self.call("summarizer", turn, None, self.summarizer_prompt(memory, turn))


class CommanderFailureFailsAll(Package):
    """Fails every candidate of the input when one commander call fails."""

    def answer_input(self, turn: Turn) -> list[Entry]:
        entries = super().answer_input(turn)
        failed = [e for e in entries if (e.get("error") or {}).get("kind") == "commander-failed"]
        if not failed:
            return entries
        return [e if e.get("status") != "ok" else self.error_entry(failed[0]["error"],
                e["internal_steps"]) for e in entries]


class FailedTurnLeftInHistory(Package):
    """Samples an input's candidates on one working history and, when a
    commander call fails, leaves that candidate's user turn in it: every later
    candidate's memory holds the loser's instruction too.

    Right with one candidate, when no commander call fails, or when only the
    last candidate fails."""

    def sample_candidate(
        self, turn: Turn, candidate: int, memory: Mapping[str, JSONValue], prompt: Prompt,
        shared: Sequence[dict[str, JSONValue]],
    ) -> Entry:
        entry = super().sample_candidate(turn, candidate, memory, prompt, shared)
        if entry.get("status") != "ok":
            working: Any = memory["history"]  # the base memory the later candidates copy
            working.append({"role": "user", "content": turn.spec.instruction})
        return entry


# -- internal steps and answers ------------------------------------------------------------


class StepsDroppedOnFailure(Package):
    """Returns failed candidates without the internal steps they ran."""

    def error_entry(
        self, error: Mapping[str, JSONValue], steps: Sequence[dict[str, JSONValue]]
    ) -> Entry:
        return super().error_entry(error, [])


class StepsOutOfOrder(Package):
    """Lists each candidate's internal steps last call first."""

    def number_steps(self, steps: list[dict[str, JSONValue]]) -> list[dict[str, JSONValue]]:
        ordered = sorted(steps, key=lambda s: s.get("component") != "commander")
        return super().number_steps(ordered)


class UnstableStepIds(Package):
    """Numbers internal steps with one package-wide counter instead of per candidate."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.counter = 0

    def number_steps(self, steps: list[dict[str, JSONValue]]) -> list[dict[str, JSONValue]]:
        numbered = []
        for step in steps:
            numbered.append({**step, "id": f"step-{self.counter}"})
            self.counter += 1
        return numbered


class PromptRecordedBeforeSummary(Package):
    """Records the commander's prompt as rendered before the summary replaced history."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.before: dict[tuple[str, int], Prompt] = {}

    def summarize(self, memory: Mapping[str, JSONValue], turn: Turn) -> Call:
        self.before[(turn.request, turn.index)] = self.commander_prompt(memory, turn)
        return super().summarize(memory, turn)

    def call(self, component: str, turn: Turn, candidate: int | None, prompt: Prompt) -> Call:
        result = super().call(component, turn, candidate, prompt)
        stale = self.before.get((turn.request, turn.index))
        if component == "commander" and stale is not None:
            result.step["full_prompt"] = stale.text
        return result


class CoachingRecordedAsModel(Package):
    """Records coached calls with origin ``model``."""

    def call(self, component: str, turn: Turn, candidate: int | None, prompt: Prompt) -> Call:
        result = super().call(component, turn, candidate, prompt)
        result.step["origin"] = "model"
        return result


class ResponsesInComputeOrder(Package):
    """Returns answers in the order it computed them, not the request's."""

    def arrange(self, computed: list[tuple[int, Any]]) -> list[Any]:
        return [answer for _, answer in computed]


class CandidateCountIgnored(Package):
    """Answers one candidate per input, whatever the request asked for."""

    def answer_input(self, turn: Turn) -> list[Entry]:
        return super().answer_input(replace(turn, spec=replace(turn.spec, candidates=1)))


def _mutant(name: str, package_type: type[Package], *kills: str) -> Mutant:
    doc = (package_type.__doc__ or "").strip().splitlines()[0]
    return Mutant(
        name=name,
        kind="runtime",
        doc=doc,
        kills=frozenset(kills),
        build=partial(CandidatesMutantRuntime, package_type),
        profile="candidates",
    )


MUTANTS: list[Mutant] = [
    _mutant("candidates-shared-memory", SharedCandidateMemory, "CA-003"),
    _mutant("candidates-input-id-cache", InputIdCache, "CA-004", "CA-006"),
    _mutant("candidates-global-conversation", GlobalConversation, "CA-022", "CA-006"),
    _mutant("candidates-patch-memory", PatchMemory, "CA-002"),
    _mutant("candidates-summary-in-process", SummaryKeptInProcess, "CA-005"),
    _mutant("candidates-summary-in-module", SummaryKeptInModule, "CA-005"),
    _mutant("candidates-summary-cache-by-input", SummaryCachedByInput, "CA-004"),
    _mutant("candidates-unknown-keys-dropped", UnknownKeysDropped, "CA-007"),
    _mutant("candidates-incompatible-mixed", IncompatibleMemoryMixed, "CA-008"),
    _mutant("candidates-threshold-inclusive", ThresholdInclusive, "CA-010"),
    _mutant("candidates-threshold-in-bytes", ThresholdInBytes, "CA-010"),
    _mutant("candidates-empty-history-summarized", EmptyHistorySummarized, "CA-011"),
    _mutant("candidates-summarizer-sees-instruction", SummarizerSeesInstruction, "CA-012"),
    _mutant("candidates-history-kept", HistoryKeptAfterSummary, "CA-013"),
    _mutant("candidates-summary-per-candidate", SummaryPerCandidate, "CA-014"),
    _mutant("candidates-commander-after-failed-summary", CommanderAfterFailedSummary, "CA-015"),
    _mutant("candidates-blank-summary-accepted", BlankSummaryAccepted, "CA-015"),
    _mutant("candidates-commander-failure-fails-all", CommanderFailureFailsAll, "CA-016"),
    _mutant("candidates-failed-turn-left-in-history", FailedTurnLeftInHistory, "CA-016"),
    _mutant("candidates-steps-dropped-on-failure", StepsDroppedOnFailure, "CA-019"),
    _mutant("candidates-steps-out-of-order", StepsOutOfOrder, "CA-017"),
    _mutant("candidates-unstable-step-ids", UnstableStepIds, "CA-018"),
    _mutant("candidates-prompt-before-summary", PromptRecordedBeforeSummary, "CA-018"),
    _mutant("candidates-coaching-as-model", CoachingRecordedAsModel, "CA-020"),
    _mutant("candidates-responses-reordered", ResponsesInComputeOrder, "CA-021"),
    _mutant("candidates-count-ignored", CandidateCountIgnored, "CA-001"),
]
