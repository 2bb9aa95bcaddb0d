"""v06: a step's marks go into an "in progress" checkpoint written before its tool runs.

The bug: before a step's tool is called the agent writes an intent checkpoint
(status ``running``) so a dashboard shows what is happening, and to make the
dashboard useful it includes the markers the step declares (``deployed:
true``). The completion write rewrites the record with the same marks, so on
success nothing looks wrong; when the tool fails, ``fail_step`` only sets the
status and the error, and the marker that the step never established stays in
the record.

Why a team ships it: write-ahead "intent" records are a common crash-safety
idiom, and the happy path ends in exactly the same record. Steps without
``marks`` are not affected at all.

Breaks PS-003 (a result written before the tool was called; a failing step
leaves its results in the record).
"""

from __future__ import annotations

import copy

from corpus.round5.runtimes.statecands.base import StateAgent, StateCandsRuntime


class IntentCheckpointAgent(StateAgent):
    def before_tool(self, job_id, entry, index):
        marks = entry.value["steps"][index].get("marks") or {}
        if not marks:
            return entry

        def change(record):
            record["steps"][index]["status"] = "running"
            # BUG: the step's declared markers are written before the tool ran
            record.setdefault("values", {}).update(copy.deepcopy(marks))

        return self.update(job_id, entry, change)


class MarksBeforeToolRuntime(StateCandsRuntime):
    agent_class = IntentCheckpointAgent


def make() -> MarksBeforeToolRuntime:
    return MarksBeforeToolRuntime()
