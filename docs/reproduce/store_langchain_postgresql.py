"""LangChain PostgresChatMessageHistory (langchain-postgres): the compliance
page's findings, reproduced with the library alone
(``pip install langchain-postgres 'psycopg[binary]'``) and a PostgreSQL server.

Run ``python store_langchain_postgresql.py``: the server is read from ``DATABASE_URL``
(default ``postgresql://postgres@127.0.0.1:5432/test``); the script works in a table of
its own, which it drops at the end. Each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import uuid
from typing import Any

import psycopg
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_postgres import PostgresChatMessageHistory

URL = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
BATCHES = 100
BATCH = 50
ATTEMPTS = 5


def _history(conn: psycopg.Connection[Any], table: str, session: str) -> PostgresChatMessageHistory:
    """The history of ``session`` (the library takes only UUIDs as session ids)."""
    session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{table}/{session}"))
    return PostgresChatMessageHistory(table, session_id, sync_connection=conn)


def _message(name: str, **extra: Any) -> BaseMessage:
    return HumanMessage(content=name, id=name, additional_kwargs=extra)


def _names(history: PostgresChatMessageHistory) -> list[str]:
    return [str(m.content) for m in history.get_messages()]


def _writer(table: str, session: str, name: str, barrier: Any) -> None:
    with psycopg.connect(URL) as conn:
        history = _history(conn, table, session)
        barrier.wait()
        for b in range(BATCHES):
            history.add_messages([_message(f"{name}{b}.{i}") for i in range(BATCH)])


def _two_writers(conn: psycopg.Connection[Any], table: str, session: str) -> list[str]:
    """What ``session`` holds after two processes appended to it at once."""
    barrier = multiprocessing.Barrier(2)
    writers = [multiprocessing.Process(target=_writer, args=(table, session, n, barrier))
               for n in "pq"]
    for w in writers:
        w.start()
    for w in writers:
        w.join(300)
    return _names(_history(conn, table, session))


def _contiguous(names: list[str]) -> bool:
    """Each batch (same writer, same batch number) sits in one unbroken run."""
    batches = [n.split(".")[0] for n in names]
    seen: set[str] = set()
    for i, batch in enumerate(batches):
        if batch in seen and batches[i - 1] != batch:
            return False
        seen.add(batch)
    return True


def checks(conn: psycopg.Connection[Any], table: str) -> list[tuple[str, bool, str]]:
    results: list[tuple[str, bool, str]] = []
    twice = _history(conn, table, "twice")
    twice.add_messages([_message("a")])
    twice.add_messages([_message("a")])
    results.append(("ST-010", _names(twice) == ["a", "a"],
                    "a message whose id was stored is stored again"))
    inner = _history(conn, table, "inner")
    inner.add_messages([_message("b"), _message("b")])
    results.append(("ST-011", _names(inner) == ["b", "b"],
                    "an id repeated in one add_messages() call is stored twice"))

    numbers = _history(conn, table, "numbers")
    numbers.add_messages([_message("n", negative_zero=-0.0, large=1e300)])
    back = numbers.get_messages()[0].additional_kwargs
    altered = str(back["negative_zero"]) != "-0.0" and not isinstance(back["large"], float)
    what = (f"sent the floats -0.0 and 1e300, read back {back['negative_zero']!r} and "
            f"1e300 as {type(back['large']).__name__}, without an error")
    results.append(("ST-013", altered, what))
    results.append(("ST-015", str(back["negative_zero"]) != "-0.0", what))

    nul = _history(conn, table, "nul")
    try:
        nul.add_messages([_message("x\x00y")])
        refused = "nothing"
    except psycopg.Error as exc:
        conn.rollback()
        refused = type(exc).__name__
    results.append(("ST-014", refused != "nothing",
                    f"a text holding NUL is refused by the server's JSON parser: {refused}"))

    attempts, shared = 0, []
    while attempts < ATTEMPTS and (not shared or _contiguous(shared)):
        # how the two writers' transactions meet depends on the scheduler:
        # on a busy machine one may finish before the other starts, so try again
        attempts += 1
        shared = _two_writers(conn, table, f"shared{attempts}")
    results.append((
        "ST-033", len(shared) == 2 * BATCHES * BATCH and not _contiguous(shared),
        f"two processes each appended {BATCHES} batches of {BATCH}: all {len(shared)} stored, "
        f"but batches come back interleaved (rows are ordered by their SERIAL id; "
        f"attempt {attempts})",
    ))
    return results


def main() -> int:
    table = f"repro_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(URL) as conn:
        PostgresChatMessageHistory.create_tables(conn, table)
        try:
            results = checks(conn, table)
        finally:
            conn.rollback()
            PostgresChatMessageHistory.drop_table(conn, table)
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
