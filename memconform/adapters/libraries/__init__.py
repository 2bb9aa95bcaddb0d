"""Adapters for agent-memory stores that people already use.

Each module translates one library's store to the Store contract and nothing
more: it never adds a check or a guarantee the library lacks (a missing duplicate
check stays missing; that is a finding, not an adapter bug). A capability the
library cannot express is not declared. Each library is an optional extra,
imported only when its URL scheme is opened. The PostgreSQL and Redis URLs
name a schema or key prefix of their own (:mod:`.servers`).

Each module declares itself in its ``LIBRARY``
(:class:`~.description.Library`): its URL schemes and runtime names, its extra
and that extra's pins, its targets on the compliance pages. The registry and
the compliance pages read those declarations and nothing else, so adding a
library touches its own module, its extra in pyproject.toml and its docs. The
framework runtimes (the ``*_runtime`` modules) fill in one skeleton
(:mod:`.framework`, whose helpers this package re-exports).
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable, Coroutine
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any, Generic, TypeVar

from memconform.adapters.libraries.framework import (
    approval_ids,
    argument_names,
    outcome_report,
    run_error,
    run_to_end,
    scripted_calls,
    tell_outcome,
)
from memconform.adapters.urls import StoreURLError
from memconform.contract import check_limit

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
            f"this adapter needs {module!r}, which is not importable ({exc}); "
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
