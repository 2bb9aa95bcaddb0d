"""``llama-index+sqlite:///path.db``: LlamaIndex's ``SQLAlchemyChatStore`` on a SQLite file.

The library
    ``llama_index.core.storage.chat_store.sql.SQLAlchemyChatStore`` (package
    ``llama-index-core``) is the chat store behind LlamaIndex's ``Memory``. It is
    async only and keeps every message of every key in one table: an
    autoincrement ``id``, the ``key``, a ``timestamp`` (``time.time_ns()`` taken
    when the message is written, plus its index within a batch), the ``role``, a
    ``status`` (``active`` or ``archived``) and the whole ``ChatMessage`` as JSON
    in ``data``. Reads order by ``(timestamp, id)``, so the order is the writer's
    clock when it built the batch, not the order in which batches were committed
    (two processes can commit in the other order). The adapter opens it on the
    file with ``sqlite+aiosqlite`` and the table ``Memory`` uses by default
    (``llama_index_memory``).

How a message is translated
    A :class:`~memconform.values.Message` becomes a ``ChatMessage`` the way a
    LlamaIndex user writes one: ``role`` is the ``MessageRole`` of the same name,
    ``text`` is its content (one ``TextBlock``), and the fields ``ChatMessage``
    has no place for (it has no id field) go into ``additional_kwargs``: ``id``,
    ``parts``, ``run_id``, ``round``, ``turn_id``, ``committed`` and
    ``metadata``. Reading converts back; the text is ``ChatMessage.content``.

How each Store method maps onto the library
    ``append(thread_id, batch)`` is one ``add_messages(thread_id, batch)`` call,
    the library's own batch write: one multi-row ``INSERT`` in one session
    transaction. The batch is handed over as it is; the library checks no ids.
    ``messages(thread_id, limit)`` is ``get_messages(thread_id, limit=limit)``
    (active messages, oldest first): the library has a window parameter, so the
    adapter hands the limit over as it is and never slices or checks it itself.
    What the library does with it is what the kit judges: its ``limit`` is SQL
    ``LIMIT`` on rows ordered oldest first, so it returns the *oldest* N (ST-003)
    and a negative limit, which SQLite reads as no limit, returns everything
    (ST-005). A database error from the library's write is raised as
    :class:`~memconform.contract.StoreError` with the error as cause.

Event loops
    The kit runs each call on an event loop of its own choosing, and SQLAlchemy
    documents that an ``AsyncEngine`` with a connection pool must not be used
    from more than one loop. The engine is therefore created with ``NullPool``
    (SQLAlchemy's documented answer): every library call opens its own aiosqlite
    connection on the running loop and closes it, so nothing bound to a loop is
    kept between calls and nothing stays open to close.

Fault point
    The kit's row point (:func:`~memconform.harness.faults.batch_row_pause`) is
    called from SQLAlchemy's ``before_cursor_execute`` event, once for each row of
    an ``INSERT`` into the message table, i.e. inside the library's own session
    transaction, just before its statement runs. An injected failure therefore
    interrupts the library's real write.

Capabilities declared
    ``durable``: the messages are rows of the SQLite file, committed before the
    call returns, and a new process opening the same URL reads them back.
    ``atomic-batch``: ``add_messages`` writes a batch as one ``INSERT`` statement
    committed once. ``concurrent-writers``: a SQL chat store is meant to be
    shared by several processes, and SQLite arbitrates writers on a file.

What cannot be expressed
    ``commit-flags``: the library can archive the oldest N active messages but
    cannot change the status of a message named by id (the committed field is
    still kept, as data). ``errors``, ``turn-records``, ``state``, ``knowledge``:
    the chat store holds chat messages only.

Library behaviours the kit reports (left as they are)
    No message id is unique: a batch repeating a stored id, or an id within
    itself, is stored in full. An empty batch raises: ``add_messages([])`` builds
    an ``INSERT`` of no rows that SQLite rejects (``key`` is NOT NULL). A lone
    surrogate is kept (the JSON column escapes it) instead of refused.

Damage hook (ST-037)
    ``damage(thread_id)`` writes text that is not JSON into the ``data`` column
    of the thread's middle row, with an ``UPDATE`` of the kit's own on the
    store's engine. ``get_messages`` then raises the decoding error, which the
    read passes on as :class:`StoreError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memconform.adapters.libraries import file_path, library_versions, require
from memconform.adapters.libraries.description import Library, StoreEntry
from memconform.contract import Capability, StoreError, damage_index
from memconform.harness.faults import batch_row_pause
from memconform.values import Message

__all__ = ["LIBRARY", "SCHEME", "TABLE", "LlamaIndexChatStore", "open_sqlalchemy_chat_store"]

SCHEME = "llama-index+sqlite"
TABLE = "llama_index_memory"
"""The table ``Memory`` uses by default."""

_EXTRA = "llama-index"
_KWARG_FIELDS = ("id", "parts", "run_id", "round", "turn_id", "committed", "metadata")
"""The Message fields kept in ``ChatMessage.additional_kwargs``."""


def chat_message_fields(message: Message) -> dict[str, Any]:
    """The keyword arguments of the ``ChatMessage`` a user would build for ``message``."""
    data = message.to_json()
    return {
        "role": message.role,
        "content": message.text,
        "additional_kwargs": {name: data[name] for name in _KWARG_FIELDS},
    }


def message_from_chat(chat: Any) -> Message:
    """The :class:`Message` held by a ``ChatMessage`` the adapter wrote."""
    extra = dict(chat.additional_kwargs)
    role = chat.role.value if hasattr(chat.role, "value") else str(chat.role)
    text = chat.content
    return Message.from_json({**extra, "role": role, "text": "" if text is None else text})


def _rows_in(statement: str, parameters: Any, executemany: bool) -> int:
    """How many rows an ``INSERT`` writes: one per parameter set, or one per
    ``VALUES`` group of a multi-row statement."""
    if executemany:
        return len(parameters)
    values = statement.upper().split(" VALUES ", 1)
    return max(values[1].count("("), 1) if len(values) == 2 else 1


def _install_row_point(engine: Any, table: str) -> None:
    """Call the kit's row point before each row the library inserts into ``table``."""
    event = require("sqlalchemy.event", _EXTRA)
    prefix = f"INSERT INTO {table} "

    def before_cursor_execute(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        if statement.startswith(prefix):
            for _ in range(_rows_in(statement, parameters, executemany)):
                batch_row_pause()

    event.listen(engine.sync_engine, "before_cursor_execute", before_cursor_execute)


class LlamaIndexChatStore:
    """A Store over one ``SQLAlchemyChatStore``; see the module docstring."""

    def __init__(self, path: str) -> None:
        sql = require("llama_index.core.storage.chat_store.sql", _EXTRA)
        types = require("llama_index.core.base.llms.types", _EXTRA)
        require("aiosqlite", _EXTRA)
        asyncio_ext = require("sqlalchemy.ext.asyncio", _EXTRA)
        pool = require("sqlalchemy.pool", _EXTRA)
        engine_url = require("sqlalchemy.engine", _EXTRA).URL
        self.path = path
        self._chat_message: Any = types.ChatMessage
        self._sqlalchemy_error: type[Exception] = require("sqlalchemy.exc", _EXTRA).SQLAlchemyError
        self._engine: Any = asyncio_ext.create_async_engine(
            engine_url.create("sqlite+aiosqlite", database=path), poolclass=pool.NullPool
        )
        _install_row_point(self._engine, TABLE)
        self.chat_store: Any = sql.SQLAlchemyChatStore(table_name=TABLE, async_engine=self._engine)
        self.version = library_versions("llama-index-core", "SQLAlchemy", "aiosqlite")

    @property
    def capabilities(self) -> frozenset[str]:
        """``durable``, ``atomic-batch`` and ``concurrent-writers``."""
        return frozenset(
            {Capability.DURABLE, Capability.ATOMIC_BATCH, Capability.CONCURRENT_WRITERS}
        )

    async def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """One ``add_messages`` call with the whole batch."""
        chats = [self._chat_message(**chat_message_fields(m)) for m in batch]
        try:
            await self.chat_store.add_messages(thread_id, chats)
        except self._sqlalchemy_error as exc:
            raise StoreError(f"add_messages to {thread_id!r} failed: {exc}") from exc

    async def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """``get_messages(thread_id, limit=limit)``: the library's own window, as it is."""
        try:
            chats = await self.chat_store.get_messages(thread_id, limit=limit)
        except (ValueError, TypeError) as exc:
            # a stored row the library cannot decode (the JSON column, or the
            # ChatMessage model refusing it): its own loud failure, in the
            # contract's words
            raise StoreError(
                f"get_messages could not read {thread_id!r}: {type(exc).__name__}: {exc}"
            ) from exc
        return [message_from_chat(chat) for chat in chats]

    async def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the ``data`` of the thread's middle row becomes text that is not JSON."""
        sql = require("sqlalchemy", _EXTRA)
        await self.chat_store.get_messages(thread_id, limit=0)  # the table exists
        async with self._engine.begin() as conn:
            found = await conn.execute(
                sql.text(f"SELECT id FROM {TABLE} WHERE key = :key ORDER BY timestamp, id"),
                {"key": thread_id},
            )
            ids = [row[0] for row in found]
            await conn.execute(
                sql.text(f"UPDATE {TABLE} SET data = '{{not json' WHERE id = :id"),
                {"id": ids[damage_index(len(ids))]},
            )


def open_sqlalchemy_chat_store(url: str) -> LlamaIndexChatStore:
    """``llama-index+sqlite:///relative.db`` or ``llama-index+sqlite:////abs/path.db``:
    a ``SQLAlchemyChatStore`` on that SQLite file (created when absent)."""
    path = file_path(url, SCHEME)
    require("llama_index.core.storage.chat_store.sql", _EXTRA)  # before touching the disk
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return LlamaIndexChatStore(path)


LIBRARY = Library(
    module=__name__,
    extra=_EXTRA,
    pins=("llama-index-core==0.14.25", "sqlalchemy==2.1.9", "aiosqlite==0.22.1"),
    order=6,
    schemes=((SCHEME, open_sqlalchemy_chat_store.__name__),),
    store_targets=(
        StoreEntry(8, "llama-index-sqlite", "llama-index+sqlite:///{dir}/store.db",
                   "LlamaIndex: SQLAlchemyChatStore on SQLite"),
    ),
)
"""LlamaIndex's chat store: its scheme, extra and compliance target."""
