"""v08: the rollback write set is reset only when a task succeeds.

The bug: the journal's write set (what a rollback hides) is reset at the start of each
turn and after every task that succeeded, the "commit point" of the pipeline. After a
failed task the set still holds what the failure handler wrote, its raw error, the
committed digest and the ``task_failed_<task>`` action. When the next task fails too
(``continueOnFailure``), its rollback hides the first failure's digest and action along
with its own output: only the second digest and action stay visible.

The situation that shows it: two tasks failing one after the other in a turn with
``continueOnFailure`` in ``digest`` or ``exclude_all`` mode. One failure, or two failures
with a successful task between them, roll back exactly as the base.

Why a team would ship it: "reset on commit" is how the write set of a database
transaction behaves, and the tests of ``continueOnFailure`` had one failing task.

Rules broken: SW-030.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Checkpointer, FailurePolicy, MiddlewareRuntime, StrictWriteApp, TaskRun


class CommitOnSuccess(Checkpointer):
    def handle(self, run: TaskRun, nxt: Callable[[Any], Any]) -> Any:
        if run.task is self.app.pipeline[0]:
            self.app.journal.checkpoint()
        result = nxt(run)
        self.app.status(run, "done")
        # --- the bug ---
        # the write set is only reset on success; a failure leaves the handler's own
        # digest and action in it for the next rollback
        self.app.journal.checkpoint()
        return result


class CommitOnSuccessApp(StrictWriteApp):
    task_middlewares = (FailurePolicy, CommitOnSuccess)


class Runtime(MiddlewareRuntime):
    strict_app = CommitOnSuccessApp


def make() -> Runtime:
    return Runtime()
