"""v10: the rollback hides every write of the step not owned by a completed task.

Bug: the rollback selects what to hide as "this task's writes plus anything in the step
that no successful task wrote". The runtime's own failure records (digests under
``taskErrors``, ``task_failed_<id>`` actions) carry no task, so when a second task fails
in the same turn under ``continueOnFailure``, its rollback also hides the first
failure's digest and action.

Why it ships: it is written as "roll the step back to what the good tasks produced",
which is right for a single failure, the only case most tests have.

Breaks: SW-030 (the second rollback leaves the first failure's digest and action in
place).
"""

from __future__ import annotations

from .base import StrictWriteEngine, TurnsWriteRuntime, _meta


class StepRollbackEngine(StrictWriteEngine):
    def rollback_ids(self, written, earlier):
        ids = super().rollback_ids(written, earlier)
        earlier_set = set(earlier)
        # --- BUG: ownerless writes of the step (the runtime's failure records) go too ---
        orphans = [m.id for m in self.log if m.id in earlier_set
                   and (_meta(m) or {}).get("task") is None]
        return orphans + [i for i in ids if i not in orphans]


class Runtime(TurnsWriteRuntime):
    strict_engine = StepRollbackEngine


def make() -> Runtime:
    return Runtime()
