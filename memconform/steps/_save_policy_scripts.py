"""Scripts for the ``save-policy`` scenarios: the standard conversation and the
failure points a run can meet.

The standard conversation is one tool round followed by a final answer: the
user asks, the model calls ``notify_customer`` (whose effect is an e-mail, a
side effect no save policy can undo), the tool answers, the model answers. The
script also offers the compensating tool ``undo_notify_customer``: no run may
ever call it.
:data:`FAILURE_POINTS` names each place a run can fail (or be blocked from
failing) and how the script makes it happen; a store refusal is not in the
script: :func:`store_refusals` says which calls the store the kit hands the
runtime refuses (:func:`refusing_store`). :data:`EXPECTED` gives, for each
failure point and policy, the batches the store must receive, the run's outcome,
the caller's error type and the roles ``record_error`` receives.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memconform.harness.faults import RefusingStore

__all__ = [
    "ANSWER",
    "EFFECT",
    "EXPECTED",
    "FAILURE_POINTS",
    "PROMPT",
    "TOOL",
    "UNDO_TOOL",
    "Expectation",
    "StoreRefusals",
    "apply_failure_point",
    "base_script",
    "batches_text",
    "refusing_store",
    "store_refusals",
]

PROMPT = "Please tell the customer that order A-1 ships on Monday."
TOOL = "notify_customer"
EFFECT = "e-mail sent to the customer about order A-1"
ANSWER = "The customer has been told that order A-1 ships on Monday."
UNDO_TOOL = "undo_" + TOOL
"""The compensating tool the script offers; calling it would undo the effect."""


def base_script(thread: str, policy: str | None) -> dict[str, Any]:
    """The standard conversation on ``thread`` (``policy`` ``None``: none configured)."""
    script: dict[str, Any] = {
        "schema": "memconform.script/1",
        "profile": "save-policy",
        "thread": thread,
        "runs": [{"input": PROMPT}],
        "model": {
            "agent": [
                {"reply": "", "tool_calls": [
                    {"id": "call-notify", "name": TOOL, "args": {"order": "A-1"}},
                ]},
                {"reply": ANSWER},
            ]
        },
        "tools": {
            TOOL: {"result": "notified", "effect": EFFECT},
            UNDO_TOOL: {"result": "retracted", "effect": "e-mail retracting the notice"},
        },
        "hooks": {},
    }
    if policy is not None:
        script["save_policy"] = policy
    return script


def _error(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "message": message, **extra}


def _hook(name: str, outcome: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def apply(script: dict[str, Any]) -> None:
        script["hooks"][name] = outcome
    return apply


def _model_fails(call: int) -> Callable[[dict[str, Any]], None]:
    def apply(script: dict[str, Any]) -> None:
        script["model"]["agent"][call - 1] = {
            "fail": _error("ModelError", f"model call {call} failed", status=400)
        }
        del script["model"]["agent"][call:]
    return apply


def _tool_throws(then: dict[str, Any] | None) -> Callable[[dict[str, Any]], None]:
    def apply(script: dict[str, Any]) -> None:
        script["tools"][TOOL] = {
            "fail": _error("MailError", "mail server said no"), "effect": EFFECT
        }
        if then is not None:
            script["hooks"]["tool_error"] = then
    return apply


def _cancel(call: int) -> Callable[[dict[str, Any]], None]:
    def apply(script: dict[str, Any]) -> None:
        script["runs"][0]["cancel_before_model_call"] = call
    return apply


def _both(
    first: Callable[[dict[str, Any]], None], second: Callable[[dict[str, Any]], None]
) -> Callable[[dict[str, Any]], None]:
    def apply(script: dict[str, Any]) -> None:
        first(script)
        second(script)
    return apply


@dataclass(frozen=True)
class StoreRefusals:
    """Store calls the kit makes fail: the ``append`` calls numbered in
    ``appends`` (1-based, over the whole script) and every call of ``methods``."""

    appends: frozenset[int] = frozenset()
    methods: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.appends or self.methods)


_LAST_APPEND = {"message": 3, "turn": 2, "run": 1}


def store_refusals(point: str, policy: str | None) -> StoreRefusals:
    """What the store refuses for the failure ``point`` under ``policy``
    (``None``: the default, message)."""
    if point == "first append":
        return StoreRefusals(appends=frozenset({1}))
    if point == "last append":
        return StoreRefusals(appends=frozenset({_LAST_APPEND[policy or "message"]}))
    if point == "record_error":
        return StoreRefusals(methods=frozenset({"record_error"}))
    return StoreRefusals()


def refusing_store(store: object, refusals: StoreRefusals) -> object:
    """``store`` as the kit hands it to the runtime: refusing ``refusals``."""
    if not refusals:
        return store
    return RefusingStore(store, appends=refusals.appends, methods=refusals.methods)


FAILURE_POINTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "none": lambda script: None,
    "input guardrail": _hook("input_guardrail", {"fail": _error("GuardrailError", "guard down")}),
    "first model call": _model_fails(1),
    "tool": _tool_throws(None),
    "tool-error hook terminate": _tool_throws(
        {"action": "terminate", "text": "mail must not be retried"}
    ),
    "tool-error hook": _tool_throws({"fail": _error("HookError", "tool-error hook broke")}),
    "later model call": _model_fails(2),
    "output guardrail": _hook("output_guardrail", {"fail": _error("GuardrailError", "guard down")}),
    "run-end hook": _hook("run_end", {"fail": _error("HookError", "run-end hook broke")}),
    "run-end cancel": _hook("run_end", {"action": "cancel"}),
    "cancellation": _cancel(2),
    "first append": lambda script: None,
    "last append": lambda script: None,
    "record_error": _model_fails(2),
    "run_error hook": _both(
        _model_fails(2), _hook("run_error", {"fail": _error("HookError", "run_error hook broke")})
    ),
}
"""How the script makes a run meet each failure point ("none" and "tool" do not
fail the run: a tool that throws becomes the tool result; "run_error hook" is a
later model call failing whose ``run_error`` hook then fails too). The store's own
refusals (``first append``, ``last append``, ``record_error``) come from the
store the kit hands the runtime (:func:`store_refusals`)."""


def apply_failure_point(script: dict[str, Any], point: str) -> dict[str, Any]:
    """``script`` changed so that its run meets ``point``; ``KeyError`` lists the names."""
    if point not in FAILURE_POINTS:
        raise KeyError(f"unknown failure point {point!r}; known: {', '.join(FAILURE_POINTS)}")
    changed = copy.deepcopy(script)
    FAILURE_POINTS[point](changed)
    return changed


@dataclass(frozen=True)
class Expectation:
    """What one failure point under one policy must leave behind."""

    batches: str
    outcome: str
    error: str | None
    recorded: str | None


_U, _UAT = "[user]", "[user] [assistant,tool]"
_ALL = "user,assistant,tool,assistant"


def _row(
    message: str, turn: str, run: str, outcome: str, error: str | None,
    recorded: str | tuple[str, str, str] | None,
) -> dict[str, Expectation]:
    per = recorded if isinstance(recorded, tuple) else (recorded, recorded, recorded)
    return {
        "message": Expectation(message, outcome, error, per[0]),
        "turn": Expectation(turn, outcome, error, per[1]),
        "run": Expectation(run, outcome, error, per[2]),
    }


_GOLDEN = ("[user] [assistant,tool] [assistant]", "[user,assistant,tool] [assistant]",
           "[user,assistant,tool,assistant]")

EXPECTED: dict[str, dict[str, Expectation]] = {
    "none": _row(*_GOLDEN, "completed", None, None),
    "input guardrail": _row("none", "none", "none", "failed", "GuardrailError", "user"),
    "first model call": _row(_U, "none", "none", "failed", "ModelError", "user"),
    "tool": _row(*_GOLDEN, "completed", None, None),
    "tool-error hook terminate": _row(
        _U, "none", "none", "cancelled", "RunCancelledError", "user,assistant"
    ),
    "tool-error hook": _row(_U, "none", "none", "failed", "HookError", "user,assistant"),
    "later model call": _row(
        _UAT, "[user,assistant,tool]", "none", "failed", "ModelError", "user,assistant,tool"
    ),
    "output guardrail": _row(
        _UAT, "[user,assistant,tool]", "none", "failed", "GuardrailError", _ALL
    ),
    "run-end hook": _row(
        _GOLDEN[0], "[user,assistant,tool]", "none", "failed", "HookError", _ALL
    ),
    "run-end cancel": _row(
        _GOLDEN[0], "[user,assistant,tool]", "none", "cancelled", "RunCancelledError", _ALL
    ),
    "cancellation": _row(
        _UAT, "[user,assistant,tool]", "none", "cancelled", "RunCancelledError",
        "user,assistant,tool",
    ),
    "first append": _row(
        "none", "none", "none", "failed", "StoreError", ("user", "user,assistant,tool", _ALL)
    ),
    "last append": _row(_UAT, "[user,assistant,tool]", "none", "failed", "StoreError", _ALL),
    "record_error": _row(
        _UAT, "[user,assistant,tool]", "none", "failed", "ModelError", "user,assistant,tool"
    ),
    "run_error hook": _row(
        _UAT, "[user,assistant,tool]", "none", "failed", "ModelError", "user,assistant,tool"
    ),
}
"""Per failure point and policy: batches appended (roles per batch, ``none`` for
no append), outcome, the caller's error type and the roles of the messages
``record_error`` receives (``None``: never called; ``""``: called with none)."""


def batches_text(batches: list[list[str]]) -> str:
    """Batches of roles as the scenarios write them: ``[user] [assistant,tool]``."""
    if not batches:
        return "none"
    return " ".join("[" + ",".join(batch) + "]" for batch in batches)
