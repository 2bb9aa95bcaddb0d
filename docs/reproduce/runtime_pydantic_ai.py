"""pydantic-ai as a runtime: the runtime page's findings, reproduced with
pydantic-ai alone (``pip install pydantic-ai-slim``), offline, with its
``FunctionModel`` and an in-memory conversation store that records each write.

Run ``python runtime_pydantic_ai.py``: each check prints ``<rule> reproduced:
...`` and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Any

from pydantic_ai import Agent, Conversation
from pydantic_ai.conversation_store import InMemoryConversationStore
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


class RecordingStore(InMemoryConversationStore):
    """Keeps how many entries each write_record() call added."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[int] = []

    async def write_record(self, record: Any, *, new_entries: Any = (),
                           expected_revision: str | None) -> None:
        self.writes.append(len(new_entries))
        await super().write_record(record, new_entries=new_entries,
                                   expected_revision=expected_revision)


def scripted(*steps: ModelResponse) -> tuple[FunctionModel, list[int]]:
    calls: list[int] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(len(messages))
        return steps[min(len(calls), len(steps)) - 1]

    return FunctionModel(answer), calls


async def checks() -> list[tuple[str, bool, str]]:
    results = []
    params = inspect.signature(Agent.__init__).parameters
    results.append(("SP-002", not any("policy" in p for p in params),
                    "Agent takes no save-policy setting: no policy name can be given, so "
                    "none is refused"))

    model, _ = scripted(
        ModelResponse(parts=[ToolCallPart("notify_customer", {"order": "A-1"}, "c1")]),
        ModelResponse(parts=[TextPart("Order A-1 ships on Monday.")]),
    )
    agent = Agent(model)

    @agent.tool_plain
    def notify_customer(order: str) -> str:
        return f"notified about {order}"

    store = RecordingStore()
    conversation = await store.load("orders") or Conversation(conversation_id="orders")
    await store.save(await agent.run("When does A-1 ship?", conversation=conversation))
    results.append(("SP-001", store.writes == [4],
                    f"a completed tool round is saved by {len(store.writes)} write(s) adding "
                    f"{store.writes} entries: the request, the tool call, its result and the "
                    "answer in one batch"))

    model, calls = scripted(ModelResponse(parts=[TextPart("")]),
                            ModelResponse(parts=[TextPart("Here it is.")]))
    result = await Agent(model).run("Say nothing")
    asked_again = len(calls) == 2 and result.output == "Here it is."
    for rule in ("SP-004", "SP-023", "SP-024", "SP-026", "SP-027", "SP-032"):
        results.append((rule, asked_again,
                        f"a blank text reply is no answer: the model is asked {len(calls)} "
                        f"times and the run ends with {result.output!r}"))
    return results


def main() -> int:
    failed = 0
    for rule, held, what in asyncio.run(checks()):
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
        failed += not held
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
