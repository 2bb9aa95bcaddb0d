"""v03: a resume in a fresh process rebuilds the context from the suspended run only.

Bug: when a resume arrives on a fresh instance (no in-memory continuation), the
runtime reads the thread, picks the suspended run's messages to find the pending
calls, and reuses that same filtered list as the model's context. Everything the
thread held before the suspended run (earlier runs) vanishes from what the
resumed model call sees. In-process resumes keep the full view, so they pass.

Why a team ships it: the continuation lookup is written as "messages of run X",
and the test of resume-after-restart uses a thread whose first run suspends.

Breaks: SP-028 (the resumed model does not see the suspended run's context),
SP-031 (what the model sees is not the stored history plus the run's messages).
Shows: a completed run, then a run that suspends, resumed in a fresh process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memconform.values import Message

from .base import BaseRuntime, Run


class OwnRunContextRun(Run):
    def from_store(self, given: Mapping[str, Any]) -> tuple[list[Message], list[Any]]:
        view, pending = super().from_store(given)
        # --- BUG: the context is only the suspended run's own messages
        view = [m for m in view if m.run_id == given.get("suspended_run")]
        # --- end of bug
        return view, pending


class OwnRunContextRuntime(BaseRuntime):
    run_class = OwnRunContextRun


def make() -> OwnRunContextRuntime:
    return OwnRunContextRuntime()
