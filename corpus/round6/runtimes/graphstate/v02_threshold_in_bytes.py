"""v02: the summary threshold is compared with the prompt's UTF-8 size, not its length.

The bug: ``too_long`` measures ``len(prompt.encode("utf-8"))``. For ASCII text
bytes and characters agree; every character outside ASCII counts two to four
times.

The situation that shows it: an input whose commander prompt holds accented,
Cyrillic, CJK or emoji text and is at most ``summary_threshold`` characters
long but more than that many bytes: the package summarizes (and empties the
history) although the prompt does not exceed the threshold.

Why a team would ship it: the same budget helper guards the provider's request
size, which is limited in bytes, and was reused here; all the fixtures of the
summarizer were English.

Rules broken: CA-010.
"""

from __future__ import annotations

from corpus.round6.runtimes.graphstate.base import CandidateGraph, GraphStateRuntime


class ByteBudgetGraph(CandidateGraph):
    def too_long(self, prompt: str) -> bool:
        # --- the bug ---
        return len(prompt.encode("utf-8")) > self.threshold


class Runtime(GraphStateRuntime):
    candidate_graph = ByteBudgetGraph


def make() -> Runtime:
    return Runtime()
