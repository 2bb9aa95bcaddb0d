"""OpenAI Agents SDK RedisSession: the compliance page's findings, reproduced
with the library alone (``pip install 'openai-agents[redis]'``) and a Redis
server.

Run ``python store_openai_agents_redis.py``: the server is read from ``REDIS_URL``
(default ``redis://127.0.0.1:6379/0``); the script's keys share one random
prefix and are deleted at the end. Each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from typing import Any

import redis.asyncio as redis
from agents.extensions.memory import RedisSession

URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def _item(name: str) -> Any:
    return {"id": name, "role": "user", "content": name}


def _names(items: list[Any]) -> list[str]:
    return [str(item["content"]) for item in items]


async def checks(client: Any, prefix: str) -> list[tuple[str, bool, str]]:
    def session(name: str) -> RedisSession:
        return RedisSession(name, redis_client=client, key_prefix=prefix)

    window = session("w")
    await window.add_items([_item(f"m{i}") for i in range(1, 6)])
    negative = _names(await window.get_items(limit=-1))
    twice = session("d")
    await twice.add_items([_item("a")])
    await twice.add_items([_item("a")])
    inner = session("i")
    await inner.add_items([_item("b"), _item("b")])
    damaged = session("c")
    await damaged.add_items([_item(f"c{i}") for i in range(1, 9)])
    await client.lset(f"{prefix}:c:messages", 3, "{not json")
    try:
        read: list[str] | str = _names(await damaged.get_items())
    except Exception as exc:
        read = type(exc).__name__
    return [
        ("ST-037", isinstance(read, list) and len(read) == 7 and "c4" not in read,
         f"8 items stored, one made unreadable: get_items() returned {read}, no error"),
        ("ST-005", negative == [],
         f"5 items stored, limit=-1 returned {negative}: no refusal, an empty window"),
        ("ST-010", _names(await twice.get_items()) == ["a", "a"],
         "an item whose id was stored is pushed again"),
        ("ST-011", _names(await inner.get_items()) == ["b", "b"],
         "an id repeated in one call is stored twice"),
    ]


async def run() -> list[tuple[str, bool, str]]:
    client = redis.Redis.from_url(URL)
    prefix = f"repro-{uuid.uuid4().hex[:12]}"
    try:
        return await checks(client, prefix)
    finally:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


def main() -> int:
    results = asyncio.run(run())
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
