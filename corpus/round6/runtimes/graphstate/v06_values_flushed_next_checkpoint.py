"""v06: the values a step discovers reach the record with the next step's checkpoint.

The bug: the ``settle`` node folds a step's status and marks into the record
at once, but stages the values named in the step's ``record`` mapping in the
machine's memory; they are written with the following step's checkpoint (the
last step writes its own at once). Inside one process nothing is lost:
``bind`` fills arguments from the record plus the staged values.

The situation that shows it: a job killed right after the step that
discovered a value a later step needs (the step's record write done, the next
step not started), then resumed from the store in a fresh process: the record
marks the step done but lacks the value, so the resumed job blocks on it
instead of running the remaining steps.

Why a team would ship it: the checkpoint reducer was written to batch "cheap"
status changes and "bulky" values into alternate writes to keep the record
writes small; every uninterrupted run ends with a complete record.

Rules broken: PS-005, PS-009, PS-007.
"""

from __future__ import annotations

import copy
from typing import Any

from corpus.round6.runtimes.graphstate.base import (
    Change,
    GraphStateRuntime,
    JobFrame,
    JobMachine,
    dig,
)
from memconform.values import JSONValue


class StagingMachine(JobMachine):
    def __init__(self, script: Any, env: Any, runtime: Any = None) -> None:
        super().__init__(script, env, runtime)
        self.staged: dict[str, dict[str, JSONValue]] = {}

    def known_values(self, frame: JobFrame) -> dict[str, JSONValue]:
        return {**dict(frame.record.get("values") or {}), **self.staged.get(frame.job, {})}

    def settle(self, frame: JobFrame) -> str | None:
        following = super().settle(frame)
        if frame.failure is None:
            frame.change = self.staged_completion(frame)
        return following

    def staged_completion(self, frame: JobFrame) -> Change:
        index, result, job = frame.index, frame.result, frame.job
        last = index == len(frame.record["steps"]) - 1
        found: dict[str, JSONValue] = {}
        for name, path in (frame.step.get("record") or {}).items():
            ok, value = dig(result, str(path))
            if ok:
                found[name] = value
        # --- the bug ---
        carried = self.staged.pop(job, {})
        if last:
            carried.update(found)
        else:
            self.staged[job] = found  # written with the next step's checkpoint

        def complete(record: dict[str, Any]) -> None:
            step = record["steps"][index]
            values = record.setdefault("values", {})
            values.update(copy.deepcopy(carried))
            values.update(copy.deepcopy(step.get("marks") or {}))
            step["status"] = "done"
            step.pop("error", None)
            record["blocked"] = None

        return complete


class Runtime(GraphStateRuntime):
    job_machine = StagingMachine


def make() -> Runtime:
    return Runtime()
