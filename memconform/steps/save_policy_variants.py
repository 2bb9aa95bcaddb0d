"""Then steps of the ``save-policy`` profile comparing the same conversation
under several policies or modes (the ``sp_variants`` fixture;
``features/save-policy/policies.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_bdd import then

from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.save_policy_world import appended_batches, sent_messages, thread_of


def _behaviour(observation: Mapping[str, Any]) -> dict[str, Any]:
    runs = [
        {k: r.get(k) for k in ("outcome", "stage", "reply", "error", "pending_tool_calls")}
        for r in observation["runs"]
    ]
    calls = [
        {k: e.get(k) for k in ("kind", "name", "args", "result", "failed", "response")}
        | ({"sent": sent_messages(e.get("request"))} if e["kind"] == "model" else {})
        for e in observation["timeline"] if e["kind"] in ("model", "tool")
    ]
    return {"runs": runs, "calls": calls, "ledger": observation["ledger"]}


@then("the save-policy run behaves the same under every policy")
@decides("SP-003")
def sp_same_behaviour(sp_variants: dict[str, dict[str, Any]]) -> None:
    """Model calls (with what the model saw), tool runs, outcome, reply and ledger."""
    reference = _behaviour(sp_variants["message"])
    for policy in ("turn", "run"):
        expect_equal(f"behaviour under {policy} compared with message",
                     reference, _behaviour(sp_variants[policy]))


@then("the buffered and streamed save-policy runs persist the same batches")
@decides("SP-029")
def sp_same_batches(sp_variants: dict[str, dict[str, Any]]) -> None:
    """Same batches (roles and texts) and same outcome in both modes."""
    def summary(observation: dict[str, Any]) -> Any:
        return (
            [[(m["role"], m["text"]) for m in b]
             for b in appended_batches(observation, thread_of(observation))],
            [(r["outcome"], r["reply"]) for r in observation["runs"]],
        )
    expect_equal("persisted batches and outcome, streamed vs buffered",
                 summary(sp_variants["buffered"]), summary(sp_variants["streamed"]))


@then("the streamed save-policy run emitted chunk events")
@decides("SP-029")
def sp_chunks(sp_variants: dict[str, dict[str, Any]]) -> None:
    """Streaming is visible as chunk events; buffered runs emit none."""
    def chunks(observation: dict[str, Any]) -> int:
        return sum(1 for e in observation["timeline"]
                   if e["kind"] == "event" and e["name"] == "chunk")
    if chunks(sp_variants["streamed"]) == 0 or chunks(sp_variants["buffered"]) != 0:
        raise Mismatch("chunk events", "some when streamed, none when buffered",
                       f"streamed {chunks(sp_variants['streamed'])}, "
                       f"buffered {chunks(sp_variants['buffered'])}")
