"""Google Agent Development Kit session services (``google-adk``, module
``google.adk``) as stores.

ADK keeps a conversation in a *session*: ``(app_name, user_id, session_id)``
names it, and a session service creates it (``create_session``), reads it back
with its events (``get_session``) and adds one ``Event`` at a time
(``append_event``), which is what ADK's ``Runner`` does for every user message,
model reply and tool result. Two of its services are judged here:

``google-adk+memory://``
    ``InMemorySessionService``: the sessions live in the service object (a
    new, empty one per store). Anything after ``://`` is refused.
``google-adk+sqlite:///path/to/file.db``
    ``DatabaseSessionService(db_url="sqlite+aiosqlite:///path/to/file.db")``,
    SQLAlchemy's asyncio engine on the ``aiosqlite`` driver, with the
    library's defaults. ADK's session guide documents exactly this for a SQLite
    file (it asks for the ``sqlite+aiosqlite`` driver). The installed ADK also
    ships ``SqliteSessionService`` (plain ``aiosqlite``, its own schema), which
    ``adk web --session_service_uri sqlite:///…`` picks; the session guide
    does not present it, so it is not the one judged. The database service
    needs SQLAlchemy (ADK's ``db`` extra), which ``google-adk`` alone does not
    install.
``google-adk+postgresql://user@host:port/db?schema=NAME``
    The same ``DatabaseSessionService`` on PostgreSQL
    (``db_url="postgresql+psycopg://user@host:port/db"``, psycopg 3's asyncio
    driver, with the library's defaults otherwise), every connection's
    ``search_path`` set to the schema ``NAME`` through the ``connect_args`` the
    service hands to ``create_async_engine``; the adapter creates the schema
    when absent (:mod:`memconform.adapters.libraries.servers`).

How the Store contract maps onto a session service
--------------------------------------------------
- ``thread_id`` is the session id, under one fixed ``app_name`` and
  ``user_id`` (both ``"memconform"``). A thread's session is created on its
  first append: ``get_session`` (with ``GetSessionConfig(num_recent_events=0)``,
  ADK's existence-only read), and ``create_session`` when it gives ``None``.
  If another writer created it in between, ``create_session`` raises
  ``AlreadyExistsError`` and the session it made is read instead.
- ``append(thread_id, batch)`` reads the session once, then calls
  ``append_event`` once per message, in order, as a ``Runner`` does. ADK has no
  call that writes several events together. Before each call the adapter
  passes the kit's row point (:func:`memconform.harness.faults.
  batch_row_pause`). A :class:`~memconform.values.Message` becomes an
  ``Event``:

  * ``id`` is the event's ``id``. The service keeps it as given (ADK's
    comment says the service assigns it, but no service overwrites a set one;
    the database uses it in the events table's primary key);
  * ``role`` is the event's ``author`` (``"user"`` is ADK's own author name
    for user input; the other roles take the place of an agent's name), and
    ``content`` is ``Content(role="user" | "model", parts=[Part(text=text)])``
    (the Gemini API knows these two content roles only: ``user`` for the user,
    ``model`` for every other role);
  * ``run_id`` is also the event's ``invocation_id`` (ADK's word for one agent
    run; ``""`` when there is none);
  * ``parts``, ``run_id``, ``round``, ``turn_id``, ``committed`` and
    ``metadata`` travel in the event's ``custom_metadata``, ADK's free
    JSON dict on every event, under those key names;
  * ``timestamp`` is left to ``Event``'s own default, the clock when the
    adapter builds the event just before ``append_event`` (as a ``Runner``
    does). The database service orders a session's events by that timestamp
    (then by id), not by append order, so the order the kit reads back is the
    order of the adapter's stamps: the adapter declares
    ``provides = {"timestamps"}`` and the ordering rule (ST-002) is
    ``adapter-provided``. A caller's time (a message's ``metadata``) is data and
    never reaches ``Event.timestamp``: the Store contract has no timestamp
    field (see docs/findings.toml for the evidence and the decision).

  The database refuses an event id already in the session with SQLAlchemy's
  ``IntegrityError`` (the events table's primary key); that refusal is raised
  as :class:`~memconform.contract.DuplicateIdError`. The database
  service also refuses an append through a session object that another
  writer has overtaken (``StaleSessionError``: "reload the session before
  appending more events"); that refusal is raised as
  :class:`~memconform.contract.StoreError`. The adapter does not
  reload and try again. A session the database refuses to create (SQLAlchemy's
  ``DataError``: on PostgreSQL an id longer than 128 characters) is refused with
  :class:`~memconform.contract.StoreError` too. Every other exception passes
  through unchanged.
- ``messages(thread_id, limit)`` is ``get_session`` with
  ``GetSessionConfig(num_recent_events=limit)`` (no config when ``limit`` is
  ``None``): the service takes the newest ``limit`` events itself, oldest
  first, and its own validator refuses a negative limit with pydantic's
  ``ValidationError`` (a ``ValueError`` subclass), re-raised as a plain
  ``ValueError``. Each event is turned back into a
  message: the text is the concatenated ``text`` of its content parts, the role
  its ``author`` (or, for an author that is not one of the kit's roles, ``user``
  or ``assistant`` from the content role), the other fields from
  ``custom_metadata`` (``run_id`` from ``invocation_id`` when the event has no
  kit metadata). Nothing is copied or filtered on the way: the in-memory
  service hands out deep copies of its sessions, the database service parses
  fresh events from JSON, and ``committed`` comes back as stored.

Event loops
-----------
Every service method is a coroutine, and ADK expects a service to live on one
event loop, the application's: the database service keeps an asyncio engine
whose pooled ``aiosqlite`` connections and ``asyncio.Lock`` objects (one per
session, serialising that session's appends) belong to the loop that first
uses them. The kit calls the store from threads with loops of their own, so
each store runs one event loop in a daemon thread of its own, creates its
service there, and runs every call on it (the Store methods block until the
call is done). Calls from several kit threads interleave on that loop exactly
as an ADK application's tasks would. :meth:`GoogleADKStore.close` closes the
service there (the database service disposes of its engine) and stops the
loop: the pooled ``aiosqlite`` connections run in threads that would otherwise
keep the process alive.

Capabilities
------------
- ``google-adk+memory``: none. The sessions die with the object.
- ``google-adk+sqlite`` and ``google-adk+postgresql``: ``durable`` (each
  ``append_event`` commits its event to the database before it returns) and
  ``concurrent-writers`` (the database service is made for several application
  instances on one database: it checks for a stale session on each append and copes with concurrent
  creation of state rows). Not ``atomic-batch``: every ``append_event`` is a
  transaction of its own.
- Not expressible, so not declared by either: ``commit-flags`` (an event has
  no visibility flag, and no service changes a stored event), ``errors`` and
  ``turn-records`` (a session holds events only). ``state``: ADK's session
  state (``state_delta`` on an event, merged into ``session.state``, with
  ``app:`` and ``user:`` scopes) is a plain dict with no version per key and
  no compare-and-set; the only conflict ADK detects is a stale *session
  object* (``StaleSessionError``), which says nothing about a key's version.
  ``knowledge``: user-scoped state keys cannot be deleted (a delta can only
  set a value) and ADK's memory services search text, they do not keep one
  fact per subject.

What the services do not do, and this adapter does not add: no write covers
more than one event, so a batch that fails part-way (a refused id, a stale
session, a fault at the row point) leaves its earlier messages stored; the
in-memory service keeps an event whose id is already in the session (it only
skips a re-delivery equal in every field); the in-memory service strips white
space around a session id in ``create_session`` and ``get_session``, so thread
ids that differ only there share one session (the adapter hands the thread id
over as it is); and both keep text that UTF-8
cannot encode (a lone surrogate) exactly instead of refusing it (the database
writes ``event_data`` with ``json.dumps``, which escapes it). On PostgreSQL
``event_data`` is a JSONB column (ADK's ``DynamicJSON``): PostgreSQL keeps its
numbers as decimals (``-0.0`` reads back as ``0.0``, ``1e16`` as an integer) and
refuses NUL and lone surrogates with the driver's ``DataError``, which passes
through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from memconform.adapters.libraries import LoopThread, file_path, library_versions, require
from memconform.adapters.libraries.description import Library, StoreEntry
from memconform.adapters.libraries.servers import (
    ensure_schema,
    postgresql_target,
    search_path_option,
)
from memconform.adapters.urls import StoreURLError
from memconform.contract import (
    Capability,
    DuplicateIdError,
    Provision,
    StoreError,
    damage_index,
)
from memconform.harness.faults import batch_row_pause
from memconform.values import ROLES, JSONValue, Message, freeze_json

__all__ = [
    "APP_NAME",
    "LIBRARY",
    "MEMORY_SCHEME",
    "POSTGRESQL_SCHEME",
    "SQLITE_SCHEME",
    "USER_ID",
    "GoogleADKDatabaseStore",
    "GoogleADKStore",
    "content_role",
    "database_path",
    "event_fields",
    "message_from_event",
    "open_database",
    "open_in_memory",
    "open_postgresql",
]

MEMORY_SCHEME = "google-adk+memory"
SQLITE_SCHEME = "google-adk+sqlite"
POSTGRESQL_SCHEME = "google-adk+postgresql"
EXTRA = "google-adk"
"""The optional extra that installs the library."""

APP_NAME = "memconform"
"""The ``app_name`` of every session the store makes."""
USER_ID = "memconform"
"""The ``user_id`` of every session the store makes."""

_KIT_KEYS = ("parts", "run_id", "round", "turn_id", "committed", "metadata")
"""The ``custom_metadata`` keys holding the message fields an event has no place for."""

T = TypeVar("T")


# -- translation ------------------------------------------------------------------------


def event_fields(message: Message) -> dict[str, Any]:
    """The ``Event`` fields that stand for ``message``, except ``content``,
    which needs the library's types (see :meth:`GoogleADKStore.event`):
    ``id``, ``author``, ``invocation_id`` and ``custom_metadata``."""
    custom: dict[str, JSONValue] = {
        "parts": [freeze_json(part) for part in message.parts],
        "run_id": message.run_id,
        "round": message.round,
        "turn_id": message.turn_id,
        "committed": message.committed,
        "metadata": freeze_json(dict(message.metadata)),
    }
    return {
        "id": message.id,
        "author": message.role,
        "invocation_id": message.run_id or "",
        "custom_metadata": custom,
    }


def content_role(role: str) -> str:
    """The Gemini content role for a kit role: ``user`` stays, all else is ``model``."""
    return "user" if role == "user" else "model"


def message_from_event(event: Any) -> Message:
    """The :class:`Message` an ADK ``Event`` stands for (no copy is made)."""
    content = event.content
    parts = (content.parts or []) if content is not None else []
    text = "".join(part.text for part in parts if part.text is not None)
    role = event.author
    if role not in ROLES:
        role = "user" if content is not None and content.role == "user" else "assistant"
    custom: Mapping[str, Any] = event.custom_metadata or {}
    kit = set(_KIT_KEYS) & set(custom)
    return Message(
        id=event.id,
        role=role,
        text=text,
        parts=tuple(custom.get("parts") or ()),
        run_id=custom.get("run_id") if kit else (event.invocation_id or None),
        round=custom.get("round"),
        turn_id=custom.get("turn_id"),
        committed=custom.get("committed", True),
        metadata=custom.get("metadata") or {},
    )


# -- the event loop ---------------------------------------------------------------------


# -- the store --------------------------------------------------------------------------


class GoogleADKStore:
    """A store made of one ADK session service; one session per thread id.

    ``make_service`` builds the service (it runs on the store's own event
    loop). ``duplicate_errors`` are the exceptions with which the service
    refuses an event id already in the session.
    """

    provides = frozenset({Provision.TIMESTAMPS})
    """Each event's timestamp is stamped when the adapter builds it (see the module)."""

    def __init__(
        self,
        make_service: Callable[[], Any],
        *,
        capabilities: frozenset[str],
        version: str = "",
        duplicate_errors: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.version = version
        self._capabilities = capabilities
        self._duplicate_errors = duplicate_errors
        sessions = require("google.adk.sessions.base_session_service", EXTRA)
        self._config: Any = sessions.GetSessionConfig
        self._event: Any = require("google.adk.events", EXTRA).Event
        types = require("google.genai.types", EXTRA)
        self._content: Any = types.Content
        self._part: Any = types.Part
        self._exists: Any = require("google.adk.errors.already_exists_error", EXTRA)
        self._stale: Any = require("google.adk.errors", EXTRA).StaleSessionError
        self._loop: LoopThread[Any] = LoopThread("google-adk", make_service)
        self.service: Any = self._loop.built

    @property
    def capabilities(self) -> frozenset[str]:
        """What the service can keep (see the module)."""
        return self._capabilities

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.run(coro)

    def event(self, message: Message) -> Any:
        """The ADK ``Event`` that stands for ``message``."""
        content = self._content(
            role=content_role(message.role), parts=[self._part(text=message.text)]
        )
        return self._event(content=content, **event_fields(message))

    async def _session(self, thread_id: str) -> Any:
        """The thread's session (no events loaded), created when absent."""
        key = {"app_name": APP_NAME, "user_id": USER_ID, "session_id": thread_id}
        config = self._config(num_recent_events=0)
        session = await self.service.get_session(**key, config=config)
        if session is not None:
            return session
        try:
            return await self.service.create_session(**key)
        except self._exists.AlreadyExistsError:
            return await self.service.get_session(**key, config=config)
        except Exception as exc:
            if type(exc).__name__ != "DataError":
                raise
            # the database refusing the session row (PostgreSQL: an id longer
            # than the sessions table's VARCHAR(128)): the service's own loud
            # refusal, in the contract's words
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise StoreError(
                f"the database refused the session {thread_id!r}: {first_line}"
            ) from exc

    async def _append(self, thread_id: str, batch: Sequence[Message]) -> None:
        if not batch:
            return
        session = await self._session(thread_id)
        for message in batch:
            event = self.event(message)
            batch_row_pause()
            try:
                await self.service.append_event(session, event)
            except self._stale as exc:
                raise StoreError(
                    f"the session refused event {message.id!r} as stale: {exc}"
                ) from exc
            except self._duplicate_errors as exc:
                first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise DuplicateIdError(
                    f"the session refused event id {message.id!r}: {first_line}"
                ) from exc

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """One ``append_event`` per message, in order (see the module)."""
        self._run(self._append(thread_id, list(batch)))

    async def _read(self, thread_id: str, config: Any) -> list[Message]:
        try:
            session = await self.service.get_session(
                app_name=APP_NAME, user_id=USER_ID, session_id=thread_id, config=config
            )
        except (ValueError, TypeError) as exc:
            # a stored event the service cannot decode (its JSON, or the Event
            # model refusing it): the service's own loud failure, in the
            # contract's words
            raise StoreError(
                f"get_session could not read the session: {type(exc).__name__}: {exc}"
            ) from exc
        if session is None:
            return []
        return [message_from_event(event) for event in session.events]

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """``get_session`` with ``num_recent_events=limit``, events turned into messages."""
        config = None
        if limit is not None:
            try:
                config = self._config(num_recent_events=limit)
            except ValueError as exc:
                # pydantic's ValidationError: raised as the plain ValueError it is
                raise ValueError(f"GetSessionConfig refused num_recent_events={limit!r}") from exc
        return self._run(self._read(thread_id, config))

    def close(self) -> None:
        """Close the service on its loop (where it has ``close``), then stop the loop."""
        close = getattr(self.service, "close", None)
        self._loop.close(close if callable(close) else None)


class GoogleADKDatabaseStore(GoogleADKStore):
    """A :class:`GoogleADKStore` on ``DatabaseSessionService``, with the damage hook."""

    async def _damage(self, thread_id: str) -> None:
        sql = require("sqlalchemy", EXTRA)
        engine: Any = self.service.db_engine
        # SQLite keeps event_data as JSON text: text that is not JSON. jsonb
        # holds only valid JSON: an event whose content is a string, which the
        # Event model cannot read.
        unreadable = (
            "{not json" if engine.dialect.name == "sqlite" else '{"content": "damaged"}'
        )
        key = {"app": APP_NAME, "user": USER_ID, "session": thread_id}
        async with engine.begin() as conn:
            found = await conn.execute(
                sql.text(
                    "SELECT id FROM events WHERE app_name = :app AND user_id = :user"
                    " AND session_id = :session ORDER BY timestamp, id"
                ),
                key,
            )
            ids = [row[0] for row in found]
            target = ids[damage_index(len(ids))]
            await conn.execute(
                sql.text(
                    "UPDATE events SET event_data = :bad WHERE app_name = :app"
                    " AND user_id = :user AND session_id = :session AND id = :id"
                ),
                {**key, "id": target, "bad": unreadable},
            )

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the ``event_data`` of the thread's middle event becomes something the
        service cannot decode, written with an ``UPDATE`` on the service's own
        engine and table. ``DatabaseSessionService.get_session`` then raises."""
        self._run(self._damage(thread_id))


# -- factories --------------------------------------------------------------------------


def database_path(url: str) -> str:
    """The SQLite file named by ``google-adk+sqlite:///path`` (read as
    :func:`memconform.adapters.sqlite.sqlite_path` reads ``sqlite:///path``),
    its parent directories created. Raises :class:`StoreURLError` for another
    scheme, an empty path, an in-memory database or any query option."""
    path = file_path(url, SQLITE_SCHEME)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return path


def open_in_memory(url: str) -> GoogleADKStore:
    """``google-adk+memory://``: a new, empty ``InMemorySessionService``."""
    prefix = f"{MEMORY_SCHEME}://"
    if not url.lower().startswith(prefix):
        raise StoreURLError(f"not a {MEMORY_SCHEME} URL: {url!r}")
    if url[len(prefix) :]:
        raise StoreURLError(f"{MEMORY_SCHEME} takes nothing after '://': {url!r}")
    service_class: Any = require("google.adk.sessions", EXTRA).InMemorySessionService
    return GoogleADKStore(
        service_class,
        capabilities=frozenset(),
        version=library_versions("google-adk", "google-genai"),
    )


def open_database(url: str) -> GoogleADKDatabaseStore:
    """``google-adk+sqlite:///path.db``: ``DatabaseSessionService`` on
    ``sqlite+aiosqlite:///path.db``."""
    path = database_path(url)
    sessions = require("google.adk.sessions", EXTRA)
    require("aiosqlite", EXTRA)
    # DatabaseSessionService needs SQLAlchemy's asyncio extension (ADK's "db" extra).
    require("sqlalchemy.ext.asyncio", EXTRA)
    integrity_error: type[BaseException] = require("sqlalchemy.exc", EXTRA).IntegrityError
    database_url = require("sqlalchemy.engine", EXTRA).URL.create("sqlite+aiosqlite", database=path)
    service_class: Any = sessions.DatabaseSessionService
    return GoogleADKDatabaseStore(
        lambda: service_class(db_url=database_url.render_as_string()),
        capabilities=frozenset({Capability.DURABLE, Capability.CONCURRENT_WRITERS}),
        version=library_versions("google-adk", "google-genai", "sqlalchemy", "aiosqlite"),
        duplicate_errors=(integrity_error,),
    )


def open_postgresql(url: str) -> GoogleADKDatabaseStore:
    """``google-adk+postgresql://user@host:port/db?schema=NAME``:
    ``DatabaseSessionService`` on ``postgresql+psycopg``, tables in ``NAME``."""
    conninfo, schema = postgresql_target(url, POSTGRESQL_SCHEME)
    sessions = require("google.adk.sessions", EXTRA)
    require("psycopg", EXTRA)
    require("sqlalchemy.ext.asyncio", EXTRA)
    integrity_error: type[BaseException] = require("sqlalchemy.exc", EXTRA).IntegrityError
    ensure_schema(conninfo, schema)
    database_url = require("sqlalchemy.engine", EXTRA).make_url(conninfo).set(
        drivername="postgresql+psycopg"
    )
    service_class: Any = sessions.DatabaseSessionService
    return GoogleADKDatabaseStore(
        lambda: service_class(
            db_url=database_url.render_as_string(hide_password=False),
            connect_args={"options": search_path_option(schema)},
        ),
        capabilities=frozenset({Capability.DURABLE, Capability.CONCURRENT_WRITERS}),
        version=library_versions("google-adk", "google-genai", "sqlalchemy", "psycopg"),
        duplicate_errors=(integrity_error,),
    )


LIBRARY = Library(
    module=__name__,
    extra=EXTRA,
    pins=("google-adk==2.13.0", "sqlalchemy==2.0.44", "aiosqlite==0.22.1",
          "psycopg[binary]==3.3.9"),
    order=4,
    schemes=(
        (MEMORY_SCHEME, open_in_memory.__name__),
        (SQLITE_SCHEME, open_database.__name__),
        (POSTGRESQL_SCHEME, open_postgresql.__name__),
    ),
    store_targets=(
        StoreEntry(4, "google-adk-memory", "google-adk+memory://",
                   "Google ADK: InMemorySessionService"),
        StoreEntry(5, "google-adk-sqlite", "google-adk+sqlite:///{dir}/store.db",
                   "Google ADK: DatabaseSessionService on SQLite"),
        StoreEntry(12, "google-adk-postgresql",
                   "google-adk+postgresql://{server}?schema=mca_{run}",
                   "Google ADK: DatabaseSessionService on PostgreSQL", "postgresql"),
    ),
)
"""ADK's session services: their schemes, extra and compliance targets."""
