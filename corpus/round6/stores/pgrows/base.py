"""Typed rows on PostgreSQL (psycopg 3), correct by intent.

URL: ``corpus.round6.stores.pgrows.base:make?run=NAME[&url=postgresql://...]``.
``run`` names the data set: the store lives in the schema ``pgrows_<hash of
run>``, so any string can name a run and two runs never share a table.
``url`` defaults to ``postgresql://postgres@127.0.0.1:5432/test``. Every
process that opens the same URL works on the same schema.

Layout (every table in the run's schema):

- ``messages``: one row per message, typed columns (``msg_id``, ``role``,
  ``body`` text; ``parts`` and ``metadata`` jsonb; ``round`` bigint;
  ``committed`` boolean) keyed by ``(thread_id, pos)`` with ``UNIQUE
  (thread_id, msg_id)``. ``pos`` is taken inside the append's transaction
  under a transaction-scoped advisory lock on the thread, as
  ``max(pos) + 1``: each batch gets a contiguous range, and batches of one
  thread are numbered in the order their transactions commit.
- ``error_records``, ``turn_records``: one row per record with an identity
  column giving the order recorded; nested mappings are ``json`` (kept as
  written, key order and ``-0.0`` included), scalars are text / numeric.
- ``work_state``: ``(scope, key)`` -> ``json`` value and bigint version;
  compare-and-set is one ``UPDATE ... WHERE version = expected`` (or an
  ``INSERT ... ON CONFLICT DO NOTHING`` for the first write).
- ``facts``: ``(scope, subject)`` -> one column per provenance field.

Exactness: PostgreSQL text has no NUL, UTF-8 has no lone surrogates and
jsonb keeps numbers as decimals with no negative zero, so those values are
refused with ``UnsupportedValueError`` before anything is written. Floats
going into jsonb are written as plain decimals with a decimal point (never
an exponent), so they come back as the same float, never as an integer.

Connections come from a small pool; every call is one transaction, so two
threads of one process, or two processes, are serialised by the server
only. Capabilities: all of :class:`memconform.contract.Capability`.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, TypeVar

import psycopg

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
    ROLES,
    ErrorRecord,
    Fact,
    JSONValue,
    Message,
    StateEntry,
    TurnRecord,
    freeze_json,
)

__all__ = ["DEFAULT_URL", "PgRowsStore", "drop_schema", "make", "schema_for"]

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1
WINDOW_ALL = 2**62  # a window wider than this is wider than any thread
T = TypeVar("T")

DDL = """
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.messages (
    thread_id text NOT NULL,
    pos bigint NOT NULL,
    msg_id text NOT NULL,
    role text NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    body text NOT NULL,
    parts jsonb NOT NULL,
    run_id text,
    round bigint,
    turn_id text,
    committed boolean NOT NULL DEFAULT true,
    metadata jsonb NOT NULL,
    PRIMARY KEY (thread_id, pos),
    UNIQUE (thread_id, msg_id)
);
CREATE TABLE IF NOT EXISTS {s}.error_records (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id text NOT NULL,
    run_id text NOT NULL,
    error json NOT NULL,
    messages json NOT NULL,
    scope text,
    recorded_at text
);
CREATE INDEX IF NOT EXISTS error_records_thread ON {s}.error_records (thread_id, seq);
CREATE TABLE IF NOT EXISTS {s}.turn_records (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    turn_id text NOT NULL,
    thread_id text NOT NULL,
    outcome text NOT NULL,
    parent_turn_id text,
    continues_from text,
    grant_ json NOT NULL,
    steps_used numeric NOT NULL,
    tier text,
    fallbacks json NOT NULL,
    usage json NOT NULL,
    timing json NOT NULL,
    metadata json NOT NULL
);
CREATE INDEX IF NOT EXISTS turn_records_thread ON {s}.turn_records (thread_id, seq);
CREATE TABLE IF NOT EXISTS {s}.work_state (
    scope text NOT NULL,
    key text NOT NULL,
    value json NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE TABLE IF NOT EXISTS {s}.facts (
    scope text NOT NULL,
    subject text NOT NULL,
    statement text NOT NULL,
    writer text NOT NULL,
    source text NOT NULL,
    evidence text NOT NULL,
    written_at text NOT NULL,
    kind text NOT NULL,
    trust text NOT NULL,
    origin text NOT NULL,
    recheck_at text,
    metadata json NOT NULL,
    PRIMARY KEY (scope, subject)
);
"""

MESSAGE_COLUMNS = "msg_id, role, body, parts, run_id, round, turn_id, committed, metadata"
RECORD_COLUMNS = (
    "turn_id, thread_id, outcome, parent_turn_id, continues_from, grant_, steps_used, "
    "tier, fallbacks, usage, timing, metadata"
)
FACT_COLUMNS = (
    "subject, statement, writer, source, evidence, written_at, kind, trust, origin, "
    "recheck_at, metadata"
)

_ENSURED: set[tuple[str, str, str]] = set()  # (url, schema, DDL hash) made in this process
_ENSURED_LOCK = threading.Lock()


def schema_for(run: str) -> str:
    """The schema a run's data lives in: a fixed prefix and a hash, always a safe name."""
    return "pgrows_" + hashlib.sha256(run.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def drop_schema(run: str, url: str = DEFAULT_URL) -> None:
    """Drop the run's schema and everything in it (nothing happens if it is absent)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema_for(run)}" CASCADE')
    with _ENSURED_LOCK:
        _ENSURED.difference_update({e for e in _ENSURED if e[1] == schema_for(run)})


# -- exactness ---------------------------------------------------------------------------


def check_text(value: str, what: str) -> None:
    """Refuse text PostgreSQL cannot hold exactly: NUL, or a lone surrogate."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise UnsupportedValueError(f"{what} holds NUL, which PostgreSQL text cannot store")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UnsupportedValueError(f"{what} holds a lone surrogate (not UTF-8)") from None


def storable(value: str) -> bool:
    """Whether ``value`` could ever have been stored (reads of anything else find nothing)."""
    try:
        check_text(value, "key")
    except (UnsupportedValueError, ValueError):
        return False
    return True


def jsonb_float(value: float) -> str:
    """A float as a plain decimal with a point: jsonb keeps it and it parses back
    as the same float (``1e+300`` would come back as an integer)."""
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else text + ".0"


def encode_json(value: JSONValue, what: str, *, for_jsonb: bool) -> str:
    """JSON text for a ``jsonb`` (``for_jsonb``) or ``json`` column, refusing what
    the column cannot hold exactly."""
    out: list[str] = []

    def walk(item: Any) -> None:
        if item is None:
            out.append("null")
        elif isinstance(item, bool):
            out.append("true" if item else "false")
        elif isinstance(item, int):
            out.append(int.__repr__(item))
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise UnsupportedValueError(f"{what}: {item!r} has no JSON form")
            if for_jsonb and item == 0.0 and math.copysign(1.0, item) < 0:
                raise UnsupportedValueError(f"{what}: jsonb cannot keep -0.0")
            out.append(jsonb_float(item) if for_jsonb else float.__repr__(item))
        elif isinstance(item, str):
            check_text(item, what)
            out.append(json.dumps(item, ensure_ascii=False))
        elif isinstance(item, Mapping):
            out.append("{")
            for n, (key, sub) in enumerate(item.items()):
                if not isinstance(key, str):
                    raise ValueError(f"{what}: object keys must be strings")
                check_text(key, what)
                out.append(("," if n else "") + json.dumps(key, ensure_ascii=False) + ":")
                walk(sub)
            out.append("}")
        elif isinstance(item, list | tuple):
            out.append("[")
            for n, sub in enumerate(item):
                if n:
                    out.append(",")
                walk(sub)
            out.append("]")
        else:
            raise ValueError(f"{what}: not JSON data: {type(item).__name__}")

    walk(value)
    return "".join(out)


def check_bigint(value: int | None, what: str) -> None:
    if value is not None and not BIGINT_MIN <= value <= BIGINT_MAX:
        raise UnsupportedValueError(f"{what} {value} does not fit a 64-bit integer")


# -- the store ---------------------------------------------------------------------------


class _Pool:
    """A few idle connections kept for reuse; more are opened while threads overlap."""

    def __init__(self, url: str, keep: int = 2) -> None:
        self.url = url
        self.keep = keep
        self.idle: list[Any] = []
        self.lock = threading.Lock()
        self.closed = False

    def get(self) -> Any:
        with self.lock:
            if self.closed:
                raise StoreError("the store is closed")
            while self.idle:
                conn = self.idle.pop()
                if not (conn.closed or conn.broken):
                    return conn
        try:
            return psycopg.connect(self.url, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL: {exc}") from exc

    def put(self, conn: Any) -> None:
        healthy = not (conn.closed or conn.broken) and (
            conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        )
        with self.lock:
            if healthy and not self.closed and len(self.idle) < self.keep:
                self.idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
        for conn in idle:
            conn.close()


class PgRowsStore:
    """The store; :mod:`memconform.contract` says what each method promises."""

    ddl = DDL

    def __init__(self, run: str, url: str = DEFAULT_URL) -> None:
        self.run = run
        self.schema = schema_for(run)
        self._s = f'"{self.schema}"'
        self._pool = _Pool(url)
        self._ensure_schema(url)

    # -- plumbing ------------------------------------------------------------------------

    def q(self, text: str) -> str:
        """``text`` with ``{s}`` replaced by the quoted schema name."""
        return text.replace("{s}", self._s)

    def _ensure_schema(self, url: str) -> None:
        mark = (url, self.schema, hashlib.sha256(self.ddl.encode()).hexdigest())
        with _ENSURED_LOCK:
            if mark in _ENSURED:
                return

        def work(cur: Any) -> None:
            cur.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                ("pgrows-schema:" + self.schema,),
            )
            cur.execute(self.q(self.ddl))

        self.run_tx("create the schema", work)
        with _ENSURED_LOCK:
            _ENSURED.add(mark)

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        """A cursor inside one transaction on a pooled connection."""
        conn = self._pool.get()
        try:
            with conn.transaction(), conn.cursor() as cur:
                yield cur
        finally:
            self._pool.put(conn)

    def run_tx(self, what: str, work: Callable[[Any], T]) -> T:
        """``work(cursor)`` in one transaction; server errors become ``StoreError``."""
        try:
            with self.cursor() as cur:
                return work(cur)
        except psycopg.Error as exc:
            raise StoreError(f"{what} failed on PostgreSQL: {exc}") from exc

    @property
    def capabilities(self) -> frozenset[str]:
        """Every capability of the contract."""
        return frozenset(c.value for c in Capability)

    def close(self) -> None:
        """Close the pooled connections; later calls raise ``StoreError``."""
        self._pool.close()

    # -- core ----------------------------------------------------------------------------

    def check_message(self, message: Message, where: str) -> tuple[Any, ...]:
        """The column values of one message (without thread and position), refusing
        what cannot be stored exactly."""
        check_text(message.id, f"{where} id")
        if message.role not in ROLES:
            raise ValueError(f"{where}: role must be one of {ROLES}, got {message.role!r}")
        check_text(message.text, f"{where} text")
        for name in ("run_id", "turn_id"):
            value = getattr(message, name)
            if value is not None:
                check_text(value, f"{where} {name}")
        check_bigint(message.round, f"{where} round")
        return (
            message.id,
            message.role,
            message.text,
            self.encode_parts(list(message.parts), f"{where} parts"),
            message.run_id,
            message.round,
            message.turn_id,
            bool(message.committed),
            self.encode_parts(dict(message.metadata), f"{where} metadata"),
        )

    def encode_parts(self, value: JSONValue, what: str) -> str:
        """JSON text for a jsonb column of a message."""
        return encode_json(value, what, for_jsonb=True)

    def lock_thread(self, cur: Any, thread_id: str) -> None:
        """Serialise the writers of one thread until the transaction ends."""
        cur.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"pgrows-thread:{self.schema}:{thread_id}",),
        )

    def next_position(self, cur: Any, thread_id: str) -> int:
        """The first free position of the thread (called with the thread locked)."""
        cur.execute(
            self.q("SELECT coalesce(max(pos), 0) FROM {s}.messages WHERE thread_id = %s"),
            (thread_id,),
        )
        return int(cur.fetchone()[0]) + 1

    def stored_ids(self, cur: Any, thread_id: str, ids: list[str]) -> list[str]:
        """Which of ``ids`` the thread already holds."""
        cur.execute(
            self.q("SELECT msg_id FROM {s}.messages WHERE thread_id = %s AND msg_id = ANY(%s)"),
            (thread_id, ids),
        )
        return [row[0] for row in cur.fetchall()]

    def insert_rows(
        self, cur: Any, thread_id: str, start: int, rows: list[tuple[Any, ...]]
    ) -> None:
        """Insert the batch's rows from position ``start``, the kit's row point before each."""
        insert = self.q(
            "INSERT INTO {s}.messages (thread_id, pos, " + MESSAGE_COLUMNS + ") "
            "VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s::jsonb)"
        )

        for i, row in enumerate(rows):
            batch_row_pause()
            cur.execute(insert, (thread_id, start + i, *row))

    def admit(self, thread_id: str, ids: list[str], taken: list[str]) -> bool:
        """Whether the batch may be inserted, given the ids of it the thread holds."""
        if taken:
            raise DuplicateIdError(f"thread {thread_id!r} already holds ids {taken}")
        return True

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = list(batch)
        if not batch:
            return
        check_text(thread_id, "thread id")
        ids = [m.id for m in batch]
        if len(set(ids)) != len(ids):
            raise DuplicateIdError(f"the batch repeats a message id within itself: {ids}")
        rows = [self.check_message(m, f"message {i}") for i, m in enumerate(batch)]

        def work(cur: Any) -> None:
            self.lock_thread(cur, thread_id)
            if self.admit(thread_id, ids, self.stored_ids(cur, thread_id, ids)):
                self.insert_rows(cur, thread_id, self.next_position(cur, thread_id), rows)

        try:
            self.run_tx("append", work)
        except StoreError as exc:
            if isinstance(exc.__cause__, psycopg.errors.UniqueViolation):
                raise DuplicateIdError(f"a message id repeats in thread {thread_id!r}") from None
            raise

    def decode_message(self, row: tuple[Any, ...]) -> Message:
        """The message of one row; a row that does not decode raises ``StoreError``."""
        mid, role, body, parts, run_id, rnd, turn_id, committed, metadata = row
        if not isinstance(parts, list) or not isinstance(metadata, dict) or role not in ROLES:
            raise StoreError(f"stored message {mid!r} cannot be decoded")
        return Message(
            id=mid, role=role, text=body, parts=tuple(parts), run_id=run_id, round=rnd,
            turn_id=turn_id, committed=committed, metadata=metadata,
        )

    def select_messages(
        self, cur: Any, thread_id: str, limit: int | None, include_uncommitted: bool
    ) -> list[tuple[Any, ...]]:
        """The rows of a read, oldest first."""
        visible = "" if include_uncommitted else " AND committed"
        if limit is None:
            cur.execute(
                self.q(
                    f"SELECT {MESSAGE_COLUMNS} FROM {{s}}.messages "
                    f"WHERE thread_id = %s{visible} ORDER BY pos"
                ),
                (thread_id,),
            )
        else:
            cur.execute(
                self.q(
                    f"SELECT {MESSAGE_COLUMNS} FROM (SELECT pos, {MESSAGE_COLUMNS} "
                    f"FROM {{s}}.messages WHERE thread_id = %s{visible} "
                    "ORDER BY pos DESC LIMIT %s) AS newest ORDER BY pos"
                ),
                (thread_id, limit),
            )
        return cur.fetchall()

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        if limit == 0 or not storable(thread_id):
            return []
        if limit is not None and limit > WINDOW_ALL:
            limit = None

        def work(cur: Any) -> list[Message]:
            rows = self.select_messages(cur, thread_id, limit, include_uncommitted)
            return [self.decode_message(row) for row in rows]

        return self.run_tx("messages", work)

    def damage(self, thread_id: str) -> None:
        """The optional hook: the middle message's ``parts`` becomes a JSON object,
        which no message row may hold."""

        def work(cur: Any) -> None:
            cur.execute(
                self.q("SELECT pos FROM {s}.messages WHERE thread_id = %s ORDER BY pos"),
                (thread_id,),
            )
            positions = [row[0] for row in cur.fetchall()]
            cur.execute(
                self.q(
                    "UPDATE {s}.messages SET parts = '{\"damaged\": true}'::jsonb "
                    "WHERE thread_id = %s AND pos = %s"
                ),
                (thread_id, positions[damage_index(len(positions))]),
            )

        if not storable(thread_id):
            raise StoreError("the thread holds no message to damage")
        self.run_tx("damage", work)

    # -- commit flags --------------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        wanted = list(dict.fromkeys(message_ids))
        if not wanted:
            return
        if not storable(thread_id) or not all(storable(i) for i in wanted):
            raise KeyError(f"thread {thread_id!r} does not hold every id of {wanted}")

        def work(cur: Any) -> None:
            cur.execute(
                self.q(
                    "SELECT msg_id FROM {s}.messages WHERE thread_id = %s "
                    "AND msg_id = ANY(%s) FOR UPDATE"
                ),
                (thread_id, wanted),
            )
            found = {row[0] for row in cur.fetchall()}
            missing = [i for i in wanted if i not in found]
            if missing:
                raise KeyError(f"thread {thread_id!r} holds no message {missing}")
            cur.execute(
                self.q(
                    "UPDATE {s}.messages SET committed = %s "
                    "WHERE thread_id = %s AND msg_id = ANY(%s)"
                ),
                (bool(committed), thread_id, wanted),
            )

        self.run_tx("set_committed", work)

    # -- error records -------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        check_text(thread_id, "thread id")
        check_text(record.run_id, "error record run id")
        for name in ("scope", "recorded_at"):
            value = getattr(record, name)
            if value is not None:
                check_text(value, f"error record {name}")
        error = encode_json(dict(record.error), "error record error", for_jsonb=False)
        messages = encode_json(
            [m.to_json() for m in record.messages], "error record messages", for_jsonb=False
        )

        def work(cur: Any) -> None:
            cur.execute(
                self.q(
                    "INSERT INTO {s}.error_records "
                    "(thread_id, run_id, error, messages, scope, recorded_at) "
                    "VALUES (%s, %s, %s::json, %s::json, %s, %s)"
                ),
                (thread_id, record.run_id, error, messages, record.scope, record.recorded_at),
            )

        self.run_tx("record_error", work)

    def decode_error(self, row: tuple[Any, ...]) -> ErrorRecord:
        run_id, error, messages, scope, recorded_at = row
        try:
            return ErrorRecord.from_json(
                {"run_id": run_id, "error": error, "messages": messages, "scope": scope,
                 "recorded_at": recorded_at}
            )
        except ValueError as exc:
            raise StoreError(f"a stored error record cannot be decoded: {exc}") from None

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        if not storable(thread_id):
            return []

        def work(cur: Any) -> list[ErrorRecord]:
            cur.execute(
                self.q(
                    "SELECT run_id, error, messages, scope, recorded_at FROM {s}.error_records "
                    "WHERE thread_id = %s ORDER BY seq"
                ),
                (thread_id,),
            )
            return [self.decode_error(row) for row in cur.fetchall()]

        return self.run_tx("errors", work)

    # -- turn records --------------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        for name in ("turn_id", "thread_id", "outcome", "parent_turn_id", "continues_from",
                     "tier"):
            value = getattr(record, name)
            if value is not None:
                check_text(value, f"turn record {name}")
        if isinstance(record.steps_used, bool) or not isinstance(record.steps_used, int):
            raise ValueError("turn record steps_used must be an int")
        docs = [
            encode_json(dict(record.grant), "turn record grant", for_jsonb=False),
            encode_json(list(record.fallbacks), "turn record fallbacks", for_jsonb=False),
            encode_json(dict(record.usage), "turn record usage", for_jsonb=False),
            encode_json(dict(record.timing), "turn record timing", for_jsonb=False),
            encode_json(dict(record.metadata), "turn record metadata", for_jsonb=False),
        ]

        def work(cur: Any) -> None:
            cur.execute(
                self.q(
                    "INSERT INTO {s}.turn_records (" + RECORD_COLUMNS + ") VALUES "
                    "(%s, %s, %s, %s, %s, %s::json, %s, %s, %s::json, %s::json, %s::json, "
                    "%s::json)"
                ),
                (
                    record.turn_id, record.thread_id, record.outcome, record.parent_turn_id,
                    record.continues_from, docs[0], Decimal(record.steps_used), record.tier,
                    docs[1], docs[2], docs[3], docs[4],
                ),
            )

        self.run_tx("append_record", work)

    def decode_record(self, row: tuple[Any, ...]) -> TurnRecord:
        names = [c.strip() for c in RECORD_COLUMNS.split(",")]
        data = dict(zip(names, row, strict=True))
        data["grant"] = data.pop("grant_")
        data["steps_used"] = int(data["steps_used"])
        try:
            return TurnRecord.from_json(data)
        except ValueError as exc:
            raise StoreError(f"a stored turn record cannot be decoded: {exc}") from None

    def select_records(self, cur: Any, thread_id: str | None) -> list[tuple[Any, ...]]:
        if thread_id is None:
            cur.execute(self.q(f"SELECT {RECORD_COLUMNS} FROM {{s}}.turn_records ORDER BY seq"))
        else:
            cur.execute(
                self.q(
                    f"SELECT {RECORD_COLUMNS} FROM {{s}}.turn_records WHERE thread_id = %s "
                    "ORDER BY seq"
                ),
                (thread_id,),
            )
        return cur.fetchall()

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        if thread_id is not None and not storable(thread_id):
            return []

        def work(cur: Any) -> list[TurnRecord]:
            return [self.decode_record(row) for row in self.select_records(cur, thread_id)]

        return self.run_tx("records", work)

    # -- working state -------------------------------------------------------------------

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        if not (storable(scope) and storable(key)):
            return None

        def work(cur: Any) -> StateEntry | None:
            cur.execute(
                self.q("SELECT value, version FROM {s}.work_state WHERE scope = %s AND key = %s"),
                (scope, key),
            )
            row = cur.fetchone()
            return None if row is None else StateEntry(key, row[0], int(row[1]))

        return self.run_tx("read_state", work)

    def cas_state(
        self, cur: Any, scope: str, key: str, text: str, expected_version: int | None
    ) -> int | None:
        """The compare-and-set itself: the new version, or ``None`` on a conflict."""
        if expected_version is None:
            cur.execute(
                self.q(
                    "INSERT INTO {s}.work_state (scope, key, value, version) "
                    "VALUES (%s, %s, %s::json, 1) ON CONFLICT (scope, key) DO NOTHING "
                    "RETURNING version"
                ),
                (scope, key, text),
            )
        else:
            if not BIGINT_MIN <= expected_version <= BIGINT_MAX:
                return None
            cur.execute(
                self.q(
                    "UPDATE {s}.work_state SET value = %s::json, version = version + 1 "
                    "WHERE scope = %s AND key = %s AND version = %s RETURNING version"
                ),
                (text, scope, key, expected_version),
            )
        row = cur.fetchone()
        return None if row is None else int(row[0])

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        check_text(scope, "state scope")
        check_text(key, "state key")
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, int)
        ):
            raise ValueError(f"expected_version must be an int or None, got {expected_version!r}")
        text = encode_json(value, "state value", for_jsonb=False)
        version = self.run_tx(
            "write_state", lambda cur: self.cas_state(cur, scope, key, text, expected_version)
        )
        if version is None:
            raise ConflictError(
                f"state {scope!r}/{key!r}: version {expected_version} is not the stored one"
            )
        return StateEntry(key, freeze_json(value), version)

    # -- knowledge -----------------------------------------------------------------------

    def fact_row(self, fact: Fact) -> tuple[Any, ...]:
        """The column values of a fact, refusing what cannot be stored exactly."""
        for name in ("subject", "statement", "writer", "source", "evidence", "written_at",
                     "kind", "trust", "origin", "recheck_at"):
            value = getattr(fact, name)
            if value is not None:
                check_text(value, f"fact {name}")
        return (
            fact.subject, fact.statement, fact.writer, fact.source, fact.evidence,
            fact.written_at, fact.kind, fact.trust, fact.origin, fact.recheck_at,
            encode_json(dict(fact.metadata), "fact metadata", for_jsonb=False),
        )

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        check_text(scope, "knowledge scope")
        row = self.fact_row(fact)
        columns = [c.strip() for c in FACT_COLUMNS.split(",")]
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns[1:])

        def work(cur: Any) -> None:
            cur.execute(
                self.q(
                    f"INSERT INTO {{s}}.facts (scope, {FACT_COLUMNS}) VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::json) "
                    f"ON CONFLICT (scope, subject) DO UPDATE SET {updates}"
                ),
                (scope, *row),
            )

        self.run_tx("put_fact", work)

    def decode_fact(self, row: tuple[Any, ...]) -> Fact:
        names = [c.strip() for c in FACT_COLUMNS.split(",")]
        try:
            return Fact.from_json(dict(zip(names, row, strict=True)))
        except ValueError as exc:
            raise StoreError(f"a stored fact cannot be decoded: {exc}") from None

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        if not (storable(scope) and storable(subject)):
            return None

        def work(cur: Any) -> Fact | None:
            cur.execute(
                self.q(f"SELECT {FACT_COLUMNS} FROM {{s}}.facts WHERE scope = %s AND subject = %s"),
                (scope, subject),
            )
            row = cur.fetchone()
            return None if row is None else self.decode_fact(row)

        return self.run_tx("get_fact", work)

    def facts_order(self) -> str:
        """The ORDER BY of a listing: code-point order, whatever the database's collation."""
        return 'subject COLLATE "C"'

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`."""
        if not storable(scope):
            return []

        def work(cur: Any) -> list[Fact]:
            cur.execute(
                self.q(
                    f"SELECT {FACT_COLUMNS} FROM {{s}}.facts WHERE scope = %s "
                    f"ORDER BY {self.facts_order()}"
                ),
                (scope,),
            )
            return [self.decode_fact(row) for row in cur.fetchall()]

        return self.run_tx("facts", work)

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        if not (storable(scope) and storable(subject)):
            return False

        def work(cur: Any) -> bool:
            cur.execute(
                self.q("DELETE FROM {s}.facts WHERE scope = %s AND subject = %s RETURNING 1"),
                (scope, subject),
            )
            return cur.fetchone() is not None

        return self.run_tx("forget", work)


def make(run: str | None = None, url: str = DEFAULT_URL) -> PgRowsStore:
    """``corpus.round6.stores.pgrows.base:make?run=NAME[&url=postgresql://...]``."""
    if not run:
        raise ValueError("pgrows needs ?run=NAME (the data set every process opens)")
    return PgRowsStore(run, url)
