"""v03: a child's model usage is charged to its parent as well.

The bug: the usage-accounting middleware of the model-call chain charges an answered
call to the turn that made it and to every turn above it in the spawn tree, because the
team wanted a root's record to show "what this request cost". The child's record is
right, but the parent's record now totals the child's usage on top of its own, so the
usage of the whole tree is counted twice when records are summed.

The situation that shows it: a root turn that spawns a child turn whose model calls
report usage. Turns without children record the same usage as the base.

Why a team would ship it: the roll-up looked like a feature in the cost dashboard, and
no test compared the sum of all records with the model's own usage.

Rules broken: TU-012.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import (
    MiddlewareRuntime,
    ModelCall,
    TierFallback,
    TurnsApp,
    UsageAccounting,
    ViewBuilder,
    add_usage,
)


class RollUpUsage(UsageAccounting):
    def charge(self, call: ModelCall, usage: Mapping[str, Any]) -> None:
        # --- the bug ---
        # the answer is charged up the spawn tree: the child and each of its parents
        turn = call.turn
        while turn is not None:
            add_usage(turn.usage, usage)
            turn = turn.parent


class RollUpApp(TurnsApp):
    model_middlewares = (TierFallback, ViewBuilder, RollUpUsage)


class Runtime(MiddlewareRuntime):
    turns_app = RollUpApp


def make() -> Runtime:
    return Runtime()
