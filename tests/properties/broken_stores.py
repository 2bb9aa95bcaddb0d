"""Small broken stores for the property tests (each breaks one promise)."""

from __future__ import annotations

from collections.abc import Sequence

from memconform.adapters.memory import MemoryStore
from memconform.values import Message


class OldestWindow(MemoryStore):
    """A window that returns the oldest N messages instead of the newest N."""

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        everything = super().messages(thread_id, None, include_uncommitted=include_uncommitted)
        if limit is None:
            return everything
        if limit < 0:
            raise ValueError("negative limit")
        return everything[:limit]


class DuplicatesAccepted(MemoryStore):
    """An append that stores a batch even when it repeats a stored id."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        with self._lock:
            self._messages.setdefault(thread_id, []).extend(batch)


def oldest_window() -> OldestWindow:
    """``module:factory`` entry for :class:`OldestWindow`."""
    return OldestWindow()


def duplicates_accepted() -> DuplicatesAccepted:
    """``module:factory`` entry for :class:`DuplicatesAccepted`."""
    return DuplicatesAccepted()
