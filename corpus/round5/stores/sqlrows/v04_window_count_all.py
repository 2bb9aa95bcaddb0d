"""v04: the window's OFFSET is computed from a count of every message.

Bug: ``messages(thread, limit=N)`` reads oldest first with ``LIMIT -1 OFFSET
max(count - N, 0)``, where ``count`` is the thread's total row count (the same
``COUNT(*)`` that sizes the thread elsewhere), while the select itself keeps
only committed rows. With ``u`` uncommitted messages in the thread, a plain
window of N returns only the newest ``N - u`` committed messages (or none).
With ``include_uncommitted=True`` the arithmetic is right, and so is every
window of a thread without hidden messages.

Why a team ships it: an ascending ``OFFSET`` read avoids the ``DESC`` scan plus
reverse, the count was one cheap query, and the window tests never mixed in
uncommitted messages.

Rules broken: ST-019 (the window counts committed messages only, so hidden
ones never take the place of visible ones), ST-003.
"""

from __future__ import annotations

from corpus.round5.stores.sqlrows.base import _MESSAGE_COLUMNS, SqlRowsStore

__all__ = ["WindowCountAllStore", "make"]


class WindowCountAllStore(SqlRowsStore):
    def _select(self, thread_id: str, limit: int | None, include_uncommitted: bool) -> list[tuple]:
        if limit is None:
            return super()._select(thread_id, limit, include_uncommitted)
        where = "thread_id = ?" if include_uncommitted else "thread_id = ? AND committed = 1"
        with self._lock:
            # --- the bug: the count ignores the committed filter of the select -----
            (count,) = self._db.execute(
                "SELECT COUNT(*) FROM messages WHERE thread_id = ?", (thread_id,)
            ).fetchone()
            return self._db.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE {where}"
                " ORDER BY position LIMIT -1 OFFSET ?",
                (thread_id, max(int(count) - limit, 0)),
            ).fetchall()


def make(path: str | None = None, timeout: str = "30") -> WindowCountAllStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return WindowCountAllStore(path, timeout=float(timeout))
