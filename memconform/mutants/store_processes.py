"""Store mutants that only several processes can catch: a store that keeps
acknowledged writes in process memory until it is closed, one that loses
updates under concurrent writers, two that claim ``atomic-batch`` but
commit row by row without the kit's row point, and one that commits row by
row through it (readers in other processes see its batches grow).

Each is opened over the store under test (it must be a file store such as
SQLite: the mutant keeps its own data in a file next to it, named after the
store's ``path``), so the fresh processes of the multi-process checks that
open the same URL and apply the same mutant share that data.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from memconform.adapters.contract import DuplicateIdError, UnsupportedValueError, check_limit
from memconform.adapters.faults import batch_row_pause
from memconform.mutants import Mutant
from memconform.values import Message

__all__ = ["MULTI_PROCESS_MUTANTS", "MUTANTS"]

_CLAIMS = frozenset({"durable", "atomic-batch", "concurrent-writers"})


def _beside(inner: Any, suffix: str) -> str:
    path = getattr(inner, "path", None)
    if not isinstance(path, str) or path == ":memory:":
        raise ValueError("this mutant needs a file store under it (sqlite:///path)")
    return f"{path}.{suffix}"


def _window(messages: list[Message], limit: int | None, include_uncommitted: bool) -> list[Message]:
    check_limit(limit)
    visible = [m for m in messages if include_uncommitted or m.committed]
    if limit is None:
        return visible
    return visible[len(visible) - limit :] if limit else []


def _has_lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


class BuffersUntilClose:
    """Acknowledges appends but keeps them in process memory until ``close()``:
    a process killed after its acknowledgement loses them."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._pending: dict[str, list[Message]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def capabilities(self) -> Any:
        return self.inner.capabilities

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        known = {m.id for m in self.messages(thread_id, include_uncommitted=True)}
        ids = [m.id for m in batch]
        if len(set(ids)) != len(ids) or known & set(ids):
            raise DuplicateIdError("an id of the batch is repeated or already stored")
        self._pending.setdefault(thread_id, []).extend(batch)

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        check_limit(limit)
        stored = list(self.inner.messages(thread_id, None, include_uncommitted=True))
        return _window(stored + self._pending.get(thread_id, []), limit, include_uncommitted)

    def close(self) -> None:
        for thread_id, batch in self._pending.items():
            self.inner.append(thread_id, batch)
        self._pending.clear()
        self.inner.close()


class LostUpdateFile:
    """Keeps every thread in one JSON file that each append reads, changes and
    rewrites with no lock: two writers at once lose one another's batches."""

    capabilities = _CLAIMS

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.path = _beside(inner, "lost-update.json")

    def _load(self) -> dict[str, list[dict[str, Any]]]:
        try:
            with open(self.path, encoding="utf-8") as f:
                data: dict[str, list[dict[str, Any]]] = json.load(f)
        except FileNotFoundError:
            return {}
        return data

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        data = self._load()
        stored = data.setdefault(thread_id, [])
        ids = [m.id for m in batch]
        if len(set(ids)) != len(ids) or {m["id"] for m in stored} & set(ids):
            raise DuplicateIdError("an id of the batch is repeated or already stored")
        stored.extend(m.to_json() for m in batch)
        scratch = f"{self.path}.{os.getpid()}"
        with open(scratch, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(scratch, self.path)  # whole file at once, but over whatever came between

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        got = [Message.from_json(m) for m in self._load().get(thread_id, [])]
        return _window(got, limit, include_uncommitted)

    def close(self) -> None:
        self.inner.close()


class RowByRow:
    """Claims ``atomic-batch`` but commits each message of a batch on its own,
    in a SQLite file of its own, without the kit's row point; a value it cannot
    hold is found only when its row is reached."""

    capabilities = _CLAIMS
    checks_up_front = False
    _file = "rows.db"
    _columns = (
        "position INTEGER PRIMARY KEY AUTOINCREMENT, thread TEXT NOT NULL, "
        "id TEXT NOT NULL, body TEXT NOT NULL"
    )
    _order = "position"
    """The file beside the store, the columns of its table ``rows``, and the order
    of a read."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._db = sqlite3.connect(
            _beside(inner, self._file), timeout=30, isolation_level=None,
            check_same_thread=False,
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"CREATE TABLE IF NOT EXISTS rows ({self._columns})")

    def _bad(self, message: Message) -> bool:
        return _has_lone_surrogate(message.text)

    def _refuse_repeated_ids(self, thread_id: str, batch: Sequence[Message]) -> None:
        stored = {m.id for m in self.messages(thread_id, include_uncommitted=True)}
        ids = [m.id for m in batch]
        if len(set(ids)) != len(ids) or stored & set(ids):
            raise DuplicateIdError("an id of the batch is repeated or already stored")

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self._refuse_repeated_ids(thread_id, batch)
        if self.checks_up_front and any(self._bad(m) for m in batch):
            raise UnsupportedValueError("a text holds a lone surrogate")
        for message in batch:
            if self._bad(message):
                raise UnsupportedValueError("a text holds a lone surrogate")
            self._before_row()
            self._db.execute(  # one transaction per row
                "INSERT INTO rows (thread, id, body) VALUES (?, ?, ?)",
                (thread_id, message.id, json.dumps(message.to_json())),
            )

    def _before_row(self) -> None:
        """Nothing: this store offers the kit no row point."""

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        rows = self._db.execute(
            f"SELECT body FROM rows WHERE thread = ? ORDER BY {self._order}", (thread_id,)
        ).fetchall()
        got = [Message.from_json(json.loads(body)) for (body,) in rows]
        return _window(got, limit, include_uncommitted)

    def close(self) -> None:
        self._db.close()
        self.inner.close()


class ChecksThenRowByRow(RowByRow):
    """Refuses a batch holding a value it cannot keep before writing anything,
    then commits the rest row by row, without the kit's row point: an
    in-process failure leaves nothing, a killed writer leaves part."""

    checks_up_front = True


class CommitsEachRow(RowByRow):
    """Passes each row through the kit's row point but commits it on its own,
    with no transaction around the batch: another process reading meanwhile
    sees the batch grow row by row, and a failure in the middle leaves part."""

    def _before_row(self) -> None:
        batch_row_pause()


class StampedBeforeWrite(RowByRow):
    """Orders each thread by a clock read when ``append`` is called, before its
    write: a batch whose append began first but was committed after another's
    lands before messages a reader in another process has already seen."""

    _file = "stamped.db"
    _columns = (
        "stamp INTEGER NOT NULL, n INTEGER NOT NULL, thread TEXT NOT NULL, "
        "id TEXT NOT NULL, body TEXT NOT NULL"
    )
    _order = "stamp, rowid"

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        stamp = time.time_ns()  # the clock, read before anything is written
        self._refuse_repeated_ids(thread_id, batch)
        if any(self._bad(m) for m in batch):
            raise UnsupportedValueError("a text holds a lone surrogate")
        self._db.execute("BEGIN")  # deferred: no lock is taken before the first row
        try:
            for n, message in enumerate(batch):
                batch_row_pause()
                self._db.execute(
                    "INSERT INTO rows (stamp, n, thread, id, body) VALUES (?, ?, ?, ?, ?)",
                    (stamp, n, thread_id, message.id, json.dumps(message.to_json())),
                )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


def _mutant(name: str, cls: type, kills: str) -> Mutant:
    doc = (cls.__doc__ or "").strip().splitlines()[0]
    return Mutant(
        name=name, kind="store", doc=doc, kills=frozenset(kills.split()), build=cls,
        profile="store",
    )


MUTANTS: list[Mutant] = [
    _mutant("store-buffers-until-close", BuffersUntilClose, "ST-032"),
    _mutant("store-lost-update", LostUpdateFile, "ST-033"),
    _mutant("store-row-by-row", RowByRow, "ST-016 ST-034"),
    _mutant("store-checks-then-row-by-row", ChecksThenRowByRow, "ST-034"),
    _mutant("store-commits-each-row", CommitsEachRow, "ST-016 ST-034 ST-036"),
    _mutant("store-stamped-before-write", StampedBeforeWrite, "ST-036"),
]
"""Every multi-process store mutant; ``kills`` lists the rules whose scenarios
reject it (on a SQLite store)."""

MULTI_PROCESS_MUTANTS = frozenset(m.name for m in MUTANTS)
"""All of them run on SQLite."""
