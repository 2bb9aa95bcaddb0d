"""v04: a retried first model call saves the user input again.

Bug: the retry callback re-runs the step preparation of the first round, which
persists the prompt through the save policy. Under message (and turn, whose
buffer receives it) the input is appended a second time, under a fresh id, when
the run's first model call fails with a retryable status and is retried. The
store accepts it (the id is new), so the thread holds the user's message twice
and every later run shows it twice to the model.

Why a team ships it: "prepare step" (load memory, save prompt) and "call model"
live together in the unit the retry middleware wraps; retries are rare in tests.

Breaks: SP-021 (a retried model call adds a message to the thread twice).
Shows: message policy, ``model.agent`` = [fail 503, reply].
"""

from __future__ import annotations

from memconform.values import Message

from .base import BaseRuntime, Run


class ResaveInputRun(Run):
    def on_retry(self, attempt: int) -> None:
        # --- BUG: re-preparing round 1 on retry persists the prompt again
        if self.round == 1 and "input" in self.spec:
            self.memory.input(Message(
                id=str(self.env.ids.next("msg")), role="user", text=str(self.spec["input"]),
                run_id=self.run_id, round=1))
        # --- end of bug


class ResaveInputRuntime(BaseRuntime):
    run_class = ResaveInputRun


def make() -> ResaveInputRuntime:
    return ResaveInputRuntime()
