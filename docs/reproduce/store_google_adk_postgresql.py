"""Google ADK DatabaseSessionService on PostgreSQL: the compliance page's
findings, reproduced with the library alone
(``pip install google-adk sqlalchemy 'psycopg[binary]'``) and a PostgreSQL server.

ADK adds one event at a time (``append_event``, as its ``Runner`` does); it has
no call that writes several events together, so "a batch" below is an
application appending a turn's events one after another.
Run ``python store_google_adk_postgresql.py``: the server is read from ``DATABASE_URL``
(default ``postgresql://postgres@127.0.0.1:5432/test``); the script's tables live
in a schema of its own, dropped at the end. Each check prints
``<rule> reproduced: ...`` and the script exits 1 if any behaviour is no longer
what the page says.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import uuid
from typing import Any

from google.adk.events import Event
from google.adk.sessions import DatabaseSessionService
from google.genai import types
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

URL = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
APP, USER = "repro", "repro"


def _event(name: str, body: str | None = None, **custom: Any) -> Event:
    return Event(id=name, author="user", invocation_id="", custom_metadata=custom or None,
                 content=types.Content(role="user", parts=[types.Part(text=body or name)]))


def _service(url: str, schema: str) -> DatabaseSessionService:
    """The service with its tables in ``schema`` (the connection's search path)."""
    return DatabaseSessionService(db_url=url,
                                  connect_args={"options": f"-c search_path={schema}"})


async def _session(service: DatabaseSessionService, session_id: str) -> Any:
    session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    if session is None:
        session = await service.create_session(app_name=APP, user_id=USER,
                                               session_id=session_id)
    return session


async def _events(service: DatabaseSessionService, session_id: str) -> list[Event]:
    session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    return [] if session is None else list(session.events)


async def _names(service: DatabaseSessionService, session_id: str) -> list[str]:
    return [e.id for e in await _events(service, session_id)]


async def _batch(service: DatabaseSessionService, session_id: str, names: list[str]) -> str:
    """Append ``names`` one event at a time; what stopped the batch, if anything."""
    session = await _session(service, session_id)
    try:
        for name in names:
            await service.append_event(session, _event(name))
    except Exception as exc:
        return type(exc).__name__
    return "nothing"


def _killed_writer(url: str, schema: str) -> None:
    async def write() -> None:
        service = _service(url, schema)
        session = await service.create_session(app_name=APP, user_id=USER, session_id="killed")
        for name in ("k1", "k2"):
            await service.append_event(session, _event(name))
        os.kill(os.getpid(), signal.SIGKILL)  # dies before the batch's third event

    asyncio.run(write())


async def checks(url: str, schema: str) -> list[tuple[str, bool, str]]:
    service = _service(url, schema)
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

    session = await _session(service, "numbers")
    await service.append_event(session, _event("n", negative_zero=-0.0, large=1e300))
    back = (await _events(service, "numbers"))[0].custom_metadata or {}
    altered = str(back.get("negative_zero")) != "-0.0" and not isinstance(back.get("large"),
                                                                          float)
    what = (f"sent the floats -0.0 and 1e300 in custom_metadata, read back "
            f"{back.get('negative_zero')!r} and 1e300 as {type(back.get('large')).__name__}, "
            f"without an error")
    results.append(("ST-013", altered, what))
    results.append(("ST-015", str(back.get("negative_zero")) != "-0.0", what))

    session = await _session(service, "nul")
    try:
        await service.append_event(session, _event("z", body="x\x00y"))
        refused = "nothing"
    except Exception as exc:
        refused = type(exc).__name__
    results.append(("ST-014", refused != "nothing",
                    f"a text holding NUL is refused by PostgreSQL's JSONB, as a driver "
                    f"error: {refused}"))

    try:
        await service.create_session(app_name=APP, user_id=USER, session_id="k" * 129)
        long_id = "nothing"
    except Exception as exc:
        long_id = type(exc).__name__
    results.append(("ST-035", long_id != "nothing",
                    f"a session id of 129 characters is refused by the sessions table's "
                    f"VARCHAR(128), as a driver error: {long_id}"))

    first = await service.create_session(app_name=APP, user_id=USER, session_id="two")
    other = _service(url, schema)
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

    child = multiprocessing.Process(target=_killed_writer, args=(url, schema))
    child.start()
    child.join(300)
    kept = await _names(service, "killed")
    results.append(("ST-034", child.exitcode == -signal.SIGKILL and kept == ["k1", "k2"],
                    f"a writer killed after two events of a three-event batch left {kept}"))
    for s in (service, other):
        await s.close()
    return results


async def _admin(url: str, statement: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text(statement))
    finally:
        await engine.dispose()


def main() -> int:
    url = URL.replace("postgresql://", "postgresql+psycopg://", 1)
    schema = f"repro_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(url, f'CREATE SCHEMA "{schema}"'))
    try:
        results = asyncio.run(checks(url, schema))
    finally:
        asyncio.run(_admin(url, f'DROP SCHEMA "{schema}" CASCADE'))
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
