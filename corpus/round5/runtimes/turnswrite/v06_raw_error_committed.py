"""v06: the failed task's raw error is written after the rollback list was taken.

Bug: the rollback hides the writes the task made while it ran, but the raw error
(stack trace, HTTP body) that the error handler stores as ``<task>:error`` is not in
that list, so it stays committed: later model calls see the raw error next to (or, in
``exclude_all``, instead of nothing) the digest.

Why it ships: the rollback is computed from "what the task wrote", and the error capture
is the failure handler's own write, so it looks like it is not the task's; tests that
only check the task's data key is hidden pass.

Breaks: SW-007 (everything the failed task wrote, its raw error included, is marked
uncommitted); SW-006 (nothing uncommitted reaches a model call: here the raw error is
committed and reaches it).
"""

from __future__ import annotations

from .base import StrictWriteEngine, TurnsWriteRuntime
from .digest import raw_error_text


class RawErrorKeptEngine(StrictWriteEngine):
    def write_raw_error(self, step, task_id, error, written):
        self.write(step, task_id, "data", f"{task_id}:error", "set", raw_error_text(error))
        # --- BUG: the raw error is not added to the list that is rolled back ---
        return list(written)


class Runtime(TurnsWriteRuntime):
    strict_engine = RawErrorKeptEngine


def make() -> Runtime:
    return Runtime()
