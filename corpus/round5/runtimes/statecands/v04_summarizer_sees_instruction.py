"""v04: the summarizer is given the current instruction along with the history.

The bug: the package summarizes "everything the commander would see", i.e. the
history with the current user instruction appended, so the summary already
covers the turn being answered and the instruction reaches the summarizer.

Why a team ships it: the summary reads better ("the user now asks ..."), and
the commander still gets the instruction, so answers look fine; only a check of
what the summarizer was shown catches it.

Breaks CA-012 (the current instruction never reaches the summarizer).
"""

from __future__ import annotations

from corpus.round5.runtimes.statecands.base import CandidatesPackage, StateCandsRuntime


class WholeContextSummaryPackage(CandidatesPackage):
    def summarize(self, ctx, memory):
        # BUG: the current turn is summarized too
        instruction = {"role": "user", "content": str(ctx["spec"]["instruction"])}
        seen = {**memory, "history": [*memory["history"], instruction]}
        return super().summarize(ctx, seen)


class SummarizerSeesInstructionRuntime(StateCandsRuntime):
    package_class = WholeContextSummaryPackage


def make() -> SummarizerSeesInstructionRuntime:
    return SummarizerSeesInstructionRuntime()
