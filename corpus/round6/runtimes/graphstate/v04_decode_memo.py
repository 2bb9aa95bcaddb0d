"""v04: decoded snapshots are memoised per script and the memo hands out its own object.

The bug: ``thaw`` keeps a memo from snapshot text to the decoded memory and
returns the memo's object itself. Branches with siblings are deep-copied (the
team knew about sibling isolation), but a single-candidate branch, the
summarize node and the prompt renderer work on the memo's object. A
single-candidate branch appends its exchange to it, and a summary rewrites
it, so the next input whose supplied memory has the same text (an empty
memory, the same scenario-initialised memory, the same memory under a reused
input id) starts from the earlier input's exchange.

The situation that shows it: two inputs of one script, each with one
candidate, supplied with identical memories (both empty, or both the same
initial state): the second commander prompt and the second returned memory
hold the first input's instruction and answer.

Why a team would ship it: empty memories are by far the most common and
decoding them again and again showed up in a profile; the tests sent one
empty-memory input per script.

Rules broken: CA-006, CA-022, CA-004, CA-002.
"""

from __future__ import annotations

import copy
from typing import Any

from corpus.round6.runtimes.graphstate.base import (
    BranchFrame,
    CandidateGraph,
    GraphStateRuntime,
    InputFrame,
    Snapshot,
)


class MemoGraph(CandidateGraph):
    def __init__(self, script: Any, env: Any) -> None:
        super().__init__(script, env)
        self.decoded: dict[str, dict[str, Any]] = {}

    def thaw(self, snapshot: Snapshot) -> dict[str, Any]:
        # --- the bug ---
        memory = self.decoded.get(snapshot.text)
        if memory is None:
            memory = self.decoded[snapshot.text] = snapshot.open()
        return memory  # the memo's own object, not a copy

    def open_branch(self, frame: InputFrame, candidate: int) -> BranchFrame:
        branch = super().open_branch(frame, candidate)
        if frame.count > 1:  # siblings must not share a memory
            branch.memory = copy.deepcopy(branch.memory)
        return branch


class Runtime(GraphStateRuntime):
    candidate_graph = MemoGraph


def make() -> Runtime:
    return Runtime()
