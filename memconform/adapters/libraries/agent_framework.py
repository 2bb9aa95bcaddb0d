"""Microsoft Agent Framework history providers (``agent-framework-core``, module
``agent_framework``, and ``agent-framework-redis``) as stores.

Agent Framework keeps a conversation's messages through a *history provider*
(a ``HistoryProvider``): ``save_messages(session_id, messages, state=...)`` adds
messages after a run and ``get_messages(session_id, state=...)`` returns every
stored message, oldest first, before the next one. ``state`` is the provider's
own slot of the ``AgentSession``'s state (``session.state[provider.source_id]``,
as the agent passes it). Two providers are judged here:

``agent-framework+memory://``
    ``InMemoryHistoryProvider``, the provider every local agent session gets
    when none is configured: the messages live in the session's state dict
    (``state["messages"]``), which the application keeps (or serialises with
    ``AgentSession.to_dict``). The store keeps one ``AgentSession`` per thread
    id in the process. Anything after ``://`` is refused.
``agent-framework+redis://host:port/db?prefix=PREFIX``
    ``RedisHistoryProvider`` (``agent-framework-redis``) with
    ``redis_url="redis://host:port/db"``, ``key_prefix=PREFIX`` and
    ``application_id="memconform"`` (required by the default ``scoped`` key
    format), the library's defaults otherwise (no ``max_messages``): one Redis
    list per session, one JSON document per message. The library writes a
    prefix that is not a plain key segment (lower-case ASCII letters, digits,
    ``.``, ``_``, ``-``) in an encoded form, so the prefix is limited to those
    characters: every key then starts with ``PREFIX`` as written, which is
    what the clean-up after a run removes
    (:mod:`memconform.adapters.libraries.servers`).

How the Store contract maps onto a provider
-------------------------------------------
- ``thread_id`` is the ``session_id``; each thread has an ``AgentSession`` of
  its own (``AgentSession(session_id=thread_id)``) whose provider slot is the
  ``state`` of every call.
- ``append(thread_id, batch)`` is one ``save_messages`` call with the whole
  batch. A :class:`~memconform.values.Message` becomes an Agent Framework
  ``Message``: ``role`` as given (the framework's roles are the kit's),
  ``contents`` one text content holding ``text``, ``message_id`` the id, and
  ``parts``, ``run_id``, ``round``, ``turn_id``, ``committed`` and ``metadata``
  in ``additional_properties["memconform"]`` (a message's own dict for data
  that is not sent to a model; both providers keep it).
- ``messages(thread_id, limit)`` is ``get_messages``, each message turned back
  (``text`` is the message's ``text``; ``committed`` comes back as stored).
  Nothing is copied on the way: the Redis provider parses fresh messages from
  JSON on every read, while the in-memory provider returns its stored
  ``Message`` objects themselves (a new list of them), so a caller changing a
  read message's nested data changes the history. A
  provider has no window or limit parameter: ``get_messages`` returns the whole
  history, and the newest ``limit`` are taken by slicing it (a negative limit
  is refused before the library is called), as an application trimming its
  context would. That window is the adapter's, so the store declares
  ``provides = {"window"}`` and the window rules are ``adapter-provided``.

What the providers do and this adapter does not change: both pass the batch
through the framework's ``filter_new_messages`` before storing it, which
compares message ids with the stored history to skip a replayed transcript.
A batch holding the stored history's ids in order is cut to what follows them,
and a batch starting with the last stored ids drops those; an id that repeats
otherwise is stored again. Nothing is refused.

Event loops
-----------
Both providers' methods are coroutines; the Redis one holds a
``redis.asyncio`` client bound to the loop that uses it. Each store runs one
event loop in a daemon thread of its own, builds its provider there and runs
every call on it (the Store methods block until the call is done), as
:mod:`memconform.adapters.libraries.google_adk` does.

Capabilities
------------
- ``agent-framework+memory``: none. The history lives in the process's session
  objects.
- ``agent-framework+redis``: ``durable`` (the batch is on the server when
  ``save_messages`` returns; a new process reads it back: what the server's
  persistence settings give beyond that is the server's), ``atomic-batch``
  (the new messages are pushed in one ``MULTI``/``EXEC`` pipeline) and
  ``concurrent-writers`` (a server shared by design).
- Not expressible, so not declared: ``commit-flags`` (no provider changes a
  stored message), ``errors``, ``turn-records``, ``state`` and ``knowledge``
  (a history provider keeps messages only; Agent Framework's memory
  providers that extract facts need a model).

Damage (ST-037): the Redis store has the optional ``damage`` hook; it writes
text that is not JSON over the middle item of the session's list (``LSET``
through the provider's own client and key), and ``get_messages`` then raises
``JSONDecodeError``, passed on as :class:`~memconform.contract.
StoreError` (so is any ``ValueError`` or ``TypeError`` of a read). The
in-memory provider keeps ``Message`` objects and decodes nothing, so it has
no hook and ST-037 is ``unsupported`` there.

The adapter offers the kit no row point (:func:`memconform.harness.faults.
batch_row_pause`): a batch is written inside the library's own call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

from memconform.adapters.libraries import LoopThread, library_versions, newest, require
from memconform.adapters.libraries.description import Library, StoreEntry
from memconform.adapters.libraries.servers import redis_target
from memconform.adapters.urls import StoreURLError, redact_url
from memconform.contract import (
    Capability,
    Provision,
    StoreError,
    UnsupportedValueError,
    check_limit,
    damage_index,
)
from memconform.values import JSONValue, Message, freeze_json

__all__ = [
    "APPLICATION_ID",
    "EXTRA_KEY",
    "LIBRARY",
    "MEMORY_SCHEME",
    "REDIS_SCHEME",
    "UNREADABLE",
    "AgentFrameworkRedisStore",
    "AgentFrameworkStore",
    "message_fields",
    "message_from_framework",
    "open_in_memory_history",
    "open_redis_history",
]

MEMORY_SCHEME = "agent-framework+memory"
REDIS_SCHEME = "agent-framework+redis"
EXTRA = "agent-framework"
"""The optional extra that installs the library."""

APPLICATION_ID = "memconform"
"""The ``application_id`` of the Redis provider (a key segment of every session)."""

EXTRA_KEY = "memconform"
"""The ``additional_properties`` key holding the message fields a framework
message has no place for."""

UNREADABLE = "{not json"
"""What the damage hook writes in place of a stored message's JSON."""

_PLAIN_PREFIX = re.compile(r"[a-z0-9_-][a-z0-9._-]*")
"""A key prefix the Redis provider writes as it is (see the module)."""

T = TypeVar("T")


# -- translation ------------------------------------------------------------------------


def message_fields(message: Message) -> dict[str, Any]:
    """The framework ``Message`` arguments standing for ``message``: ``role``,
    ``contents`` (the text), ``message_id`` and ``additional_properties``."""
    kit: dict[str, JSONValue] = {
        "parts": [freeze_json(part) for part in message.parts],
        "run_id": message.run_id,
        "round": message.round,
        "turn_id": message.turn_id,
        "committed": message.committed,
        "metadata": freeze_json(dict(message.metadata)),
    }
    return {
        "role": message.role,
        "contents": [message.text],
        "message_id": message.id,
        "additional_properties": {EXTRA_KEY: kit},
    }


def message_from_framework(message: Any) -> Message:
    """The :class:`Message` a framework ``Message`` stands for."""
    extra = message.additional_properties or {}
    kit: Mapping[str, Any] = extra.get(EXTRA_KEY) or {}
    return Message(
        id=message.message_id,
        role=message.role,
        text=message.text,
        parts=tuple(kit.get("parts") or ()),
        run_id=kit.get("run_id"),
        round=kit.get("round"),
        turn_id=kit.get("turn_id"),
        committed=kit.get("committed", True),
        metadata=kit.get("metadata") or {},
    )


# -- the store --------------------------------------------------------------------------


class AgentFrameworkStore:
    """A store made of one history provider; one ``AgentSession`` per thread id.

    ``make_provider`` builds the provider on the store's own event loop;
    ``release`` (a coroutine function taking the provider) frees what it holds
    at :meth:`close`.
    """

    provides = frozenset({Provision.WINDOW})
    """The newest ``limit`` messages are sliced by the adapter (see the module)."""

    def __init__(
        self,
        make_provider: Callable[[], Any],
        *,
        capabilities: frozenset[str],
        version: str = "",
        release: Callable[[Any], Coroutine[Any, Any, Any]] | None = None,
    ) -> None:
        self.version = version
        self._capabilities = capabilities
        self._release = release
        framework = require("agent_framework", EXTRA)
        self._message: Any = framework.Message
        self._session_class: Any = framework.AgentSession
        self._sessions: dict[str, Any] = {}
        self._loop: LoopThread[Any] = LoopThread("agent-framework", make_provider)
        self.provider: Any = self._loop.built

    @property
    def capabilities(self) -> frozenset[str]:
        """What the provider can keep (see the module)."""
        return self._capabilities

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.run(coro)

    def _state(self, thread_id: str) -> dict[str, Any]:
        """The provider's slot in the thread's session state (runs on the loop)."""
        session = self._sessions.get(thread_id)
        if session is None:
            session = self._session_class(session_id=thread_id)
            self._sessions[thread_id] = session
        state: dict[str, Any] = session.state.setdefault(self.provider.source_id, {})
        return state

    def framework_message(self, message: Message) -> Any:
        """The framework ``Message`` that stands for ``message``."""
        return self._message(**message_fields(message))

    async def _append(self, thread_id: str, batch: Sequence[Message]) -> None:
        messages = [self.framework_message(m) for m in batch]
        await self.provider.save_messages(thread_id, messages, state=self._state(thread_id))

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """One ``save_messages`` call with the whole batch."""
        self._run(self._append(thread_id, list(batch)))

    async def _read(self, thread_id: str) -> list[Message]:
        try:
            stored = await self.provider.get_messages(thread_id, state=self._state(thread_id))
        except (ValueError, TypeError) as exc:
            # a stored message the provider cannot decode (its JSON, or
            # Message.from_dict refusing it): the provider's own loud failure, in
            # the contract's words
            raise StoreError(
                f"get_messages could not read the history: {type(exc).__name__}: {exc}"
            ) from exc
        return [message_from_framework(m) for m in stored]

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        """``get_messages``, turned into messages; the newest ``limit`` sliced here."""
        check_limit(limit)  # a bad limit is refused before the library is called
        return newest(self._run(self._read(thread_id)), limit)

    def close(self) -> None:
        """Release the provider's client on its loop (when it has one), then stop the loop."""
        release = self._release
        self._loop.close(None if release is None else lambda: release(self.provider))


class AgentFrameworkRedisStore(AgentFrameworkStore):
    """An :class:`AgentFrameworkStore` on ``RedisHistoryProvider``, with the damage hook.

    A session id the provider's key cannot hold (the empty one: its default
    ``key_format='scoped'`` raises ``ValueError``) is refused with
    :class:`UnsupportedValueError`, the contract's word for the provider's own
    refusal, before the provider is called."""

    def _key(self, thread_id: str) -> None:
        try:
            self.provider._redis_key(thread_id)
        except ValueError as exc:
            raise UnsupportedValueError(
                f"RedisHistoryProvider cannot hold the session id {thread_id!r}: {exc}"
            ) from exc

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self._key(thread_id)
        super().append(thread_id, batch)

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        check_limit(limit)
        self._key(thread_id)
        return super().messages(thread_id, limit)

    async def _damage(self, thread_id: str) -> None:
        client: Any = self.provider._redis_client
        key = self.provider._redis_key(thread_id)
        index = damage_index(int(await client.llen(key)))
        await client.lset(key, index, UNREADABLE)

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the middle item of the session's Redis list becomes text that is not JSON,
        written with ``LSET`` through the provider's own client and key.
        ``get_messages`` then raises."""
        self._run(self._damage(thread_id))


# -- factories --------------------------------------------------------------------------


def open_in_memory_history(url: str) -> AgentFrameworkStore:
    """``agent-framework+memory://``: an ``InMemoryHistoryProvider``; the sessions
    live in the store."""
    prefix = f"{MEMORY_SCHEME}://"
    if not url.lower().startswith(prefix):
        raise StoreURLError(f"not a {MEMORY_SCHEME} URL: {url!r}")
    if url[len(prefix) :]:
        raise StoreURLError(f"{MEMORY_SCHEME} takes nothing after '://': {url!r}")
    provider_class: Any = require("agent_framework", EXTRA).InMemoryHistoryProvider
    return AgentFrameworkStore(
        provider_class,
        capabilities=frozenset(),
        version=library_versions("agent-framework-core"),
    )


def open_redis_history(url: str) -> AgentFrameworkRedisStore:
    """``agent-framework+redis://host:port/db?prefix=PREFIX``: a
    ``RedisHistoryProvider`` with ``key_prefix=PREFIX`` on that server."""
    server, prefix = redis_target(url, REDIS_SCHEME)
    if not _PLAIN_PREFIX.fullmatch(prefix) or prefix.endswith("."):
        raise StoreURLError(
            "prefix= takes lower-case ASCII letters, digits, '.', '_' and '-' "
            f"(the library encodes any other prefix): {redact_url(url)}"
        )
    if not urlsplit(server).hostname:
        raise StoreURLError(f"a {REDIS_SCHEME} URL names a host: {redact_url(url)}")
    provider_class: Any = require("agent_framework_redis", EXTRA).RedisHistoryProvider

    async def release(provider: Any) -> None:
        await provider.aclose()

    return AgentFrameworkRedisStore(
        lambda: provider_class(
            redis_url=server, key_prefix=prefix, application_id=APPLICATION_ID
        ),
        capabilities=frozenset(
            {Capability.DURABLE, Capability.ATOMIC_BATCH, Capability.CONCURRENT_WRITERS}
        ),
        version=library_versions("agent-framework-core", "agent-framework-redis", "redis"),
        release=release,
    )


LIBRARY = Library(
    module=__name__,
    extra=EXTRA,
    pins=("agent-framework-core==1.23.0", "agent-framework-redis==1.0.0b261022",
          "redis==7.1.1"),
    order=7,
    schemes=(
        (MEMORY_SCHEME, open_in_memory_history.__name__),
        (REDIS_SCHEME, open_redis_history.__name__),
    ),
    store_targets=(
        StoreEntry(14, "agent-framework-memory", "agent-framework+memory://",
                   "Microsoft Agent Framework: InMemoryHistoryProvider"),
        StoreEntry(15, "agent-framework-redis",
                   "agent-framework+redis://{server}?prefix=mcf-{run}",
                   "Microsoft Agent Framework: RedisHistoryProvider (agent-framework-redis)",
                   "redis"),
    ),
)
"""Agent Framework's history providers: their schemes, extra and compliance targets."""
