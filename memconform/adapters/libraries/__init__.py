"""Adapters for agent-memory stores that people already use.

Each module translates one library's store to the Store contract and nothing
more: it never adds a check or a guarantee the library lacks (a missing duplicate
check stays missing; that is a finding, not an adapter bug). A capability the
library cannot express is not declared. Each library is an optional extra,
imported only when its URL scheme is opened. The PostgreSQL and Redis URLs
name a schema or key prefix of their own (:mod:`.servers`):

==========================  ===================  =========================================
scheme                      extra                library and store
==========================  ===================  =========================================
``openai-agents+sqlite``    ``openai-agents``    Agents SDK ``SQLiteSession``
``openai-agents+sqlalchemy`` ``openai-agents``   Agents SDK ``SQLAlchemySession`` on SQLite
``langgraph+sqlite``        ``langgraph``        ``SqliteSaver`` checkpoints + ``SqliteStore``
``google-adk+memory``       ``google-adk``       ADK ``InMemorySessionService``
``google-adk+sqlite``       ``google-adk``       ADK ``DatabaseSessionService`` on SQLite
``langchain+sql``           ``langchain``        ``SQLChatMessageHistory`` on SQLite
``langchain+file``          ``langchain``        ``FileChatMessageHistory``
``llama-index+sqlite``      ``llama-index``      ``SQLAlchemyChatStore`` on SQLite
``openai-agents+postgresql`` ``openai-agents``   Agents SDK ``SQLAlchemySession`` on PostgreSQL
``openai-agents+redis``     ``openai-agents``    Agents SDK ``RedisSession``
``langgraph+postgresql``    ``langgraph``        ``PostgresSaver`` + ``PostgresStore``
``google-adk+postgresql``   ``google-adk``       ADK ``DatabaseSessionService`` on PostgreSQL
``langchain+postgresql``    ``langchain``        ``langchain-postgres`` chat history
``agent-framework+memory``  ``agent-framework``  Agent Framework ``InMemoryHistoryProvider``
``agent-framework+redis``   ``agent-framework``  Agent Framework ``RedisHistoryProvider``
==========================  ===================  =========================================
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable, Coroutine, Mapping
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any, Generic, TypeVar

from memconform.adapters.contract import check_limit
from memconform.adapters.registry import StoreURLError
from memconform.values import JSONValue

T = TypeVar("T")
B = TypeVar("B")

__all__ = [
    "LoopThread", "approval_ids", "argument_names", "file_path", "library_versions", "newest",
    "outcome_report", "require", "run_error", "run_to_end", "scripted_calls", "tell_outcome",
]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`StoreURLError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise StoreURLError(
            f"this store needs {module!r}, which is not importable ({exc}); "
            f"install it with: pip install 'memconform[{extra}]'"
        ) from None


def file_path(url: str, scheme: str) -> str:
    """The path named by ``<scheme>:///relative`` or ``<scheme>:////absolute``
    (read as :func:`memconform.adapters.sqlite.sqlite_path` reads ``sqlite:``
    URLs). Creates nothing. Raises :class:`StoreURLError` for another scheme,
    query options, a missing path or ``:memory:`` (every library store here
    is judged across processes, so it needs a file)."""
    from memconform.adapters.sqlite import sqlite_path

    prefix = f"{scheme}:"
    if not url.lower().startswith(prefix):
        raise StoreURLError(f"not a {scheme} URL: {url!r}")
    rest = url[len(prefix) :]
    if "?" in rest:
        raise StoreURLError(f"{scheme} URLs take no options: {url!r}")
    try:
        path = sqlite_path("sqlite:" + rest)
    except ValueError:
        path = ""
    if not path or path == ":memory:":
        raise StoreURLError(
            f"a {scheme} URL names a file: {scheme}:////absolute/path or "
            f"{scheme}:///relative/path, got {url!r}"
        )
    return path


def newest(items: list[T], limit: int | None) -> list[T]:
    """The newest ``limit`` of ``items`` (oldest first), all for ``None``: the window
    of a library that has no window parameter, taken as its users take it. The
    limit is checked as every store checks it (``contract.check_limit``)."""
    check_limit(limit)
    if limit is None:
        return items
    return items[max(0, len(items) - limit) :] if limit else []


def library_versions(*distributions: str) -> str:
    """``"name==version; ..."`` for the installed distributions (the store's
    ``version``, written into the results header)."""
    found = []
    for name in distributions:
        try:
            found.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return "; ".join(found)


class LoopThread(Generic[B]):
    """An event loop of a store's own, running in a daemon thread: for a library
    whose clients belong to the loop that made them, while the kit calls from
    threads with loops of their own.

    ``build`` makes the library's object on the loop (:attr:`built`); when it
    raises, the loop is stopped and the error passes on. :meth:`run` runs a
    coroutine there and waits for its result; after :meth:`close` it refuses,
    naming the store (``what``). :meth:`close` runs ``release`` on the loop when
    given, then stops the loop, once.
    """

    def __init__(self, what: str, build: Callable[[], B]) -> None:
        self._what = what
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._serve, name=f"memconform-{what}", daemon=True
        )
        self._thread.start()

        async def make() -> B:
            return build()

        try:
            self.built: B = self._call(make())
        except BaseException:
            self._stop()
            raise

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for its result (or exception)."""
        if self._closed:
            coro.close()
            raise RuntimeError(f"the {self._what} store is closed")
        return self._call(coro)

    def close(self, release: Callable[[], Coroutine[Any, Any, Any]] | None = None) -> None:
        """Run ``release()`` on the loop (when given), then stop the loop; once."""
        if self._closed:
            return
        self._closed = True
        try:
            if release is not None:
                self._call(release())
        finally:
            self._stop()


def scripted_calls(
    script: Mapping[str, Any], component: str | None = None
) -> list[Mapping[str, Any]]:
    """The tool calls the script's model makes, in order: those of ``component``'s
    steps, or of every component's when ``None``. Steps and calls that are not
    mappings are left out (the kit's script schema is checked elsewhere)."""
    model = script.get("model") or {}
    groups = list(model.values()) if component is None else [model.get(component) or []]
    calls: list[Mapping[str, Any]] = []
    for steps in groups:
        for step in steps if isinstance(steps, list) else [steps]:
            if isinstance(step, Mapping):
                calls += [c for c in step.get("tool_calls") or [] if isinstance(c, Mapping)]
    return calls


def approval_ids(script: Mapping[str, Any], component: str) -> set[str]:
    """The ids of the tool calls ``component``'s model marks ``needs_approval``."""
    return {str(c.get("id")) for c in scripted_calls(script, component) if c.get("needs_approval")}


def argument_names(
    script: Mapping[str, Any], tool: str, component: str | None = None
) -> list[str]:
    """The argument names the script's model passes ``tool`` (its parameters),
    in the order they first appear."""
    names: list[str] = []
    for call in scripted_calls(script, component):
        if call.get("name") == tool:
            names += [str(k) for k in (call.get("args") or {}) if str(k) not in names]
    return names


def run_to_end(coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``coroutine()`` makes to its end from synchronous code
    and return its value (or raise what it raised): on a new event loop here, or,
    when called from inside a running loop (which ``asyncio.run`` refuses), on a
    thread of its own."""
    result: list[T] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            result.append(asyncio.run(coroutine()))
        except BaseException as exc:
            failed.append(exc)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        work()
    else:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    if failed:
        raise failed[0]
    return result[0]


def run_error(exc: BaseException) -> dict[str, JSONValue]:
    """What the caller is told of ``exc``: a scripted failure's own type and
    message (the kit's fake model and tools carry them), else the exception's."""
    scripted = getattr(exc, "error", None)
    if isinstance(scripted, Mapping):
        return {"type": str(getattr(exc, "type_name", None) or scripted.get("type") or "Error"),
                "message": str(scripted.get("message", ""))}
    return {"type": type(exc).__name__, "message": str(exc)}


def tell_outcome(env: Any, told: JSONValue) -> None:
    """The caller was told a run's outcome: the ``outcome`` event on the kit's
    timeline (what ends a run there), with its stage and error, and no run id
    (the framework stamps none)."""
    if isinstance(told, Mapping):
        env.emit("outcome", outcome=told.get("outcome"), stage=told.get("stage"),
                 error=told.get("error"))


def outcome_report(outcome: str, stage: str | None, reply: JSONValue,
                   error: dict[str, JSONValue] | None) -> dict[str, JSONValue]:
    """A run as its caller saw it: outcome, stage, reply and error."""
    return {"outcome": outcome, "stage": stage, "reply": reply, "error": error}
