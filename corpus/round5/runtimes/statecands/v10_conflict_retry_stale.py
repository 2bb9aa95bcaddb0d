"""v10: on a compare-and-set conflict the record is retried with a fresh version, stale content.

The bug: when the record write conflicts (another writer changed it while the
step's tool ran) the agent re-reads only the version and writes its own,
already-changed copy again under that version. The write succeeds, and the
other writer's change is silently overwritten: the classic lost update.

Why a team ships it: "on conflict, refresh the version and retry" is how many
retry helpers are written, and without a concurrent writer the path never
runs.

Breaks PS-032 (the step's results must be applied to the newer record so that
neither change is lost).
"""

from __future__ import annotations

import copy

from corpus.round5.runtimes.statecands.base import StateAgent, StateCandsRuntime
from memconform.contract import ConflictError


class VersionOnlyRetryAgent(StateAgent):
    def update(self, job_id, entry, change):
        record = copy.deepcopy(entry.value)
        change(record)
        try:
            return self.save_record(job_id, record, entry.version)
        except ConflictError:
            fresh = self.load_record(job_id)
            if fresh is None:
                raise
            # BUG: only the version is refreshed; the newer record's content is dropped
            return self.save_record(job_id, record, fresh.version)


class ConflictRetryStaleRuntime(StateCandsRuntime):
    agent_class = VersionOnlyRetryAgent


def make() -> ConflictRetryStaleRuntime:
    return ConflictRetryStaleRuntime()
