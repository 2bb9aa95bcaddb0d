"""sqlrows: a SQL store on SQLite, one table per kind of record (the correct base).

Design
------
One SQLite file (``?path=``) holds everything, opened in WAL mode with a busy
timeout so several processes can share it. Every write is one
``BEGIN IMMEDIATE`` transaction, so it takes the file's write lock before it
reads what it needs (the next position, the stored version), and other
processes see it whole or not at all.

Tables:

- ``messages``: one row per message. The message fields are SQL columns
  (``msg_id``, ``role``, ``text``, ``run_id``, ``round``, ``turn_id``,
  ``committed``); ``parts`` and ``metadata`` are JSON text. ``position`` counts
  the thread's messages from 0 and is taken inside the write transaction, so
  order is append order whatever the clocks say; ``created_at`` is a UTC
  stamp kept for people reading the file, never used to order.
- ``error_records`` and ``turn_records``: one row per record, the record as
  JSON text, ordered by an ``AUTOINCREMENT`` sequence.
- ``state``: one row per ``(scope, key)`` with its value as JSON text and its
  compare-and-set version.
- ``facts``: one row per ``(scope, subject)``, every field a column (metadata
  as JSON text).

All text columns use SQLite's default BINARY collation, so names compare
code point for code point and ``ORDER BY subject`` is code-point order.
Text SQLite cannot hold exactly (a lone surrogate does not encode to UTF-8)
is refused with ``UnsupportedValueError``; inside JSON columns it is escaped
and kept.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

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
from memconform.values import (
    ErrorRecord,
    Fact,
    JSONValue,
    Message,
    StateEntry,
    TurnRecord,
    freeze_json,
)

__all__ = ["SqlRowsStore", "make"]

MESSAGES_TABLE = """
CREATE TABLE IF NOT EXISTS messages (
    thread_id  TEXT    NOT NULL,
    position   INTEGER NOT NULL,
    msg_id     TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    parts      TEXT    NOT NULL,
    run_id     TEXT,
    round      INTEGER,
    turn_id    TEXT,
    committed  INTEGER NOT NULL,
    metadata   TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    PRIMARY KEY (thread_id, position)
) WITHOUT ROWID
"""
MESSAGES_BY_ID = (
    "CREATE UNIQUE INDEX IF NOT EXISTS messages_by_id ON messages (thread_id, msg_id)"
)
ERRORS_TABLE = """
CREATE TABLE IF NOT EXISTS error_records (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    body      TEXT NOT NULL
)
"""
ERRORS_BY_THREAD = (
    "CREATE INDEX IF NOT EXISTS error_records_by_thread ON error_records (thread_id, seq)"
)
TURNS_TABLE = """
CREATE TABLE IF NOT EXISTS turn_records (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    turn_id   TEXT NOT NULL,
    body      TEXT NOT NULL
)
"""
TURNS_BY_THREAD = (
    "CREATE INDEX IF NOT EXISTS turn_records_by_thread ON turn_records (thread_id, seq)"
)
STATE_TABLE = """
CREATE TABLE IF NOT EXISTS state (
    scope   TEXT    NOT NULL,
    key     TEXT    NOT NULL,
    value   TEXT    NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) WITHOUT ROWID
"""
FACTS_TABLE = """
CREATE TABLE IF NOT EXISTS facts (
    scope      TEXT NOT NULL,
    subject    TEXT NOT NULL,
    statement  TEXT NOT NULL,
    writer     TEXT NOT NULL,
    source     TEXT NOT NULL,
    evidence   TEXT NOT NULL,
    written_at TEXT NOT NULL,
    kind       TEXT NOT NULL,
    trust      TEXT NOT NULL,
    origin     TEXT NOT NULL,
    recheck_at TEXT,
    metadata   TEXT NOT NULL,
    PRIMARY KEY (scope, subject)
) WITHOUT ROWID
"""

_MESSAGE_COLUMNS = (
    "msg_id, role, text, parts, run_id, round, turn_id, committed, metadata"
)
_FACT_COLUMNS = (
    "subject, statement, writer, source, evidence, written_at, kind, trust, origin,"
    " recheck_at, metadata"
)
_INT64 = (-(2**63), 2**63 - 1)


def to_json_text(value: JSONValue) -> str:
    """JSON text of a value; ``ensure_ascii`` escapes lone surrogates, so they survive."""
    return json.dumps(freeze_json(value), ensure_ascii=True, separators=(",", ":"))


def from_json_text(raw: Any, what: str) -> JSONValue:
    """The value of a JSON column; a column that is not JSON text raises StoreError."""
    if not isinstance(raw, str):
        raise StoreError(f"{what}: stored value is {type(raw).__name__}, not JSON text")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise StoreError(f"{what}: stored JSON cannot be decoded: {exc}") from None


def encodable(*texts: str | None) -> bool:
    """Whether SQLite (UTF-8) can hold every one of ``texts`` exactly."""
    for text in texts:
        if text is None or text.isascii():
            continue
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


def utc_now() -> str:
    return datetime.now(UTC).isoformat()


class SqlRowsStore:
    """Every capability of the contract over one SQLite file."""

    #: statements run (idempotently) when a store opens the file
    schema: tuple[str, ...] = (
        MESSAGES_TABLE,
        MESSAGES_BY_ID,
        ERRORS_TABLE,
        ERRORS_BY_THREAD,
        TURNS_TABLE,
        TURNS_BY_THREAD,
        STATE_TABLE,
        FACTS_TABLE,
    )

    def __init__(self, path: str, *, timeout: float = 30.0) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = FULL")
        if not self._schema_present():
            with self._tx() as cur:
                for statement in self.schema:
                    cur.execute(statement)

    _TABLES = frozenset({"messages", "error_records", "turn_records", "state", "facts"})

    def _schema_present(self) -> bool:
        """Whether the tables exist: a plain read, so opening the file never waits
        for a writer that holds the write lock."""
        names = {r[0] for r in self._read("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return names >= self._TABLES

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(c.value for c in Capability)

    # -- plumbing ---------------------------------------------------------------------

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction holding the file's write lock from its start."""
        with self._lock:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
                cur.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    cur.execute("ROLLBACK")
                raise

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One read statement (its own snapshot of the file)."""
        with self._lock:
            return self._db.execute(sql, tuple(args)).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- core: append -----------------------------------------------------------------

    def _row(self, message: Message) -> tuple[Any, ...]:
        """The column values of one message, checked for what SQLite can hold."""
        if not encodable(message.id, message.text, message.role, message.run_id, message.turn_id):
            raise UnsupportedValueError(
                f"message {message.id!r} holds text SQLite cannot keep exactly (a lone surrogate)"
            )
        if message.round is not None and not _INT64[0] <= message.round <= _INT64[1]:
            raise UnsupportedValueError(
                f"message {message.id!r}: round {message.round} does not fit a 64-bit integer"
            )
        return (
            message.id,
            message.role,
            message.text,
            to_json_text(list(message.parts)),
            message.run_id,
            message.round,
            message.turn_id,
            1 if message.committed else 0,
            to_json_text(dict(message.metadata)),
        )

    def _next_position(self, cur: sqlite3.Cursor, thread_id: str) -> int:
        row = cur.execute(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        return int(row[0])

    def _stored_ids(self, cur: sqlite3.Cursor, thread_id: str, ids: Sequence[str]) -> list[str]:
        return [
            i
            for i in ids
            if cur.execute(
                "SELECT 1 FROM messages WHERE thread_id = ? AND msg_id = ?", (thread_id, i)
            ).fetchone()
        ]

    def _insert(self, cur: sqlite3.Cursor, thread_id: str, rows: list[tuple[Any, ...]]) -> None:
        """Insert the batch's rows inside the caller's transaction."""
        start = self._next_position(cur, thread_id)
        stamp = utc_now()
        for offset, row in enumerate(rows):
            batch_row_pause()
            cur.execute(
                "INSERT INTO messages (thread_id, position, msg_id, role, text, parts, run_id,"
                " round, turn_id, committed, metadata, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (thread_id, start + offset, *row, stamp),
            )

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = list(batch)
        ids = [m.id for m in batch]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise DuplicateIdError(f"ids {repeated} repeat within the batch")
        if not encodable(thread_id):
            raise UnsupportedValueError("thread id holds a lone surrogate")
        rows = [self._row(m) for m in batch]
        if not rows:
            return
        try:
            with self._tx() as cur:
                stored = self._stored_ids(cur, thread_id, ids)
                if stored:
                    raise DuplicateIdError(f"ids {stored} are already in thread {thread_id!r}")
                self._insert(cur, thread_id, rows)
        except sqlite3.IntegrityError as exc:
            raise DuplicateIdError(f"append to {thread_id!r} repeats an id: {exc}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"append to {thread_id!r} failed: {exc}") from exc

    # -- core: read -------------------------------------------------------------------

    def _message(self, row: tuple[Any, ...]) -> Message:
        """Decode one row; a row that does not decode raises StoreError (never skipped)."""
        what = f"stored message {row[0]!r}"
        parts = from_json_text(row[3], what)
        metadata = from_json_text(row[8], what)
        if not isinstance(parts, list) or not isinstance(metadata, dict):
            raise StoreError(f"{what}: parts or metadata has the wrong JSON type")
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

    def _select(self, thread_id: str, limit: int | None, include_uncommitted: bool) -> list[tuple]:
        where = "thread_id = ?" if include_uncommitted else "thread_id = ? AND committed = 1"
        if limit is None:
            return self._read(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE {where} ORDER BY position",
                (thread_id,),
            )
        rows = self._read(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE {where}"
            " ORDER BY position DESC LIMIT ?",
            (thread_id, limit),
        )
        rows.reverse()
        return rows

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        if limit == 0 or not encodable(thread_id):
            return []
        return [self._message(r) for r in self._select(thread_id, limit, include_uncommitted)]

    def damage(self, thread_id: str) -> None:
        """The optional hook: the middle message's ``parts`` column becomes text that
        is not JSON."""
        with self._tx() as cur:
            positions = [
                r[0]
                for r in cur.execute(
                    "SELECT position FROM messages WHERE thread_id = ? ORDER BY position",
                    (thread_id,),
                ).fetchall()
            ]
            target = positions[damage_index(len(positions))]
            cur.execute(
                "UPDATE messages SET parts = '{\"broken' WHERE thread_id = ? AND position = ?",
                (thread_id, target),
            )

    # -- commit-flags -----------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        ids = list(message_ids)
        if not encodable(thread_id, *ids):
            raise KeyError(f"unknown message ids in thread {thread_id!r}: {ids}")
        with self._tx() as cur:
            stored = set(self._stored_ids(cur, thread_id, ids))
            missing = [i for i in ids if i not in stored]
            if missing:
                raise KeyError(f"unknown message ids in thread {thread_id!r}: {missing}")
            cur.executemany(
                "UPDATE messages SET committed = ? WHERE thread_id = ? AND msg_id = ?",
                [(1 if committed else 0, thread_id, i) for i in ids],
            )

    # -- errors -----------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        if not encodable(thread_id, record.run_id):
            raise UnsupportedValueError("error record names hold a lone surrogate")
        body = to_json_text(record.to_json())
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO error_records (thread_id, run_id, body) VALUES (?, ?, ?)",
                (thread_id, record.run_id, body),
            )

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        if not encodable(thread_id):
            return []
        rows = self._read(
            "SELECT body FROM error_records WHERE thread_id = ? ORDER BY seq", (thread_id,)
        )
        return [self._error(r[0]) for r in rows]

    @staticmethod
    def _error(raw: Any) -> ErrorRecord:
        try:
            return ErrorRecord.from_json(from_json_text(raw, "error record"))
        except ValueError as exc:
            raise StoreError(f"stored error record cannot be decoded: {exc}") from None

    # -- turn-records -----------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        if not encodable(record.thread_id, record.turn_id):
            raise UnsupportedValueError("turn record names hold a lone surrogate")
        body = to_json_text(record.to_json())
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO turn_records (thread_id, turn_id, body) VALUES (?, ?, ?)",
                (record.thread_id, record.turn_id, body),
            )

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        if thread_id is None:
            rows = self._read("SELECT body FROM turn_records ORDER BY seq")
        elif not encodable(thread_id):
            return []
        else:
            rows = self._read(
                "SELECT body FROM turn_records WHERE thread_id = ? ORDER BY seq", (thread_id,)
            )
        return [self._turn(r[0]) for r in rows]

    @staticmethod
    def _turn(raw: Any) -> TurnRecord:
        try:
            return TurnRecord.from_json(from_json_text(raw, "turn record"))
        except ValueError as exc:
            raise StoreError(f"stored turn record cannot be decoded: {exc}") from None

    # -- state ------------------------------------------------------------------------

    def _state_value(self, raw: Any) -> JSONValue:
        return from_json_text(raw, "state value")

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        if not encodable(scope, key):
            return None
        rows = self._read(
            "SELECT value, version FROM state WHERE scope = ? AND key = ?", (scope, key)
        )
        if not rows:
            return None
        return StateEntry(key, self._state_value(rows[0][0]), int(rows[0][1]))

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        if not encodable(scope, key):
            raise UnsupportedValueError("state scope or key holds a lone surrogate")
        data = to_json_text(value)
        with self._tx() as cur:
            row = cur.execute(
                "SELECT version FROM state WHERE scope = ? AND key = ?", (scope, key)
            ).fetchone()
            stored = None if row is None else int(row[0])
            if stored != expected_version:
                raise ConflictError(
                    f"state {scope!r}/{key!r}: expected version {expected_version}, "
                    f"stored {stored}"
                )
            version = 1 if stored is None else stored + 1
            if stored is None:
                cur.execute(
                    "INSERT INTO state (scope, key, value, version) VALUES (?, ?, ?, ?)",
                    (scope, key, data, version),
                )
            else:
                cur.execute(
                    "UPDATE state SET value = ?, version = ? WHERE scope = ? AND key = ?"
                    " AND version = ?",
                    (data, version, scope, key, stored),
                )
        return StateEntry(key, json.loads(data), version)

    # -- knowledge --------------------------------------------------------------------

    def _fact(self, row: tuple[Any, ...]) -> Fact:
        metadata = from_json_text(row[10], f"fact {row[0]!r}")
        if not isinstance(metadata, dict):
            raise StoreError(f"fact {row[0]!r}: metadata is not a JSON object")
        return Fact(
            subject=row[0],
            statement=row[1],
            writer=row[2],
            source=row[3],
            evidence=row[4],
            written_at=row[5],
            kind=row[6],
            trust=row[7],
            origin=row[8],
            recheck_at=row[9],
            metadata=metadata,
        )

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        texts = (
            fact.subject, fact.statement, fact.writer, fact.source, fact.evidence,
            fact.written_at, fact.kind, fact.trust, fact.origin, fact.recheck_at,
        )
        if not encodable(scope, *texts):
            raise UnsupportedValueError(
                f"fact {fact.subject!r} holds text SQLite cannot keep exactly"
            )
        metadata = to_json_text(dict(fact.metadata))
        with self._tx() as cur:
            cur.execute(
                f"INSERT INTO facts (scope, {_FACT_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (scope, subject) DO UPDATE SET statement = excluded.statement,"
                " writer = excluded.writer, source = excluded.source,"
                " evidence = excluded.evidence, written_at = excluded.written_at,"
                " kind = excluded.kind, trust = excluded.trust, origin = excluded.origin,"
                " recheck_at = excluded.recheck_at, metadata = excluded.metadata",
                (scope, *texts, metadata),
            )

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        if not encodable(scope, subject):
            return None
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE scope = ? AND subject = ?",
            (scope, subject),
        )
        return self._fact(rows[0]) if rows else None

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`."""
        if not encodable(scope):
            return []
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE scope = ? ORDER BY subject", (scope,)
        )
        return [self._fact(r) for r in rows]

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        if not encodable(scope, subject):
            return False
        with self._tx() as cur:
            cur.execute("DELETE FROM facts WHERE scope = ? AND subject = ?", (scope, subject))
            return cur.rowcount > 0


def make(path: str | None = None, timeout: str = "30") -> SqlRowsStore:
    """``corpus.round5.stores.sqlrows.base:make?path=/tmp/x.db[&timeout=SECONDS]``."""
    if not path:
        raise ValueError("sqlrows needs ?path=FILE (the SQLite file every process opens)")
    return SqlRowsStore(path, timeout=float(timeout))
