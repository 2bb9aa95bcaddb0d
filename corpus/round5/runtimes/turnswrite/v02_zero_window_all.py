"""v02: a history window of zero is read as "no limit".

Bug: the window is passed to the store as ``limit=self.window or None``; ``0`` is falsy,
so a window of zero asks the store for the whole thread and the model sees every stored
message.

Why it ships: ``x or None`` is the idiomatic way to turn an "unset" config into "no
limit", and nobody configures a zero window in the default tests; it only shows for an
agent deliberately run without history.

Breaks: TU-018 (a window of zero shows the model no stored conversation history).
"""

from __future__ import annotations

from .base import TurnsEngine, TurnsWriteRuntime


class ZeroIsAllTurnsEngine(TurnsEngine):
    def select_history(self, turn):
        # --- BUG: 0 is falsy, so a zero window becomes "everything" ---
        return self.env.store.messages(self.thread, self.window or None)


class Runtime(TurnsWriteRuntime):
    turns_engine = ZeroIsAllTurnsEngine


def make() -> Runtime:
    return Runtime()
