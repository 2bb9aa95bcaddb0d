"""Store benchmarks: ``python bench/store_bench.py`` prints a table.

1. SQLite store append and window throughput against raw ``sqlite3`` doing the
   same work in the same run: the same schema and pragmas, one transaction per
   batch, JSON text for parts and metadata, and for reads the same SELECT with
   the JSON columns decoded. Target: the store reaches at least 0.7 of raw.
2. The newest-6 window read from a thread of 100,000 messages against one of
   1,000, for SQLite and, when a server answers, PostgreSQL
   (``MEMCONFORM_POSTGRESQL_URL`` or the local default). Target: at most 2x.
   The PostgreSQL threads (``memconform-bench-window-big`` and ``-small``) are
   filled on the first run and reused by later ones.

Timings are best-of-N wall-clock medians; they are figures for people, not
assertions. The whole run stays around a minute on a small machine.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memconform.adapters.sqlite import SCHEMA, SQLiteStore  # noqa: E402
from memconform.values import Message  # noqa: E402

BATCHES = 400
BATCH_SIZE = 10
WINDOW_READS = 1000
BIG, SMALL = 100_000, 1_000
PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"


def _messages(prefix: str, count: int) -> list[Message]:
    return [
        Message(
            id=f"{prefix}{i}",
            role="assistant" if i % 2 else "user",
            text=f"message {i}: the configuration lives in settings/app.toml",
            parts=({"type": "tool-call", "id": f"c{i}", "args": {"path": "."}},)
            if i % 3 == 0
            else (),
            run_id=f"run-{i // 4}",
            round=i % 4,
            metadata={"n": i},
        )
        for i in range(count)
    ]


def _best(fn: Callable[[], None], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _raw(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    return conn


def _raw_append(conn: sqlite3.Connection, thread: str, batch: list[Message]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO messages (thread_id, id, role, text, parts, run_id, round, turn_id,"
        " committed, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                thread,
                m.id,
                m.role,
                m.text,
                json.dumps(list(m.parts)),
                m.run_id,
                m.round,
                m.turn_id,
                1,
                json.dumps(dict(m.metadata)),
            )
            for m in batch
        ],
    )
    conn.execute("COMMIT")


def _raw_window(conn: sqlite3.Connection, thread: str, n: int) -> list[Any]:
    rows = conn.execute(
        "SELECT id, role, text, parts, run_id, round, turn_id, committed, metadata FROM messages"
        " WHERE thread_id = ? AND committed = 1 ORDER BY position DESC LIMIT ?",
        (thread, n),
    ).fetchall()
    rows.reverse()
    return [(*r[:3], json.loads(r[3]), *r[4:8], json.loads(r[8])) for r in rows]


def throughput(folder: Path) -> list[tuple[str, float, float]]:
    """(operation, store ops/s, raw ops/s) for appends and newest-6 windows."""
    batches = [_messages(f"b{b}-", BATCH_SIZE) for b in range(BATCHES)]
    results = []
    run = [0]

    def store_appends() -> None:
        run[0] += 1
        store = SQLiteStore(folder / f"store-{run[0]}.db", synchronous="normal")
        for batch in batches:
            store.append("t", batch)
        store.close()

    def raw_appends() -> None:
        run[0] += 1
        conn = _raw(folder / f"raw-{run[0]}.db")
        for batch in batches:
            _raw_append(conn, "t", batch)
        conn.close()

    t_store, t_raw = _best(store_appends), _best(raw_appends)
    results.append(("append (batches of 10)", BATCHES / t_store, BATCHES / t_raw))

    store = SQLiteStore(folder / "store-1.db", synchronous="normal")
    conn = _raw(folder / f"raw-{run[0]}.db")
    assert len(store.messages("t")) == len(_raw_window(conn, "t", BATCHES * BATCH_SIZE))
    t_store = _best(lambda: [store.messages("t", 6) for _ in range(WINDOW_READS)])
    t_raw = _best(lambda: [_raw_window(conn, "t", 6) for _ in range(WINDOW_READS)])
    results.append(("newest-6 window", WINDOW_READS / t_store, WINDOW_READS / t_raw))
    store.close()
    conn.close()
    return results


def _fill(store: Any, thread: str, count: int, step: int = 2000) -> None:
    for start in range(0, count, step):
        store.append(thread, _chunk(thread, start, min(step, count - start)))


def _chunk(thread: str, start: int, size: int) -> list[Message]:
    return [
        Message(id=f"{thread}-{i}", role="user", text=f"message {i}", metadata={"n": i})
        for i in range(start, start + size)
    ]


def _ensure(store: Any, thread: str, count: int) -> None:
    """Fill ``thread`` with ``count`` messages unless an earlier run already did."""
    newest = store.messages(thread, 1)
    if newest and newest[0].id == f"{thread}-{count - 1}":
        return
    if newest:
        raise SystemExit(f"thread {thread!r} holds something else; drop it and run again")
    _fill(store, thread, count)


def window_scaling(store: Any, prefix: str, reads: int = WINDOW_READS) -> tuple[float, float]:
    """Seconds per newest-6 read on a 100,000-message thread and on a 1,000-message one.

    The threads are named by ``prefix`` and reused when an earlier run filled them
    (so a server-backed store is filled once, not on every run).
    """
    big, small = f"{prefix}-big", f"{prefix}-small"
    _ensure(store, big, BIG)
    _ensure(store, small, SMALL)
    for thread in (big, small):  # warm up
        store.messages(thread, 6)

    def per_read(thread: str) -> float:
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(reads // 5):
                store.messages(thread, 6)
            samples.append((time.perf_counter() - start) / (reads // 5))
        return statistics.median(samples)

    return per_read(big), per_read(small)


def _postgresql() -> Any | None:
    url = os.environ.get("MEMCONFORM_POSTGRESQL_URL", PG_DEFAULT)
    try:
        from memconform.adapters.registry import open_store

        store = open_store(url)
        store.messages("memconform-bench-probe", 1)  # type: ignore[attr-defined]
    except Exception as exc:
        print(f"PostgreSQL skipped: {type(exc).__name__}: {str(exc)[:120]}")
        return None
    return store


def main() -> int:
    started = time.perf_counter()
    rows: list[tuple[str, str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for op, store_rate, raw_rate in throughput(folder):
            ratio = store_rate / raw_rate
            rows.append(
                (
                    f"sqlite {op}",
                    f"{store_rate:,.0f}/s",
                    f"raw {raw_rate:,.0f}/s",
                    f"{ratio:.2f} of raw",
                    "ok" if ratio >= 0.7 else "BELOW 0.7",
                )
            )
        sqlite_store = SQLiteStore(folder / "scaling.db", synchronous="normal")
        big, small = window_scaling(sqlite_store, "sq")
        sqlite_store.close()
        ratio = big / small
        rows.append(
            (
                "sqlite newest-6, 100k vs 1k",
                f"{big * 1e6:.0f} µs",
                f"{small * 1e6:.0f} µs",
                f"{ratio:.2f}x",
                "ok" if ratio <= 2 else "ABOVE 2x",
            )
        )
    pg = _postgresql()
    if pg is not None:
        big, small = window_scaling(pg, "memconform-bench-window", reads=250)
        ratio = big / small
        rows.append(
            (
                "postgresql newest-6, 100k vs 1k",
                f"{big * 1e6:.0f} µs",
                f"{small * 1e6:.0f} µs",
                f"{ratio:.2f}x",
                "ok" if ratio <= 2 else "ABOVE 2x",
            )
        )
        close = getattr(pg, "close", None)
        if callable(close):
            close()
    header = ("benchmark", "store", "baseline", "ratio", "target")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    print(f"\n{time.perf_counter() - started:.1f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
