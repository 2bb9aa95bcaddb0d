"""LangGraph's prebuilt ReAct agent as a runtime: the runtime page's findings,
reproduced with LangGraph alone (``pip install langgraph langgraph-prebuilt``),
offline, with a scripted chat model and an in-memory checkpointer that records
what each checkpoint adds to the thread's messages.

Run ``python runtime_langgraph.py``: each check prints ``<rule> reproduced:
...`` (under each durability mode it concerns) and the script exits 1 if any
behaviour is no longer what the page says.
"""

from __future__ import annotations

import asyncio
import sys
import warnings
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent

MODES = (None, "sync", "exit")
"""LangGraph's default durability (async, not passed), then sync and exit."""

ROLE = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


class ScriptedChat(BaseChatModel):
    """Answers each call with the next scripted step: an AIMessage, or an
    exception to raise."""

    steps: list[Any]
    seen: list[list[str]]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.seen.append([str(m.content) for m in messages])
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        return ChatResult(generations=[ChatGeneration(message=step)])



class RecordingSaver(InMemorySaver):
    """Keeps, for each checkpoint put, the roles of the messages it adds to the
    ones the previous checkpoint held (one batch per put that adds any)."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.held: list[BaseMessage] = []

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        messages = list((checkpoint.get("channel_values") or {}).get("messages") or [])
        if len(messages) > len(self.held):
            self.batches.append([ROLE.get(m.type, m.type) for m in messages[len(self.held):]])
            self.held = messages
        return super().put(config, checkpoint, metadata, new_versions)


def shown(batches: list[list[str]]) -> str:
    return " ".join("[" + ",".join(b) + "]" for b in batches) or "none"


@tool
def notify_customer(order: str) -> str:
    """Tell the customer about an order."""
    return f"notified about {order}"


def call(name: str, call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": {"order": "A-1"},
                                              "id": call_id, "type": "tool_call"}])


def agent(steps: list[Any], saver: InMemorySaver) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(ScriptedChat(steps=steps, seen=[]), [notify_customer],
                                  checkpointer=saver)


async def run(graph: Any, given: Any, thread: str, mode: str | None) -> str:
    options = {} if mode is None else {"durability": mode}
    try:
        await graph.ainvoke(given, {"configurable": {"thread_id": thread}}, **options)
    except Exception as exc:
        return f"raised {type(exc).__name__}"
    return "completed"


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


async def checks() -> list[tuple[str, bool, str]]:
    results: list[tuple[str, bool, str]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import inspect
        params = inspect.signature(create_react_agent).parameters
    results.append(("SP-002", not any("policy" in p for p in params),
                    "create_react_agent takes no save-policy setting: no policy name can be "
                    "given, so none is refused"))
    for mode in MODES:
        name = mode or "async (default)"
        saver = RecordingSaver()
        graph = agent([call("notify_customer", "c1"), AIMessage(content="Shipped Monday."),
                       AIMessage(content="It shipped.")], saver)
        await run(graph, ask("When does A-1 ship?"), "t", mode)
        want = "[user,assistant,tool,assistant]" if mode == "exit" else \
            "[user] [assistant] [tool] [assistant]"
        results.append(("SP-001", shown(saver.batches) == want,
                        f"{name}: one completed tool round is saved as "
                        f"{shown(saver.batches)}, not as message batches "
                        "([user] [assistant,tool] [assistant])"))
        await run(graph, ask("Did it?"), "t", mode)
        stamped = {k for m in saver.held for k in (m.additional_kwargs or {})
                   | (m.response_metadata or {}) if "run" in k or "round" in k}
        results.append(("SP-030", len(saver.held) == 6 and not stamped,
                        f"{name}: after two runs the {len(saver.held)} saved messages carry "
                        "no run id or round: the runs' messages cannot be told apart"))
    return results


def main() -> int:
    failed = 0
    for rule, held, what in asyncio.run(checks()):
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
        failed += not held
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
