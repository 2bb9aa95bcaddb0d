"""v08: the continuation of a suspended run names only its first pending call.

The bug: the continuation a suspended run hands its caller was designed when a
round could hold one approval: ``{"run_id", "tool_call_id"}``, the first
pending call. A resume answers that call only; any other call of the round
that awaited approval stays without an answer and without a result, and the
run goes on to the model as if the round were complete.

Situation that shows it: one round with two (or more) tool calls that need
approval, then a resume. Only the first approved tool runs and is stored; the
second call never gets its approval response or result, neither in the store
nor in the model's context. A single pending call resumes correctly.

Why a team would ship it: approval tests almost always have one risky tool per
round, and the continuation looked simpler with one id.

Rules broken: SP-028, SP-025.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from corpus.round6.runtimes.asyncpolicy.base import Agent, AsyncPolicyRuntime, RunState
from memconform.values import JSONValue, Message


class SinglePendingAgent(Agent):
    def continuation_of(self, run: RunState,
                        pending: Sequence[Mapping[str, Any]]) -> dict[str, JSONValue]:
        # --- the bug ---
        # only the first pending call is handed back to the caller
        return {"run_id": run.id, "tool_call_id": str(pending[0]["id"])}

    def pending_calls(self, stored: Sequence[Message],
                      continuation: Mapping[str, Any]) -> list[dict[str, JSONValue]]:
        wanted = continuation.get("tool_call_id")
        ids = [wanted] if wanted is not None else continuation.get("tool_call_ids")
        return super().pending_calls(stored, {**continuation, "tool_call_ids": ids})


class SinglePendingRuntime(AsyncPolicyRuntime):
    agent_class = SinglePendingAgent


def make() -> SinglePendingRuntime:
    return SinglePendingRuntime()
