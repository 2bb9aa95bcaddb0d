"""``postgresql://…``: a store on a PostgreSQL server (psycopg 3).

URL: any libpq connection URL (``postgresql://user:password@host:port/db``,
``postgres://`` works too) plus one option of the kit's own, ``schema=NAME``
(default ``memconform``): every table lives in that schema, so several kits,
test processes or versions can share one database without touching each
other's data. The remaining query options are passed to libpq unchanged.

What it keeps and how:

- Tables are created with ``IF NOT EXISTS`` under a transaction-scoped advisory
  lock, so many processes opening the same schema at once all succeed.
- An append is one transaction. It first takes the thread's row in ``threads``
  (an upsert that bumps ``next_position``), which serialises concurrent writers
  of that thread and hands each batch a contiguous range of positions; then it
  inserts the batch. A repeated id hits ``UNIQUE (thread_id, id)``, the
  transaction rolls back and ``DuplicateIdError`` is raised: all or nothing.
  Before each row it calls :func:`memconform.harness.faults.batch_row_pause`,
  the kit's fault point for failures in the middle of a batch.
- Messages are keyed by ``(thread_id, position)`` and a partial index covers the
  committed ones, so a newest-N window is read from an index, newest first,
  and stops after N rows instead of reading the whole thread.
- A message's ``parts`` and ``metadata`` are ``jsonb`` (queryable by
  vendors' own tools). ``jsonb`` keeps numbers as decimals and objects without
  their key order: floats are written with a decimal point so they come back
  as floats; ``-0.0`` would come back as ``0.0`` and is refused. Error records,
  turn records, state values and facts are whole documents in ``json``
  columns, which keep the text exactly as written (key order included). NaN
  and the infinities are refused everywhere: JSON cannot carry them.
- PostgreSQL text cannot hold U+0000, and lone surrogates are not Unicode:
  either anywhere in a value raises ``UnsupportedValueError`` before anything is
  written. Nothing is altered to make it fit.

A lost connection fails the call in progress with ``StoreError``; the next
call opens a new connection. Nothing is retried behind the caller's back: a
write whose commit was never acknowledged may or may not have happened, and
only the caller can decide whether to try again (a repeated batch is refused
as a duplicate if the first attempt did land).

It declares every capability: the server keeps what it acknowledged
(``durable``) and serialises writers (``concurrent-writers``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

from memconform.adapters.exactness import Exactness, exact_json
from memconform.adapters.registry import StoreURLError, redact_url
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

__all__ = ["DEFAULT_SCHEMA", "SCHEMA_VERSION", "PostgreSQLStore", "open_postgresql"]

DEFAULT_SCHEMA = "memconform"
SCHEMA_VERSION = "1"
"""The layout version written to ``<schema>.meta``; another version is refused."""

_EXACT = Exactness(nul=False, negative_zero=False)
"""Limits of message rows (text columns and ``jsonb``)."""
_DOCUMENT = Exactness(nul=False, negative_zero=True)
"""Limits of whole records, state values and facts (``json`` text: kept as written)."""
_BIGINT = (-(2**63), 2**63 - 1)
T = TypeVar("T")

_DDL = """
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.threads (
    thread_id text PRIMARY KEY,
    next_position bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.messages (
    thread_id text NOT NULL,
    position bigint NOT NULL,
    id text NOT NULL,
    role text NOT NULL,
    text text NOT NULL,
    parts jsonb NOT NULL,
    run_id text,
    round bigint,
    turn_id text,
    committed boolean NOT NULL,
    metadata jsonb NOT NULL,
    PRIMARY KEY (thread_id, position),
    UNIQUE (thread_id, id)
);
CREATE INDEX IF NOT EXISTS messages_committed_window
    ON {s}.messages (thread_id, position) WHERE committed;
CREATE TABLE IF NOT EXISTS {s}.errors (
    seq bigserial PRIMARY KEY,
    thread_id text NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS errors_by_thread ON {s}.errors (thread_id, seq);
CREATE TABLE IF NOT EXISTS {s}.turn_records (
    seq bigserial PRIMARY KEY,
    thread_id text NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS turn_records_by_thread ON {s}.turn_records (thread_id, seq);
CREATE TABLE IF NOT EXISTS {s}.state (
    scope text NOT NULL,
    key text NOT NULL,
    value json NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE TABLE IF NOT EXISTS {s}.facts (
    scope text NOT NULL,
    subject text NOT NULL,
    fact json NOT NULL,
    PRIMARY KEY (scope, subject)
);
"""

_MESSAGE_COLUMNS = "id, role, text, parts, run_id, round, turn_id, committed, metadata"


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreURLError(
            "the postgresql:// store needs psycopg 3; install it with "
            "pip install 'memconform[postgresql]'"
        ) from exc
    return psycopg


def split_url(url: str) -> tuple[str, str]:
    """Split a store URL into (libpq URL without the kit's options, schema name)."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise StoreURLError(f"not a PostgreSQL URL: {redact_url(url)}")
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = DEFAULT_SCHEMA
    kept: list[tuple[str, str]] = []
    for key, value in query:
        if key == "schema":
            schema = value
        else:
            kept.append((key, value))
    if not schema or "\x00" in schema:
        raise StoreURLError(f"schema= must name a schema: {redact_url(url)}")
    return parts._replace(query=urlencode(kept)).geturl(), schema


def _document(value: JSONValue) -> str:
    """JSON text for a ``json`` column: kept by the server exactly as written."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _storable_key(value: str) -> bool:
    """Whether ``value`` can be sent as a text parameter at all (for reads)."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_message(message: Message, where: str) -> None:
    _EXACT.text(message.id, f"{where} id")
    if message.role not in ROLES:
        raise ValueError(f"{where}: role must be one of {', '.join(ROLES)}, got {message.role!r}")
    _EXACT.text(message.text, f"{where} text")
    _EXACT.json(list(message.parts), f"{where} parts")
    for name in ("run_id", "turn_id"):
        value = getattr(message, name)
        if value is not None:
            _EXACT.text(value, f"{where} {name}")
    if message.round is not None and not _BIGINT[0] <= message.round <= _BIGINT[1]:
        raise UnsupportedValueError(
            f"{where} round {message.round} does not fit a 64-bit integer")
    _EXACT.json(dict(message.metadata), f"{where} metadata")


def _message_row(row: tuple[Any, ...]) -> Message:
    """The message of one row; ``parts`` that is not a JSON array or ``metadata``
    that is not an object raises :class:`StoreError` (never skipped, never coerced)."""
    mid, role, text, parts, run_id, rnd, turn_id, committed, metadata = row
    if not isinstance(parts, list) or not isinstance(metadata, dict):
        raise StoreError(
            f"stored message {mid!r} cannot be decoded: parts or metadata has the wrong type"
        )
    return Message(
        id=mid,
        role=role,
        text=text,
        parts=tuple(parts),
        run_id=run_id,
        round=rnd,
        turn_id=turn_id,
        committed=committed,
        metadata=metadata,
    )


class PostgreSQLStore:
    """A store on one PostgreSQL connection; see the Store contract for each method.

    Calls from several threads are serialised on the connection. Separate
    processes (or separate instances) may write the same threads at once.
    """

    def __init__(self, conninfo: str, schema: str = DEFAULT_SCHEMA) -> None:
        self._psycopg = _import_psycopg()
        self._conninfo = conninfo
        self._schema = schema
        self._lock = threading.Lock()
        self._closed = False
        sql = self._psycopg.sql
        self._s = sql.Identifier(schema).as_string(None)
        self._conn: Any = self._connect()
        try:
            self._create_schema()
        except BaseException:
            self._conn.close()
            raise

    # -- plumbing -----------------------------------------------------------------

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(self._conninfo, autocommit=True)
        except self._psycopg.Error as exc:
            raise StoreError(
                f"cannot connect to PostgreSQL at {redact_url(self._conninfo)}: {exc}"
            ) from exc

    def _q(self, text: str) -> str:
        return text.replace("{s}", self._s)

    def _create_schema(self) -> None:
        with self._tx() as cur:
            cur.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (f"memconform.schema:{self._schema}",),
            )
            cur.execute(self._q(_DDL))
            cur.execute(
                self._q(
                    "INSERT INTO {s}.meta (key, value) VALUES ('schema_version', %s) "
                    "ON CONFLICT (key) DO NOTHING"
                ),
                (SCHEMA_VERSION,),
            )
            cur.execute(self._q("SELECT value FROM {s}.meta WHERE key = 'schema_version'"))
            found = cur.fetchone()[0]
        if found != SCHEMA_VERSION:
            raise StoreError(
                f"schema {self._schema!r} has layout version {found}, this kit writes "
                f"version {SCHEMA_VERSION}; use another schema= or migrate it"
            )

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """One transaction on the connection, reconnecting once if the link broke."""
        if self._closed:
            raise StoreError("the store is closed")
        if self._conn.closed or self._conn.broken:
            self._conn = self._connect()
        with self._conn.transaction(), self._conn.cursor() as cur:
            yield cur

    def _run(self, what: str, work: Callable[[Any], T]) -> T:
        """Run ``work(cursor)`` in one transaction; server failures become StoreError."""
        with self._lock:
            try:
                with self._tx() as cur:
                    return work(cur)
            except self._psycopg.Error as exc:
                raise StoreError(f"{what} failed on PostgreSQL: {exc}") from exc

    @property
    def capabilities(self) -> frozenset[str]:
        """Every capability."""
        return frozenset(c.value for c in Capability)

    def close(self) -> None:
        """Close the connection; later calls raise ``StoreError``. Closing twice is harmless."""
        with self._lock:
            self._closed = True
            self._conn.close()

    # -- core ---------------------------------------------------------------------------

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = list(batch)
        if not batch:
            return
        _EXACT.text(thread_id, "thread id")
        seen: set[str] = set()
        for i, message in enumerate(batch):
            if message.id in seen:
                raise DuplicateIdError(f"message id {message.id!r} repeats within the batch")
            seen.add(message.id)
            _check_message(message, f"message {i}")
        unique = self._psycopg.errors.UniqueViolation
        insert = self._q(
            "INSERT INTO {s}.messages (thread_id, position, " + _MESSAGE_COLUMNS + ") "
            "VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s::jsonb)"
        )

        def work(cur: Any) -> None:
            cur.execute(
                self._q(
                    "INSERT INTO {s}.threads AS t (thread_id, next_position) VALUES (%s, %s) "
                    "ON CONFLICT (thread_id) DO UPDATE "
                    "SET next_position = t.next_position + EXCLUDED.next_position "
                    "RETURNING next_position"
                ),
                (thread_id, len(batch)),
            )
            start = cur.fetchone()[0] - len(batch)
            for i, m in enumerate(batch):
                batch_row_pause()
                cur.execute(
                    insert,
                    (
                        thread_id, start + i, m.id, m.role, m.text,
                        exact_json(list(m.parts)), m.run_id, m.round, m.turn_id,
                        m.committed, exact_json(dict(m.metadata)),
                    ),
                )

        try:
            self._run("append", work)
        except StoreError as exc:
            if isinstance(exc.__cause__, unique):
                raise DuplicateIdError(
                    f"the batch repeats a message id already stored in thread {thread_id!r}"
                ) from None
            raise

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        if limit == 0 or not _storable_key(thread_id):
            return []
        visible = "" if include_uncommitted else " AND committed"
        if limit is None:
            query = self._q(
                f"SELECT {_MESSAGE_COLUMNS} FROM {{s}}.messages "
                f"WHERE thread_id = %s{visible} ORDER BY position"
            )
            params: tuple[Any, ...] = (thread_id,)
        else:
            query = self._q(
                f"SELECT {_MESSAGE_COLUMNS} FROM (SELECT position, {_MESSAGE_COLUMNS} "
                f"FROM {{s}}.messages WHERE thread_id = %s{visible} "
                "ORDER BY position DESC LIMIT %s) AS newest ORDER BY position"
            )
            params = (thread_id, limit)

        def work(cur: Any) -> list[Message]:
            cur.execute(query, params)
            return [_message_row(row) for row in cur.fetchall()]

        return self._run("messages", work)

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the ``parts`` column of the thread's middle row becomes a JSON string
        instead of an array (``jsonb`` holds only valid JSON)."""

        def work(cur: Any) -> None:
            cur.execute(
                self._q("SELECT position FROM {s}.messages WHERE thread_id = %s ORDER BY position"),
                (thread_id,),
            )
            rows = cur.fetchall()
            target = rows[damage_index(len(rows))][0]
            cur.execute(
                self._q(
                    "UPDATE {s}.messages SET parts = '\"damaged\"'::jsonb "
                    "WHERE thread_id = %s AND position = %s"
                ),
                (thread_id, target),
            )

        self._run("damage", work)

    # -- commit-flags ----------------------------------------------------------------

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        wanted = list(dict.fromkeys(message_ids))
        if not wanted:
            return
        bad = [i for i in wanted if not _storable_key(i)]
        if bad or not _storable_key(thread_id):
            raise KeyError(f"unknown message ids in thread {thread_id!r}: {bad or wanted}")

        def work(cur: Any) -> list[str]:
            cur.execute(
                self._q(
                    "SELECT id FROM {s}.messages WHERE thread_id = %s AND id = ANY(%s) "
                    "FOR UPDATE"
                ),
                (thread_id, wanted),
            )
            found = {row[0] for row in cur.fetchall()}
            missing = [i for i in wanted if i not in found]
            if missing:
                return missing
            cur.execute(
                self._q(
                    "UPDATE {s}.messages SET committed = %s "
                    "WHERE thread_id = %s AND id = ANY(%s)"
                ),
                (bool(committed), thread_id, wanted),
            )
            return []

        missing = self._run("set_committed", work)
        if missing:
            raise KeyError(f"unknown message ids in thread {thread_id!r}: {missing}")

    # -- errors ------------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        _EXACT.text(thread_id, "thread id")
        data = record.to_json()
        _DOCUMENT.json(data, "error record")

        def work(cur: Any) -> None:
            cur.execute(
                self._q("INSERT INTO {s}.errors (thread_id, record) VALUES (%s, %s::json)"),
                (thread_id, _document(data)),
            )

        self._run("record_error", work)

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        if not _storable_key(thread_id):
            return []

        def work(cur: Any) -> list[ErrorRecord]:
            cur.execute(
                self._q("SELECT record FROM {s}.errors WHERE thread_id = %s ORDER BY seq"),
                (thread_id,),
            )
            return [ErrorRecord.from_json(row[0]) for row in cur.fetchall()]

        return self._run("errors", work)

    # -- turn-records --------------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        data = record.to_json()
        _DOCUMENT.json(data, "turn record")

        def work(cur: Any) -> None:
            cur.execute(
                self._q(
                    "INSERT INTO {s}.turn_records (thread_id, record) VALUES (%s, %s::json)"
                ),
                (record.thread_id, _document(data)),
            )

        self._run("append_record", work)

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        if thread_id is not None and not _storable_key(thread_id):
            return []

        def work(cur: Any) -> list[TurnRecord]:
            if thread_id is None:
                cur.execute(self._q("SELECT record FROM {s}.turn_records ORDER BY seq"))
            else:
                cur.execute(
                    self._q(
                        "SELECT record FROM {s}.turn_records WHERE thread_id = %s ORDER BY seq"
                    ),
                    (thread_id,),
                )
            return [TurnRecord.from_json(row[0]) for row in cur.fetchall()]

        return self._run("records", work)

    # -- state ----------------------------------------------------------------------------

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        if not (_storable_key(scope) and _storable_key(key)):
            return None

        def work(cur: Any) -> StateEntry | None:
            cur.execute(
                self._q("SELECT value, version FROM {s}.state WHERE scope = %s AND key = %s"),
                (scope, key),
            )
            row = cur.fetchone()
            return None if row is None else StateEntry(key, row[0], row[1])

        return self._run("read_state", work)

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        _EXACT.text(scope, "state scope")
        _EXACT.text(key, "state key")
        _DOCUMENT.json(value, "state value")
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, int)
        ):
            raise ValueError(f"expected_version must be an int or None, got {expected_version!r}")
        text = _document(value)

        def work(cur: Any) -> int | None:
            if expected_version is None:
                cur.execute(
                    self._q(
                        "INSERT INTO {s}.state (scope, key, value, version) "
                        "VALUES (%s, %s, %s::json, 1) ON CONFLICT (scope, key) DO NOTHING "
                        "RETURNING version"
                    ),
                    (scope, key, text),
                )
            else:
                cur.execute(
                    self._q(
                        "UPDATE {s}.state SET value = %s::json, version = version + 1 "
                        "WHERE scope = %s AND key = %s AND version = %s RETURNING version"
                    ),
                    (text, scope, key, expected_version),
                )
            row = cur.fetchone()
            return None if row is None else int(row[0])

        version = self._run("write_state", work)
        if version is None:
            current = self.read_state(scope, key)
            raise ConflictError(
                f"state {scope}/{key}: expected version {expected_version}, stored version is "
                f"{None if current is None else current.version}"
            )
        return StateEntry(key, freeze_json(value), version)

    # -- knowledge ------------------------------------------------------------------------

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        _EXACT.text(scope, "knowledge scope")
        data = fact.to_json()
        _DOCUMENT.json(data, "fact")

        def work(cur: Any) -> None:
            cur.execute(
                self._q(
                    "INSERT INTO {s}.facts (scope, subject, fact) VALUES (%s, %s, %s::json) "
                    "ON CONFLICT (scope, subject) DO UPDATE SET fact = EXCLUDED.fact"
                ),
                (scope, fact.subject, _document(data)),
            )

        self._run("put_fact", work)

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        if not (_storable_key(scope) and _storable_key(subject)):
            return None

        def work(cur: Any) -> Fact | None:
            cur.execute(
                self._q("SELECT fact FROM {s}.facts WHERE scope = %s AND subject = %s"),
                (scope, subject),
            )
            row = cur.fetchone()
            return None if row is None else Fact.from_json(row[0])

        return self._run("get_fact", work)

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts` (ordered by
        subject in code-point order, whatever the database's collation)."""
        if not _storable_key(scope):
            return []

        def work(cur: Any) -> list[Fact]:
            cur.execute(
                self._q(
                    "SELECT fact FROM {s}.facts WHERE scope = %s ORDER BY subject COLLATE \"C\""
                ),
                (scope,),
            )
            return [Fact.from_json(row[0]) for row in cur.fetchall()]

        return self._run("facts", work)

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        if not (_storable_key(scope) and _storable_key(subject)):
            return False

        def work(cur: Any) -> bool:
            cur.execute(
                self._q("DELETE FROM {s}.facts WHERE scope = %s AND subject = %s RETURNING 1"),
                (scope, subject),
            )
            return cur.fetchone() is not None

        return self._run("forget", work)


def open_postgresql(url: str) -> PostgreSQLStore:
    """Open ``postgresql://…?schema=NAME`` (see the module docstring)."""
    conninfo, schema = split_url(url)
    return PostgreSQLStore(conninfo, schema)
