"""v02: a failed turn hands its id back to the counter.

The bug: the turn-id assigner gives the id of a turn that settled ``failed`` back to the
counter (when no later turn took a number meanwhile), so that the caller's retry of the
failed turn "keeps the same turn id" in the dashboards. The next turn, whatever it is,
is then opened under the failed turn's id: two turns of one runtime lifetime share T<n>,
their records collide, and the counter no longer follows the order turns open.

The situation that shows it: a turn that fails (every tier of its chain fails, or a tool
throws) followed by another turn in the same runtime. Turns that complete, are refused,
cut or truncated count as before.

Why a team would ship it: their retry path resubmitted the same envelope after a
provider outage, and product asked for one id per user request; tests covered only the
happy path of the counter.

Rules broken: TU-027, TU-010.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import (
    Admission,
    AssistantWriter,
    EventBus,
    FitCheck,
    HistoryWindowLoader,
    MiddlewareRuntime,
    StateLoader,
    Turn,
    TurnIdAssigner,
    TurnRecorder,
    TurnsApp,
    UserMessageWriter,
)


class GiveBackAssigner(TurnIdAssigner):
    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        super().handle(turn, nxt)
        # --- the bug ---
        # a failed turn "will be retried", so its number is returned to the counter
        if (turn.outcome == "failed" and self.settings.turn_ids == "counter"
                and turn.turn_id == f"T{self.counter}"):
            self.counter -= 1
        return turn


class GiveBackApp(TurnsApp):
    turn_middlewares = (
        EventBus, GiveBackAssigner, TurnRecorder, AssistantWriter, Admission,
        UserMessageWriter, HistoryWindowLoader, StateLoader, FitCheck,
    )


class Runtime(MiddlewareRuntime):
    turns_app = GiveBackApp


def make() -> Runtime:
    return Runtime()
