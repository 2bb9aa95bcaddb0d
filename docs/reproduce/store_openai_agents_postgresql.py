"""OpenAI Agents SDK SQLAlchemySession on PostgreSQL: the compliance page's
findings, reproduced with the library alone
(``pip install 'openai-agents[sqlalchemy]' 'psycopg[binary]'``) and a
PostgreSQL server.

Run ``python store_openai_agents_postgresql.py``: the server is read from
``DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``); the
script's tables live in a schema of its own, dropped at the end. Each check
prints ``<rule> reproduced: ...`` and the script exits 1 if any behaviour is no
longer what the page says.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from typing import Any

from agents.extensions.memory import SQLAlchemySession
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

URL = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _item(name: str) -> Any:
    return {"id": name, "role": "user", "content": name}


def _names(items: list[Any]) -> list[str]:
    return [str(item["content"]) for item in items]


async def checks(engine: Any) -> list[tuple[str, bool, str]]:
    twice = SQLAlchemySession("d", engine=engine, create_tables=True)
    await twice.add_items([_item("a")])
    await twice.add_items([_item("a")])
    inner = SQLAlchemySession("i", engine=engine, create_tables=True)
    await inner.add_items([_item("b"), _item("b")])
    damaged = SQLAlchemySession("c", engine=engine, create_tables=True)
    await damaged.add_items([_item(f"c{i}") for i in range(1, 9)])
    async with engine.begin() as conn:
        await conn.execute(text(
            "UPDATE agent_messages SET message_data = '{not json' WHERE id = (SELECT id FROM "
            "agent_messages WHERE session_id = 'c' ORDER BY id LIMIT 1 OFFSET 3)"
        ))
    try:
        read: list[str] | str = _names(await damaged.get_items())
    except Exception as exc:
        read = type(exc).__name__
    window = SQLAlchemySession("w", engine=engine, create_tables=True)
    await window.add_items([_item(f"w{i}") for i in range(1, 4)])
    try:
        fraction: list[str] | str = _names(await window.get_items(limit=2.5))  # type: ignore[arg-type]
    except Exception as exc:
        fraction = type(exc).__name__
    return [
        ("ST-005", fraction == ["w2", "w3"],
         f"get_items(limit=2.5) returned {fraction}, no error"),
        ("ST-010", _names(await twice.get_items()) == ["a", "a"],
         "an item whose id was stored is stored again"),
        ("ST-011", _names(await inner.get_items()) == ["b", "b"],
         "an id repeated in one add_items() call is stored twice"),
        ("ST-037", isinstance(read, list) and len(read) == 7 and "c4" not in read,
         f"8 items stored, one row made unreadable: get_items() returned {read}, no error"),
    ]


async def run() -> list[tuple[str, bool, str]]:
    schema = f"repro_{uuid.uuid4().hex[:12]}"
    url = URL.replace("postgresql://", "postgresql+psycopg://", 1)
    admin = create_async_engine(url)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = create_async_engine(url, connect_args={"options": f"-c search_path={schema}"})
    try:
        return await checks(engine)
    finally:
        await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


def main() -> int:
    results = asyncio.run(run())
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
