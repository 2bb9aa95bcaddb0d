"""LangGraph on PostgreSQL (``PostgresSaver`` checkpoints, ``PostgresStore``
knowledge): the compliance page's findings, reproduced with the library alone
(``pip install langgraph langgraph-checkpoint-postgres 'psycopg[binary]'``) and
a PostgreSQL server.

The thread is a minimal messages graph (``MessagesState``, one node that
changes nothing) compiled with a ``PostgresSaver``; a turn is added the way a
LangGraph application adds one, ``graph.invoke({"messages": [...]}, config)``.
Run ``python store_langgraph_postgresql.py``: the server is read from
``DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``); the
tables live in a schema of the script's own, dropped at the end. Each check
prints ``<rule> reproduced: ...`` and the script exits 1 if any behaviour is no
longer what the page says.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import uuid
from typing import Any

import psycopg
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.postgres import PostgresStore
from psycopg.rows import dict_row

URL = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")

PER_WRITER = 60
ATTEMPTS = 3


def _unchanged(state: MessagesState) -> dict[str, Any]:
    return {}


def _connect(schema: str) -> psycopg.Connection[Any]:
    """A connection as the library's from_conn_string makes one, in ``schema``."""
    return psycopg.connect(URL, autocommit=True, prepare_threshold=0, row_factory=dict_row,
                           options=f"-c search_path={schema}")


def _graph(schema: str) -> Any:
    saver = PostgresSaver(_connect(schema))
    builder = StateGraph(MessagesState)
    builder.add_node("unchanged", _unchanged)
    builder.add_edge(START, "unchanged")
    builder.add_edge("unchanged", END)
    return builder.compile(checkpointer=saver)


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _stored(graph: Any, thread: str) -> list[Any]:
    return list(graph.get_state(_config(thread)).values.get("messages", []))


def _writer(schema: str, thread: str, name: str, barrier: Any) -> None:
    graph = _graph(schema)
    barrier.wait()
    for i in range(PER_WRITER):
        graph.invoke({"messages": [HumanMessage(content=f"{name}{i}", id=f"{name}{i}")]},
                     _config(thread))


def _two_writers(graph: Any, schema: str, thread: str) -> int:
    """How many messages ``thread`` holds after two processes appended at once."""
    barrier = multiprocessing.Barrier(2)
    writers = [multiprocessing.Process(target=_writer, args=(schema, thread, n, barrier))
               for n in "pq"]
    for w in writers:
        w.start()
    for w in writers:
        w.join(300)
    return len(_stored(graph, thread))


def checks(schema: str) -> list[tuple[str, bool, str]]:
    graph = _graph(schema)
    results: list[tuple[str, bool, str]] = []

    graph.invoke({"messages": [HumanMessage(content="first", id="a")]}, _config("twice"))
    graph.invoke({"messages": [HumanMessage(content="second", id="a")]}, _config("twice"))
    twice = [m.content for m in _stored(graph, "twice")]
    results.append(("ST-010", twice == ["second"],
                    f"a message whose id was stored replaced it without an error: {twice}"))
    graph.invoke({"messages": [HumanMessage(content="one", id="b"),
                               HumanMessage(content="two", id="b")]}, _config("inner"))
    inner = [m.content for m in _stored(graph, "inner")]
    results.append(("ST-011", inner == ["two"],
                    f"an id repeated in one update collapsed to one message: {inner}"))

    lone = "x\ud800y"
    graph.invoke({"messages": [HumanMessage(content=lone, id="s",
                                            additional_kwargs={"note": lone})]},
                 _config("surrogate"))
    back = _stored(graph, "surrogate")[0]
    results.append(("ST-015", back.content != lone,
                    f"a text holding a lone surrogate came back as {back.content!r}, no error"))
    results.append(("ST-013", back.additional_kwargs.get("note") != lone,
                    f"the same inside a message's extra fields: "
                    f"{back.additional_kwargs.get('note')!r}"))

    try:
        graph.invoke({"messages": [HumanMessage(content="ok", id="k1"),
                                   HumanMessage(content="big", id="k2",
                                                additional_kwargs={"n": 2**70})]},
                     _config("big"))
        refused = "nothing"
    except TypeError as exc:
        refused = f"TypeError ({exc})"
    kept = len(_stored(graph, "big"))
    results.append(("ST-001", refused != "nothing" and kept == 0,
                    f"a batch holding the integer 2**70 was refused with {refused}; "
                    f"{kept} of its messages kept"))

    attempts, shared = 0, 2 * PER_WRITER
    while attempts < ATTEMPTS and shared == 2 * PER_WRITER:
        # whether the writers overlap is up to the scheduler: try again if not
        attempts += 1
        shared = _two_writers(graph, schema, f"shared{attempts}")
    results.append(("ST-033", shared < 2 * PER_WRITER,
                    f"two processes each appended {PER_WRITER} messages and every call "
                    f"returned: {shared} of {2 * PER_WRITER} are in the thread "
                    f"(attempt {attempts})"))

    for i in range(1, 9):
        graph.invoke({"messages": [HumanMessage(content=f"c{i}", id=f"c{i}")]},
                     _config("damaged"))
    with _connect(schema) as conn:
        row = conn.execute(
            "SELECT version, blob FROM checkpoint_blobs WHERE thread_id = 'damaged'"
            " AND channel = 'messages' ORDER BY version DESC LIMIT 1").fetchone()
        assert row is not None
        blob = bytes(row["blob"])
        # the class name of the fifth message made bytes that are not UTF-8, the same length
        name = b"langchain_core.messages."
        at = -1
        for _ in range(5):
            at = blob.index(name, at + 1)
        blob = blob[:at] + b"\xc1" * len(name) + blob[at + len(name):]
        conn.execute("UPDATE checkpoint_blobs SET blob = %s WHERE thread_id = 'damaged'"
                     " AND channel = 'messages' AND version = %s", (blob, row["version"]))
    read = [None if m is None else m.content for m in _stored(graph, "damaged")]
    results.append(("ST-037", read[4] is None and len(read) == 8,
                    f"8 messages stored, one made unreadable in the latest messages blob: "
                    f"get_state() returned {read}, no error"))

    with _connect(schema) as conn:
        store = PostgresStore(conn)
        store.setup()
        store.put(("facts",), "a-subject", {"v": 1})
        time.sleep(0.1)  # the listing follows update stamps (newest first)
        store.put(("facts",), "b-subject", {"v": 2})
        listed = [item.key for item in store.search(("facts",))]
    results.append(("ST-028", listed != sorted(listed),
                    f"search() lists a namespace by last update, not by key: {listed}"))
    return results


def main() -> int:
    schema = f"repro_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(URL, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            with _connect(schema) as conn:
                PostgresSaver(conn).setup()
            results = checks(schema)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
