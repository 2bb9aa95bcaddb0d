"""OpenAI Agents SDK SQLAlchemySession (on SQLite): the compliance page's
findings, reproduced with the library alone
(``pip install 'openai-agents[sqlalchemy]' aiosqlite``).

Run ``python store_openai_agents_sqlalchemy.py``: each check prints
``<rule> reproduced: ...`` and the script exits 1 if any behaviour is no longer
what the page says.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents.extensions.memory import SQLAlchemySession
from sqlalchemy import text


def _item(name: str) -> Any:
    return {"id": name, "role": "user", "content": name}


def _names(items: list[Any]) -> list[str]:
    return [str(item["content"]) for item in items]


async def checks(url: str) -> list[tuple[str, bool, str]]:
    window = SQLAlchemySession.from_url("w", url=url, create_tables=True)
    await window.add_items([_item(f"m{i}") for i in range(1, 6)])
    negative = _names(await window.get_items(limit=-1))
    twice = SQLAlchemySession.from_url("d", url=url, create_tables=True)
    await twice.add_items([_item("a")])
    await twice.add_items([_item("a")])
    inner = SQLAlchemySession.from_url("i", url=url, create_tables=True)
    await inner.add_items([_item("b"), _item("b")])
    results = [
        ("ST-005", len(negative) == 5, f"limit=-1 returned all {len(negative)} items"),
        ("ST-010", _names(await twice.get_items()) == ["a", "a"],
         "an item whose id was stored is stored again"),
        ("ST-011", _names(await inner.get_items()) == ["b", "b"],
         "an id repeated in one call is stored twice"),
    ]
    damaged = SQLAlchemySession.from_url("c", url=url, create_tables=True)
    await damaged.add_items([_item(f"c{i}") for i in range(1, 9)])
    async with damaged.engine.begin() as conn:
        await conn.execute(text(
            "UPDATE agent_messages SET message_data = '{not json' WHERE id = (SELECT id FROM "
            "agent_messages WHERE session_id = 'c' ORDER BY id LIMIT 1 OFFSET 3)"
        ))
    try:
        read: list[str] | str = _names(await damaged.get_items())
    except Exception as exc:
        read = type(exc).__name__
    results.append((
        "ST-037", isinstance(read, list) and len(read) == 7 and "c4" not in read,
        f"8 items stored, one row made unreadable: get_items() returned {read}, no error",
    ))
    for session in (window, twice, inner, damaged):
        await session.engine.dispose()
    return results


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        results = asyncio.run(checks(f"sqlite+aiosqlite:///{Path(folder) / 'store.db'}"))
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
