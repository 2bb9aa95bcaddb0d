"""Google ADK DatabaseSessionService on SQLite: the compliance page's findings,
reproduced with the library alone
(``pip install google-adk sqlalchemy aiosqlite``).

ADK adds one event at a time (``append_event``, as its ``Runner`` does); it has
no call that writes several events together, so "a batch" below is an
application appending a turn's events one after another.
Run ``python store_google_adk_sqlite.py``: each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import tempfile
from pathlib import Path

from google.adk.events import Event
from google.adk.sessions import DatabaseSessionService
from google.genai import types

APP, USER = "repro", "repro"


def _event(name: str) -> Event:
    return Event(id=name, author="user", invocation_id="",
                 content=types.Content(role="user", parts=[types.Part(text=name)]))


async def _names(service: DatabaseSessionService, session_id: str) -> list[str]:
    session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    return [] if session is None else [e.id for e in session.events]


async def _batch(service: DatabaseSessionService, session_id: str, names: list[str]) -> str:
    """Append ``names`` one event at a time; what stopped the batch, if anything."""
    session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    if session is None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    try:
        for name in names:
            await service.append_event(session, _event(name))
    except Exception as exc:
        return type(exc).__name__
    return "nothing"


def _killed_writer(url: str) -> None:
    async def write() -> None:
        service = DatabaseSessionService(db_url=url)
        session = await service.create_session(app_name=APP, user_id=USER, session_id="killed")
        for name in ("k1", "k2"):
            await service.append_event(session, _event(name))
        os.kill(os.getpid(), signal.SIGKILL)  # dies before the batch's third event

    asyncio.run(write())


async def checks(url: str) -> list[tuple[str, bool, str]]:
    service = DatabaseSessionService(db_url=url)
    results: list[tuple[str, bool, str]] = []

    await _batch(service, "repeat", ["a"])
    stopped = await _batch(service, "repeat", ["b", "c", "a", "d"])
    kept = await _names(service, "repeat")
    results.append(("ST-010", stopped != "nothing" and kept == ["a", "b", "c"],
                    f"a batch whose third event repeats a stored id stopped with {stopped} "
                    f"and left its first two stored: {kept}"))
    stopped = await _batch(service, "inner", ["x", "y", "x", "z"])
    kept = await _names(service, "inner")
    results.append(("ST-011", stopped != "nothing" and kept == ["x", "y"],
                    f"a batch repeating an id stopped with {stopped} at its third event, "
                    f"after its first two were committed: {kept}"))
    results.append(("ST-001", kept == ["x", "y"],
                    "a batch that fails part-way keeps the events committed before it"))
    results.append(("ST-016", kept == ["x", "y"],
                    "each append_event() is a transaction of its own: nothing rolls the "
                    "batch's earlier events back"))

    first = await service.create_session(app_name=APP, user_id=USER, session_id="two")
    other = DatabaseSessionService(db_url=url)
    second = await other.get_session(app_name=APP, user_id=USER, session_id="two")
    assert second is not None
    await other.append_event(second, _event("w1"))
    try:
        await service.append_event(first, _event("w2"))
        refused = "nothing"
    except Exception as exc:
        refused = type(exc).__name__
    results.append(("ST-033", refused == "StaleSessionError",
                    f"a writer whose session another writer appended to meanwhile is "
                    f"refused: {refused}"))

    session = await service.create_session(app_name=APP, user_id=USER, session_id="held")
    for name in ("h1", "h2"):  # the first two events of a four-event batch
        await service.append_event(session, _event(name))
    seen = await _names(other, "held")
    results.append(("ST-036", seen == ["h1", "h2"],
                    f"another reader, while a four-event batch is half appended, sees {seen}"))

    child = multiprocessing.Process(target=_killed_writer, args=(url,))
    child.start()
    child.join(300)
    kept = await _names(service, "killed")
    results.append(("ST-034", child.exitcode == -signal.SIGKILL and kept == ["k1", "k2"],
                    f"a writer killed after two events of a three-event batch left {kept}"))
    for s in (service, other):
        await s.close()
    return results


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'store.db'}"
        results = asyncio.run(checks(url))
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
