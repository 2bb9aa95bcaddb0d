"""v06: under run, a run whose answer the output guardrail blocks stores nothing.

Bug: the run policy saves the run "when it produced a successful final result"
(the wording of the framework's published docs page). An output-guardrail block
is not counted as one, so under run the blocked run's input and its replacement
answer are never appended; the caller got the blocked reply, the thread has no
trace of the exchange, and the next run's model does not see it.

Why a team ships it: the docs say "successful final result", and a guardrail
block looks like an unsuccessful one; message and turn have appended earlier and
hide the gap.

Breaks: SP-010 (a response outcome, output-blocked included, appends all its
messages in one batch under run), SP-026 (the guardrail's text is the stored
answer).
Shows: run policy, ``hooks.output_guardrail`` = block.
"""

from __future__ import annotations

from .base import BaseRuntime, Run


class SuccessOnlyRun(Run):
    def response_outcome(self, stage: str | None) -> None:
        # --- BUG: under run only an unblocked ("successful") result is saved
        if self.agent.policy == "run" and stage is not None:
            return
        # --- end of bug
        super().response_outcome(stage)


class SuccessOnlyRuntime(BaseRuntime):
    run_class = SuccessOnlyRun


def make() -> SuccessOnlyRuntime:
    return SuccessOnlyRuntime()
