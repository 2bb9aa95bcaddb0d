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
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.types import Command, interrupt

MODES = (None, "sync", "exit")
"""LangGraph's default durability (async, not passed), then sync and exit."""

ROLE = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


class ModelDown(Exception):
    """The scripted model call fails."""


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

    def __init__(self, refuse: int = 0) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.held: list[BaseMessage] = []
        self.refuse = refuse
        """Refuse the put adding messages for the ``refuse``-th time (0: none)."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        messages = list((checkpoint.get("channel_values") or {}).get("messages") or [])
        if len(messages) > len(self.held):
            if len(self.batches) + 1 == self.refuse:
                self.refuse = 0
                raise OSError("the store refused the write")
            self.batches.append([ROLE.get(m.type, m.type) for m in messages[len(self.held):]])
            self.held = messages
        return super().put(config, checkpoint, metadata, new_versions)


def shown(batches: list[list[str]]) -> str:
    return " ".join("[" + ",".join(b) + "]" for b in batches) or "none"


@tool
def notify_customer(order: str) -> str:
    """Tell the customer about an order."""
    return f"notified about {order}"


@tool
def approve_refund(order: str) -> str:
    """Refund an order once a person approved it."""
    answer = interrupt({"order": order})
    return f"refunded {order}" if answer.get("approved") else "refund denied"


def call(name: str, call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": {"order": "A-1"},
                                              "id": call_id, "type": "tool_call"}])


def agent(steps: list[Any], saver: InMemorySaver, tools: Any = (notify_customer,)) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(ScriptedChat(steps=steps, seen=[]), tools, checkpointer=saver)


async def run(graph: Any, given: Any, thread: str, mode: str | None) -> str:
    options = {} if mode is None else {"durability": mode}
    try:
        await graph.ainvoke(given, {"configurable": {"thread_id": thread}}, **options)
    except Exception as exc:
        return f"raised {type(exc).__name__}"
    return "completed"


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


async def refused_tool_call(name: str) -> list[tuple[str, bool, str]]:
    """Under sync durability: the tool call's checkpoint is refused."""
    ran: list[str] = []

    @tool
    def notify(order: str) -> str:
        """Tell the customer about an order."""
        ran.append(order)
        return "notified"

    saver = RecordingSaver(refuse=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        graph = create_react_agent(
            ScriptedChat(steps=[call("notify", "c1"), AIMessage(content="Told.")], seen=[]),
            [notify], checkpointer=saver)
    chunks = 0
    try:
        async for piece, _ in graph.astream(
                ask("Tell A-1"), {"configurable": {"thread_id": "t"}},
                stream_mode="messages", durability="sync"):
            chunks += piece.type == "ai" and bool(piece.content)
        outcome = "completed"
    except OSError:
        outcome = "raised OSError"
    return [
        ("SP-022", outcome == "raised OSError" and not ran,
         f"{name}: the tool call's checkpoint is refused: the run {outcome} before the tool "
         f"ran ({len(ran)} run), so no effect was made"),
        ("SP-029", outcome == "raised OSError" and chunks == 0,
         f"{name}: the same run streamed gives {chunks} answer chunks: it ends before the "
         "answer is asked for"),
    ]


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
        graph = agent([call("notify_customer", "c1"), AIMessage(content="Shipped Monday.")],
                      saver)
        await run(graph, ask("When does A-1 ship?"), "t", mode)
        want = "[user,assistant,tool,assistant]" if mode == "exit" else \
            "[user] [assistant] [tool] [assistant]"
        held = shown(saver.batches) == want
        # under exit the run policy's kills pass: nothing is saved before the exit
        rules = ("SP-001", "SP-005", "SP-006", "SP-007", "SP-008", "SP-012", "SP-023",
                 "SP-025", *(() if mode == "exit" else ("SP-010",)))
        for rule in rules:
            results.append((rule, held, f"{name}: one completed tool round is saved as "
                            f"{shown(saver.batches)}"))
        stamped = {k for m in saver.held for k in (m.additional_kwargs or {})
                   | (m.response_metadata or {}) if "run" in k or "round" in k}
        results.append(("SP-030", not stamped,
                        f"{name}: the saved messages carry no run id or round"))

        saver = RecordingSaver()
        graph = agent([call("notify_customer", "c1"), ModelDown("model down")], saver)
        outcome = await run(graph, ask("When does A-1 ship?"), "t", mode)
        kept = shown(saver.batches)
        want = "[user,assistant,tool]" if mode == "exit" else "[user] [assistant] [tool]"
        for rule in ("SP-009", "SP-011"):
            results.append((rule, outcome == "raised ModelDown" and kept == want,
                            f"{name}: a run whose second model call fails {outcome} and "
                            f"leaves {kept} saved"))
        puts = len(saver.batches)
        for rule in ("SP-013", "SP-014", "SP-020"):
            results.append((rule, outcome == "raised ModelDown",
                            f"{name}: the failed run is ended by the exception alone; the "
                            f"checkpointer got {puts} message checkpoints and no record of the "
                            "run's error with its messages"))
        chat = ScriptedChat(steps=[AIMessage(content="It did.")], seen=[])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            next_run = create_react_agent(chat, [notify_customer], checkpointer=saver)
        await run(next_run, ask("Did it work?"), "t", mode)
        seen = chat.seen[0] if chat.seen else []
        results.append(("SP-031", len(seen) > 1,
                        f"{name}: the next run's model is shown {len(seen)} messages, the "
                        "failed run's included"))

        def terminate(error: Exception) -> str:
            raise error

        saver = RecordingSaver()

        @tool
        def broken(order: str) -> str:
            """A tool that throws."""
            raise ValueError("mail server down")

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            graph = create_react_agent(
                ScriptedChat(steps=[call("broken", "c1")], seen=[]),
                ToolNode([broken], handle_tool_errors=terminate), checkpointer=saver)
        outcome = await run(graph, ask("Tell A-1"), "t", mode)
        results.append(("SP-024", outcome == "raised ValueError",
                         f"{name}: a tool-error handler that raises ends the run with the "
                         f"tool's error ({outcome}), no cancellation, {shown(saver.batches)} "
                         "saved"))
        for rule in ("SP-004", "SP-026", "SP-032"):  # the generated runs' terminating hook
            results.append((rule, outcome == "raised ValueError",
                            f"{name}: a run whose tool-error handler gives up ends with the "
                            f"tool's error ({outcome}), never cancelled"))

        saver = RecordingSaver()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            graph = create_react_agent(
                ScriptedChat(steps=[call("broken", "c1"), AIMessage(content="Sorry.")],
                             seen=[]),
                ToolNode([broken], handle_tool_errors=True), checkpointer=saver)
        outcome = await run(graph, ask("Tell A-1"), "t", mode)
        result = next((str(m.content) for m in saver.held if m.type == "tool"), "")
        results.append(("SP-023", outcome == "completed" and not result.startswith(
            "ToolCallError:"), f"{name}: a tool that throws, its error handled, completes "
                        f"with the tool result {result.splitlines()[0]!r}..."))

        saver = RecordingSaver()
        graph = agent([call("approve_refund", "c1"), AIMessage(content="Refunded.")], saver,
                      (approve_refund,))
        await run(graph, ask("Refund A-1"), "t", mode)
        suspended = shown(saver.batches)
        results.append(("SP-027", suspended == ("[user,assistant]" if mode == "exit"
                                                else "[user] [assistant]"),
                        f"{name}: a run suspended for approval saves {suspended}"))
        await run(graph, Command(resume={"approved": True}), "t", mode)
        roles = [ROLE.get(m.type, m.type) for m in saver.held]
        results.append(("SP-028", roles.count("tool") == 1,
                        f"{name}: after the resume the thread holds {roles}: the approval "
                        "response is no message of its own"))

        if mode is None:
            saver = RecordingSaver(refuse=1)
            chat = ScriptedChat(steps=[AIMessage(content="Shipped Monday.")] * 3, seen=[])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                graph = create_react_agent(chat, [notify_customer], checkpointer=saver)
            outcome = await run(graph, ask("When does A-1 ship?"), "t", mode)
            results.append(("SP-005", len(chat.seen) > 0,
                            f"{name}: the input's checkpoint is refused and the model is "
                            f"still called {len(chat.seen)} time(s) ({outcome})"))
        if mode == "sync":
            results += await refused_tool_call(name)
    return results


def main() -> int:
    failed = 0
    for rule, held, what in asyncio.run(checks()):
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
        failed += not held
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
