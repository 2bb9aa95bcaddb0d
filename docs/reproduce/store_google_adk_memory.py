"""Google ADK InMemorySessionService: the compliance page's findings,
reproduced with the library alone (``pip install google-adk``).

ADK adds one event at a time (``append_event``, as its ``Runner`` does); it has
no call that writes several events together, so "a batch" below is an
application appending a turn's events one after another. ST-032 and ST-033
are measured, not claimed: they show what an in-process service is, not a
defect. Run ``python store_google_adk_memory.py``: each check prints
``<rule> reproduced: ...`` and the script exits 1 if any behaviour is no
longer what the page says.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import sys

from google.adk.events import Event
from google.adk.sessions import InMemorySessionService
from google.genai import types

APP, USER = "repro", "repro"


def _event(name: str, text: str | None = None) -> Event:
    return Event(id=name, author="user", invocation_id="",
                 content=types.Content(role="user", parts=[types.Part(text=text or name)]))


async def _names(service: InMemorySessionService, session_id: str) -> list[str]:
    session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    return [] if session is None else [e.id for e in session.events]


class _Stop(Exception):
    """The application fails between two events of its batch."""


async def checks() -> list[tuple[str, bool, str]]:
    service = InMemorySessionService()
    results: list[tuple[str, bool, str]] = []

    session = await service.create_session(app_name=APP, user_id=USER, session_id="part")
    try:
        for i, name in enumerate(["p1", "p2", "p3"]):
            if i == 2:
                raise _Stop
            await service.append_event(session, _event(name))
    except _Stop:
        pass
    kept = await _names(service, "part")
    results.append(("ST-001", kept == ["p1", "p2"],
                    f"a batch that stops before its third event keeps its first two: {kept}"))
    results.append(("ST-016", kept == ["p1", "p2"],
                    "one call per event: nothing can take the batch's earlier events back"))

    session = await service.create_session(app_name=APP, user_id=USER, session_id="repeat")
    await service.append_event(session, _event("a", "first"))
    await service.append_event(session, _event("a", "second"))
    kept = await _names(service, "repeat")
    results.append(("ST-010", kept == ["a", "a"],
                    f"an event whose id is already in the session is stored again: {kept}"))
    session = await service.create_session(app_name=APP, user_id=USER, session_id="inner")
    for text in ("one", "two"):
        await service.append_event(session, _event("b", text))
    kept = await _names(service, "inner")
    results.append(("ST-011", kept == ["b", "b"],
                    f"an id repeated inside one batch is stored twice: {kept}"))

    padded = await service.create_session(app_name=APP, user_id=USER, session_id="pad")
    await service.append_event(padded, _event("m1", "the message of 'pad'"))
    twin = await service.get_session(app_name=APP, user_id=USER, session_id="pad ")
    try:
        await service.create_session(app_name=APP, user_id=USER, session_id="pad\t")
        made = "nothing"
    except Exception as exc:
        made = type(exc).__name__
    results.append(("ST-035", twin is not None and twin.id == "pad" and made != "nothing",
                    f"session ids are stripped of surrounding white space: get_session('pad ') "
                    f"returns session {None if twin is None else twin.id!r} with "
                    f"{[e.id for e in twin.events] if twin else []}, and "
                    f"create_session('pad\\t') raises {made}"))

    with multiprocessing.Pool(1) as pool:
        seen = pool.apply(_read_elsewhere, ("part",))
    results.append(("ST-032", seen == [],
                    "another process's service reads nothing back (sessions live in the "
                    "service object)"))
    results.append(("ST-033", seen == [],
                    "writer processes each have their own sessions: none sees another's events"))
    return results


def _read_elsewhere(session_id: str) -> list[str]:
    return asyncio.run(_names(InMemorySessionService(), session_id))


def main() -> int:
    results = asyncio.run(checks())
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
