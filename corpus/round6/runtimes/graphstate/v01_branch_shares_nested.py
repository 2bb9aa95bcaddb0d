"""v01: a forked branch copies the history list only; everything nested is shared.

The bug: ``open_branch`` decodes the base memory once per input and gives each
candidate a shallow copy of it with a fresh ``history`` list. The message
objects inside the history, ``memory_list`` and every caller key holding a list
or an object stay one shared object across all candidates of the input.

The situation that shows it: an input asking for two or more candidates whose
returned memories are then changed or continued: the caller (or the service
continuing candidate 0's branch) edits ``memory_list`` or a nested key of one
returned memory, and the sibling's memory shows the same edit.

Why a team would ship it: decoding the base snapshot per candidate looked
wasteful for large memories; the team profiled, saw that only ``history`` is
appended to by a branch, and copied just that list. Every test compared
returned memories by value right after the answer, where the two agree.

Rules broken: CA-003.
"""

from __future__ import annotations

from typing import Any

from corpus.round6.runtimes.graphstate.base import (
    BranchFrame,
    CandidateGraph,
    GraphStateRuntime,
    InputFrame,
    Rendered,
)


class SharedNestedGraph(CandidateGraph):
    def open_branch(self, frame: InputFrame, candidate: int) -> BranchFrame:
        assert frame.base is not None
        assert frame.prompt is not None
        decoded: dict[str, Any] = frame.__dict__.setdefault("_decoded", {})
        base = decoded.get(frame.base.text)
        if base is None:
            base = decoded[frame.base.text] = self.thaw(frame.base)
        # --- the bug ---
        memory = dict(base)  # one decode per input, a new top-level object per branch
        memory["history"] = list(base["history"])  # only the list a branch appends to
        return BranchFrame(owner=frame, candidate=candidate, memory=memory,
                           prompt=Rendered(frame.prompt.text, dict(frame.prompt.elements)),
                           steps=[dict(s) for s in frame.shared_steps])


class Runtime(GraphStateRuntime):
    candidate_graph = SharedNestedGraph


def make() -> Runtime:
    return Runtime()
