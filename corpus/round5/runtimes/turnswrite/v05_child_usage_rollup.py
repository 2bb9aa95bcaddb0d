"""v05: a child turn's model usage is added to its parent's record.

Bug: when a spawned child settles, the runtime folds the child's usage into the
parent's running totals, so the parent's record reports its own calls plus every
child's (the child's record still has its own usage).

Why it ships: billing dashboards want "what did this request cost", and rolling child
usage up into the root is the obvious way to get it; it only shows for a turn that
spawns a child.

Breaks: TU-012 (a child's usage is on the child's record only; the parent's record
totals only the parent's own calls).
"""

from __future__ import annotations

from .base import TurnsEngine, TurnsWriteRuntime, add_usage


class RollupTurnsEngine(TurnsEngine):
    def on_child_settled(self, parent, child):
        super().on_child_settled(parent, child)
        # --- BUG: the child's usage is rolled up into the parent ---
        add_usage(parent.usage, child.usage)


class Runtime(TurnsWriteRuntime):
    turns_engine = RollupTurnsEngine


def make() -> Runtime:
    return Runtime()
