"""v10: the streaming ``task_failed`` event is sent in ``exclude_all`` mode too.

The bug: the failure policy streams the ``task_failed`` event before it decides what
the caller is told, so a streaming turn reports the failure, with its digest text and
reason, even in ``exclude_all`` mode, where nobody may learn of it from the runtime. The
``taskErrors`` entry and memory are right: no digest, no entry, only the action.

The situation that shows it: a streaming turn in ``exclude_all`` mode whose task fails.
Non-streaming turns, and streaming turns in the other modes, behave as the base.

Why a team would ship it: the stream was treated as a log channel for the front end,
and ``exclude_all`` was tested without streaming.

Rules broken: SW-012.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import FailurePolicy, MiddlewareRuntime, StrictWriteApp, TaskRun


class EagerStreamPolicy(FailurePolicy):
    def tell_caller(self, run: TaskRun, entry: dict[str, Any], error: Mapping[str, Any]) -> None:
        # --- the bug ---
        # the stream hears of every failure, before the mode is consulted
        self.stream(run, entry, error)
        if self.app.policy.mode == "exclude_all":
            return
        run.turn.task_errors.append(entry)


class EagerStreamApp(StrictWriteApp):
    task_middlewares = (EagerStreamPolicy, *StrictWriteApp.task_middlewares[1:])


class Runtime(MiddlewareRuntime):
    strict_app = EagerStreamApp


def make() -> Runtime:
    return Runtime()
