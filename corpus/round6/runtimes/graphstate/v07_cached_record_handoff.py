"""v07: the engine trusts its own copy of a record whose progress looks unchanged.

The bug: the runtime object keeps the last record it wrote for each job. At
``load`` it still reads the stored record, but compares only the progress
fingerprint (each step's name and status): when that matches its copy it
works from its copy (with the stored version, so the compare-and-set goes
through). A change another party made to the record's values or blockers
between two steps is not seen, and the next checkpoint overwrites it.

The situation that shows it: a hand-off. The job pauses after a step
(``stop_after``), a person rewrites a value in the stored record through
compare-and-set, and the same runtime object continues the job: the next
step's tool is called with the old value, and the person's edit is gone from
the record afterwards. A resume in a fresh process, or a conflict during a
step, is handled correctly.

Why a team would ship it: records with large discovered values made every
step's decode show up in profiles; "nobody edits values behind the agent's
back, only statuses move" was the assumption.

Rules broken: PS-002.
"""

from __future__ import annotations

import copy
from typing import Any

from corpus.round6.runtimes.graphstate.base import GraphStateRuntime, JobFrame, JobMachine
from memconform.values import StateEntry


def progress(record: Any) -> list[tuple[str, str]]:
    if not isinstance(record, dict):
        return []
    return [(str(s.get("name")), str(s.get("status"))) for s in record.get("steps") or []]


class CachingMachine(JobMachine):
    @property
    def copies(self) -> dict[str, Any]:
        holder = self.runtime if self.runtime is not None else self
        copies: dict[str, Any] = holder.__dict__.setdefault("_record_copies", {})
        return copies

    def load(self, frame: JobFrame) -> str | None:
        following = super().load(frame)
        entry = frame.entry
        mine = self.copies.get(self.scope(frame.job))
        # --- the bug ---
        if entry is not None and mine is not None and progress(mine) == progress(entry.value):
            frame.entry = StateEntry(entry.key, copy.deepcopy(mine), entry.version)
        return following

    def checkpoint(self, node: str, frame: JobFrame) -> None:
        super().checkpoint(node, frame)
        if frame.entry is not None:
            self.copies[self.scope(frame.job)] = copy.deepcopy(frame.entry.value)


class Runtime(GraphStateRuntime):
    job_machine = CachingMachine


def make() -> Runtime:
    return Runtime()
