"""LangGraph on SQLite (``SqliteSaver`` checkpoints, ``SqliteStore`` knowledge):
the compliance page's findings, reproduced with the library alone
(``pip install langgraph langgraph-checkpoint-sqlite``).

The thread is a minimal messages graph (``MessagesState``, one node that
changes nothing) compiled with a ``SqliteSaver``; a turn is added the way a
LangGraph application adds one, ``graph.invoke({"messages": [...]}, config)``.
Run ``python store_langgraph_sqlite.py``: each check prints ``<rule> reproduced: ...``
and the script exits 1 if any behaviour is no longer what the page says.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.sqlite import SqliteStore

PER_WRITER = 60
ATTEMPTS = 3


def _unchanged(state: MessagesState) -> dict[str, Any]:
    return {}


def _graph(path: str) -> Any:
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    builder = StateGraph(MessagesState)
    builder.add_node("unchanged", _unchanged)
    builder.add_edge(START, "unchanged")
    builder.add_edge("unchanged", END)
    return builder.compile(checkpointer=saver)


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _stored(graph: Any, thread: str) -> list[Any]:
    return list(graph.get_state(_config(thread)).values.get("messages", []))


def _writer(path: str, thread: str, name: str, barrier: Any) -> None:
    graph = _graph(path)
    barrier.wait()
    for i in range(PER_WRITER):
        graph.invoke({"messages": [HumanMessage(content=f"{name}{i}", id=f"{name}{i}")]},
                     _config(thread))


def _two_writers(graph: Any, path: str, thread: str) -> int:
    """How many messages ``thread`` holds after two processes appended at once."""
    barrier = multiprocessing.Barrier(2)
    writers = [multiprocessing.Process(target=_writer, args=(path, thread, n, barrier))
               for n in "pq"]
    for w in writers:
        w.start()
    for w in writers:
        w.join(300)
    return len(_stored(graph, thread))


def checks(folder: str) -> list[tuple[str, bool, str]]:
    path = str(Path(folder) / "store.db")
    graph = _graph(path)
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
        shared = _two_writers(graph, path, f"shared{attempts}")
    results.append(("ST-033", shared < 2 * PER_WRITER,
                    f"two processes each appended {PER_WRITER} messages and every call "
                    f"returned: {shared} of {2 * PER_WRITER} are in the thread "
                    f"(attempt {attempts})"))

    for i in range(1, 9):
        graph.invoke({"messages": [HumanMessage(content=f"c{i}", id=f"c{i}")]},
                     _config("damaged"))
    with sqlite3.connect(path) as conn:
        checkpoint_id, blob = conn.execute(
            "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = 'damaged'"
            " ORDER BY checkpoint_id DESC LIMIT 1").fetchone()
        # the class name of the fifth message made bytes that are not UTF-8, the same length
        name = b"langchain_core.messages."
        at = -1
        for _ in range(5):
            at = blob.index(name, at + 1)
        blob = blob[:at] + b"\xc1" * len(name) + blob[at + len(name):]
        conn.execute("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'damaged'"
                     " AND checkpoint_id = ?", (blob, checkpoint_id))
    conn.close()
    read = [None if m is None else m.content for m in _stored(graph, "damaged")]
    results.append(("ST-037", read[4] is None and len(read) == 8,
                    f"8 messages stored, one made unreadable in the latest checkpoint: "
                    f"get_state() returned {read}, no error"))

    with SqliteStore.from_conn_string(path) as store:
        store.setup()
        store.put(("facts",), "a-subject", {"v": 1})
        time.sleep(1.1)  # the listing follows whole-second update stamps
        store.put(("facts",), "b-subject", {"v": 2})
        listed = [item.key for item in store.search(("facts",))]
    results.append(("ST-028", listed != sorted(listed),
                    f"search() lists a namespace by last update, not by key: {listed}"))
    return results


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        results = checks(folder)
    for rule, held, what in results:
        print(f"{rule} {'reproduced' if held else 'NOT reproduced'}: {what}")
    return 0 if all(held for _, held, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
