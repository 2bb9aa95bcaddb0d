"""v07: under turn, a streamed answer is saved when the stream finishes.

Bug: the streaming path has its own ``on_finish`` callback, and under turn it
flushes the round buffer (input or last round, plus the answer) as soon as the
streamed answer is complete, before the run-end hook runs. Buffered runs flush
only once the run-end hook let the outcome stand. With no hook acting the
batches are identical, so every streaming test passes; when the run-end hook
cancels (or fails) a streamed turn run keeps the answer a buffered one drops.

Why a team ships it: the stream's finish event is the natural place to persist
a streamed reply; the turn policy's "final round completes after run_end" is a
subtle ordering.

Breaks: SP-029 (a streamed run persists the same as buffered), SP-009 (the
answer of a run the run-end hook cancels is not appended under turn), SP-032.
Shows: turn policy, ``stream: true``, ``hooks.run_end`` = cancel.
"""

from __future__ import annotations

from memconform.values import Message

from .base import BaseRuntime, Run


class StreamFinishRun(Run):
    def answer_ready(self, message: Message) -> None:
        super().answer_ready(message)
        # --- BUG: the stream's on_finish persists the turn buffer before run_end
        if self.streaming() and self.agent.policy == "turn":
            self.memory.flush()
        # --- end of bug


class StreamFinishRuntime(BaseRuntime):
    run_class = StreamFinishRun


def make() -> StreamFinishRuntime:
    return StreamFinishRuntime()
