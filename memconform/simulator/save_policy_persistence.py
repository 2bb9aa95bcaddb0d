"""When a run's messages reach the store: the three save policies of document 000.

A :class:`SavePolicy` is told what happens in a run (input accepted, a round
completed, an answer completed, a response outcome produced, a suspension) and
decides which batches to append, through a :class:`MemoryGateway`. Policies
never change what the run does; they only choose what is persisted and when.

The :class:`MemoryGateway` is the executor's only path to the store. It loads
history, appends batches and records errors; a store that refuses a call
raises :class:`StoreError` through it (the kit injects refusals through the
store it hands the runtime, never through the script).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

from memconform.contract import Capability
from memconform.harness.environment import Environment
from memconform.values import ErrorRecord, Message

__all__ = [
    "POLICY_CLASSES",
    "EarlyToolCallMessagePolicy",
    "MemoryGateway",
    "MessagePolicy",
    "NullPolicy",
    "RunPolicy",
    "SavePolicy",
    "TurnPolicy",
]


class MemoryGateway:
    """The store as one run sees it: one thread."""

    def __init__(self, env: Environment, thread: str) -> None:
        self.env = env
        self.thread = thread

    @property
    def records_errors(self) -> bool:
        """Whether the store declares the optional ``errors`` capability."""
        return self.env.store.has(Capability.ERRORS)

    def load(self) -> list[Message]:
        """The thread's stored history, oldest first."""
        return self.env.store.messages(self.thread)

    def append(self, batch: Sequence[Message]) -> None:
        """Append one batch; an empty batch is not sent at all."""
        if not batch:
            return
        self.env.store.append(self.thread, list(batch))

    def record_error(self, record: ErrorRecord) -> None:
        """Keep one error record (the caller checks :attr:`records_errors`)."""
        self.env.store.record_error(self.thread, record)


class SavePolicy:
    """What to persist at each point of a run. The base class persists nothing;
    each policy overrides the points where it appends.

    Points, in run order: :meth:`input_accepted` (the user input), or for a
    resumed run :meth:`approval_answered` (before the approved tool runs) and
    :meth:`approved_tools_ran` (before the next model call); then
    :meth:`tool_call_made` (before the round's tools run), :meth:`round_completed`
    (the round's assistant tool call and tool result, after the tools ran),
    :meth:`answer_completed` (the final answer after output guardrails, before
    the run-end hook),
    :meth:`response_outcome` (after the run-end hook let the outcome stand) and
    :meth:`suspended` (a tool call waits for approval). A failed or cancelled
    run gets no further call: what was not appended stays unpersisted.
    """

    name: ClassVar[str] = "none"

    def __init__(self, gateway: MemoryGateway) -> None:
        self.gateway = gateway

    def input_accepted(self, messages: Sequence[Message]) -> None:
        """The run's input was accepted (the input guardrail let it pass)."""

    def approval_answered(self, approval: Message) -> None:
        """A resumed run answered a pending approval; the approved tool has not
        run yet."""

    def approved_tools_ran(self, results: Sequence[Message]) -> None:
        """A resumed run's answered tools produced their results; the next model
        call has not happened yet."""

    def tool_call_made(self, assistant: Message) -> None:
        """The model asked for tools; they have not run yet."""

    def round_completed(self, messages: Sequence[Message]) -> None:
        """A tool round completed: its assistant message and tool results."""

    def answer_completed(self, answer: Message) -> None:
        """The final answer passed the output guardrails."""

    def response_outcome(self, run_messages: Sequence[Message]) -> None:
        """The run produced a response outcome (completed or output-blocked)."""

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        """The run stops for approval; ``messages`` are the pending round's."""


class NullPolicy(SavePolicy):
    """Persists nothing: what an unvalidated, unknown policy name does in Anvia."""


class MessagePolicy(SavePolicy):
    """``message``: every completed message batch as soon as it completes."""

    name = "message"

    def input_accepted(self, messages: Sequence[Message]) -> None:
        for message in messages:
            self.gateway.append([message])

    def approval_answered(self, approval: Message) -> None:
        self.gateway.append([approval])

    def approved_tools_ran(self, results: Sequence[Message]) -> None:
        for message in results:
            self.gateway.append([message])

    def round_completed(self, messages: Sequence[Message]) -> None:
        self.gateway.append(messages)

    def answer_completed(self, answer: Message) -> None:
        self.gateway.append([answer])

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        self.gateway.append(messages)


class EarlyToolCallMessagePolicy(MessagePolicy):
    """``message`` as the Anvia ``main`` line does it: the tool call is appended
    before the tools run and the tool result in a batch of its own after."""

    def tool_call_made(self, assistant: Message) -> None:
        self.gateway.append([assistant])

    def round_completed(self, messages: Sequence[Message]) -> None:
        self.gateway.append([m for m in messages if m.role != "assistant"])

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        self.gateway.append([m for m in messages if m.role != "assistant"])


class TurnPolicy(SavePolicy):
    """``turn``: one batch per completed round; the input opens the first round's
    batch, and an unfinished round is dropped."""

    name = "turn"

    def __init__(self, gateway: MemoryGateway) -> None:
        super().__init__(gateway)
        self.pending: list[Message] = []

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        self.gateway.append(batch)

    def input_accepted(self, messages: Sequence[Message]) -> None:
        self.pending.extend(messages)

    def approval_answered(self, approval: Message) -> None:
        self.pending.append(approval)

    def approved_tools_ran(self, results: Sequence[Message]) -> None:
        self.pending.extend(results)
        self._flush()

    def round_completed(self, messages: Sequence[Message]) -> None:
        self.pending.extend(messages)
        self._flush()

    def answer_completed(self, answer: Message) -> None:
        self.pending.append(answer)

    def response_outcome(self, run_messages: Sequence[Message]) -> None:
        self._flush()

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        self.pending.extend(messages)
        self._flush()


class RunPolicy(SavePolicy):
    """``run``: one batch of every new message once a response outcome exists.

    The batch is appended in the run's last round and every message of it carries
    that round, as the Anvia runtime's one ``turn`` per append stamps it."""

    name = "run"

    def _append_run(self, run_messages: Sequence[Message]) -> None:
        last = run_messages[-1].round if run_messages else None
        self.gateway.append([replace(m, round=last) for m in run_messages])

    def response_outcome(self, run_messages: Sequence[Message]) -> None:
        self._append_run(run_messages)

    def suspended(self, messages: Sequence[Message], run_messages: Sequence[Message]) -> None:
        self._append_run(run_messages)


POLICY_CLASSES: dict[str, type[SavePolicy]] = {
    "message": MessagePolicy,
    "turn": TurnPolicy,
    "run": RunPolicy,
}
"""The policy class for each policy name of document 000."""
