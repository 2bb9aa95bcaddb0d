"""OpenAI Agents SDK SQLiteSession: the compliance page's findings, reproduced
with the library alone (``pip install openai-agents``).

Run ``python store_openai_agents_sqlite.py``: each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says. The
ST-037 check makes one stored row unreadable by hand, as the kit's damage hook
does, and get_items() returns the others without an error.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents.memory import SQLiteSession


def _item(name: str) -> Any:
    return {"id": name, "role": "user", "content": name}


def _names(items: list[Any]) -> list[str]:
    return [str(item["content"]) for item in items]


async def checks(folder: str) -> list[tuple[str, bool, str]]:
    path = Path(folder) / "store.db"
    window = SQLiteSession("w", path)
    await window.add_items([_item(f"m{i}") for i in range(1, 6)])
    negative = _names(await window.get_items(limit=-1))
    results = [("ST-005", len(negative) == 5, f"limit=-1 returned all {len(negative)} items")]
    twice = SQLiteSession("d", path)
    await twice.add_items([_item("a")])
    await twice.add_items([_item("a")])
    stored = _names(await twice.get_items())
    results.append(("ST-010", stored == ["a", "a"], "an item whose id was stored is stored again"))
    inner = SQLiteSession("i", path)
    await inner.add_items([_item("b"), _item("b")])
    results.append(
        ("ST-011", _names(await inner.get_items()) == ["b", "b"], "an id repeated in one call "
         "is stored twice")
    )
    damaged = SQLiteSession("c", path)
    await damaged.add_items([_item(f"c{i}") for i in range(1, 9)])
    for session in (window, twice, inner, damaged):
        session.close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE agent_messages SET message_data = '{not json' WHERE id = "
            "(SELECT id FROM agent_messages WHERE session_id = 'c' ORDER BY id LIMIT 1 OFFSET 3)"
        )
    reopened = SQLiteSession("c", path)
    try:
        read: list[str] | str = _names(await reopened.get_items())
    except Exception as exc:
        read = type(exc).__name__
    finally:
        reopened.close()
    results.append((
        "ST-037", isinstance(read, list) and len(read) == 7 and "c4" not in read,
        f"8 items stored, one row made unreadable: get_items() returned {read}, no error",
    ))
    return results


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        results = asyncio.run(checks(folder))
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
