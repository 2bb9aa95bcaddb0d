"""v07: a resumed job takes its position from the logged transcript, not from the record.

The bug: on ``resume`` the agent reads the job's log thread and counts the
logged exchanges (two messages per step); the first ``n`` steps count as done
and every step from ``n`` on is run, whatever the record says. The record is
written before the log append, so a process killed between the two leaves a
step marked done but not logged, and the resume runs its tool again; a lost
log makes the resume redo every step.

Why a team ships it: conversation-first frameworks resume by replaying the
transcript, and when nothing is killed between the record write and the log
append the count equals the number of done steps.

Breaks PS-008 (the resume reads the logged transcript), PS-033 (a lost log
makes it redo finished steps) and PS-006 (a completed step's effect appears
twice).
"""

from __future__ import annotations

from corpus.round5.runtimes.statecands.base import StateAgent, StateCandsRuntime


class TranscriptResumeAgent(StateAgent):
    def first_step(self, job_id, resumed):
        if resumed:
            # BUG: progress is read back from the transcript
            logged = self.env.store.messages(self.log_thread(job_id))
            self._logged_steps = len(logged) // 2
        return 0

    def already_done(self, step, index, record, resumed):
        if resumed:
            return index < self._logged_steps
        return super().already_done(step, index, record, resumed)


class ResumeFromLogRuntime(StateCandsRuntime):
    agent_class = TranscriptResumeAgent


def make() -> ResumeFromLogRuntime:
    return ResumeFromLogRuntime()
