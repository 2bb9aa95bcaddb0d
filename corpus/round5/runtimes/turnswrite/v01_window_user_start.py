"""v01: the history window is moved to start on a user message.

Bug: after reading the newest N stored messages, the runtime drops leading assistant
messages so that the prompt "starts with the user", as several chat APIs prefer. The
window then holds fewer than N messages whenever the newest N begin with an answer
(an even window on a thread of complete turns, or any window after another writer's
answer).

Why it ships: providers used to reject conversations that began with an assistant
turn, and "trim to the first user message" is a common prompt-builder helper; with a
window of 6 on a thread of complete turns the newest six begin with a user message, so
the default case never shows it.

Breaks: TU-016 (the window counts single messages and may begin with an assistant
message); with it TU-021 (a window of N shows the current message and N-1 earlier ones).
"""

from __future__ import annotations

from .base import TurnsEngine, TurnsWriteRuntime


class UserStartTurnsEngine(TurnsEngine):
    def select_history(self, turn):
        history = super().select_history(turn)
        # --- BUG: align the window to a user message ---
        while history and history[0].role != "user":
            history = history[1:]
        return history


class Runtime(TurnsWriteRuntime):
    turns_engine = UserStartTurnsEngine


def make() -> Runtime:
    return Runtime()
