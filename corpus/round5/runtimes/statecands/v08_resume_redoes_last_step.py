"""v08: a resumed job runs its last completed step again "to re-verify it".

The bug: on ``resume`` the agent treats the last step its record marks done as
suspect (the crash might have hit between the tool and the record write) and
runs it again before going on. The kit kills only at step boundaries, after
the record write, so the step had already taken effect: its tool effect
appears twice in the ledger.

Why a team ships it: "redo the last step on recovery" is a common belt-and-
braces choice that is harmless for idempotent tools, and a job that is never
killed (or resumed before its first step finished) never shows it.

Breaks PS-006 (a completed step's tool effect appears exactly once across the
killed and the resumed run) and PS-009 (the two processes' ledger differs from
an uninterrupted run).
"""

from __future__ import annotations

from corpus.round5.runtimes.statecands.base import StateAgent, StateCandsRuntime


class ReverifyingAgent(StateAgent):
    def resume_job(self, job_id):
        entry = self.load_record(job_id)
        steps = (entry.value.get("steps") or []) if entry is not None else []
        done = [i for i, s in enumerate(steps) if s.get("status") == "done"]
        self._reverify = done[-1] if done else None
        return super().resume_job(job_id)

    def already_done(self, step, index, record, resumed):
        if resumed and index == getattr(self, "_reverify", None):
            self._reverify = None
            return False  # BUG: the last finished step is run again
        return super().already_done(step, index, record, resumed)


class ResumeRedoesLastStepRuntime(StateCandsRuntime):
    agent_class = ReverifyingAgent


def make() -> ResumeRedoesLastStepRuntime:
    return ResumeRedoesLastStepRuntime()
