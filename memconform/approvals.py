"""How the kit reads an approval answer and a denied tool call in a transcript.

Document 000 says nothing about approvals, and the runtimes word them as they
please: the reference writes ``approval approved`` and ``ToolApprovalDenied:
<reason>``, the Anvia runtime stores the answer as a structured part with no
text and a denied call's result as ``Tool execution was denied.``. The kit
therefore judges both by their parts, never by their wording:

- an *approval answer* is a tool message whose every part is a
  ``tool_approval`` part (``call_id``, ``approved``); it is compared as
  ``<approval approved>`` or ``<approval denied>``;
- a *denied result* is a tool message whose every part is a ``tool_result``
  carrying an ``error`` for a call an approval answer denied; it is compared
  as ``<denied>``.

Whether the model is shown the approval answer is the runtime's own affair
(the Anvia runtime sends the model only the tool results), so what the model
was shown is compared without approval answers (:func:`shown_to_model`).
Messages are read as the kit's JSON form or as :class:`~memconform.values.Message`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memconform.values import Message

__all__ = [
    "APPROVED",
    "DENIED",
    "REJECTED",
    "answers_approval",
    "compared_text",
    "denied_calls",
    "shown_to_model",
]

APPROVED = "<approval approved>"
"""How an approval answer that approves is compared."""
REJECTED = "<approval denied>"
"""How an approval answer that denies is compared."""
DENIED = "<denied>"
"""How the result of a denied call is compared."""


def _field(message: Mapping[str, Any] | Message, name: str) -> Any:
    if isinstance(message, Message):
        return getattr(message, name)
    return message.get(name)


def _parts(message: Mapping[str, Any] | Message) -> list[Mapping[str, Any]]:
    parts = _field(message, "parts") or ()
    return [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list | tuple) else []


def answers_approval(message: Mapping[str, Any] | Message) -> bool:
    """Whether ``message`` is an approval answer: a tool message of
    ``tool_approval`` parts only."""
    parts = _parts(message)
    return (_field(message, "role") == "tool" and bool(parts)
            and all(p.get("type") == "tool_approval" for p in parts))


def denied_calls(messages: Iterable[Mapping[str, Any] | Message]) -> set[str]:
    """The ids of the tool calls an approval answer among ``messages`` denied."""
    return {
        str(p.get("call_id")) for m in messages if answers_approval(m)
        for p in _parts(m) if p.get("approved") is False
    }


def compared_text(message: Mapping[str, Any] | Message, denied: Iterable[str] = ()) -> str:
    """The text of ``message`` as the kit compares it: an approval answer and a
    denied call's result by their parts (see the module), any other its text."""
    if answers_approval(message):
        return APPROVED if all(p.get("approved") is True for p in _parts(message)) else REJECTED
    parts, refused = _parts(message), set(denied)
    if (_field(message, "role") == "tool" and parts and all(
            p.get("type") == "tool_result" and "error" in p and str(p.get("call_id")) in refused
            for p in parts)):
        return DENIED
    return str(_field(message, "text"))


def shown_to_model(messages: Iterable[Any]) -> list[Any]:
    """``messages`` (a model request's) without approval answers."""
    return [m for m in messages
            if not (isinstance(m, Mapping | Message) and answers_approval(m))]
