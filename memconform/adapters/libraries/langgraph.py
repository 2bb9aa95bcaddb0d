"""``langgraph+sqlite:///path.db``: LangGraph's SQLite persistence.

LangGraph keeps a conversation as the state of a compiled graph, saved by a
checkpointer after every step; its long-term memory is a separate key-value
``BaseStore``. This adapter uses both, in the one SQLite file the URL names:

- the transcript is a minimal messages graph: a ``StateGraph`` over
  ``MessagesState`` (one ``messages`` channel merged by the ``add_messages``
  reducer) with a single node that changes nothing, compiled with a
  ``SqliteSaver`` checkpointer (``langgraph-checkpoint-sqlite``). The
  store's ``thread_id`` is LangGraph's ``configurable.thread_id``;
- durable knowledge lives in ``langgraph.store.sqlite.SqliteStore``.

``langgraph+postgresql://user@host:port/db?schema=NAME`` is the same graph and
mapping on LangGraph's PostgreSQL persistence (``langgraph-checkpoint-postgres``):
``PostgresSaver`` checkpoints and ``PostgresStore`` knowledge, each on a psycopg 3
connection made as the library's ``from_conn_string`` makes it, with the
tables in the schema ``NAME`` (the connection's ``search_path``; the adapter
creates the schema and runs the library's own ``setup()`` migrations one
process at a time). The capabilities declared are the same, for the same
reasons (one checkpoint row per step, a server shared by design).

How each Store method maps onto LangGraph:

- ``append(thread_id, batch)`` is ``graph.invoke({"messages": batch}, config)``,
  the way a LangGraph application adds a turn to a thread. The reducer merges
  the batch into the thread's list and the checkpointer writes the new state
  as one checkpoint row. An empty batch is invoked as well (it leaves the list
  as it was).
- ``messages(thread_id, limit)`` reads ``graph.get_state(config).values
  ["messages"]`` (the latest checkpoint, deserialised anew on each read). The
  library has no window parameter, so the newest ``limit`` messages are the
  tail of that list, as LangGraph users take them; a negative ``limit`` is
  refused with ``ValueError`` because a window cannot be negative. That window
  is the adapter's own (:func:`memconform.adapters.libraries.newest`), so the
  adapter declares ``provides = {"window"}``: the window rules (ST-003..ST-005)
  are ``adapter-provided``, never a pass for LangGraph.
- a ``Message`` becomes the langchain-core message of its role
  (``HumanMessage``, ``AIMessage``, ``SystemMessage``, ``ToolMessage``) with
  ``content`` = the text and ``id`` = the message id; ``parts``, ``run_id``,
  ``round``, ``turn_id``, ``committed`` and ``metadata`` travel in
  ``additional_kwargs``, where langchain-core keeps extra payload.
  ``ToolMessage`` requires a ``tool_call_id`` that ``Message`` does not have;
  it is written empty and ignored on the way back.
- ``put_fact(scope, fact)`` is ``store.put((scope,), fact.subject,
  fact.to_json())``: the scope is a one-label namespace, the subject the key
  and every field of the fact the value. ``get_fact`` is ``store.get``.
  ``facts(scope)`` pages through ``store.search((scope,), limit=..., offset=...)``
  until a page comes back short (``search`` returns 10 items unless asked for
  more) and keeps the library's order. ``forget`` sends one ``store.batch`` of
  a ``GetOp`` and a deleting ``PutOp`` (one transaction): ``BaseStore.delete``
  returns nothing, and the read tells whether a fact was there.

Capabilities declared:

- ``durable``: the checkpointer commits every checkpoint to the file and the
  store commits every batch, so a new process opening the URL reads them back.
- ``atomic-batch``: the reducer merges the whole batch in memory and the
  checkpointer writes the result as one row in one statement, so a batch is
  in a checkpoint whole or not at all.
- ``concurrent-writers``: the saver works on a file database (it switches it
  to WAL), which any process holding the path can open and write. (The
  ``SqliteSaver`` docstring calls it meant for light, synchronous use that
  "does not scale to multiple threads"; the kit judges what happens when a
  file is shared all the same.)
- ``knowledge``: ``SqliteStore`` keeps a value per (namespace, key) and
  replaces it on ``put``.

Not declared: ``state`` (neither checkpoints nor ``BaseStore`` offers a
compare-and-set write or a version counter: ``put`` always overwrites),
``commit-flags`` (LangGraph has no visibility flag; ``committed`` is kept as
data only and plain reads return every stored message), ``errors`` and
``turn-records`` (no such records in LangGraph's persistence).

What the library does against the contract, and this adapter leaves as is:
``add_messages`` merges by id, so a message whose id is already in the thread
(or earlier in the same batch) replaces that message instead of being
refused; the checkpoint serializer encodes text with surrogate replacement,
so a lone surrogate is stored as ``?`` instead of being refused; each append
reads the latest checkpoint and writes a new one without any check that it is
still the latest, so concurrent appends to one thread fork the checkpoint
chain and the fork that loses drops its batch; ``SqliteStore.search`` orders
by ``updated_at`` (whole seconds, newest first, ties in insertion order), not
by key, so the order of ``facts()`` depends on the clock.

The damage hook (ST-037) edits, with a statement of the kit's own, the row in
which LangGraph keeps the thread's latest messages (the latest checkpoint on
SQLite, the ``messages`` channel blob on PostgreSQL): the serialized class name
of the middle message becomes bytes that are not UTF-8. LangGraph's serializer
then logs a warning and hands back ``None`` in place of that message, without
an error; the adapter passes it on as :data:`UNDECODED`, an empty message
without an id, so the kit sees what a LangGraph caller gets.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
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
from memconform.contract import (
    Capability,
    Provision,
    StoreError,
    UnsupportedValueError,
    damage_index,
)
from memconform.values import Fact, JSONValue, Message, freeze_json

__all__ = [
    "LIBRARY",
    "POSTGRESQL_SCHEME",
    "SCHEME",
    "LangGraphSQLiteStore",
    "LangGraphStore",
    "langgraph_path",
    "open_langgraph_postgresql",
    "open_langgraph_sqlite",
]

SCHEME = "langgraph+sqlite"
EXTRA = "langgraph"
DISTRIBUTIONS = (
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langchain-core",
)

_SEARCH_PAGE = 100
"""Items asked of ``SqliteStore.search`` per page when listing a scope."""

_KINDS = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
"""langchain-core message ``type`` to ``Message.role``."""


def langgraph_path(url: str) -> str:
    """The SQLite file named by ``langgraph+sqlite:///path.db``.

    Raises :class:`StoreURLError` for another scheme, a missing path or an
    in-memory database (the checkpointer and the store hold one connection
    each, so they could not share an in-memory database).
    """
    return file_path(url, SCHEME)


def _to_langchain(messages_module: Any, message: Message) -> Any:
    extra: dict[str, Any] = {
        "parts": [freeze_json(part) for part in message.parts],
        "run_id": message.run_id,
        "round": message.round,
        "turn_id": message.turn_id,
        "committed": message.committed,
        "metadata": freeze_json(dict(message.metadata)),
    }
    fields: dict[str, Any] = {
        "content": message.text,
        "id": message.id,
        "additional_kwargs": extra,
    }
    if message.role == "user":
        return messages_module.HumanMessage(**fields)
    if message.role == "assistant":
        return messages_module.AIMessage(**fields)
    if message.role == "system":
        return messages_module.SystemMessage(**fields)
    return messages_module.ToolMessage(tool_call_id="", **fields)


UNDECODED = Message(id="", role="user", text="", metadata={"langgraph": None})
"""What a ``None`` in the thread's list becomes: LangGraph's serializer puts
``None`` in place of a message it cannot decode (it logs a warning), so the
kit sees an empty message without an id where the stored one was."""


def _from_langchain(item: Any) -> Message:
    if item is None:
        return UNDECODED
    kind = getattr(item, "type", None)
    if kind not in _KINDS:
        raise ValueError(f"the thread holds a {kind!r} message, which has no Message role")
    content = item.content
    if not isinstance(content, str):
        raise ValueError(f"message {item.id!r} has structured content, not text")
    extra: dict[str, Any] = dict(item.additional_kwargs or {})
    parts = extra.get("parts") or []
    return Message(
        id=item.id,
        role=_KINDS[kind],  # type: ignore[arg-type]
        text=content,
        parts=tuple(freeze_json(p) for p in parts),
        run_id=extra.get("run_id"),
        round=extra.get("round"),
        turn_id=extra.get("turn_id"),
        committed=bool(extra.get("committed", True)),
        metadata=freeze_json(extra.get("metadata") or {}),
    )


MESSAGE_MODULE = b"langchain_core.messages."
"""How the serialized form of every langchain-core message names its class's module."""


def damaged_blob(blob: bytes) -> bytes:
    """``blob`` (a msgpack checkpoint or channel value holding the thread's
    messages) with the module name of its middle message made bytes that are
    not UTF-8, the same length, so the rest still decodes."""
    starts = []
    at = blob.find(MESSAGE_MODULE)
    while at >= 0:
        starts.append(at)
        at = blob.find(MESSAGE_MODULE, at + 1)
    at = starts[damage_index(len(starts))]
    return blob[:at] + b"\xc1" * len(MESSAGE_MODULE) + blob[at + len(MESSAGE_MODULE) :]


class LangGraphStore:
    """A messages graph checkpointed by ``saver`` and the ``BaseStore`` ``kb``;
    see the module docstring for the mapping. ``on_close`` releases what both use;
    ``damage(thread_id)`` damages the thread's latest stored messages (ST-037)."""

    def __init__(
        self,
        saver: Any,
        kb: Any,
        *,
        version: str,
        on_close: Callable[[], None],
        damage: Callable[[str], None],
    ) -> None:
        graph_module = require("langgraph.graph", EXTRA)
        self._lc: Any = require("langchain_core.messages", EXTRA)
        self.version = version
        self._saver: Any = saver
        self._kb: Any = kb
        self._on_close = on_close
        self._damage = damage
        builder: Any = graph_module.StateGraph(graph_module.MessagesState)
        builder.add_node("pass_through", _pass_through)
        builder.add_edge(graph_module.START, "pass_through")
        builder.add_edge("pass_through", graph_module.END)
        self._graph: Any = builder.compile(checkpointer=self._saver)

    provides = frozenset({Provision.WINDOW})
    """The window is the adapter's slice; LangGraph has none."""

    @property
    def capabilities(self) -> frozenset[str]:
        """``durable``, ``atomic-batch``, ``concurrent-writers`` and ``knowledge``."""
        return frozenset(
            c.value
            for c in (
                Capability.DURABLE,
                Capability.ATOMIC_BATCH,
                Capability.CONCURRENT_WRITERS,
                Capability.KNOWLEDGE,
            )
        )

    def close(self) -> None:
        """Release the connections; the database keeps everything committed."""
        self._on_close()

    @staticmethod
    def _config(thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    # -- core -------------------------------------------------------------------------

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """Invoke the graph with the batch as new ``messages``."""
        converted = [_to_langchain(self._lc, m) for m in batch]
        with _serializer_refusal():
            self._graph.invoke({"messages": converted}, self._config(thread_id))

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """The thread's ``messages`` in its latest checkpoint; the newest ``limit``."""
        snapshot = self._graph.get_state(self._config(thread_id))
        stored: list[Any] = list(snapshot.values.get("messages", []))
        return [_from_langchain(item) for item in newest(stored, limit)]

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        in the library's own row that holds the thread's latest messages, the
        serialized class name of the middle message becomes bytes that are not
        UTF-8 (:func:`damaged_blob`)."""
        self._damage(thread_id)

    # -- knowledge ----------------------------------------------------------------------

    def put_fact(self, scope: str, fact: Fact) -> None:
        """``SqliteStore.put((scope,), subject, fact)``."""
        with _namespace_refusal(scope), _value_refusal():
            self._kb.put((scope,), fact.subject, fact.to_json())

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """``SqliteStore.get((scope,), subject)``."""
        with _namespace_refusal(scope):
            item = self._kb.get((scope,), subject)
        return None if item is None else _fact(item.value)

    def facts(self, scope: str) -> list[Fact]:
        """Every item of the namespace, page by page, in the order ``search`` gives."""
        found: list[Fact] = []
        offset = 0
        while True:
            with _namespace_refusal(scope):
                page: list[Any] = self._kb.search((scope,), limit=_SEARCH_PAGE, offset=offset)
            found.extend(_fact(item.value) for item in page)
            if len(page) < _SEARCH_PAGE:
                return found
            offset += len(page)

    def forget(self, scope: str, subject: str) -> bool:
        """Read and delete the item in one ``SqliteStore.batch``."""
        base = require("langgraph.store.base", EXTRA)
        with _namespace_refusal(scope):
            existing, _ = self._kb.batch(
                [base.GetOp((scope,), subject), base.PutOp((scope,), subject, None)]
            )
        return existing is not None


def _pass_through(state: Any) -> dict[str, Any]:
    """The graph's only node: it adds nothing to the state."""
    return {}


def _fact(value: JSONValue) -> Fact:
    return Fact.from_json(value)


class LangGraphSQLiteStore(LangGraphStore):
    """``SqliteSaver`` and ``SqliteStore`` on one SQLite file."""

    def __init__(self, path: str) -> None:
        saver_module = require("langgraph.checkpoint.sqlite", EXTRA)
        store_module = require("langgraph.store.sqlite", EXTRA)
        self.path = path
        # Both classes document check_same_thread=False as safe: each guards
        # its connection with a lock of its own.
        saver_conn = sqlite3.connect(path, check_same_thread=False)
        store_conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)

        def close() -> None:
            saver_conn.close()
            store_conn.close()

        def damage(thread_id: str) -> None:
            conn = sqlite3.connect(path, timeout=30)
            try:
                with conn:
                    row = conn.execute(
                        "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ?"
                        " AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
                        (thread_id,),
                    ).fetchone()
                    if row is None:
                        raise StoreError(f"thread {thread_id!r} has no checkpoint")
                    conn.execute(
                        "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ?"
                        " AND checkpoint_ns = '' AND checkpoint_id = ?",
                        (damaged_blob(bytes(row[1])), thread_id, row[0]),
                    )
            finally:
                conn.close()

        super().__init__(
            saver_module.SqliteSaver(saver_conn),
            store_module.SqliteStore(store_conn),
            version=library_versions(*DISTRIBUTIONS),
            on_close=close,
            damage=damage,
        )


def open_langgraph_sqlite(url: str) -> LangGraphSQLiteStore:
    """``langgraph+sqlite:///path.db``: open (and create when absent) the file."""
    path = langgraph_path(url)
    require("langgraph.checkpoint.sqlite", EXTRA)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return LangGraphSQLiteStore(path)


POSTGRESQL_SCHEME = "langgraph+postgresql"
POSTGRES_DISTRIBUTIONS = (
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-postgres",
    "langchain-core",
    "psycopg",
)


def open_langgraph_postgresql(url: str) -> LangGraphStore:
    """``langgraph+postgresql://user@host:port/db?schema=NAME``: ``PostgresSaver`` and
    ``PostgresStore``, each on a psycopg connection made as the library's
    ``from_conn_string`` makes it (autocommit, no prepared statements, dict
    rows), with ``search_path`` set to ``NAME``; the library's own ``setup()``
    makes the tables, one process at a time."""
    conninfo, schema = postgresql_target(url, POSTGRESQL_SCHEME)
    saver_module = require("langgraph.checkpoint.postgres", EXTRA)
    store_module = require("langgraph.store.postgres", EXTRA)
    psycopg: Any = require("psycopg", EXTRA)
    rows: Any = require("psycopg.rows", EXTRA)
    ensure_schema(conninfo, schema)

    def connect() -> Any:
        return psycopg.connect(
            conninfo, autocommit=True, prepare_threshold=0, row_factory=rows.dict_row,
            options=search_path_option(schema),
        )

    saver_conn, store_conn = connect(), connect()

    def close() -> None:
        saver_conn.close()
        store_conn.close()

    try:
        saver: Any = saver_module.PostgresSaver(saver_conn)
        kb: Any = store_module.PostgresStore(store_conn)
        key = (f"memconform:{schema}",)
        # setup() runs the library's migrations; two processes opening a new
        # schema at once would run them twice: one at a time.
        saver_conn.execute("SELECT pg_advisory_lock(hashtext(%s))", key)
        try:
            saver.setup()
            kb.setup()
        finally:
            saver_conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", key)
    except BaseException:
        close()
        raise
    def damage(thread_id: str) -> None:
        with connect() as conn:
            row = conn.execute(
                "SELECT version, blob FROM checkpoint_blobs WHERE thread_id = %s"
                " AND checkpoint_ns = '' AND channel = 'messages'"
                " ORDER BY version DESC LIMIT 1",
                (thread_id,),
            ).fetchone()
            if row is None:
                raise StoreError(f"thread {thread_id!r} has no stored messages")
            conn.execute(
                "UPDATE checkpoint_blobs SET blob = %s WHERE thread_id = %s"
                " AND checkpoint_ns = '' AND channel = 'messages' AND version = %s",
                (damaged_blob(bytes(row["blob"])), thread_id, row["version"]),
            )

    return LangGraphStore(
        saver,
        kb,
        version=library_versions(*POSTGRES_DISTRIBUTIONS),
        on_close=close,
        damage=damage,
    )


@contextmanager
def _namespace_refusal(scope: str) -> Iterator[None]:
    """The store's refusal of a namespace label it cannot hold (LangGraph refuses
    labels with a period), said in the contract's words: a scope the store cannot
    hold is an :class:`UnsupportedValueError`, never a crash."""
    try:
        yield
    except ValueError as exc:
        if type(exc).__name__ != "InvalidNamespaceError":
            raise
        raise UnsupportedValueError(f"LangGraph cannot hold the scope {scope!r}: {exc}") from exc


@contextmanager
def _value_refusal() -> Iterator[None]:
    """The store's JSON encoder refusing a value it cannot write (an integer
    outside 64 bits anywhere in a fact), said in the contract's words: the
    item is not written, and the call is refused with
    :class:`UnsupportedValueError`."""
    try:
        yield
    except TypeError as exc:
        if "64-bit range" not in str(exc):
            raise
        raise UnsupportedValueError(f"LangGraph's store cannot write the value: {exc}") from exc


@contextmanager
def _serializer_refusal() -> Iterator[None]:
    """The checkpoint serializer's refusal of a value msgpack cannot write (an
    integer outside 64 bits anywhere in a message), said in the contract's words:
    the checkpoint is not written, and the batch is refused with
    :class:`UnsupportedValueError`; whether nothing of it was kept is the kit's to
    check."""
    try:
        yield
    except TypeError as exc:
        if "not msgpack serializable" not in str(exc):
            raise
        raise UnsupportedValueError(f"LangGraph cannot write the batch: {exc}") from exc


LIBRARY = Library(
    module=__name__,
    extra=EXTRA,
    pins=("langgraph==1.2.24", "langgraph-checkpoint==4.3.2", "langgraph-prebuilt==1.1.3",
          "langgraph-checkpoint-sqlite==3.1.2", "langchain-core==1.8.3",
          "langgraph-checkpoint-postgres==3.2.0", "psycopg[binary]==3.3.9",
          "psycopg-pool==3.3.3"),
    order=2,
    schemes=(
        (SCHEME, open_langgraph_sqlite.__name__),
        (POSTGRESQL_SCHEME, open_langgraph_postgresql.__name__),
    ),
    store_targets=(
        StoreEntry(3, "langgraph-sqlite", "langgraph+sqlite:///{dir}/store.db",
                   "LangGraph: SqliteSaver checkpoints and SqliteStore"),
        StoreEntry(10, "langgraph-postgresql", "langgraph+postgresql://{server}?schema=mcg_{run}",
                   "LangGraph: PostgresSaver checkpoints and PostgresStore", "postgresql"),
    ),
)
"""LangGraph's savers and stores: their schemes, extra and compliance targets."""
