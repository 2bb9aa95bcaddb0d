"""Google ADK as a runtime: the runtime page's findings, reproduced with ADK
alone (``pip install google-adk``), offline, with a scripted ``BaseLlm`` and an
in-memory session service that records each event appended.

Run ``python runtime_google_adk.py``: each check prints ``<rule> reproduced:
...`` and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Any

from google.adk.agents import Agent, RunConfig
from google.adk.events import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types


class ScriptedLlm(BaseLlm):
    """Answers each call with the next scripted content."""

    model: str = "scripted"
    steps: list[Any]

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        yield LlmResponse(content=self.steps.pop(0))


class RecordingSessions(InMemorySessionService):
    """Keeps the kind of each event appended (one append_event call each)."""

    def __init__(self) -> None:
        super().__init__()
        self.appended: list[str] = []

    async def append_event(self, session: Any, event: Any) -> Any:
        if not event.partial:
            parts = event.content.parts if event.content and event.content.parts else []
            kind = ("tool" if any(p.function_response for p in parts)
                    else "user" if event.author == "user" else "assistant")
            self.appended.append(kind)
        return await super().append_event(session, event)


def notify_customer(order: str) -> str:
    """Tell the customer about an order."""
    return f"notified about {order}"


async def checks() -> list[tuple[str, bool, str]]:
    results = []
    params = set(inspect.signature(Runner.__init__).parameters) | set(RunConfig.model_fields)
    results.append(("SP-002", not any("policy" in p and "save" in p for p in params),
                    "Runner and RunConfig take no save-policy setting: no policy name can be "
                    "given, so none is refused"))

    call = types.Part(function_call=types.FunctionCall(
        id="c1", name="notify_customer", args={"order": "A-1"}))
    llm = ScriptedLlm(steps=[
        types.Content(role="model", parts=[call]),
        types.Content(role="model", parts=[types.Part(text="Order A-1 ships on Monday.")]),
    ])
    agent = Agent(name="orders", model=llm, tools=[notify_customer])
    sessions = RecordingSessions()
    runner = Runner(app_name="orders", agent=agent, session_service=sessions)
    await sessions.create_session(app_name="orders", user_id="u", session_id="s")
    ask = types.Content(role="user", parts=[types.Part(text="When does A-1 ship?")])
    async for _ in runner.run_async(user_id="u", session_id="s", new_message=ask):
        pass
    batches = " ".join(f"[{kind}]" for kind in sessions.appended)
    results.append(("SP-001", sessions.appended == ["user", "assistant", "tool", "assistant"],
                    f"a completed tool round is appended as {batches}: the tool call and its "
                    "result are two events, never one batch"))

    fields = set(Event.model_fields)
    session = await sessions.get_session(app_name="orders", user_id="u", session_id="s")
    runs = {e.invocation_id for e in session.events} if session else set()
    counted = sorted(f for f in fields if {"round", "step"} & set(f.split("_")))
    results.append(("SP-030", "invocation_id" in fields and not counted and len(runs) == 1,
                    f"each event names its run ({len(runs)} invocation id for the run) but no "
                    f"field of Event numbers the round (fields naming one: {counted or 'none'})"))
    await runner.close()
    return results


def main() -> int:
    failed = 0
    for rule, held, what in asyncio.run(checks()):
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
        failed += not held
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
