"""v09: a resumed run stamps its messages with the suspended run's id.

Bug: the runtime regards a resume as "the same run, continued" and stamps the
approval response, the tool result and every later message of the resumed run
with the id of the run that suspended (taken from the continuation), while the
resumed run reports its own fresh run id to the caller, in its outcome and in
its error record. The stored messages no longer carry the id of the run that
made them; a store keyed by run id files them under the earlier run.

Why a team ships it: grouping a suspended run and its resume under one id looks
tidy in a trace viewer; nothing breaks until someone reads messages by run id.

Breaks: SP-030 (every persisted message carries the id of the run that made it).
Shows: any approval followed by a resume (in process or in a fresh one).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from memconform.values import JSONValue, Message, Role

from .base import BaseRuntime, Run


class SameIdResumeRun(Run):
    agent: SameIdResumeRuntime
    stamp: str | None = None

    def message(self, role: Role, text: str, parts: Sequence[JSONValue] = ()) -> Message:
        made = super().message(role, text, parts)
        if self.stamp is None:
            return made
        # --- BUG: the resumed run's messages carry the suspended run's id
        stamped = dataclasses.replace(made, run_id=self.stamp)
        self.new[-1] = stamped
        self.view[-1] = stamped
        return stamped

    def resume(self, answer: Mapping[str, Any]) -> dict[str, JSONValue]:
        given = answer.get("continuation")
        if isinstance(given, Mapping) and given.get("suspended_run"):
            self.stamp = str(given["suspended_run"])
        else:
            self.stamp = self.agent.suspended_run_id
        return super().resume(answer)

    def suspend(self, assistant: Message, calls: list[dict[str, Any]]) -> dict[str, JSONValue]:
        self.agent.suspended_run_id = self.stamp or self.run_id
        return super().suspend(assistant, calls)


class SameIdResumeRuntime(BaseRuntime):
    run_class = SameIdResumeRun
    suspended_run_id: str | None = None


def make() -> SameIdResumeRuntime:
    return SameIdResumeRuntime()
