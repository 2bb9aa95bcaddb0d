"""v02: a failed candidate's pending user turn stays in the working history its siblings use.

The bug: candidates are sampled one after another on one working history (the
shared base memory's list). Before the commander call the candidate's user
instruction is pushed onto it; on success the answer is appended to a copy and
the pending turn popped again. On a commander failure the function returns
early and the pop is skipped, so every later candidate of the input returns a
memory with one extra ``user`` message: the loser's turn merged into the
winners' memories.

Why a team ships it: with one candidate, or when no commander call fails, or
when only the last candidate fails, every memory is right; the error path of a
middle candidate is rarely tested.

Breaks CA-002 (the memory is not input + the candidate's own exchange), CA-003
(a sibling's exchange shows in another candidate's memory) and CA-016 (one
failure changes the other candidates' answers).
"""

from __future__ import annotations

import copy

from corpus.round5.runtimes.statecands.base import CandidatesPackage, StateCandsRuntime


class WorkingHistoryPackage(CandidatesPackage):
    def sample(self, ctx, candidate, memory, prompt, shared):
        working = memory["history"]  # the shared base memory's list, reused per candidate
        instruction = str(ctx["spec"]["instruction"])
        working.append({"role": "user", "content": instruction})
        step, output = self.call("commander", ctx, candidate, prompt)
        steps = [*copy.deepcopy(list(shared)), step]
        if output is None:
            # BUG: returns without popping the pending user turn off the working history
            return self.failed(self.error_from("commander-failed", step), steps)
        result = copy.deepcopy(dict(memory))
        result["history"].append({"role": "assistant", "content": output})
        working.pop()
        return {"status": "ok", "decision": self.decision(output), "memory": result,
                "internal_steps": self.numbered(steps)}


class FailedCandidateResidueRuntime(StateCandsRuntime):
    package_class = WorkingHistoryPackage


def make() -> FailedCandidateResidueRuntime:
    return FailedCandidateResidueRuntime()
