"""The broken parts of the ``save-policy`` runtime mutants whose break shows
only in a round of several tool calls: results dropped, keyed by tool name,
kept in completion order, or a continuation naming one of several calls
awaiting approval. As :mod:`memconform.mutants.save_policy_executors`, each is
the reference executor with one method overridden; the catalogue is
:mod:`memconform.mutants.save_policy`.
"""

from __future__ import annotations

from collections.abc import Mapping

from memconform.simulator.save_policy import RunState, SavePolicyExecutor
from memconform.values import JSONValue, Message, Role

__all__ = [
    "LastToolResultOnly",
    "SinglePendingContinuation",
    "ToolResultsByName",
    "ToolResultsInCompletionOrder",
]


class LastToolResultOnly(SavePolicyExecutor):
    """A round's tool message keeps only the last of its tool results."""

    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        if role == "tool" and len(parts) > 1:
            parts = parts[-1:]
        return super().new_message(run, role, text, parts)


class SinglePendingContinuation(SavePolicyExecutor):
    """A suspended run's continuation names only the first call awaiting
    approval, so a resume answers that call alone and the others never get an
    approval answer or a result."""

    def suspend(
        self, run: RunState, assistant: Message, calls: list[dict[str, JSONValue]]
    ) -> dict[str, JSONValue]:
        outcome = super().suspend(run, assistant, calls)
        if self.continuation is not None:
            self.continuation.pending = self.continuation.pending[:1]
        continuation = outcome.get("continuation")
        if isinstance(continuation, dict) and isinstance(continuation.get("tool_call_ids"), list):
            continuation["tool_call_ids"] = continuation["tool_call_ids"][:1]
        return outcome


class ToolResultsInCompletionOrder(SavePolicyExecutor):
    """A round's tools run at once and their results are kept as they complete;
    a tool that throws consults its error hook first and so finishes last, its
    result behind the later calls' results."""

    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        if role == "tool" and len(parts) > 1:
            parts = tuple(sorted(parts, key=lambda p: isinstance(p, Mapping) and "error" in p))
            text = "\n".join(self.result_text(p) for p in parts if isinstance(p, Mapping))
        return super().new_message(run, role, text, parts)


class ToolResultsByName(SavePolicyExecutor):
    """A round's tool results are gathered in a map keyed by the tool's name: of
    two calls to one tool, only the last call's result is kept."""

    def new_message(
        self, run: RunState, role: Role, text: str, parts: tuple[JSONValue, ...] = ()
    ) -> Message:
        if role == "tool" and len(parts) > 1:
            by_name: dict[str, JSONValue] = {}
            for part in parts:
                name = part.get("name") if isinstance(part, Mapping) else None
                by_name[str(name)] = part
            parts = tuple(by_name.values())
        return super().new_message(run, role, text, parts)
