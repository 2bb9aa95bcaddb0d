"""v09: a refused ``set_committed`` is logged and the turn goes on.

Bug: hiding the failed task's writes is treated as best effort: when the store refuses
``set_committed`` (``StoreError``) the runtime swallows it and carries on as if the
writes were hidden: it records the digest and action and, under ``continueOnFailure``,
runs the remaining tasks, whose model sees the failed output.

Why it ships: "the rollback is cosmetic, don't fail the user's turn over it" is a
common stance towards a secondary write, and stores rarely refuse; only an injected
refusal shows it.

Breaks: SW-043 (when the store refuses the hiding, no later task runs and the turn ends in
``ERROR``).
"""

from __future__ import annotations

import logging

from memconform.contract import StoreError

from .base import StrictWriteEngine, TurnsWriteRuntime

log = logging.getLogger(__name__)


class BestEffortHideEngine(StrictWriteEngine):
    def hide(self, ids):
        try:
            super().hide(ids)
        except StoreError as exc:
            # --- BUG: a refused rollback is only logged ---
            log.warning("could not hide failed writes %s: %s", ids, exc)


class Runtime(TurnsWriteRuntime):
    strict_engine = BestEffortHideEngine


def make() -> Runtime:
    return Runtime()
