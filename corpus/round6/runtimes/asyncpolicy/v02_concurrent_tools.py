"""v02: a round's tools run concurrently and their results are kept in completion order.

The bug: to speed up rounds with several tool calls, ``run_tools`` starts one
task per call with ``asyncio.gather`` and collects each result as its task
finishes. A tool that throws consults the tool-error hook off the event loop
(``asyncio.to_thread``), so its result finishes after the results of the calls
behind it. The tool message then holds its results (and its text lines) in
completion order, not call order; and a call behind a terminated one has
already run.

Situation that shows it: one round with two or more tool calls where an
earlier call throws (the tool-error hook allows it, or is unscripted): the
stored tool message lists the failing call's ``ToolCallError`` result after the
later calls' results. With a single tool call, or when no tool throws, nothing
changes.

Why a team would ship it: parallel tools are a common optimisation, the result
parts carry their ``call_id`` so "order does not matter", and tests usually
have one tool per round or no failing tool.

Rules broken: SP-006, SP-023.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from corpus.round6.runtimes.asyncpolicy.base import (
    Agent,
    AsyncPolicyRuntime,
    RunCancelled,
    RunState,
    error_of,
)
from memconform.harness.environment import ScriptedFailure
from memconform.values import JSONValue


class ParallelToolsAgent(Agent):
    async def run_tools(self, run: RunState,
                        calls: Sequence[Mapping[str, Any]]) -> list[dict[str, JSONValue]]:
        finished: list[dict[str, JSONValue]] = []
        ended: list[BaseException] = []

        async def one(call: Mapping[str, Any]) -> None:
            part: dict[str, JSONValue] = {"type": "tool_result", "call_id": call["id"],
                                          "name": call["name"]}
            try:
                part["result"] = self.env.tool(call["name"], call["args"], call["id"])
            except ScriptedFailure as exc:
                try:
                    verdict = await asyncio.to_thread(
                        self.env.hook, "tool_error",
                        {"run_id": run.id, "tool": call["name"], "call_id": call["id"],
                         "error": error_of(exc)})
                except ScriptedFailure as hook_failure:
                    ended.append(hook_failure)
                    return
                if verdict.get("action") == "terminate":
                    reason = verdict.get("text") or f"the tool-error hook terminated {call['name']}"
                    ended.append(RunCancelled({"type": "RunCancelledError", "message": str(reason),
                                               "tool": call["name"]}))
                    return
                part["error"] = f"ToolCallError: {exc}"
            # --- the bug ---
            # results are kept as their tasks finish, not in the order of the calls
            finished.append(part)

        await asyncio.gather(*(one(call) for call in calls))
        if ended:
            raise ended[0]
        return finished


class ParallelToolsRuntime(AsyncPolicyRuntime):
    agent_class = ParallelToolsAgent


def make() -> ParallelToolsRuntime:
    return ParallelToolsRuntime()
