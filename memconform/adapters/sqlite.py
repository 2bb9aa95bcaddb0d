"""``sqlite:///path.db``: the embedded default store.

One SQLite file holds every thread. The store declares every capability,
including ``durable`` (what an acknowledged call wrote survives closing the
file and reopening it from another process), ``atomic-batch`` (a batch is
written in one ``BEGIN IMMEDIATE`` transaction, so a process killed in the
middle of it leaves nothing behind) and ``concurrent-writers`` (several
processes may append to one file at once: WAL journal, a busy timeout, and
positions taken inside the write transaction).

Schema (created on open, idempotent):

- ``messages``: one row per message; ``position`` is a global append counter
  (the row id), so order is append order and the newest-N window is one
  backwards range scan of the ``(thread_id, position)`` index. ``parts`` and
  ``metadata`` are JSON text; ``text`` is stored as TEXT bound from ``str``,
  which keeps NUL and every other code point exactly.
- ``error_records``, ``turn_records``: JSON documents in append order.
- ``state``: one row per ``(scope, key)`` with its compare-and-set version.
- ``facts``: one row per ``(scope, subject)``; a new fact replaces the old row.

Text that UTF-8 cannot encode (a lone surrogate) cannot be stored exactly and
raises :class:`~memconform.contract.UnsupportedValueError`; JSON
columns escape such code points, so ``parts`` and ``metadata`` keep them.

URL query options: ``timeout`` (busy timeout in seconds, default 30) and
``synchronous`` (``full``, the default, or ``normal``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from memconform.adapters.urls import StoreURLError, redact_url
from memconform.contract import (
    Capability,
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
    check_limit,
    damage_index,
)
from memconform.harness.faults import batch_row_pause
from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = ["SCHEMA", "SQLiteStore", "open_sqlite", "sqlite_path"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    position  INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL,
    id        TEXT NOT NULL,
    role      TEXT NOT NULL,
    text      TEXT NOT NULL,
    parts     TEXT NOT NULL,
    run_id    TEXT,
    round     INTEGER,
    turn_id   TEXT,
    committed INTEGER NOT NULL,
    metadata  TEXT NOT NULL,
    UNIQUE (thread_id, id)
);
CREATE INDEX IF NOT EXISTS messages_window ON messages (thread_id, position);
CREATE TABLE IF NOT EXISTS error_records (
    position  INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL,
    record    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS error_records_thread ON error_records (thread_id, position);
CREATE TABLE IF NOT EXISTS turn_records (
    position  INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL,
    record    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS turn_records_thread ON turn_records (thread_id, position);
CREATE TABLE IF NOT EXISTS state (
    scope   TEXT NOT NULL,
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE TABLE IF NOT EXISTS facts (
    scope   TEXT NOT NULL,
    subject TEXT NOT NULL,
    fact    TEXT NOT NULL,
    PRIMARY KEY (scope, subject)
);
"""
"""The schema, created on open when absent."""

_COLUMNS = "id, role, text, parts, run_id, round, turn_id, committed, metadata"
_INSERT = (
    "INSERT INTO messages (thread_id, id, role, text, parts, run_id, round, turn_id,"
    " committed, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _dumps(value: JSONValue) -> str:
    # ensure_ascii escapes lone surrogates, so JSON columns keep them exactly.
    if not value and isinstance(value, list | dict):
        return "[]" if isinstance(value, list) else "{}"
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=True)


def _message(row: tuple[Any, ...]) -> Message:
    """The message of one row; a row whose JSON columns do not decode to a list
    and an object raises :class:`StoreError` (the read fails, never skips it)."""
    raw_parts, raw_metadata = row[3], row[8]
    try:
        parts = [] if raw_parts == "[]" else json.loads(raw_parts)
        metadata = {} if raw_metadata == "{}" else json.loads(raw_metadata)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"stored message {row[0]!r} cannot be decoded: {exc}") from None
    if not isinstance(parts, list) or not isinstance(metadata, dict):
        raise StoreError(
            f"stored message {row[0]!r} cannot be decoded: parts or metadata has the wrong type"
        )
    return Message(
        id=row[0],
        role=row[1],
        text=row[2],
        parts=tuple(parts),
        run_id=row[4],
        round=row[5],
        turn_id=row[6],
        committed=bool(row[7]),
        metadata=metadata,
    )


def _unencodable(what: str, exc: UnicodeEncodeError) -> UnsupportedValueError:
    return UnsupportedValueError(
        f"{what} holds a lone surrogate at index {exc.start}; SQLite text cannot keep it exactly"
    )


def _check_text(what: str, text: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _unencodable(what, exc) from None


class _Duplicate(Exception):
    """An insert hit the (thread_id, id) uniqueness constraint."""


def _paused(rows: list[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """The rows, with the kit's row point called before each one is written."""
    for row in rows:
        batch_row_pause()
        yield row


def sqlite_path(url: str) -> str:
    """The file path named by ``sqlite:///relative.db`` or ``sqlite:////abs/path.db``.

    A path given as ``sqlite:///`` followed by an absolute path (what
    ``f"sqlite:///{path}"`` produces) is absolute as well. Raises ``ValueError``
    for another scheme or an empty path.
    """
    if not url.lower().startswith("sqlite://"):
        raise ValueError(f"not a sqlite URL: {url!r}")
    rest = url[len("sqlite://") :].split("?", 1)[0]
    if rest.startswith("//") or rest.startswith("/"):
        path = rest[1:]
    else:
        raise ValueError(f"sqlite URL needs a path after sqlite:///: {url!r}")
    if not path:
        raise ValueError(f"sqlite URL names no file: {url!r}")
    return path


class SQLiteStore:
    """A store in one SQLite file; see the Store contract for each method.

    One connection per instance, shared by threads under a lock; several
    processes (or instances) may use the same file at once.
    """

    def __init__(
        self, path: str | Path, *, timeout: float = 30.0, synchronous: str = "full"
    ) -> None:
        if synchronous.lower() not in ("full", "normal"):
            raise ValueError(f"synchronous must be 'full' or 'normal', got {synchronous!r}")
        self.path = str(path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        if self.path != ":memory:":
            self._use_wal(timeout)
        self._conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        if not self._has_schema():
            with self._write() as cur:
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        cur.execute(statement)

    def _use_wal(self, timeout: float) -> None:
        """Switch the file to write-ahead logging, waiting up to ``timeout`` for
        other openers: SQLite answers a racing switch with "database is locked"
        at once, without its busy handler, when several processes open a new
        file together."""
        deadline = time.monotonic() + timeout
        pause = 0.001
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _has_schema(self) -> bool:
        """Whether every table exists already (a read: opening never waits for writers)."""
        wanted = {"messages", "error_records", "turn_records", "state", "facts"}
        with self._lock:
            found = {
                row[0]
                for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        return wanted <= found

    # -- plumbing -----------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Cursor]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back
        on any exception (which propagates)."""
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            try:
                cur.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    cur.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close the connection; the file keeps everything acknowledged."""
        with self._lock:
            self._conn.close()

    @property
    def capabilities(self) -> frozenset[str]:
        """Every capability."""
        return frozenset(c.value for c in Capability)

    # -- core ---------------------------------------------------------------------

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = list(batch)
        seen: set[str] = set()
        rows = []
        for message in batch:
            if message.id in seen:
                raise DuplicateIdError(f"message id {message.id!r} repeats within the batch")
            seen.add(message.id)
            _check_text(f"message {message.id!r}: text", message.text)
            if message.round is not None and not -(2**63) <= message.round < 2**63:
                raise UnsupportedValueError(
                    f"message {message.id!r}: round {message.round} does not fit a 64-bit "
                    "integer column")
            rows.append(
                (
                    thread_id,
                    message.id,
                    message.role,
                    message.text,
                    _dumps(list(message.parts)),
                    message.run_id,
                    message.round,
                    message.turn_id,
                    1 if message.committed else 0,
                    _dumps(dict(message.metadata)),
                )
            )
        if not rows:
            return
        try:
            with self._write() as cur:
                try:
                    cur.executemany(_INSERT, _paused(rows))
                except sqlite3.IntegrityError as exc:
                    if "UNIQUE" not in str(exc):
                        raise
                    raise _Duplicate from None
        except _Duplicate:
            with self._lock:
                stored = [
                    row[1]
                    for row in rows
                    if self._conn.execute(
                        "SELECT 1 FROM messages WHERE thread_id = ? AND id = ?",
                        (thread_id, row[1]),
                    ).fetchone()
                ]
            raise DuplicateIdError(
                f"message ids {stored} are already in thread {thread_id!r}"
            ) from None
        except UnicodeEncodeError as exc:
            raise _unencodable("a message field", exc) from None
        except sqlite3.Error as exc:
            raise StoreError(f"append to {thread_id!r} failed: {exc}") from exc

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        if limit == 0:
            return []
        where = "thread_id = ?" if include_uncommitted else "thread_id = ? AND committed = 1"
        with self._lock:
            if limit is None:
                rows = self._conn.execute(
                    f"SELECT {_COLUMNS} FROM messages WHERE {where} ORDER BY position",
                    (thread_id,),
                ).fetchall()
            else:
                rows = self._conn.execute(
                    f"SELECT {_COLUMNS} FROM messages WHERE {where} ORDER BY position DESC LIMIT ?",
                    (thread_id, limit),
                ).fetchall()
                rows.reverse()
        return [_message(row) for row in rows]

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the ``parts`` column of the thread's middle row becomes text that is not JSON."""
        with self._write() as cur:
            rows = cur.execute(
                "SELECT position FROM messages WHERE thread_id = ? ORDER BY position",
                (thread_id,),
            ).fetchall()
            target = rows[damage_index(len(rows))][0]
            cur.execute("UPDATE messages SET parts = '[not json' WHERE position = ?", (target,))

    # -- commit-flags ---------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        ids = list(message_ids)
        with self._write() as cur:
            missing = [
                i
                for i in ids
                if cur.execute(
                    "SELECT 1 FROM messages WHERE thread_id = ? AND id = ?", (thread_id, i)
                ).fetchone()
                is None
            ]
            if missing:
                raise KeyError(f"unknown message ids in thread {thread_id!r}: {missing}")
            cur.executemany(
                "UPDATE messages SET committed = ? WHERE thread_id = ? AND id = ?",
                [(1 if committed else 0, thread_id, i) for i in ids],
            )

    # -- errors ---------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        data = _dumps(record.to_json())
        with self._write() as cur:
            cur.execute(
                "INSERT INTO error_records (thread_id, record) VALUES (?, ?)", (thread_id, data)
            )

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT record FROM error_records WHERE thread_id = ? ORDER BY position",
                (thread_id,),
            ).fetchall()
        return [ErrorRecord.from_json(json.loads(r[0])) for r in rows]

    # -- turn-records ---------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        data = _dumps(record.to_json())
        with self._write() as cur:
            cur.execute(
                "INSERT INTO turn_records (thread_id, record) VALUES (?, ?)",
                (record.thread_id, data),
            )

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        with self._lock:
            if thread_id is None:
                rows = self._conn.execute(
                    "SELECT record FROM turn_records ORDER BY position"
                ).fetchall()
            else:
                rows = self._conn.execute(
                    "SELECT record FROM turn_records WHERE thread_id = ? ORDER BY position",
                    (thread_id,),
                ).fetchall()
        return [TurnRecord.from_json(json.loads(r[0])) for r in rows]

    # -- state ----------------------------------------------------------------------

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        with self._lock:
            row = self._conn.execute(
                "SELECT value, version FROM state WHERE scope = ? AND key = ?", (scope, key)
            ).fetchone()
        return None if row is None else StateEntry(key, json.loads(row[0]), row[1])

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        data = _dumps(value)
        with self._write() as cur:
            row = cur.execute(
                "SELECT version FROM state WHERE scope = ? AND key = ?", (scope, key)
            ).fetchone()
            current = None if row is None else int(row[0])
            if current != expected_version:
                raise ConflictError(
                    f"state {scope}/{key}: expected version {expected_version}, "
                    f"stored version is {current}"
                )
            version = (current or 0) + 1
            cur.execute(
                "INSERT INTO state (scope, key, value, version) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value,"
                " version = excluded.version",
                (scope, key, data, version),
            )
        return StateEntry(key, json.loads(data), version)

    # -- knowledge ------------------------------------------------------------------

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        _check_text(f"fact {fact.subject!r}: statement", fact.statement)
        _check_text("fact subject", fact.subject)
        data = _dumps(fact.to_json())
        with self._write() as cur:
            cur.execute(
                "INSERT INTO facts (scope, subject, fact) VALUES (?, ?, ?)"
                " ON CONFLICT (scope, subject) DO UPDATE SET fact = excluded.fact",
                (scope, fact.subject, data),
            )

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        with self._lock:
            row = self._conn.execute(
                "SELECT fact FROM facts WHERE scope = ? AND subject = ?", (scope, subject)
            ).fetchone()
        return None if row is None else Fact.from_json(json.loads(row[0]))

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`.

        SQLite's binary collation orders UTF-8 bytes, which is code-point order.
        """
        with self._lock:
            rows = self._conn.execute(
                "SELECT fact FROM facts WHERE scope = ? ORDER BY subject", (scope,)
            ).fetchall()
        return [Fact.from_json(json.loads(r[0])) for r in rows]

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        with self._write() as cur:
            cur.execute("DELETE FROM facts WHERE scope = ? AND subject = ?", (scope, subject))
            return cur.rowcount > 0


def open_sqlite(url: str) -> SQLiteStore:
    """``sqlite:///path.db[?timeout=SECONDS&synchronous=full|normal]``: open (and
    create when absent) the store in that file. The file's folder must exist: a
    folder that does not is a :class:`~memconform.adapters.urls.StoreURLError`
    naming it (a mistyped path creates nothing)."""
    query = parse_qs(url.split("?", 1)[1]) if "?" in url else {}
    timeout = float(query.get("timeout", ["30"])[-1])
    synchronous = query.get("synchronous", ["full"])[-1]
    path = sqlite_path(url)
    if path != ":memory:":
        folder = Path(path).parent
        if not folder.is_dir():
            raise StoreURLError(
                f"{redact_url(url)}: the folder {str(folder)!r} does not exist "
                "(the kit creates the database file, not its folder)"
            )
    return SQLiteStore(path, timeout=timeout, synchronous=synchronous)
