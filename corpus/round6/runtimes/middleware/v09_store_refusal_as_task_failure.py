"""v09: a store refusal is handled as an ordinary task failure.

The bug: the failure-policy middleware catches ``StoreError`` along with the scripted
task failures and sends it down the same path: a raw error, the rollback, a digest
("Task '...' failed: <store message>") and the ``task_failed_<task>`` action. Under
``continueOnFailure`` the pipeline then goes on, later tasks run and the turn ends
``READY`` with a reply, although the store never kept what the task wrote.

The situation that shows it: the store refusing an append of a task's write (a full
disk, a constraint, a lost connection) with strict write on and ``continueOnFailure``.
Without ``continueOnFailure`` the turn still stops in ``ERROR``, as the base does.

Why a team would ship it: one error path for everything looked simpler, and a store
error "is just another failure the model can explain".

Rules broken: SW-033.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.contract import StoreError
from memconform.harness.environment import ScriptedFailure

from .base import FailurePolicy, MiddlewareRuntime, StrictWriteApp, TaskRun


class CatchAllFailurePolicy(FailurePolicy):
    def handle(self, run: TaskRun, nxt: Callable[[Any], Any]) -> Any:
        try:
            return super().handle(run, nxt)
        except StoreError as exc:
            # --- the bug ---
            # the refusal becomes a task failure, and continueOnFailure goes on
            if any(t["task"] == run.task["id"] for t in run.turn.tasks):
                raise
            failure = ScriptedFailure({"type": "StoreError", "message": str(exc)})
            self.app.status(run, "failed")
            self.fail(run, failure)
            if not self.app.policy.continues:
                self.app.stop(run.turn)
            return None


class CatchAllApp(StrictWriteApp):
    task_middlewares = (CatchAllFailurePolicy, *StrictWriteApp.task_middlewares[1:])


class Runtime(MiddlewareRuntime):
    strict_app = CatchAllApp


def make() -> Runtime:
    return Runtime()
