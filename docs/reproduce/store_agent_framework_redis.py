"""Microsoft Agent Framework RedisHistoryProvider (agent-framework-redis): the
compliance page's findings, reproduced with the library alone
(``pip install agent-framework-core agent-framework-redis``) and a Redis server.

Run ``python store_agent_framework_redis.py``: the server is read from ``REDIS_URL``
(default ``redis://127.0.0.1:6379/0``); the script's keys start with a prefix of
its own and are deleted at the end. Each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid

import redis.asyncio as redis
from agent_framework import Message
from agent_framework_redis import RedisHistoryProvider

URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def _message(name: str) -> Message:
    return Message("user", [name], message_id=name)


async def _save(provider: RedisHistoryProvider, session: str, names: list[str]) -> None:
    await provider.save_messages(session, [_message(n) for n in names])


async def _names(provider: RedisHistoryProvider, session: str) -> list[str]:
    return [str(m.message_id) for m in await provider.get_messages(session)]


async def checks(provider: RedisHistoryProvider) -> list[tuple[str, bool, str]]:
    await _save(provider, "stored", ["m1", "m2"])
    await _save(provider, "stored", ["n1", "m2", "n2"])
    kept = await _names(provider, "stored")
    await _save(provider, "lost", ["m0"])
    await _save(provider, "lost", ["x0", "x1", "m0", "y0"])
    cut = await _names(provider, "lost")
    await _save(provider, "inner", ["m1"])
    await _save(provider, "inner", ["d1", "d-other", "d1"])
    inner = await _names(provider, "inner")
    return [
        ("ST-010", kept == ["m1", "m2", "n1", "m2", "n2"] and cut == ["m0", "y0"],
         f"a stored id in the middle of a batch is stored again ({kept}); a batch holding "
         f"the stored history is cut to what follows it, x0 and x1 dropped without an "
         f"error ({cut})"),
        ("ST-011", inner == ["m1", "d1", "d-other", "d1"],
         f"an id repeated inside one save_messages() call is stored twice: {inner}"),
    ]


async def run() -> list[tuple[str, bool, str]]:
    prefix = f"repro-{uuid.uuid4().hex[:12]}"
    provider = RedisHistoryProvider(redis_url=URL, key_prefix=prefix, application_id="repro")
    try:
        return await checks(provider)
    finally:
        await provider.aclose()
        client = redis.from_url(URL)
        try:
            keys = [key async for key in client.scan_iter(match=f"{prefix}*")]
            if keys:
                await client.delete(*keys)
        finally:
            await client.aclose()


def main() -> int:
    results = asyncio.run(run())
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
