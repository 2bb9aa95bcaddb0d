"""v09: an unlimited read pages with LIMIT/OFFSET and stops at a short page.

Bug: ``messages(thread)`` without a limit reads the thread in pages of
``PAGE`` (500) rows, ``ORDER BY position LIMIT 500 OFFSET k``, drops the
uncommitted rows of each page in Python and stops at the first page that gave
fewer than 500 messages. A page holding even one uncommitted message looks
short, so the scan ends there: a thread of more than 500 messages with a
hidden one among the first 500 loses every message after that page from a
plain read, silently. With ``include_uncommitted=True`` nothing is dropped
from a page and the scan is complete; windows (``limit=N``) are untouched.

Why a team ships it: paging kept the memory of a 50,000-message export flat,
the same page query serves both reads, and "a short page is the last page"
is the usual loop; no test had a hidden message in a thread that long.

Rules broken: ST-006 (a read without a limit returns every message, never
capped silently), ST-017 / SW-005 (only the uncommitted message is left out).
"""

from __future__ import annotations

from corpus.round5.stores.sqlrows.base import _MESSAGE_COLUMNS, SqlRowsStore

__all__ = ["PAGE", "PagedScanStore", "make"]

PAGE = 500


class PagedScanStore(SqlRowsStore):
    def _select(self, thread_id: str, limit: int | None, include_uncommitted: bool) -> list[tuple]:
        if limit is not None:
            return super()._select(thread_id, limit, include_uncommitted)
        found: list[tuple] = []
        offset = 0
        while True:
            page = self._read(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE thread_id = ?"
                " ORDER BY position LIMIT ? OFFSET ?",
                (thread_id, PAGE, offset),
            )
            offset += len(page)
            visible = [r for r in page if include_uncommitted or r[7] == 1]
            found.extend(visible)
            # --- the bug: the length of the filtered page decides the end ---------
            if len(visible) < PAGE:
                return found


def make(path: str | None = None, timeout: str = "30") -> PagedScanStore:
    if not path:
        raise ValueError("sqlrows needs ?path=FILE")
    return PagedScanStore(path, timeout=float(timeout))
