"""Microsoft Agent Framework InMemoryHistoryProvider: the compliance page's
findings, reproduced with the library alone (``pip install agent-framework-core``).

The provider keeps a session's messages in the session's state; an agent passes
``session.state[provider.source_id]`` to ``save_messages`` after a run and to
``get_messages`` before the next, as below. ST-032 and ST-033 are promises the
provider does not make (its history lives in the process's session objects);
the page measures them anyway.
Run ``python store_agent_framework_memory.py``: each check prints
``<rule> reproduced: ...`` and the script exits 1 if any behaviour is no longer
what the page says.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from agent_framework import AgentSession, InMemoryHistoryProvider, Message


def _message(name: str, **extra: Any) -> Message:
    return Message("user", [name], message_id=name, additional_properties=extra)


class History:
    """One session's history through the provider, as an agent drives it."""

    def __init__(self, provider: InMemoryHistoryProvider, session_id: str) -> None:
        self.provider = provider
        self.session = AgentSession(session_id=session_id)

    @property
    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.session.state.setdefault(self.provider.source_id, {})
        return state

    async def save(self, names: list[str]) -> None:
        await self.provider.save_messages(
            self.session.session_id, [_message(n) for n in names], state=self.state
        )

    async def read(self) -> list[Message]:
        return await self.provider.get_messages(self.session.session_id, state=self.state)

    async def names(self) -> list[str]:
        return [str(m.message_id) for m in await self.read()]


async def checks() -> list[tuple[str, bool, str]]:
    provider = InMemoryHistoryProvider()
    results: list[tuple[str, bool, str]] = []

    shared = History(provider, "shared")
    await provider.save_messages("shared", [_message("a", tags={"k": "v"})], state=shared.state)
    read = await shared.read()
    read[0].additional_properties["tags"]["k"] = "changed by a reader"
    again = (await shared.read())[0].additional_properties["tags"]["k"]
    results.append(("ST-007", read[0] is (await shared.read())[0] and again != "v",
                    "get_messages() returns the stored Message objects themselves: a reader "
                    f"changing one changed the history (now {again!r})"))

    stored = History(provider, "stored")
    await stored.save(["m1", "m2"])
    await stored.save(["n1", "m2", "n2"])
    kept = await stored.names()
    lost = History(provider, "lost")
    await lost.save(["m0"])
    await lost.save(["x0", "x1", "m0", "y0"])
    cut = await lost.names()
    results.append(("ST-010", kept == ["m1", "m2", "n1", "m2", "n2"] and cut == ["m0", "y0"],
                    f"a stored id in the middle of a batch is stored again ({kept}); a batch "
                    f"holding the stored history is cut to what follows it, x0 and x1 "
                    f"dropped without an error ({cut})"))

    inner = History(provider, "inner")
    await inner.save(["m1"])
    await inner.save(["d1", "d-other", "d1"])
    kept = await inner.names()
    results.append(("ST-011", kept == ["m1", "d1", "d-other", "d1"],
                    f"an id repeated inside one save_messages() call is stored twice: {kept}"))

    fresh = History(InMemoryHistoryProvider(), "shared")
    seen = await fresh.names()
    results.append(("ST-032", seen == [],
                    "a new session object (as in a new process) holds nothing of what was "
                    f"saved: {seen}"))
    results.append(("ST-033", seen == [],
                    "writers in other processes have sessions of their own: none sees "
                    "another's messages"))
    return results


def main() -> int:
    results = asyncio.run(checks())
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
