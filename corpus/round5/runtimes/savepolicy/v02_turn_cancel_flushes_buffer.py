"""v02: under turn, a cancelled run flushes the round buffer before it ends.

Bug: the failure path treats a cancellation as "the user stopped it, keep what
they saw" and, under the turn policy, appends whatever the round buffer holds
(the held-back input, or the final answer a cancelling run-end hook just saw)
before reporting ``cancelled``. A failure at the same point stores nothing of
the unfinished round.

Why a team ships it: "don't lose the user's message when they press stop" is a
common product request; the flush is added only on the cancel branch.

Breaks: SP-032 (a cancelled run persists more than a failure at the same point),
SP-009 (an uncompleted round, or the answer of a run the run-end hook cancels, is
appended under turn). Shows under turn with a run-end hook that cancels, or
``cancel_before_model_call: 1``.
"""

from __future__ import annotations

import contextlib

from memconform.contract import StoreError
from memconform.values import JSONValue

from .base import BaseRuntime, Run


class FlushOnCancelRun(Run):
    def fail(self, error: dict[str, JSONValue], *, cancelled: bool = False
             ) -> dict[str, JSONValue]:
        # --- BUG: keep the buffered round when the run is cancelled
        if cancelled and self.agent.policy == "turn":
            with contextlib.suppress(StoreError):
                self.memory.flush()
        # --- end of bug
        return super().fail(error, cancelled=cancelled)


class FlushOnCancelRuntime(BaseRuntime):
    run_class = FlushOnCancelRun


def make() -> FlushOnCancelRuntime:
    return FlushOnCancelRuntime()
