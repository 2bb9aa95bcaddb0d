"""OpenAI Agents SDK sessions (``openai-agents``, module ``agents``) as stores.

The Agents SDK keeps a conversation's history in a *session*: an object bound
to one ``session_id`` with ``add_items(items)``, ``get_items(limit)``,
``pop_item()`` and ``clear_session()``. An item is a Responses-API input item,
a plain dict that the session JSON-encodes into one row per item. Two of its
session classes keep their rows in a SQLite file:

``openai-agents+sqlite:///path/to/file.db``
    ``agents.SQLiteSession(session_id, db_path)``: the standard library's
    ``sqlite3`` in WAL mode, run in worker threads (``asyncio.to_thread``).
``openai-agents+sqlalchemy:///path/to/file.db``
    ``agents.extensions.memory.SQLAlchemySession`` on an ``AsyncEngine`` for
    ``sqlite+aiosqlite`` (install ``openai-agents[sqlalchemy]`` and
    ``aiosqlite``), with ``create_tables=True``. The engine uses
    ``NullPool``: SQLAlchemy's asyncio guide says an engine shared between
    event loops must not pool connections, and the kit gives each worker
    thread an event loop of its own. Every call therefore opens its own
    ``aiosqlite`` connection on the loop that runs it.

How the Store contract maps onto a session
------------------------------------------
- A session holds one conversation, so ``thread_id`` is the ``session_id``.
  The store opens one session object per thread id, all on the same file
  (both classes share one table of sessions and one table of items per file),
  and keeps it until :meth:`AgentsSessionStore.close`.
- ``append(thread_id, batch)`` is one ``add_items`` call with the whole batch.
  A :class:`~memconform.values.Message` becomes a message item,
  ``{"type": "message", "id": ..., "role": ..., "content": text}``: the id
  goes in the item's own ``id`` field (where the SDK keeps the id of a
  model's output message), the text in ``content`` as a plain string. An
  item dict carries no field for the kit's other values, but the session
  stores the whole dict as JSON, extra keys included, so ``parts``,
  ``run_id``, ``round``, ``turn_id``, ``committed`` and ``metadata`` travel in
  one extra key of the item, ``"memconform"``. The Responses API has no
  ``tool`` role for message items (a tool's result is a
  ``function_call_output`` item tied to a call id the kit's value does not
  have); the role is stored as given, which the session accepts unchecked.
- ``messages(thread_id, limit)`` is ``get_items(limit)``, converted back.
  ``get_items`` takes the newest ``limit`` items itself, oldest first, and
  every read decodes fresh dicts from JSON, so what it returns is already a
  copy. ``committed`` comes back as stored: a session has no visibility flag,
  so nothing is filtered on it. An item that is not a message item (a
  function call, a reasoning item written by a ``Runner``) has no Message
  form here and makes the read raise :class:`StoreError`.

Capabilities
------------
- ``durable``: each ``add_items`` commits to the SQLite file before it
  returns; a new process that opens the same URL reads the rows back.
- ``atomic-batch``: both classes write the items of one ``add_items`` call in
  one database transaction (``SQLiteSession._insert_items`` inside one
  ``commit``; ``SQLAlchemySession.add_items`` inside ``sess.begin()``), and
  ``RedisSession.add_items`` sends the whole batch in one ``MULTI``/``EXEC``
  pipeline.
- ``concurrent-writers``: both are made to share one file between processes
  (WAL journal, busy timeout; the SQLAlchemy session also retries when the
  database is locked); a PostgreSQL or Redis server is shared by design.
  With Redis ``durable`` means what the server's persistence settings give:
  the kit reads back from a new process, not after a server restart.
- Not expressible, so not declared: ``commit-flags`` (no visibility flag),
  ``errors``, ``turn-records``, ``state`` and ``knowledge`` (a session keeps
  conversation items only).

What the sessions do not do, and this adapter does not add: neither refuses
an item whose ``id`` is already in the session or repeated within a batch;
``get_items`` with a negative limit returns every item on SQLite (SQLite's
``LIMIT -1``) and nothing on Redis, instead of refusing it (on PostgreSQL the
database refuses the ``LIMIT``, and that refusal is raised as ``ValueError``);
and text that UTF-8 cannot encode (a lone surrogate)
is stored escaped inside the JSON and read back exactly, not refused. The
adapter offers the kit no row point (:func:`memconform.harness.faults.
batch_row_pause`): the rows are written inside the library's own call.

The damage hook (ST-037) writes text that is not JSON into the
``message_data`` of the thread's middle item, in the library's own table
(SQLite and SQLAlchemy) or list (Redis), with a statement of the kit's own
beside the session: the session has no operation that writes a raw row. Every
session class then skips that row when it reads, without an error.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memconform.adapters.libraries import LoopThread, file_path, library_versions, require
from memconform.adapters.libraries.description import Library, StoreEntry
from memconform.adapters.libraries.servers import (
    ensure_schema,
    postgresql_target,
    redis_target,
    search_path_option,
)
from memconform.contract import Capability, StoreError, damage_index
from memconform.values import JSONValue, Message, freeze_json

__all__ = [
    "EXTRA_KEY",
    "LIBRARY",
    "POSTGRESQL_SCHEME",
    "REDIS_SCHEME",
    "SQLALCHEMY_SCHEME",
    "SQLITE_SCHEME",
    "AgentsSessionStore",
    "LoopedSessionStore",
    "item_from_message",
    "message_from_item",
    "open_postgresql_session",
    "open_redis_session",
    "open_sqlalchemy_session",
    "open_sqlite_session",
    "refused_negative_limit",
    "session_path",
]

SQLITE_SCHEME = "openai-agents+sqlite"
SQLALCHEMY_SCHEME = "openai-agents+sqlalchemy"
POSTGRESQL_SCHEME = "openai-agents+postgresql"
REDIS_SCHEME = "openai-agents+redis"
EXTRA = "openai-agents"
"""The optional extra that installs the library."""

EXTRA_KEY = "memconform"
"""The item key holding the message fields a message item has no place for."""


# -- translation ------------------------------------------------------------------------


def item_from_message(message: Message) -> dict[str, JSONValue]:
    """The Responses-API message item that stands for ``message``."""
    return {
        "type": "message",
        "id": message.id,
        "role": message.role,
        "content": message.text,
        EXTRA_KEY: {
            "parts": [freeze_json(part) for part in message.parts],
            "run_id": message.run_id,
            "round": message.round,
            "turn_id": message.turn_id,
            "committed": message.committed,
            "metadata": freeze_json(dict(message.metadata)),
        },
    }


def _content_text(content: Any) -> str:
    """The text of a message item's ``content``: a string, or the concatenated
    ``text`` of its content parts (the list form the SDK writes for model output)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    raise StoreError(f"message item content has type {type(content).__name__}")


def message_from_item(item: Any) -> Message:
    """The :class:`Message` an item stands for; raises :class:`StoreError` for an
    item that is not a message item."""
    if not isinstance(item, Mapping):
        raise StoreError(f"session item is {type(item).__name__}, not an item dict")
    kind = item.get("type", "message")
    if kind != "message" or "role" not in item:
        raise StoreError(f"session item of type {kind!r} is not a message item")
    extra = item.get(EXTRA_KEY)
    fields: dict[str, Any] = dict(extra) if isinstance(extra, Mapping) else {}
    fields.update(id=item.get("id", ""), role=item["role"], text=_content_text(item.get("content")))
    try:
        return Message.from_json(fields)
    except ValueError as exc:
        raise StoreError(f"session item {item.get('id')!r} is not a kit message: {exc}") from None


# -- damage ------------------------------------------------------------------------------

UNREADABLE = "{not json"
"""What the damage hook writes in place of an item's JSON."""

Damage = Callable[[Any], Awaitable[None]]
"""Makes one stored item of a session unreadable (the session object is given)."""


async def damage_sqlite_row(session: Any) -> None:
    """The middle item of a ``SQLiteSession`` gets ``message_data`` that is not JSON,
    written through a connection of the kit's own to the session's file."""
    table = session.messages_table

    def work() -> None:
        with sqlite3.connect(str(session.db_path), timeout=30) as conn:
            ids = [
                row[0]
                for row in conn.execute(
                    f"SELECT id FROM {table} WHERE session_id = ? ORDER BY id",
                    (session.session_id,),
                )
            ]
            target = ids[damage_index(len(ids))]
            conn.execute(
                f"UPDATE {table} SET message_data = ? WHERE id = ?", (UNREADABLE, target)
            )
        conn.close()

    await asyncio.to_thread(work)


async def damage_sqlalchemy_row(session: Any) -> None:
    """The middle item of a ``SQLAlchemySession`` gets ``message_data`` that is not
    JSON, written with an ``UPDATE`` on the session's own engine and table."""
    sql = require("sqlalchemy", EXTRA)
    table = session._messages
    async with session._engine.begin() as conn:
        found = await conn.execute(
            sql.select(table.c.id)
            .where(table.c.session_id == session.session_id)
            .order_by(table.c.created_at.asc(), table.c.id.asc())
        )
        ids = [row[0] for row in found]
        target = ids[damage_index(len(ids))]
        await conn.execute(
            sql.update(table).where(table.c.id == target).values(message_data=UNREADABLE)
        )


async def damage_redis_item(session: Any) -> None:
    """The middle item of a ``RedisSession``'s list becomes text that is not JSON."""
    client, key = session._redis, session._messages_key
    index = damage_index(int(await client.llen(key)))
    await client.lset(key, index, UNREADABLE)


# -- the store --------------------------------------------------------------------------


class AgentsSessionStore:
    """A store made of one Agents SDK session per thread id.

    ``open_session(thread_id)`` makes the session object of a thread; it is
    called once per thread id and the object is kept. ``on_close`` runs after
    every session is closed (to release what the sessions share). ``damage``
    makes one stored item of a session unreadable (the hook of ST-037).
    """

    def __init__(
        self,
        open_session: Callable[[str], Any],
        *,
        damage: Damage,
        version: str = "",
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.version = version
        self._open_session = open_session
        self._damage = damage
        self._on_close = on_close
        self._sessions: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def capabilities(self) -> frozenset[str]:
        """``durable``, ``atomic-batch`` and ``concurrent-writers`` (see the module)."""
        return frozenset(
            {Capability.DURABLE, Capability.ATOMIC_BATCH, Capability.CONCURRENT_WRITERS}
        )

    def session(self, thread_id: str) -> Any:
        """The session object of ``thread_id`` (opened on first use)."""
        with self._lock:
            found = self._sessions.get(thread_id)
            if found is None:
                found = self._open_session(thread_id)
                self._sessions[thread_id] = found
            return found

    async def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """One ``add_items`` call with the batch as message items."""
        items = [item_from_message(message) for message in batch]
        await self.session(thread_id).add_items(items)

    async def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """``get_items(limit)``, each item turned back into a message.

        A negative ``limit`` that the database refuses (PostgreSQL's ``LIMIT
        must not be negative``, which SQLAlchemy raises as ``DataError``) is the
        library refusing the window: it is raised as the contract's
        ``ValueError``, with the library's error as its cause. Any other
        error, and a negative limit the library accepts, pass unchanged."""
        try:
            items = await self.session(thread_id).get_items(limit)
        except Exception as exc:
            if limit is not None and limit < 0 and refused_negative_limit(exc):
                raise ValueError(f"the session refused limit {limit}: {exc}") from exc
            raise
        return [message_from_item(item) for item in items]

    async def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the thread's middle item gets ``message_data`` that is not JSON."""
        await self._damage(self.session(thread_id))

    def close(self) -> None:
        """Close every session (where the class has ``close``), then what they share."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            close = getattr(session, "close", None)
            if callable(close):
                close()
        if self._on_close is not None:
            self._on_close()


NEGATIVE_LIMIT_SQLSTATE = "2201W"
"""SQLSTATE ``invalid_row_count_in_limit_clause``: PostgreSQL's refusal of a
negative ``LIMIT``."""


def refused_negative_limit(exc: BaseException) -> bool:
    """Whether ``exc`` is the database refusing a negative ``LIMIT``: a SQLAlchemy
    ``DBAPIError`` whose driver error (``orig``) carries SQLSTATE 2201W."""
    original = getattr(exc, "orig", None)
    return getattr(original, "sqlstate", None) == NEGATIVE_LIMIT_SQLSTATE


# -- factories --------------------------------------------------------------------------


def session_path(url: str, scheme: str) -> str:
    """The SQLite file named by ``<scheme>:///path`` (read as
    :func:`memconform.adapters.sqlite.sqlite_path` reads ``sqlite:///path``),
    its parent directories created. Raises :class:`StoreURLError` for another
    scheme, an empty path, an in-memory database or any query option."""
    path = file_path(url, scheme)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return path


def open_sqlite_session(url: str) -> AgentsSessionStore:
    """``openai-agents+sqlite:///path.db``: one ``SQLiteSession`` per thread id."""
    path = session_path(url, SQLITE_SCHEME)
    agents = require("agents", EXTRA)
    session_class: Any = agents.SQLiteSession
    return AgentsSessionStore(
        lambda thread_id: session_class(thread_id, path),
        damage=damage_sqlite_row,
        version=library_versions("openai-agents"),
    )


def open_sqlalchemy_session(url: str) -> AgentsSessionStore:
    """``openai-agents+sqlalchemy:///path.db``: one ``SQLAlchemySession`` per thread
    id, all on one ``sqlite+aiosqlite`` engine without a connection pool."""
    path = session_path(url, SQLALCHEMY_SCHEME)
    memory = require("agents.extensions.memory.sqlalchemy_session", EXTRA)
    require("aiosqlite", EXTRA)
    asyncio_ext = require("sqlalchemy.ext.asyncio", EXTRA)
    engine_url = require("sqlalchemy.engine", EXTRA).URL.create("sqlite+aiosqlite", database=path)
    engine: Any = asyncio_ext.create_async_engine(
        engine_url, poolclass=require("sqlalchemy.pool", EXTRA).NullPool
    )
    session_class: Any = memory.SQLAlchemySession

    def dispose() -> None:
        # NullPool holds no connection between calls, so the synchronous
        # dispose only drops the engine's (empty) pool; nothing is awaited.
        engine.sync_engine.dispose()

    return AgentsSessionStore(
        lambda thread_id: session_class(thread_id, engine=engine, create_tables=True),
        damage=damage_sqlalchemy_row,
        version=library_versions("openai-agents", "sqlalchemy", "aiosqlite"),
        on_close=dispose,
    )


def open_postgresql_session(url: str) -> AgentsSessionStore:
    """``openai-agents+postgresql://user@host:port/db?schema=NAME``: one
    ``SQLAlchemySession`` per thread id on a ``postgresql+psycopg`` engine without a
    connection pool, every connection's ``search_path`` set to ``NAME``."""
    conninfo, schema = postgresql_target(url, POSTGRESQL_SCHEME)
    memory = require("agents.extensions.memory.sqlalchemy_session", EXTRA)
    require("psycopg", EXTRA)
    asyncio_ext = require("sqlalchemy.ext.asyncio", EXTRA)
    ensure_schema(conninfo, schema)
    engine_url = require("sqlalchemy.engine", EXTRA).make_url(conninfo).set(
        drivername="postgresql+psycopg"
    )
    engine: Any = asyncio_ext.create_async_engine(
        engine_url,
        poolclass=require("sqlalchemy.pool", EXTRA).NullPool,
        connect_args={"options": search_path_option(schema)},
    )
    session_class: Any = memory.SQLAlchemySession

    def dispose() -> None:
        engine.sync_engine.dispose()

    return AgentsSessionStore(
        lambda thread_id: session_class(thread_id, engine=engine, create_tables=True),
        damage=damage_sqlalchemy_row,
        version=library_versions("openai-agents", "sqlalchemy", "psycopg"),
        on_close=dispose,
    )


class LoopedSessionStore:
    """An :class:`AgentsSessionStore` whose every call runs on one event loop of its
    own, in a daemon thread: for a session whose client belongs to the loop that
    made it (``redis.asyncio``), while the kit calls from threads with loops of
    their own. The calls block until done; nothing else changes."""

    def __init__(self, make: Callable[[], tuple[AgentsSessionStore, Callable[[], Any]]]) -> None:
        self._loop = LoopThread("openai-agents", make)
        self._inner, self._release = self._loop.built
        self.version = self._inner.version

    @property
    def capabilities(self) -> frozenset[str]:
        """Those of the session store (see the module)."""
        return self._inner.capabilities

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """:meth:`AgentsSessionStore.append`, on the store's loop."""
        self._loop.run(self._inner.append(thread_id, batch))

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """:meth:`AgentsSessionStore.messages`, on the store's loop."""
        return self._loop.run(self._inner.messages(thread_id, limit))

    def damage(self, thread_id: str) -> None:
        """:meth:`AgentsSessionStore.damage`, on the store's loop."""
        self._loop.run(self._inner.damage(thread_id))

    def close(self) -> None:
        """Release the client on the loop (the sessions do not own it, so their
        own ``close`` does nothing), then stop the loop."""

        async def release() -> None:
            await self._release()

        self._loop.close(release)


def open_redis_session(url: str) -> LoopedSessionStore:
    """``openai-agents+redis://host:port/db?prefix=PREFIX``: one ``RedisSession`` per
    thread id with ``key_prefix=PREFIX``, sharing one ``redis.asyncio`` client."""
    server, prefix = redis_target(url, REDIS_SCHEME)
    memory = require("agents.extensions.memory.redis_session", EXTRA)
    client_module = require("redis.asyncio", EXTRA)
    session_class: Any = memory.RedisSession

    def make() -> tuple[AgentsSessionStore, Callable[[], Any]]:
        client: Any = client_module.Redis.from_url(server)
        store = AgentsSessionStore(
            lambda thread_id: session_class(thread_id, redis_client=client, key_prefix=prefix),
            damage=damage_redis_item,
            version=library_versions("openai-agents", "redis"),
        )
        return store, client.aclose

    return LoopedSessionStore(make)


LIBRARY = Library(
    module=__name__,
    extra=EXTRA,
    pins=("openai-agents==0.24.0", "sqlalchemy==2.0.44", "aiosqlite==0.22.1",
          "psycopg[binary]==3.3.9", "redis==8.1.0"),
    order=1,
    schemes=(
        (SQLITE_SCHEME, open_sqlite_session.__name__),
        (SQLALCHEMY_SCHEME, open_sqlalchemy_session.__name__),
        (POSTGRESQL_SCHEME, open_postgresql_session.__name__),
        (REDIS_SCHEME, open_redis_session.__name__),
    ),
    store_targets=(
        StoreEntry(1, "openai-agents-sqlite", "openai-agents+sqlite:///{dir}/store.db",
                   "OpenAI Agents SDK: SQLiteSession"),
        StoreEntry(2, "openai-agents-sqlalchemy", "openai-agents+sqlalchemy:///{dir}/store.db",
                   "OpenAI Agents SDK: SQLAlchemySession on SQLite"),
        StoreEntry(11, "openai-agents-postgresql",
                   "openai-agents+postgresql://{server}?schema=mco_{run}",
                   "OpenAI Agents SDK: SQLAlchemySession on PostgreSQL", "postgresql"),
        StoreEntry(13, "openai-agents-redis", "openai-agents+redis://{server}?prefix=mco:{run}:",
                   "OpenAI Agents SDK: RedisSession", "redis"),
    ),
)
"""The Agents SDK's sessions: their schemes, extra and compliance targets."""
