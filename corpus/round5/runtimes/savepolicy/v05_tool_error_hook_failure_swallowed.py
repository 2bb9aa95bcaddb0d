"""v05: a tool-error hook that itself throws is treated as "allow".

Bug: the runtime calls user hooks through a "safe" wrapper: when the
``tool_error`` hook raises, the failure is logged and swallowed, and the tool's
error becomes the tool result as if the hook had allowed it. The run goes on,
stores the round and completes, instead of failing with the hook's error and
going down the failure path (run_error hook, record_error).

Why a team ships it: "a buggy user callback must never crash the agent" is a
common defensive default, applied to every hook alike.

Breaks: SP-024 (a failing tool-error hook fails the run with its own error,
recorded like a failure, the round not stored under message), SP-013 (no
record_error for that failed run).
Shows: a throwing tool whose ``tool_error`` hook is scripted to fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memconform.values import JSONValue

from .base import BaseRuntime, Run


class SafeHookRun(Run):
    def tool_error_verdict(self, call: Mapping[str, Any], error: dict[str, JSONValue]
                           ) -> Mapping[str, JSONValue]:
        # --- BUG: a failing hook is swallowed and counts as "allow"
        try:
            return super().tool_error_verdict(call, error)
        except Exception as exc:
            if getattr(exc, "error", None) is None:
                raise
            return {"action": "allow", "text": None}
        # --- end of bug


class SafeHookRuntime(BaseRuntime):
    run_class = SafeHookRun


def make() -> SafeHookRuntime:
    return SafeHookRuntime()
