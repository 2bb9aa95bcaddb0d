"""eventlog: an event-sourced store on SQLite (the correct base).

Design
------
One SQLite file (``?path=``) holds one append-only table, ``events``. Every
change the contract knows is an event in a *stream*:

===========================  =====================  ===============================
stream                       event types            subject column
===========================  =====================  ===============================
``thread:<name>``            ``MessageAppended``,   the message id (appends only)
                             ``CommitFlagsChanged``
``errors:<name>``            ``ErrorRecorded``      -
``turns:<name>``             ``TurnRecorded``       the turn id
``state:<scope name>``       ``StateWritten``       the state key
``facts:<scope name>``       ``FactPut``,           the fact's subject
                             ``FactForgotten``
===========================  =====================  ===============================

A *name* is the JSON string literal of the caller's id (``json.dumps`` with
``ensure_ascii``): an exact, injective, ASCII spelling, so ids that differ in
any code point (case, trailing space, Unicode form, lone surrogates) name
different streams and SQLite never sees a string it cannot encode. Payloads
are JSON text written the same way, so every value the contract allows
(NUL, lone surrogates, 64-bit-plus integers, whole floats, ``-0.0``) survives.

``seq`` is an ``AUTOINCREMENT`` key taken inside a ``BEGIN IMMEDIATE``
transaction, so writers are serialised and ``seq`` order is commit order;
every read is a fold of a stream's events in ``seq`` order, never by the
``recorded_at`` stamp (kept for people reading the file). A batch is one
transaction holding one ``MessageAppended`` event per message, so another
process sees all of it or none of it. A partial unique index on
``(stream, subject) WHERE type = 'MessageAppended'`` refuses a repeated id.

Read paths:

- messages: an in-process projection per thread (its messages in order with
  their current commit flag), caught up on every read with the stream's
  events after the last ``seq`` it folded, in one statement, so writes from
  other processes are seen at once and never half;
- facts: a fold from the stream's latest snapshot (table ``snapshots``,
  written in the same transaction as the event that triggers it, every
  ``SNAPSHOT_EVERY`` events) plus the events after it;
- state: the key's latest ``StateWritten`` event carries value and version;
- error and turn records: their events in ``seq`` order.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memconform.contract import (
    Capability,
    ConflictError,
    DuplicateIdError,
    StoreError,
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

__all__ = ["SNAPSHOT_EVERY", "EventLogStore", "make"]

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS events (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        stream      TEXT NOT NULL,
        type        TEXT NOT NULL,
        subject     TEXT,
        payload     TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS events_by_stream ON events (stream, seq)",
    "CREATE INDEX IF NOT EXISTS events_by_subject ON events (stream, subject, seq)",
    "CREATE INDEX IF NOT EXISTS events_by_type ON events (type, seq)",
    "CREATE UNIQUE INDEX IF NOT EXISTS events_message_ids ON events (stream, subject)"
    " WHERE type = 'MessageAppended'",
    """CREATE TABLE IF NOT EXISTS snapshots (
        stream TEXT PRIMARY KEY,
        seq    INTEGER NOT NULL,
        body   TEXT NOT NULL
    )""",
)

SNAPSHOT_EVERY = 64
"""A facts stream gets a new snapshot once this many events followed the last one."""

MESSAGE_APPENDED = "MessageAppended"
COMMIT_FLAGS_CHANGED = "CommitFlagsChanged"
ERROR_RECORDED = "ErrorRecorded"
TURN_RECORDED = "TurnRecorded"
STATE_WRITTEN = "StateWritten"
FACT_PUT = "FactPut"
FACT_FORGOTTEN = "FactForgotten"

_INSERT = (
    "INSERT INTO events (stream, type, subject, payload, recorded_at) VALUES (?, ?, ?, ?, ?)"
)


def name(ident: str) -> str:
    """The exact ASCII spelling of an id: its JSON string literal."""
    return json.dumps(ident)


def stream_of(category: str, ident: str) -> str:
    return f"{category}:{name(ident)}"


def encode(value: JSONValue) -> str:
    """JSON text of a value; ``ensure_ascii`` keeps lone surrogates and NUL exactly."""
    return json.dumps(freeze_json(value), ensure_ascii=True, separators=(",", ":"))


def decode(raw: Any, what: str) -> Any:
    """The value of stored JSON text; anything else raises StoreError."""
    if not isinstance(raw, str):
        raise StoreError(f"{what}: stored payload is {type(raw).__name__}, not JSON text")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise StoreError(f"{what}: stored payload cannot be decoded: {exc}") from None


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass
class ThreadView:
    """The in-process projection of one thread stream."""

    last_seq: int = 0
    #: [subject name, committed flag (None when the payload does not decode), payload text]
    entries: list[list[Any]] = field(default_factory=list)
    by_subject: dict[str, list[Any]] = field(default_factory=dict)


class EventLogStore:
    """Every capability of the contract as folds over one append-only events table."""

    def __init__(self, path: str, *, timeout: float = 30.0) -> None:
        self.path = path
        self.timeout = timeout
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        self._wal()
        self._db.execute("PRAGMA synchronous = FULL")
        self._views: dict[str, ThreadView] = {}
        if not self._schema_present():
            with self._tx() as cur:
                for statement in SCHEMA:
                    cur.execute(statement)

    def _wal(self) -> None:
        """Switch to WAL; several processes opening a new file at once get "locked"
        without the busy handler, so retry until the timeout."""
        deadline = time.monotonic() + self.timeout
        delay = 0.002
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def _schema_present(self) -> bool:
        with self._lock:
            found = {
                r[0]
                for r in self._db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                ).fetchall()
            }
        return {"events", "snapshots"} <= found

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(c.value for c in Capability)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- plumbing ---------------------------------------------------------------------

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction that holds the file's write lock from its start."""
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

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Cursor]:
        """One read transaction: every statement in it sees the same file state."""
        with self._lock:
            cur = self._db.cursor()
            cur.execute("BEGIN")
            try:
                yield cur
            finally:
                if self._db.in_transaction:
                    cur.execute("COMMIT")

    @staticmethod
    def _emit(
        cur: sqlite3.Cursor, stream: str, kind: str, subject: str | None, payload: str
    ) -> int:
        cur.execute(_INSERT, (stream, kind, subject, payload, utc_now()))
        return int(cur.lastrowid or 0)

    # -- core: append -----------------------------------------------------------------

    def _message_payload(self, message: Message) -> str:
        return encode(message.to_json())

    def _write_batch(
        self, cur: sqlite3.Cursor, stream: str, subjects: list[str], payloads: list[str]
    ) -> None:
        """One ``MessageAppended`` event per message, inside the caller's transaction."""
        stamp = utc_now()
        for subject, payload in zip(subjects, payloads, strict=True):
            batch_row_pause()
            cur.execute(_INSERT, (stream, MESSAGE_APPENDED, subject, payload, stamp))

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = list(batch)
        ids = [m.id for m in batch]
        repeated = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) < len(ids) else []
        if repeated:
            raise DuplicateIdError(f"ids {repeated} repeat within the batch")
        if not batch:
            return
        payloads = [self._message_payload(m) for m in batch]
        subjects = [name(i) for i in ids]
        stream = stream_of("thread", thread_id)
        try:
            with self._tx() as cur:
                self._write_batch(cur, stream, subjects, payloads)
        except sqlite3.IntegrityError as exc:
            raise DuplicateIdError(
                f"the batch repeats an id already in thread {thread_id!r}: {exc}"
            ) from None
        except sqlite3.Error as exc:
            raise StoreError(f"append to {thread_id!r} failed: {exc}") from exc

    # -- core: read -------------------------------------------------------------------

    def _fetch_new(self, stream: str, view: ThreadView) -> list[tuple[Any, ...]]:
        """The stream's events after the view's last one, in one statement."""
        return self._db.execute(
            "SELECT seq, type, subject, payload FROM events WHERE stream = ? AND seq > ?"
            " ORDER BY seq",
            (stream, view.last_seq),
        ).fetchall()

    def _fold_into(self, view: ThreadView, rows: list[tuple[Any, ...]]) -> None:
        for seq, kind, subject, payload in rows:
            if kind == MESSAGE_APPENDED:
                try:
                    committed: bool | None = bool(json.loads(payload)["committed"])
                except (ValueError, TypeError, KeyError):
                    committed = None  # undecodable: every read that reaches it fails
                entry = [subject, committed, payload]
                view.entries.append(entry)
                view.by_subject[subject] = entry
            elif kind == COMMIT_FLAGS_CHANGED:
                change = decode(payload, "commit flag change")
                for ident in change["ids"]:
                    entry = view.by_subject.get(name(ident))
                    if entry is not None:
                        entry[1] = bool(change["committed"])
            view.last_seq = seq

    def _view(self, thread_id: str) -> ThreadView:
        """The thread's projection, caught up with the file (call under the lock)."""
        stream = stream_of("thread", thread_id)
        view = self._views.get(stream)
        if view is None:
            view = self._views[stream] = ThreadView()
        self._fold_into(view, self._fetch_new(stream, view))
        return view

    def _select(
        self, view: ThreadView, limit: int | None, include_uncommitted: bool
    ) -> list[list[Any]]:
        if include_uncommitted:
            chosen = list(view.entries)
        else:
            chosen = [e for e in view.entries if e[1] is not False]
        if limit is not None:
            chosen = chosen[-limit:]
        return chosen

    @staticmethod
    def _message(entry: list[Any]) -> Message:
        data = decode(entry[2], "stored message")
        if not isinstance(data, dict):
            raise StoreError("stored message: payload is not a JSON object")
        data["committed"] = entry[1]
        try:
            return Message.from_json(data)
        except ValueError as exc:
            raise StoreError(f"stored message cannot be decoded: {exc}") from None

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        if limit == 0:
            return []
        with self._lock:
            chosen = [list(e) for e in self._select(self._view(thread_id), limit,
                                                      include_uncommitted)]
        return [self._message(e) for e in chosen]

    def damage(self, thread_id: str) -> None:
        """The optional hook: the middle message's payload becomes text that is not JSON
        (and this instance forgets its projection, as a fresh process would)."""
        stream = stream_of("thread", thread_id)
        with self._tx() as cur:
            seqs = [
                r[0]
                for r in cur.execute(
                    "SELECT seq FROM events WHERE stream = ? AND type = ? ORDER BY seq",
                    (stream, MESSAGE_APPENDED),
                ).fetchall()
            ]
            target = seqs[damage_index(len(seqs))]
            cur.execute("UPDATE events SET payload = '{\"id\": broken' WHERE seq = ?", (target,))
            self._views.pop(stream, None)

    # -- commit-flags -----------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        ids = list(message_ids)
        stream = stream_of("thread", thread_id)
        with self._tx() as cur:
            missing = [
                i
                for i in ids
                if cur.execute(
                    "SELECT 1 FROM events WHERE stream = ? AND type = ? AND subject = ?",
                    (stream, MESSAGE_APPENDED, name(i)),
                ).fetchone()
                is None
            ]
            if missing:
                raise KeyError(f"unknown message ids in thread {thread_id!r}: {missing}")
            if ids:
                self._emit(
                    cur, stream, COMMIT_FLAGS_CHANGED, None,
                    encode({"ids": ids, "committed": bool(committed)}),
                )

    # -- errors -----------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        payload = encode(record.to_json())
        with self._tx() as cur:
            self._emit(cur, stream_of("errors", thread_id), ERROR_RECORDED, None, payload)

    def _error_rows(self, thread_id: str) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(
                "SELECT payload FROM events WHERE stream = ? AND type = ? ORDER BY seq",
                (stream_of("errors", thread_id), ERROR_RECORDED),
            ).fetchall()

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        out = []
        for (raw,) in self._error_rows(thread_id):
            try:
                out.append(ErrorRecord.from_json(decode(raw, "error record")))
            except ValueError as exc:
                raise StoreError(f"stored error record cannot be decoded: {exc}") from None
        return out

    # -- turn-records -----------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        payload = encode(record.to_json())
        with self._tx() as cur:
            self._emit(
                cur, stream_of("turns", record.thread_id), TURN_RECORDED,
                name(record.turn_id), payload,
            )

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        with self._lock:
            if thread_id is None:
                rows = self._db.execute(
                    "SELECT payload FROM events WHERE type = ? ORDER BY seq", (TURN_RECORDED,)
                ).fetchall()
            else:
                rows = self._db.execute(
                    "SELECT payload FROM events WHERE stream = ? AND type = ? ORDER BY seq",
                    (stream_of("turns", thread_id), TURN_RECORDED),
                ).fetchall()
        out = []
        for (raw,) in rows:
            try:
                out.append(TurnRecord.from_json(decode(raw, "turn record")))
            except ValueError as exc:
                raise StoreError(f"stored turn record cannot be decoded: {exc}") from None
        return out

    # -- state ------------------------------------------------------------------------

    @staticmethod
    def _latest_state(cur: sqlite3.Cursor, stream: str, subject: str) -> dict[str, Any] | None:
        row = cur.execute(
            "SELECT payload FROM events WHERE stream = ? AND type = ? AND subject = ?"
            " ORDER BY seq DESC LIMIT 1",
            (stream, STATE_WRITTEN, subject),
        ).fetchone()
        if row is None:
            return None
        data = decode(row[0], "state entry")
        if not isinstance(data, dict) or "value" not in data or "version" not in data:
            raise StoreError("stored state entry has the wrong shape")
        return data

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        with self._lock:
            data = self._latest_state(self._db.cursor(), stream_of("state", scope), name(key))
        return None if data is None else StateEntry(key, data["value"], int(data["version"]))

    def _new_version(
        self, cur: sqlite3.Cursor, stream: str, subject: str, stored: int | None
    ) -> int:
        """The version the write being made gets: one more than the key's."""
        return 1 if stored is None else stored + 1

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        stream, subject = stream_of("state", scope), name(key)
        value_text = encode(value)
        with self._tx() as cur:
            data = self._latest_state(cur, stream, subject)
            stored = None if data is None else int(data["version"])
            if stored != expected_version:
                raise ConflictError(
                    f"state {scope!r}/{key!r}: expected version {expected_version}, "
                    f"stored {stored}"
                )
            version = self._new_version(cur, stream, subject, stored)
            payload = f'{{"key":{encode(key)},"value":{value_text},"version":{version}}}'
            self._emit(cur, stream, STATE_WRITTEN, subject, payload)
        return StateEntry(key, json.loads(value_text), version)

    # -- knowledge --------------------------------------------------------------------

    @staticmethod
    def _fold_facts(cur: sqlite3.Cursor, stream: str) -> tuple[dict[str, Any], int]:
        """The scope's current facts (subject name -> fact JSON) and how many events
        followed the snapshot they were folded from."""
        snap = cur.execute(
            "SELECT seq, body FROM snapshots WHERE stream = ?", (stream,)
        ).fetchone()
        since_seq, state = (0, {}) if snap is None else (snap[0], decode(snap[1], "snapshot"))
        rows = cur.execute(
            "SELECT type, subject, payload FROM events WHERE stream = ? AND seq > ?"
            " ORDER BY seq",
            (stream, since_seq),
        ).fetchall()
        for kind, subject, payload in rows:
            if kind == FACT_PUT:
                state[subject] = decode(payload, "fact")
            elif kind == FACT_FORGOTTEN:
                state.pop(subject, None)
        return state, len(rows)

    @staticmethod
    def _maybe_snapshot(
        cur: sqlite3.Cursor, stream: str, state: dict[str, Any], seq: int, since: int
    ) -> None:
        """Write the scope's snapshot as of event ``seq`` when enough events piled up."""
        if since >= SNAPSHOT_EVERY:
            cur.execute(
                "INSERT INTO snapshots (stream, seq, body) VALUES (?, ?, ?)"
                " ON CONFLICT (stream) DO UPDATE SET seq = excluded.seq, body = excluded.body",
                (stream, seq, encode(state)),
            )

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        stream, subject = stream_of("facts", scope), name(fact.subject)
        data = fact.to_json()
        payload = encode(data)
        with self._tx() as cur:
            state, since = self._fold_facts(cur, stream)
            seq = self._emit(cur, stream, FACT_PUT, subject, payload)
            state[subject] = json.loads(payload)
            self._maybe_snapshot(cur, stream, state, seq, since + 1)

    @staticmethod
    def _fact(data: Any) -> Fact:
        try:
            return Fact.from_json(data)
        except ValueError as exc:
            raise StoreError(f"stored fact cannot be decoded: {exc}") from None

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        with self._snapshot() as cur:
            state, _ = self._fold_facts(cur, stream_of("facts", scope))
        data = state.get(name(subject))
        return None if data is None else self._fact(data)

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts` (code-point order)."""
        with self._snapshot() as cur:
            state, _ = self._fold_facts(cur, stream_of("facts", scope))
        found = [self._fact(d) for d in state.values()]
        return sorted(found, key=lambda f: f.subject)

    def _forget_applies(self, cur: sqlite3.Cursor, stream: str, subject: str,
                        state: dict[str, Any]) -> bool:
        """Whether the subject has a current fact to forget."""
        return subject in state

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        stream, subj = stream_of("facts", scope), name(subject)
        with self._tx() as cur:
            state, since = self._fold_facts(cur, stream)
            if not self._forget_applies(cur, stream, subj, state):
                return False
            seq = self._emit(cur, stream, FACT_FORGOTTEN, subj, encode({"subject": subject}))
            state.pop(subj, None)
            self._maybe_snapshot(cur, stream, state, seq, since + 1)
            return True


def make(path: str | None = None, timeout: str = "30") -> EventLogStore:
    """``corpus.round6.stores.eventlog.base:make?path=/tmp/x/events.db[&timeout=SECONDS]``."""
    if not path:
        raise ValueError("eventlog needs ?path=FILE (the SQLite file every process opens)")
    return EventLogStore(path, timeout=float(timeout))
