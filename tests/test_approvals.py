"""How the kit reads approval answers and denied calls (memconform/approvals.py):
by their parts, whatever the runtime's wording."""

from __future__ import annotations

from memconform.approvals import (
    APPROVED,
    DENIED,
    REJECTED,
    answers_approval,
    compared_text,
    denied_calls,
    shown_to_model,
)
from memconform.values import Message


def _answer(approved: bool, text: str = "") -> dict[str, object]:
    return {"role": "tool", "text": text,
            "parts": [{"type": "tool_approval", "call_id": "c1", "approved": approved}]}


def _denied(text: str) -> dict[str, object]:
    return {"role": "tool", "text": text,
            "parts": [{"type": "tool_result", "call_id": "c1", "name": "mail", "error": text}]}


def test_an_approval_answer_is_read_by_its_part_whatever_its_text() -> None:
    for text in ("approval approved", "", "ok!"):
        assert compared_text(_answer(True, text)) == APPROVED
    assert compared_text(_answer(False, "approval denied: no")) == REJECTED


def test_a_denied_calls_result_is_read_as_denied_whatever_its_wording() -> None:
    messages = [_answer(False), _denied("Tool execution was denied.")]
    denied = denied_calls(messages)
    assert denied == {"c1"}
    assert compared_text(_denied("Tool execution was denied."), denied) == DENIED
    assert compared_text(_denied("ToolApprovalDenied: not today"), denied) == DENIED


def test_a_failed_result_of_a_call_nobody_denied_keeps_its_text() -> None:
    assert compared_text(_denied("ToolCallError: boom")) == "ToolCallError: boom"


def test_an_answer_without_its_part_is_text_like_any_message() -> None:
    message = {"role": "tool", "text": "approval approved", "parts": []}
    assert not answers_approval(message)
    assert compared_text(message) == "approval approved"


def test_what_the_model_was_shown_leaves_approval_answers_out() -> None:
    user = {"role": "user", "text": "hi", "parts": []}
    result = {"role": "tool", "text": "sent", "parts": [
        {"type": "tool_result", "call_id": "c1", "name": "mail", "result": "sent"}]}
    assert shown_to_model([user, _answer(True), result]) == [user, result]


def test_stored_messages_are_read_the_same_way() -> None:
    stored = Message(id="m1", role="tool", text="",
                     parts=({"type": "tool_approval", "call_id": "c1", "approved": True},))
    assert answers_approval(stored)
    assert compared_text(stored) == APPROVED
