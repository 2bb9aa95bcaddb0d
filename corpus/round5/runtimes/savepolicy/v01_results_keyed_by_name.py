"""v01: a round's tool results are collected in a map keyed by tool name.

Bug: when the model asks for the same tool twice in one round (two ``search``
calls with different arguments), both tools run, but the results are gathered
in a dict keyed by the tool's *name*, so the second result overwrites the
first. The stored tool message then holds one ``tool_result`` for two
``tool_call`` parts: the first call is stored without its result.

Why a team ships it: several provider SDKs hand tool outputs back as
``{name: output}`` and most test rounds call distinct tools; a round with two
calls to the same tool is rare in a casual test.

Breaks: SP-025 (a stored tool call without its result in the batch), SP-006
(the tool message does not hold the round's results).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memconform.values import JSONValue

from .base import BaseRuntime, Run


class KeyedResultsRun(Run):
    def run_tools(self, calls: Sequence[Mapping[str, Any]]) -> list[dict[str, JSONValue]]:
        # --- BUG: results keyed by tool name; a repeated tool overwrites the first result
        by_name: dict[str, dict[str, JSONValue]] = {}
        for call in calls:
            by_name[str(call["name"])] = self.tool(call)
        return list(by_name.values())
        # --- end of bug


class KeyedResultsRuntime(BaseRuntime):
    run_class = KeyedResultsRun


def make() -> KeyedResultsRuntime:
    return KeyedResultsRuntime()
