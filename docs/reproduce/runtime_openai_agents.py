"""OpenAI Agents SDK as a runtime: the runtime page's findings, reproduced with
the SDK alone (``pip install openai-agents``), offline, with the SDK's own
scripted model (``agents.testing.ScriptedModel``) and an in-memory session.

Run ``python runtime_openai_agents.py``: each check prints ``<rule> reproduced:
...`` and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool
from agents.memory.session import SessionABC
from agents.testing import ScriptedModel, assistant_message, function_call


class ListSession(SessionABC):
    """A session keeping each add_items() call as it came."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.batches: list[list[Any]] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items = [item for batch in self.batches for item in batch]
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[Any]) -> None:
        self.batches.append(list(items))

    async def pop_item(self) -> Any:
        raise NotImplementedError

    async def clear_session(self) -> None:
        raise NotImplementedError


@function_tool
def notify_customer(order: str) -> str:
    """Tell the customer about an order."""
    return f"notified about {order}"


def _keys(item: Any) -> set[str]:
    return set(item) if isinstance(item, dict) else set(item.model_dump(exclude_unset=True))


async def checks() -> list[tuple[str, bool, str]]:
    results = []
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    results.append(("SP-002", not any("policy" in f and "save" in f for f in fields),
                    "RunConfig has no save-policy field: no policy name can be given, so "
                    "none is refused"))

    session = ListSession("orders")
    model = ScriptedModel([
        [function_call("notify_customer", {"order": "A-1"}, call_id="call-1")],
        [assistant_message("Order A-1 ships on Monday.", item_id="msg-1")],
        [assistant_message("Order A-2 ships on Tuesday.", item_id="msg-2")],
    ])
    agent = Agent(name="orders", model=model, tools=[notify_customer])
    config = RunConfig(tracing_disabled=True)
    await Runner.run(agent, "When does A-1 ship?", session=session, run_config=config)
    await Runner.run(agent, "And A-2?", session=session, run_config=config)
    keys = set().union(*(_keys(i) for batch in session.batches for i in batch))
    stamped = {k for k in keys if "run" in k or "round" in k or "turn" in k}
    results.append(("SP-030", len(session.batches) >= 4 and not stamped,
                    f"{len(session.batches)} add_items() calls over two runs, their items' keys "
                    f"{sorted(keys)}: none names the run or the round that wrote it"))
    return results


def main() -> int:
    failed = 0
    for rule, held, what in asyncio.run(checks()):
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
        failed += not held
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
