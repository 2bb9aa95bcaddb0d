"""v09: a message event whose payload does not decode is logged and skipped by the fold.

The bug: a "poison event" policy: rather than let one bad row make a whole
thread unreadable, the read path logs a warning for a ``MessageAppended``
payload it cannot decode and leaves that message out. The caller gets a
history with a hole and no error.

Situation that shows it: a stored message event damaged on disk (a hand edit,
a half-finished migration, a torn page); ``messages()`` returns the other
messages as if it had never been appended. Undamaged threads are unaffected.

Why a team would ship it: a real incident where one malformed event took a
customer's whole conversation offline led to the "skip and alert" rule, common
advice for stream consumers; the log line was taken to be enough.

Rules broken: ST-037
"""

from __future__ import annotations

import logging

from corpus.round6.stores.eventlog.base import EventLogStore
from memconform.contract import StoreError, check_limit
from memconform.values import Message

__all__ = ["SkipPoisonStore", "make"]

log = logging.getLogger(__name__)


class SkipPoisonStore(EventLogStore):
    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        check_limit(limit)
        if limit == 0:
            return []
        with self._lock:
            chosen = [list(e) for e in self._select(self._view(thread_id), limit,
                                                      include_uncommitted)]
        out = []
        for entry in chosen:
            try:
                out.append(self._message(entry))
            except StoreError as exc:
                # --- the bug ---
                # a poison event is skipped with a warning instead of failing the read
                log.warning("skipping undecodable event in %r: %s", thread_id, exc)
        return out


def make(path: str | None = None, timeout: str = "30") -> SkipPoisonStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return SkipPoisonStore(path, timeout=float(timeout))
