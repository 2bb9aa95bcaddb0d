"""v05: the join cancels the remaining candidates once one commander call fails.

The bug: ``fork`` runs the branches in compute order and, like a task group,
stops at the first failed branch: every candidate not yet computed gets a
``commander-failed`` error ("cancelled after candidate k failed") without
its commander being called. Candidates computed before the failure are
answered normally, so the answer list still has N entries.

The situation that shows it: an input with two or more candidates whose
commander fails for a candidate that is not the last one computed (candidate
0 of 2 in request order, or candidate 1 of 2 with ``order: reverse``): the
sibling that should have been sampled normally comes back as an error.

Why a team would ship it: the engine's branch runner had fail-fast semantics
for tool graphs, where a failing branch makes the others pointless; the
candidate tests failed the last candidate, or every candidate.

Rules broken: CA-016.
"""

from __future__ import annotations

from corpus.round6.runtimes.graphstate.base import (
    CandidateGraph,
    GraphStateRuntime,
    InputFrame,
)
from memconform.values import JSONValue


class FailFastGraph(CandidateGraph):
    def fork(self, frame: InputFrame) -> str | None:
        answers: dict[int, dict[str, JSONValue]] = {}
        first_failure: tuple[int, dict[str, JSONValue]] | None = None
        for k in self.schedule(frame.count):
            # --- the bug ---
            if first_failure is not None:  # fail fast: the siblings are cancelled
                failed_at, cause = first_failure
                error = {**cause, "type": "BranchCancelled",
                         "message": f"cancelled after candidate {failed_at} failed"}
                answers[k] = self.failure(error, frame.shared_steps)
                continue
            branch = self.open_branch(frame, k)
            self.branch_graph.walk(branch, "command")
            assert branch.answer is not None
            answers[k] = branch.answer
            if branch.answer["status"] == "error":
                first_failure = (k, dict(branch.answer["error"]))
        frame.answers = [answers[k] for k in range(frame.count)]
        return None


class Runtime(GraphStateRuntime):
    candidate_graph = FailFastGraph


def make() -> Runtime:
    return Runtime()
