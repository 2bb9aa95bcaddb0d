"""v10: a later run's model is sent only the text conversation of earlier runs.

Bug: when a new run loads the thread, the runtime "compacts" the history for the
model: it keeps user messages and assistant messages with text, and drops tool
messages together with the assistant tool-call messages (a call without its
result would be rejected by the provider). The run's own new messages are sent
in full, so every single-run test passes; from the second run on, the model no
longer sees earlier tool calls and results that the store holds.

Why a team ships it: token savings, and provider errors on orphaned tool calls
in long histories were "fixed" by stripping tool traffic from history.

Breaks: SP-031 (the model sees the thread's stored history followed by the run's
new messages).
Shows: a run with a tool round, then a later run on the same thread.
"""

from __future__ import annotations

from collections.abc import Mapping

from memconform.values import Message

from .base import BaseRuntime, Run


def _has_tool_call(message: Message) -> bool:
    return any(isinstance(p, Mapping) and p.get("type") == "tool_call" for p in message.parts)


class TextHistoryRun(Run):
    def load_history(self) -> list[Message]:
        history = super().load_history()
        # --- BUG: tool traffic of earlier runs is not sent to the model
        return [m for m in history if m.role != "tool" and not _has_tool_call(m)]
        # --- end of bug


class TextHistoryRuntime(BaseRuntime):
    run_class = TextHistoryRun


def make() -> TextHistoryRuntime:
    return TextHistoryRuntime()
