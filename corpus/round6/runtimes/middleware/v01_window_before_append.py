"""v01: the history window is loaded before the user message is stored.

The bug: the turn chain was reordered so that the history-window loader runs before the
user-message writer (the team wanted the store read to overlap the write in a later
async version). To keep the current message in front of the model, the loader adds the
in-flight envelope to the window itself, after taking the newest N stored messages. The
model then sees N earlier messages plus the current one: N + 1 instead of N.

The situation that shows it: a thread holding at least N messages before the turn (a
second or third turn with a small window, or the default window of six after three
turns). On a short thread the window is not full and both orders show the same history.

Why a team would ship it: every unit test used a fresh thread, where the history is
"everything so far plus the current message" under either order, and the model still
gets the current message in the history and as the brief.

Rules broken: TU-021, TU-016, TU-017.
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


class EagerWindowLoader(HistoryWindowLoader):
    def handle(self, turn: Turn, nxt: Callable[[Any], Any]) -> Any:
        turn.history = [{"role": m.role, "text": m.text} for m in self.load(turn)]
        # --- the bug ---
        # the user message is not stored yet, so the loader appends it by hand: on top of
        # the N stored messages it already took
        if self.settings.window > 0 and turn.kind == "root" and turn.envelope is not None:
            turn.history.append({"role": "user", "text": turn.brief})
        return nxt(turn)


class EagerApp(TurnsApp):
    turn_middlewares = (
        EventBus, TurnIdAssigner, TurnRecorder, AssistantWriter, Admission,
        EagerWindowLoader, UserMessageWriter, StateLoader, FitCheck,
    )


class Runtime(MiddlewareRuntime):
    turns_app = EagerApp


def make() -> Runtime:
    return Runtime()
