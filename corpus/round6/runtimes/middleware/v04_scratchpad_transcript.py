"""v04: an unfinished turn's transcript is carried into the next root turn.

The bug: the executor keeps one scratchpad per thread for root turns and clears it when
a turn completes ("the answer is saved, the scratchpad can go"). A root turn that ends
cut, stopped, truncated or failed after a tool round leaves its assistant tool calls and
tool results in the scratchpad, and the next root turn's first model call is sent them
as its current-turn transcript, as if it resumed the earlier loop.

The situation that shows it: a turn that stops (``stop_after_step``) or runs out of
steps after a tool call, or fails at a tool, followed by another root turn on the same
runtime; also a turn started with ``continues_from`` after such a turn. After completed
turns the scratchpad is empty and nothing shows.

Why a team would ship it: clearing on completion was meant to let a user "continue"
after a stop, and every test of the next turn followed a completed one.

Rules broken: TU-022, TU-025.
"""

from __future__ import annotations

from typing import Any

from .base import Executor, MiddlewareRuntime, Turn, TurnsApp


class ScratchpadExecutor(Executor):
    def __init__(self, app: Any) -> None:
        super().__init__(app)
        self.scratchpad: list[dict[str, Any]] = []

    def start(self, turn: Turn) -> None:
        super().start(turn)
        if turn.kind == "root":
            # --- the bug ---
            # the root turn writes into the thread's scratchpad, which only a completed
            # turn clears
            turn.transcript = self.scratchpad

    def finish(self, turn: Turn) -> None:
        if turn.kind == "root" and turn.outcome == "completed":
            self.scratchpad = []


class ScratchpadApp(TurnsApp):
    executor = ScratchpadExecutor


class Runtime(MiddlewareRuntime):
    turns_app = ScratchpadApp


def make() -> Runtime:
    return Runtime()
