"""v08: under run, a failed run's messages wait in an outbox and ride along with the next run.

Bug: the run policy keeps an agent-level outbox of unsaved messages so that "no
work is lost". A run that fails (or is cancelled) leaves its messages in the
outbox instead of dropping them, and the next run on the same agent that reaches
a response outcome appends them in front of its own messages, in its one batch.
The failed run's input and partial rounds end up in the thread, and the third
run's model sees them.

Why a team ships it: an outbox for failed writes is a familiar pattern; here it
also catches messages the policy meant to discard. A single-run test, or a
failing run as the script's last, never shows it.

Breaks: SP-011 (a failed run under run appends nothing, the next run's context
holds no trace of it), SP-010 (a run's batch holds exactly its own new messages).
Shows: run policy, several runs on one thread: a run whose model call fails,
then a run that completes, then a third run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memconform.values import JSONValue, Message

from .base import BaseRuntime, Memory, Run


class OutboxMemory(Memory):
    outbox: list[Message]

    def outcome(self, run_messages: Sequence[Message]) -> None:
        if self.policy == "run":
            # --- BUG: earlier failed runs' messages join this run's batch
            batch, self.outbox[:] = [*self.outbox, *run_messages], []
            self.append(batch)
            return
        super().outcome(run_messages)

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        if self.policy == "run":
            self.outcome(run_messages)
            return
        super().suspended(messages, run_messages)


class OutboxRun(Run):
    agent: OutboxRuntime
    memory: OutboxMemory

    def __init__(self, agent: OutboxRuntime, spec: Mapping[str, Any]) -> None:
        super().__init__(agent, spec)
        self.memory.outbox = agent.outbox

    def fail(self, error: dict[str, JSONValue], *, cancelled: bool = False
             ) -> dict[str, JSONValue]:
        if self.agent.policy == "run":
            self.agent.outbox.extend(self.new)  # --- BUG: kept for "later", never dropped
        return super().fail(error, cancelled=cancelled)


class OutboxRuntime(BaseRuntime):
    memory_class = OutboxMemory
    run_class = OutboxRun
    outbox: list[Message]

    def execute(self, script: Mapping[str, Any], env: Any) -> Mapping[str, JSONValue]:
        self.outbox = []
        return super().execute(script, env)


def make() -> OutboxRuntime:
    return OutboxRuntime()
