"""Store mutants that only several processes can catch: a store that keeps
acknowledged writes in process memory until it is closed, ones that lose
updates under concurrent writers (appends, compare-and-set, and the writes
of every other kind), two that claim ``atomic-batch`` but commit row by row
without the kit's row point, one that commits row by row through it (readers
in other processes see its batches grow), one that orders by the local
wall clock of the process that wrote, and one that serves each process from a
cache of its own checked by counts other processes' writes can leave alone.

Each is opened over the store under test (it must be a file store such as
SQLite: the mutant keeps its own data in a file next to it, named after the
store's ``path``), so the fresh processes of the multi-process checks that
open the same URL and apply the same mutant share that data.
"""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from memconform.contract import (
    ConflictError,
    DuplicateIdError,
    UnsupportedValueError,
    check_limit,
)
from memconform.harness.faults import batch_row_pause
from memconform.harness.wrapper import StoreWrapper
from memconform.mutants import Mutant, store_mutant
from memconform.values import ErrorRecord, Fact, Message, StateEntry, TurnRecord

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


def _read_document(path: str) -> dict[str, Any]:
    """The JSON document at ``path`` (empty when there is none yet)."""
    try:
        with open(path, encoding="utf-8") as f:
            data: dict[str, Any] = json.load(f)
    except FileNotFoundError:
        return {}
    return data


def _write_document(path: str, data: dict[str, Any]) -> None:
    """Replace the document at ``path`` whole, with no lock: over whatever another
    process wrote since this one read it."""
    scratch = f"{path}.{os.getpid()}"
    with open(scratch, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(scratch, path)


def _require_stored(inner: Any, thread_id: str, message_ids: Sequence[str]) -> None:
    """``KeyError`` naming the first of ``message_ids`` the thread does not hold."""
    known = {m.id for m in inner.messages(thread_id, None, include_uncommitted=True)}
    unknown = [i for i in message_ids if i not in known]
    if unknown:
        raise KeyError(f"no message {unknown[0]!r} in thread {thread_id!r}")


def _flagged(
    inner: Any, thread_id: str, flags: Mapping[str, bool], limit: int | None,
    include_uncommitted: bool,
) -> list[Message]:
    """The thread's messages as ``inner`` holds them, each flag ``flags`` names
    (id to committed) put over its own, then windowed as ``messages()`` asks."""
    check_limit(limit)
    stored = inner.messages(thread_id, None, include_uncommitted=True)
    every = [m if m.id not in flags else replace(m, committed=flags[m.id]) for m in stored]
    return _window(every, limit, include_uncommitted)


class BuffersUntilClose(StoreWrapper):
    """Acknowledges appends but keeps them in process memory until ``close()``:
    a process killed after its acknowledgement loses them."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._pending: dict[str, list[Message]] = {}

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


class FlagsUntilClose(StoreWrapper):
    """Keeps commit-flag changes in process memory until ``close()``: a process
    killed after they were acknowledged loses them."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._flags: dict[str, dict[str, bool]] = {}

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        _require_stored(self.inner, thread_id, message_ids)
        self._flags.setdefault(thread_id, {}).update(dict.fromkeys(message_ids, committed))

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        return _flagged(self.inner, thread_id, self._flags.get(thread_id, {}), limit,
                        include_uncommitted)

    def close(self) -> None:
        for thread_id, flags in self._flags.items():
            for message_id, committed in flags.items():
                self.inner.set_committed(thread_id, [message_id], committed)
        self._flags.clear()
        self.inner.close()


class LostUpdateFile:
    """Keeps every thread in one JSON file that each append reads, changes and
    rewrites with no lock: two writers at once lose one another's batches."""

    capabilities = _CLAIMS

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.path = _beside(inner, "lost-update.json")

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        data = _read_document(self.path)
        stored = data.setdefault(thread_id, [])
        ids = [m.id for m in batch]
        if len(set(ids)) != len(ids) or {m["id"] for m in stored} & set(ids):
            raise DuplicateIdError("an id of the batch is repeated or already stored")
        stored.extend(m.to_json() for m in batch)
        _write_document(self.path, data)

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        got = [Message.from_json(m) for m in _read_document(self.path).get(thread_id, [])]
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


class CasCheckedByARead(StoreWrapper):
    """Compare-and-set is checked by a read and the write then made over the
    version stored by then: two processes that read the same version both win,
    and the later write replaces the earlier one."""

    def write_state(
        self, scope: str, key: str, value: Any, expected_version: int | None
    ) -> Any:
        current = self.inner.read_state(scope, key)
        if (None if current is None else current.version) != expected_version:
            raise ConflictError(f"{key!r} in {scope!r} is not at version {expected_version}")
        for _ in range(3):  # validation hooks reading the key again: a wide-open gap
            os.sched_yield()
            latest = self.inner.read_state(scope, key)
        return self.inner.write_state(
            scope, key, value, None if latest is None else latest.version)


class SideWritesInOneFile(StoreWrapper):
    """Keeps commit flags, error records, turn records, working state and facts
    in one JSON file beside the store, which each write reads, changes and
    rewrites with no lock: writers racing in other processes lose one
    another's writes of every kind but messages."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.path = _beside(inner, "side-writes.json")

    def _load(self) -> dict[str, Any]:
        data = _read_document(self.path)
        for part in ("flags", "errors", "records", "state", "facts"):
            data.setdefault(part, [] if part == "records" else {})
        return data

    def _save(self, data: dict[str, Any]) -> None:
        os.sched_yield()  # a validation step between the read and the write
        _write_document(self.path, data)

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        _require_stored(self.inner, thread_id, message_ids)
        data = self._load()
        data["flags"].setdefault(thread_id, {}).update(dict.fromkeys(message_ids, committed))
        self._save(data)

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        return _flagged(self.inner, thread_id, self._load()["flags"].get(thread_id, {}), limit,
                        include_uncommitted)

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        data = self._load()
        data["errors"].setdefault(thread_id, []).append(record.to_json())
        self._save(data)

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        return [ErrorRecord.from_json(r) for r in self._load()["errors"].get(thread_id, [])]

    def append_record(self, record: TurnRecord) -> None:
        data = self._load()
        data["records"].append(record.to_json())
        self._save(data)

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        return [TurnRecord.from_json(r) for r in self._load()["records"]
                if thread_id is None or r["thread_id"] == thread_id]

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        entry = self._load()["state"].get(scope, {}).get(key)
        return None if entry is None else StateEntry(key=key, value=entry[0], version=entry[1])

    def write_state(
        self, scope: str, key: str, value: Any, expected_version: int | None
    ) -> StateEntry:
        data = self._load()
        keys = data["state"].setdefault(scope, {})
        stored = keys.get(key)
        if (None if stored is None else stored[1]) != expected_version:
            raise ConflictError(f"{key!r} in {scope!r} is not at version {expected_version}")
        version = 1 if stored is None else stored[1] + 1
        keys[key] = [copy.deepcopy(value), version]
        self._save(data)
        return StateEntry(key=key, value=copy.deepcopy(value), version=version)

    def put_fact(self, scope: str, fact: Fact) -> None:
        data = self._load()
        data["facts"].setdefault(scope, {})[fact.subject] = fact.to_json()
        self._save(data)

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        found = self._load()["facts"].get(scope, {}).get(subject)
        return None if found is None else Fact.from_json(found)

    def facts(self, scope: str) -> list[Fact]:
        held = self._load()["facts"].get(scope, {})
        return [Fact.from_json(held[subject]) for subject in sorted(held)]

    def forget(self, scope: str, subject: str) -> bool:
        data = self._load()
        found = data["facts"].get(scope, {}).pop(subject, None) is not None
        self._save(data)
        return found


class OrderedByLocalTime(StoreWrapper):
    """Orders messages, error records and turn records by a stamp of the local
    wall clock taken when each was written (kept in a file beside the store):
    one process sees its own order, but a process in a zone behind the one
    before it has its writes read first."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._db = sqlite3.connect(_beside(inner, "local-stamps.db"), timeout=30,
                                   isolation_level=None, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS stamps "
                         "(kind TEXT, thread TEXT, item TEXT, stamp TEXT)")

    @staticmethod
    def _now() -> str:
        return datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")  # naive local time: the defect

    def _stamp(self, kind: str, thread: str, items: Sequence[str]) -> None:
        now = self._now()
        self._db.executemany("INSERT INTO stamps VALUES (?, ?, ?, ?)",
                             [(kind, thread, item, now) for item in items])

    def _stamps(self, kind: str, thread: str) -> dict[str, str]:
        rows = self._db.execute("SELECT item, stamp FROM stamps WHERE kind = ? AND thread = ?",
                                (kind, thread)).fetchall()
        return dict(rows)

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(thread_id, batch)
        self._stamp("message", thread_id, [m.id for m in batch])

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        check_limit(limit)
        stamps = self._stamps("message", thread_id)
        stored = self.inner.messages(thread_id, None, include_uncommitted=True)
        # a stable sort: one batch (one stamp) keeps its order
        ordered = sorted(stored, key=lambda m: stamps.get(m.id, "~"))
        return _window(ordered, limit, include_uncommitted)

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        n = len(self.inner.errors(thread_id))
        self.inner.record_error(thread_id, record)
        self._stamp("error", thread_id, [str(n)])

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        stamps = self._stamps("error", thread_id)
        held = list(enumerate(self.inner.errors(thread_id)))
        return [r for _, r in sorted(held, key=lambda nr: stamps.get(str(nr[0]), "~"))]

    def append_record(self, record: TurnRecord) -> None:
        n = len(self.inner.records())
        self.inner.append_record(record)
        self._stamp("record", "", [str(n)])

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        stamps = self._stamps("record", "")
        held = sorted(enumerate(self.inner.records()), key=lambda nr: stamps.get(str(nr[0]), "~"))
        return [r for _, r in held if thread_id is None or r.thread_id == thread_id]

    def close(self) -> None:
        self._db.close()
        self.inner.close()


class CachedByCount(StoreWrapper):
    """Serves reads from a cache in each process, checked by a count that other
    writes can leave alone: a thread's messages by how many it holds (flags
    aside), a scope's facts by how many there are, a state entry by its key
    existing. Its own writes clear the cache; another process's commit-flag
    changes, key rewrites and replaced facts stay unseen."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._cache: dict[tuple[str, str, str], tuple[object, Any]] = {}

    def _cached(self, key: tuple[str, str, str], count: object, read: Any) -> Any:
        hit = self._cache.get(key)
        if hit is None or hit[0] != count:
            hit = (count, read())
            self._cache[key] = hit
        return copy.deepcopy(hit[1])

    def _forget(self, kind: str, name: str) -> None:
        for key in [k for k in self._cache if k[:2] == (kind, name)]:
            del self._cache[key]

    def append(self, thread_id: str, batch: Sequence[Message]) -> Any:
        self._forget("messages", thread_id)
        return self.inner.append(thread_id, batch)

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> Any:
        self._forget("messages", thread_id)
        return self.inner.set_committed(thread_id, message_ids, committed)

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        check_limit(limit)
        count = len(self.inner.messages(thread_id, None, include_uncommitted=True))
        every = self._cached(("messages", thread_id, ""), count,
                             lambda: self.inner.messages(thread_id, None, include_uncommitted=True))
        return _window(every, limit, include_uncommitted)

    def write_state(self, scope: str, key: str, value: Any, expected_version: int | None) -> Any:
        self._forget("state", scope)
        return self.inner.write_state(scope, key, value, expected_version)

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        exists = self.inner.read_state(scope, key) is not None
        return self._cached(("state", scope, key), exists,  # type: ignore[no-any-return]
                            lambda: self.inner.read_state(scope, key))

    def put_fact(self, scope: str, fact: Fact) -> Any:
        self._forget("facts", scope)
        return self.inner.put_fact(scope, fact)

    def forget(self, scope: str, subject: str) -> Any:
        self._forget("facts", scope)
        return self.inner.forget(scope, subject)

    def facts(self, scope: str) -> list[Fact]:
        count = len(self.inner.facts(scope))
        return self._cached(("facts", scope, ""), count,  # type: ignore[no-any-return]
                            lambda: self.inner.facts(scope))

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        return next((f for f in self.facts(scope) if f.subject == subject), None)


MUTANTS: list[Mutant] = [
    store_mutant("store-buffers-until-close", BuffersUntilClose, "ST-032"),
    store_mutant("store-flags-until-close", FlagsUntilClose, "ST-032"),
    store_mutant("store-lost-update", LostUpdateFile, "ST-033"),
    store_mutant("store-row-by-row", RowByRow, "ST-016 ST-034"),
    store_mutant("store-checks-then-row-by-row", ChecksThenRowByRow, "ST-034"),
    store_mutant("store-commits-each-row", CommitsEachRow, "ST-016 ST-034 ST-036"),
    store_mutant("store-stamped-before-write", StampedBeforeWrite, "ST-036"),
    store_mutant("store-cas-checked-by-a-read", CasCheckedByARead, "ST-026"),
    store_mutant("store-side-writes-in-one-file", SideWritesInOneFile,
                 "ST-018 ST-022 ST-023 ST-025 ST-028"),
    store_mutant("store-ordered-by-local-time", OrderedByLocalTime, "ST-002 ST-022 ST-023"),
    store_mutant("store-cached-by-count", CachedByCount, "ST-018 ST-025 ST-028"),
]
"""Every multi-process store mutant; ``kills`` lists the rules whose scenarios
reject it (on a SQLite store)."""

MULTI_PROCESS_MUTANTS = frozenset(m.name for m in MUTANTS)
"""All of them run on SQLite."""
