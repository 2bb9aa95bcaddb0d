"""LangChain's chat message histories (``langchain-community``) as memconform stores.

LangChain keeps a conversation in a *chat message history*: an object bound to
one conversation that has a ``messages`` property (every stored message, oldest
first) and ``add_messages(batch)``. Two of the persistent histories that ship
with ``langchain_community.chat_message_histories`` are translated here:

``langchain+sql:///path.db``
    ``SQLChatMessageHistory`` on a SQLite file, through a SQLAlchemy engine
    made for ``sqlite:///path.db``. All threads share the library's own table
    (``message_store``: an autoincrement ``id``, ``session_id`` and the message
    serialised as JSON text); ``session_id`` is the memconform thread id.

``langchain+file:///dir``
    ``FileChatMessageHistory``: one JSON file per thread in ``dir``. The file
    name is the SHA-256 of the thread id (UTF-8) plus ``.json``, so any thread
    id gives a safe, distinct name.

``langchain+postgresql://user@host:port/db?schema=NAME``
    ``langchain_postgres.PostgresChatMessageHistory`` (the ``langchain-postgres``
    package, LangChain's PostgreSQL integration): one psycopg 3 connection,
    shared by every thread's history as the library's docstring recommends,
    its ``search_path`` set to the schema ``NAME``, and the library's table
    ``message_store`` there (made once by the library's own ``create_tables``;
    the adapter creates the schema and serialises that first set-up between
    processes with an advisory lock, :mod:`memconform.adapters.libraries.servers`).
    The library requires a UUID as ``session_id``: a thread id becomes
    ``uuid5(NAMESPACE_URL, "memconform:" + thread_id)``, so each thread id
    has its own, stable session. The row point is not offered here: the
    library writes a batch with one ``executemany`` of its own. The library
    uses the connection it is lent and never ends a failed transaction or a
    read's transaction; as any owner of a psycopg connection does, the adapter
    rolls back after a failed call and commits after a read, and lets one call
    at a time use the connection (a psycopg transaction is per connection).

How each Store method maps onto the library:

- ``append(thread, batch)`` is ``history.add_messages(batch)`` on the thread's
  history. A memconform ``Message`` becomes the langchain-core message of its
  role (``user`` -> ``HumanMessage``, ``assistant`` -> ``AIMessage``,
  ``system`` -> ``SystemMessage``, ``tool`` -> ``ToolMessage``), with the text
  as ``content`` and the message id as the message's own ``id``. A
  ``ToolMessage`` needs ``tool_call_id``: it is the ``call_id`` (or ``id``) of
  the first tool-result part when there is one, else the message id. The other
  fields (``parts``, ``run_id``, ``round``, ``turn_id``, ``committed``,
  ``metadata``) go into ``additional_kwargs`` under those names, where
  LangChain keeps a message's extra data. Nothing is checked before the call:
  duplicate ids and unencodable text reach the library as they are.
- ``messages(thread, limit)`` reads the ``messages`` property and converts each
  message back. The library has no window parameter, so the newest N are taken
  by slicing the full list, which is how its users take a window; a negative
  limit is refused (``ValueError``) before the library is called. That window
  is the adapter's own, so both stores declare ``provides = {"window"}``: the
  window rules (ST-003..ST-005) are ``adapter-provided``, never a pass for
  LangChain. Reading an
  unknown thread of the file store creates its empty file (the library's
  constructor does that).
- The file store raises :class:`~memconform.contract.StoreError`
  (the library's error as its cause) when the library cannot parse the
  thread's JSON file (``json.JSONDecodeError``): another process caught the
  file while the library was rewriting it. Every other exception passes
  through unchanged.

Capabilities:

- ``durable`` for both: an acknowledged write is in the SQLite file (committed)
  or in the thread's JSON file, which a new process opening the same URL reads.
- ``langchain+postgresql``: ``durable``, ``atomic-batch`` (the batch is one
  ``executemany`` and one ``commit``) and ``concurrent-writers`` (a server).
- ``atomic-batch`` and ``concurrent-writers`` for ``langchain+sql`` too:
  ``SQLChatMessageHistory.add_messages`` adds the whole batch to one SQLAlchemy
  session and commits once (one transaction), and a SQLite file is a database
  meant to be shared by processes. ``FileChatMessageHistory`` has no
  ``add_messages`` of its own: langchain-core's default writes the batch one
  message at a time, each rewriting the whole file, with no locking, so neither
  is declared there.

What cannot be expressed: ``commit-flags`` (a stored LangChain message cannot
be changed in place, so ``committed`` is kept only as data and reads never
filter on it), ``errors``, ``turn-records``, ``state`` and ``knowledge`` (a chat
history holds messages only).

Fault point: the kit's row point
(:func:`~memconform.harness.faults.batch_row_pause`) is called once per
message inside the library's own write, so a failure injected there
interrupts the library's real batch: for SQL from a SQLAlchemy
``before_insert`` hook on the library's message model (inside the
flush of ``add_messages``' session), for files from a subclass whose
``add_message`` calls the row point and then the library's ``add_message``.
Neither changes what the library does when no fault is armed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memconform.adapters.libraries import file_path, library_versions, newest, require
from memconform.adapters.libraries.description import Library, StoreEntry
from memconform.adapters.libraries.servers import (
    ensure_schema,
    postgresql_target,
    search_path_option,
)
from memconform.contract import Provision, StoreError, damage_index
from memconform.harness.faults import batch_row_pause
from memconform.values import Message

__all__ = [
    "LIBRARY",
    "LangChainFileStore",
    "LangChainPostgresStore",
    "LangChainSQLStore",
    "from_langchain",
    "open_file_history",
    "open_postgres_history",
    "open_sql_history",
    "session_uuid",
    "thread_file_name",
    "to_langchain",
]

_EXTRA = "langchain"
_DISTRIBUTIONS = ("langchain-community", "langchain-core", "sqlalchemy")

_KWARG_FIELDS = ("parts", "run_id", "round", "turn_id", "committed", "metadata")
"""Message fields kept in ``additional_kwargs``."""

_CLASS_OF_ROLE = {
    "user": "HumanMessage",
    "assistant": "AIMessage",
    "system": "SystemMessage",
    "tool": "ToolMessage",
}
_ROLE_OF_TYPE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


UNREADABLE = "{not json"
"""What the damage hook stores in place of a message: as the row's text where the
column is text (SQLite), as a JSON string where it must be JSON (a ``jsonb``
column, an entry of the file's list)."""

_READ_FAILURES = (ValueError, TypeError, KeyError)
"""What the histories raise when a stored message does not decode (``json``,
``messages_from_dict``); a read raises them as :class:`StoreError`."""


@contextmanager
def _read_failure() -> Iterator[None]:
    """A history's loud failure to decode what it stored, in the contract's words."""
    try:
        yield
    except _READ_FAILURES as exc:
        raise StoreError(
            f"the history could not read its messages: {type(exc).__name__}: {exc}"
        ) from exc


# -- URLs ------------------------------------------------------------------------------


def thread_file_name(thread_id: str) -> str:
    """The JSON file name of a thread in a ``langchain+file`` directory."""
    digest = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}.json"


# -- messages --------------------------------------------------------------------------


def _tool_call_id(message: Message) -> str:
    for part in message.parts:
        if isinstance(part, Mapping) and part.get("type") in ("tool_result", "tool-result"):
            for key in ("call_id", "id"):
                value = part.get(key)
                if isinstance(value, str):
                    return value
    return message.id


def to_langchain(message: Message, messages_module: Any) -> Any:
    """The langchain-core message for ``message`` (``messages_module`` is
    ``langchain_core.messages``)."""
    data = message.to_json()
    extra = {name: data[name] for name in _KWARG_FIELDS}
    cls = getattr(messages_module, _CLASS_OF_ROLE[message.role])
    if message.role == "tool":
        return cls(
            content=message.text,
            id=message.id,
            tool_call_id=_tool_call_id(message),
            additional_kwargs=extra,
        )
    return cls(content=message.text, id=message.id, additional_kwargs=extra)


def from_langchain(native: Any) -> Message:
    """The memconform ``Message`` for a langchain-core message read back."""
    kind = getattr(native, "type", None)
    role = _ROLE_OF_TYPE.get(str(kind))
    if role is None:
        raise ValueError(f"a stored LangChain message has type {kind!r}, which has no role")
    content = native.content
    if not isinstance(content, str):
        raise ValueError(f"a stored LangChain message has non-text content: {content!r:.200}")
    extra: dict[str, Any] = dict(native.additional_kwargs or {})
    data = {name: extra[name] for name in _KWARG_FIELDS if name in extra}
    return Message.from_json({"id": native.id, "role": role, "text": content, **data})


# -- langchain+sql ---------------------------------------------------------------------


class LangChainSQLStore:
    """``SQLChatMessageHistory`` on one SQLite file; one history per thread."""

    def __init__(self, path: str) -> None:
        self._histories_module = require("langchain_community.chat_message_histories", _EXTRA)
        self._messages_module = require("langchain_core.messages", _EXTRA)
        self._sqlalchemy = require("sqlalchemy", _EXTRA)
        self.path = path
        self.version = library_versions(*_DISTRIBUTIONS)
        url = self._sqlalchemy.engine.URL.create("sqlite", database=path)
        self._engine: Any = self._sqlalchemy.create_engine(url)
        self._lock = threading.Lock()
        self._histories: dict[str, Any] = {}

    provides = frozenset({Provision.WINDOW})
    """The window is the adapter's slice; the library has none."""

    @property
    def capabilities(self) -> frozenset[str]:
        """``durable``, ``atomic-batch`` and ``concurrent-writers``."""
        return frozenset({"durable", "atomic-batch", "concurrent-writers"})

    def _history(self, thread_id: str) -> Any:
        with self._lock:
            history = self._histories.get(thread_id)
            if history is None:
                history = self._histories_module.SQLChatMessageHistory(
                    session_id=thread_id, connection=self._engine
                )
                self._sqlalchemy.event.listen(history.sql_model_class, "before_insert", _row_point)
                self._histories[thread_id] = history
        return history

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """``add_messages`` with the batch converted; see the module docstring."""
        natives = [to_langchain(m, self._messages_module) for m in batch]
        self._history(thread_id).add_messages(natives)

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """The ``messages`` property, converted, newest ``limit`` by slicing; a
        stored message the library cannot decode fails the read (``StoreError``)."""
        with _read_failure():
            stored = self._history(thread_id).messages
        return newest([from_langchain(m) for m in stored], limit)

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the ``message`` of the thread's middle row in the library's table becomes
        text that is not JSON."""
        text = self._sqlalchemy.text
        with self._engine.begin() as conn:
            ids = [
                row[0]
                for row in conn.execute(
                    text(f"SELECT id FROM {_TABLE} WHERE session_id = :s ORDER BY id"),
                    {"s": thread_id},
                )
            ]
            conn.execute(
                text(f"UPDATE {_TABLE} SET message = :bad WHERE id = :id"),
                {"bad": UNREADABLE, "id": ids[damage_index(len(ids))]},
            )

    def close(self) -> None:
        """Release the engine's connections; the file keeps what was committed."""
        with self._lock:
            self._histories.clear()
        self._engine.dispose()


def _row_point(mapper: Any, connection: Any, target: Any) -> None:
    """SQLAlchemy ``before_insert`` hook: the kit's row point, once per message row."""
    batch_row_pause()


def open_sql_history(url: str) -> LangChainSQLStore:
    """``langchain+sql:///path.db``: ``SQLChatMessageHistory`` on ``sqlite:///path.db``
    (the file and its folders are created when absent)."""
    path = file_path(url, "langchain+sql")
    require("langchain_community.chat_message_histories", _EXTRA)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return LangChainSQLStore(path)


# -- langchain+file --------------------------------------------------------------------


@functools.cache
def _file_history_class() -> Any:
    """``FileChatMessageHistory`` whose ``add_message`` first passes the row point."""
    histories = require("langchain_community.chat_message_histories", _EXTRA)
    base = histories.FileChatMessageHistory

    def add_message(self: Any, message: Any) -> None:
        batch_row_pause()
        base.add_message(self, message)

    return type("RowPointFileChatMessageHistory", (base,), {"add_message": add_message})


class LangChainFileStore:
    """``FileChatMessageHistory``: one JSON file per thread in one directory."""

    def __init__(self, directory: str) -> None:
        self._history_class = _file_history_class()
        self._messages_module = require("langchain_core.messages", _EXTRA)
        self.directory = Path(directory)
        self.version = library_versions("langchain-community", "langchain-core")

    provides = frozenset({Provision.WINDOW})
    """The window is the adapter's slice; the library has none."""

    @property
    def capabilities(self) -> frozenset[str]:
        """``durable`` only."""
        return frozenset({"durable"})

    def _history(self, thread_id: str) -> Any:
        return self._history_class(str(self.directory / thread_file_name(thread_id)))

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """``add_messages`` with the batch converted; see the module docstring.
        Raises :class:`StoreError` when the library cannot parse the thread's
        file (:func:`_unreadable_file`)."""
        natives = [to_langchain(m, self._messages_module) for m in batch]
        with _unreadable_file(thread_id, "add_messages"):
            self._history(thread_id).add_messages(natives)

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """The ``messages`` property, converted, newest ``limit`` by slicing; a
        stored message the library cannot decode fails the read (``StoreError``)."""
        with _read_failure():
            stored = self._history(thread_id).messages
        return newest([from_langchain(m) for m in stored], limit)

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the thread file's middle entry becomes the JSON string ``"{not json"``,
        the rest of the file as it was."""
        path = self.directory / thread_file_name(thread_id)
        if not path.is_file():
            raise StoreError(f"thread {thread_id!r} has no file")
        entries = json.loads(path.read_text(encoding="utf-8"))
        entries[damage_index(len(entries))] = UNREADABLE
        path.write_text(json.dumps(entries), encoding="utf-8")

    def close(self) -> None:
        """Nothing to release: every call opens and closes the thread's file."""


@contextmanager
def _unreadable_file(thread_id: str, call: str) -> Iterator[None]:
    """Raise the library's ``json.JSONDecodeError`` as :class:`StoreError` (the
    error as its cause). ``FileChatMessageHistory`` reads the whole file with
    ``json.loads`` in ``messages`` and in every ``add_message``, and rewrites it
    with ``Path.write_text``, which empties the file before writing: another
    process that reads meanwhile finds an empty or half-written file. That is
    the library refusing the call, not the adapter breaking the contract; the
    adapter neither retries nor repairs the file. (A read goes through
    :func:`_read_failure`, which raises the same error as :class:`StoreError`.)"""
    try:
        yield
    except json.JSONDecodeError as exc:
        raise StoreError(
            f"{call} on thread {thread_id!r}: the library cannot parse the thread's file: {exc}"
        ) from exc


def open_file_history(url: str) -> LangChainFileStore:
    """``langchain+file:///dir``: ``FileChatMessageHistory`` files in ``dir``
    (created when absent)."""
    path = file_path(url, "langchain+file")
    require("langchain_community.chat_message_histories", _EXTRA)
    Path(path).mkdir(parents=True, exist_ok=True)
    return LangChainFileStore(path)


# -- langchain+postgresql --------------------------------------------------------------

POSTGRESQL_SCHEME = "langchain+postgresql"
_TABLE = "message_store"
_POSTGRES_DISTRIBUTIONS = ("langchain-postgres", "langchain-core", "psycopg")


def session_uuid(thread_id: str) -> str:
    """The UUID ``PostgresChatMessageHistory`` needs as the session id of a thread."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "memconform:" + thread_id))


class LangChainPostgresStore:
    """``PostgresChatMessageHistory`` on one psycopg connection; one history per thread."""

    def __init__(self, conninfo: str, schema: str) -> None:
        histories: Any = require("langchain_postgres", _EXTRA)
        psycopg: Any = require("psycopg", _EXTRA)
        self._messages_module = require("langchain_core.messages", _EXTRA)
        self._history_class: Any = histories.PostgresChatMessageHistory
        self.version = library_versions(*_POSTGRES_DISTRIBUTIONS)
        ensure_schema(conninfo, schema)
        self._connection: Any = psycopg.connect(conninfo, options=search_path_option(schema))
        # One call at a time on the shared connection: a psycopg transaction is
        # the connection's, so two calls at once would share one transaction.
        self._lock = threading.Lock()
        self._histories: dict[str, Any] = {}
        # The library's CREATE TABLE IF NOT EXISTS races with itself when several
        # processes open a new schema at once: one set-up at a time.
        key = (f"memconform:{schema}",)
        try:
            self._connection.execute("SELECT pg_advisory_lock(hashtext(%s))", key)
            try:
                self._history_class.create_tables(self._connection, _TABLE)
            finally:
                self._connection.execute("SELECT pg_advisory_unlock(hashtext(%s))", key)
                self._connection.commit()
        except BaseException:
            self._connection.close()
            raise

    provides = frozenset({Provision.WINDOW})
    """The window is the adapter's slice; the library has none."""

    @property
    def capabilities(self) -> frozenset[str]:
        """``durable``, ``atomic-batch`` and ``concurrent-writers``."""
        return frozenset({"durable", "atomic-batch", "concurrent-writers"})

    def _history(self, thread_id: str) -> Any:
        history = self._histories.get(thread_id)
        if history is None:
            history = self._history_class(
                _TABLE, session_uuid(thread_id), sync_connection=self._connection
            )
            self._histories[thread_id] = history
        return history

    @contextmanager
    def _call(self) -> Iterator[None]:
        """One library call on the connection. The library leaves its connection
        in the failed transaction when a statement fails; the connection is the
        caller's, and a caller of psycopg rolls it back before using it again
        (nothing is retried)."""
        with self._lock:
            try:
                yield
            except BaseException:
                self._connection.rollback()
                raise

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """``add_messages`` with the batch converted; see the module docstring."""
        natives = [to_langchain(m, self._messages_module) for m in batch]
        with self._call():
            self._history(thread_id).add_messages(natives)

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """``get_messages()``, converted, newest ``limit`` by slicing."""
        with self._call(), _read_failure():
            stored = self._history(thread_id).get_messages()
            # get_messages() leaves its read's transaction open; end it, as the
            # owner of the connection does.
            self._connection.commit()
        return newest([from_langchain(m) for m in stored], limit)

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the ``message`` (``jsonb``) of the thread's middle row in the library's
        table becomes the JSON string ``"{not json"``."""
        with self._call():
            rows = self._connection.execute(
                f"SELECT id FROM {_TABLE} WHERE session_id = %s ORDER BY id",
                (session_uuid(thread_id),),
            ).fetchall()
            target = rows[damage_index(len(rows))][0]
            self._connection.execute(
                f"UPDATE {_TABLE} SET message = %s::jsonb WHERE id = %s",
                (json.dumps(UNREADABLE), target),
            )
            self._connection.commit()

    def close(self) -> None:
        """Close the connection; the server keeps what was committed."""
        self._connection.close()


def open_postgres_history(url: str) -> LangChainPostgresStore:
    """``langchain+postgresql://user@host:port/db?schema=NAME``."""
    conninfo, schema = postgresql_target(url, POSTGRESQL_SCHEME)
    require("langchain_postgres", _EXTRA)
    return LangChainPostgresStore(conninfo, schema)


LIBRARY = Library(
    module=__name__,
    extra=_EXTRA,
    pins=("langchain-community==0.4.2", "langchain-core==1.8.3", "sqlalchemy==2.0.44",
          "langchain-postgres==0.0.19", "psycopg[binary]==3.3.9"),
    order=5,
    schemes=(
        ("langchain+sql", open_sql_history.__name__),
        ("langchain+file", open_file_history.__name__),
        (POSTGRESQL_SCHEME, open_postgres_history.__name__),
    ),
    store_targets=(
        StoreEntry(6, "langchain-sql", "langchain+sql:///{dir}/store.db",
                   "LangChain: SQLChatMessageHistory on SQLite"),
        StoreEntry(7, "langchain-file", "langchain+file:///{dir}/histories",
                   "LangChain: FileChatMessageHistory"),
        StoreEntry(9, "langchain-postgresql", "langchain+postgresql://{server}?schema=mcl_{run}",
                   "LangChain: PostgresChatMessageHistory (langchain-postgres)", "postgresql"),
    ),
)
"""LangChain's chat histories: their schemes, extra and compliance targets."""
