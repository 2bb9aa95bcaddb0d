"""v10: messages are appended to the thread file in place, row by row.

Bug: instead of rewriting the thread file (temporary file, fsync,
``os.replace``), ``append`` opens it with ``O_APPEND`` under the thread's lock
and writes each message line as it stages it, fsyncing once at the end. On an
exception inside the batch (a refused value, the kit's injected fault) it
truncates the file back to its old size and re-raises, so a failed append in
a living process leaves nothing. But the lines are in the file from the moment
they are written: a process killed in the middle of the batch leaves the
batch's first rows stored, and a reader in another process (readers take no
lock) sees part of a batch while the writer is still in it.

Why a team ships it: rewriting a long transcript for every appended message
made appends O(thread length) and a 10,000-message import quadratic; a true
append is O(batch). The rollback on error made the in-process "fails half-way
leaves nothing" test pass, and nobody killed a writer mid-batch.

Breaks: ST-034 (a process killed mid-append leaves the batch wholly stored or
wholly absent), ST-036 (readers never see part of a batch), ST-001.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from corpus.round5.stores.jsonfiles.base import JsonFilesStore, _dumps
from memconform.contract import DuplicateIdError
from memconform.harness.faults import batch_row_pause
from memconform.values import Message

__all__ = ["AppendInPlaceStore", "make"]


class AppendInPlaceStore(JsonFilesStore):
    """The base store appending message lines to the thread file in place."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        ids, new_lines = self._encode_batch(list(batch))
        if not new_lines:
            return
        path = self._thread_path(thread_id)
        with self._locked(path):
            old_lines = self._thread_lines(path)
            repeated = sorted(set(ids) & set(self._ids(old_lines, thread_id)))
            if repeated:
                raise DuplicateIdError(
                    f"message ids {repeated} are already in thread {thread_id!r}"
                )
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                size = os.fstat(fd).st_size
                try:
                    if size == 0:
                        header = _dumps({"thread": thread_id, "format": 1}, "thread id")
                        os.write(fd, (header + "\n").encode("utf-8"))
                    for line in new_lines:
                        batch_row_pause()
                        # --- BUG: the row is in the live file before the batch is complete ---
                        os.write(fd, (line + "\n").encode("utf-8"))
                    os.fsync(fd)
                except BaseException:
                    os.ftruncate(fd, size)  # roll back what this batch wrote
                    raise
            finally:
                os.close(fd)


def make(**kwargs: str) -> AppendInPlaceStore:
    """``...v10_append_in_place:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return AppendInPlaceStore(path)
