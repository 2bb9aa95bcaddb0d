"""v09: the thread reader stops at the first line it cannot decode.

Bug: the message reader treats a line that does not decode as the end of the
transcript and returns the messages before it, without an error. A thread
with one damaged message (a half-finished hand edit, a bad sector, a sync
tool that wrote part of a line) silently loses that message and every one
after it: ``messages()`` answers a shorter, plausible history, and the window
``limit=N`` takes its newest N from that shorter history.

Why a team ships it: the reader was written first for the append-only record
logs, where a torn last line after a crash is normal and must be skipped;
the same "stop at the first bad line, it is the torn tail" loop was reused
for the thread files, where it never happens in tests because every write is
an atomic replace.

Breaks: ST-037 (a read that reaches an undecodable message raises StoreError
or returns every acknowledged message; it never silently omits one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from corpus.round5.stores.jsonfiles.base import JsonFilesStore
from memconform.values import Message

__all__ = ["StopAtBadLineStore", "make"]


class StopAtBadLineStore(JsonFilesStore):
    """The base store whose thread reader stops at the first bad line."""

    def _decode(self, lines: Sequence[str], thread_id: str) -> list[Message]:
        out = []
        for line in lines:
            try:
                out.append(Message.from_json(json.loads(line)))
            except (ValueError, TypeError):
                break  # --- BUG: "a torn tail": everything from here on is dropped ---
        return out


def make(**kwargs: str) -> StopAtBadLineStore:
    """``...v09_stop_at_bad_line:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return StopAtBadLineStore(path)
