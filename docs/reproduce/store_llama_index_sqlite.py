"""LlamaIndex SQLAlchemyChatStore on SQLite: the compliance page's findings,
reproduced with the library alone (``pip install llama-index-core aiosqlite``).

Run ``python store_llama_index_sqlite.py``: each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore
from sqlalchemy import event
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool


def _store(folder: str) -> SQLAlchemyChatStore:
    engine = create_async_engine(
        f"sqlite+aiosqlite:///{Path(folder) / 'store.db'}", poolclass=NullPool
    )
    return SQLAlchemyChatStore(table_name="llama_index_memory", async_engine=engine)


def _msg(name: str) -> ChatMessage:
    return ChatMessage(role="user", content=name, additional_kwargs={"id": name})


def _names(messages: list[ChatMessage]) -> list[str]:
    return [str(m.content) for m in messages]


async def checks(folder: str) -> list[tuple[str, bool, str]]:
    store = _store(folder)
    await store.add_messages("t", [_msg(f"m{i}") for i in range(1, 11)])
    every = _names(await store.get_messages("t"))
    oldest = _names(await store.get_messages("t", limit=3))
    negative = _names(await store.get_messages("t", limit=-1))
    six = _names(await store.get_messages("t", limit=6))
    results = [
        ("ST-003", oldest == every[:3], f"limit=3 of 10 returned {oldest}, the oldest three"),
        ("TU-031", six == every[:6],
         f"a turn's window of the newest six (limit=6) returned {six}, the oldest six"),
        ("ST-005", negative == every, f"limit=-1 returned all {len(negative)} messages"),
    ]
    await store.add_messages("d", [_msg("a")])
    await store.add_messages("d", [_msg("a")])
    stored_twice = _names(await store.get_messages("d"))
    results.append(("ST-010", stored_twice == ["a", "a"], "a stored id was stored again"))
    await store.add_messages("i", [_msg("b"), _msg("b")])
    inner = _names(await store.get_messages("i"))
    results.append(("ST-011", inner == ["b", "b"], "an id repeated in one call was stored twice"))
    try:
        await store.add_messages("e", [])
        empty = "accepted"
    except Exception as exc:  # the library's own error, whatever its type
        empty = type(exc).__name__
    results.append(("ST-012", empty != "accepted", f"an empty batch raised {empty}"))
    await store.set_messages("r", [_msg(f"r{i}") for i in range(9)])
    before = len(await store.get_messages("r"))
    try:
        unserialisable = ChatMessage(role="user", content="bad", additional_kwargs={"x": object()})
        await store.set_messages("r", [_msg("good"), unserialisable])
    except Exception as exc:
        raised = type(exc).__name__
    else:
        raised = "nothing"
    after = len(await store.get_messages("r"))
    results.append((
        "set_messages", raised != "nothing" and after == 0,
        f"set_messages with one unserialisable message raised {raised}: {before} before, "
        f"{after} after",
    ))
    results.append(await _later_commit_goes_first(folder))
    results.append(await _same_tick_interleaves(store))
    return results


async def _same_tick_interleaves(store: SQLAlchemyChatStore) -> tuple[str, bool, str]:
    """Two appends to one key stamped within one tick of the clock (writers
    released at once, or a clock as coarse as Windows' 15.6 ms): each row is
    ordered by its stamp plus its index, so the two batches mix."""
    real = time.time_ns
    tick = real()
    time.time_ns = lambda: tick  # the one tick both appends fall in
    try:
        await store.add_messages("c", [_msg("a0"), _msg("a1"), _msg("a2")])
        await store.add_messages("c", [_msg("b0"), _msg("b1"), _msg("b2")])
    finally:
        time.time_ns = real
    read = _names(await store.get_messages("c"))
    return (
        "ST-033", read[:3] != ["a0", "a1", "a2"],
        f"two batches of three appended within one clock tick read back as {read}",
    )


async def _later_commit_goes_first(folder: str) -> tuple[str, bool, str]:
    """One writer is stopped just before its INSERT (after add_messages stamped
    its rows) while a second writer appends and a reader reads; then the first
    goes on. Its own event loop runs in a thread, so stopping it stops nothing else."""
    other = _store(folder)
    await other.get_messages("o")  # the table exists
    reached, go = threading.Event(), threading.Event()

    def first_writer() -> None:
        engine = create_async_engine(
            f"sqlite+aiosqlite:///{Path(folder) / 'store.db'}", poolclass=NullPool
        )

        @event.listens_for(engine.sync_engine, "before_cursor_execute")
        def hold(conn, cursor, statement, *rest):
            if statement.startswith("INSERT") and not go.is_set():
                reached.set()
                go.wait(60)

        first = SQLAlchemyChatStore(table_name="llama_index_memory", async_engine=engine)
        asyncio.run(first.add_messages("o", [_msg("h1"), _msg("h2")]))

    thread = threading.Thread(target=first_writer)
    thread.start()
    await asyncio.to_thread(reached.wait, 60)
    await other.add_messages("o", [_msg("w1"), _msg("w2")])
    seen = _names(await other.get_messages("o"))
    go.set()
    await asyncio.to_thread(thread.join, 60)
    after = _names(await other.get_messages("o"))
    return (
        "ST-036", seen == ["w1", "w2"] and after[:2] != seen,
        f"a read showed {seen} while the first append was stopped before its INSERT; "
        f"once it returned, a read showed {after}: the batch committed later sits before "
        "messages the earlier read showed",
    )


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        results = asyncio.run(checks(folder))
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
