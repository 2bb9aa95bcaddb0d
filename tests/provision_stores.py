"""A library whose own window is wrong, and an adapter that supplies the window
over it, opened as ``tests.provision_stores:NAME``.

``oldest_window`` answers ``messages(limit=N)`` with the oldest N messages, as
LlamaIndex's ``SQLAlchemyChatStore.get_messages(limit=N)`` does; everything else
is the in-memory store. ``adapter_window`` is the same library behind an adapter
that never passes the limit on: it reads the whole thread and takes the newest N
itself, and says so (``provides = {"window"}``), as the kit's adapters for
libraries without a window do. Whatever the first fails and the second passes
is a pass the adapter made; ``tests/test_adapter_provisions.py`` checks that no
such rule is reported ``pass``.
"""

from __future__ import annotations

from typing import Any

from memconform.adapters.memory import MemoryStore
from memconform.contract import check_limit
from memconform.values import Message


class _OldestWindow(MemoryStore):
    """The window is SQL ``LIMIT N`` over rows read oldest first."""

    def messages(  # type: ignore[override]
        self, thread_id: str, limit: int | None = None, **kw: Any
    ) -> list[Message]:
        whole = super().messages(thread_id, None, **kw)
        return whole if limit is None else whole[:limit]


class _AdapterWindow(_OldestWindow):
    """Reads the whole thread from the library and slices the newest N itself."""

    provides = frozenset({"window"})

    def messages(  # type: ignore[override]
        self, thread_id: str, limit: int | None = None, **kw: Any
    ) -> list[Message]:
        check_limit(limit)
        whole = super().messages(thread_id, None, **kw)
        if limit is None:
            return whole
        return whole[max(0, len(whole) - limit):] if limit else []


def oldest_window() -> _OldestWindow:
    return _OldestWindow()


def adapter_window() -> _AdapterWindow:
    return _AdapterWindow()


class _FirstListingReversed(MemoryStore):
    """Answers the first ``facts()`` listing of several facts that the generated
    comparison asks for in reverse, and every later one right,
    as a store whose order depends on a clock does once: the replay of the same
    operations does not diverge again."""

    reversed_once = False

    def facts(self, scope: str) -> list[Any]:
        answer = super().facts(scope)
        if scope.startswith("prop") and len(answer) > 1 and not self.reversed_once:
            self.reversed_once = True  # the generated comparison's scopes only
            return answer[::-1]
        return answer


def first_listing_reversed() -> _FirstListingReversed:
    return _FirstListingReversed()
