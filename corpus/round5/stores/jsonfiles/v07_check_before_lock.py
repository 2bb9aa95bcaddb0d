"""v07: append reads and checks the thread before it takes the lock.

Bug: ``append`` reads the thread file, checks the batch's ids against it and
builds the new file's lines from that snapshot *before* taking the thread's
flock; under the lock it only writes. Two writers (processes, or threads with
their own instances) that read the same snapshot both pass the duplicate check
and each writes "snapshot + own batch": the writer that takes the lock second
replaces the first one's acknowledged batch, and two batches holding the same
new id are both acknowledged.

Why a team ships it: a profile of a slow append showed the lock held while a
large transcript was parsed; moving the read and the validation out of the
critical section "kept the lock to the write itself", and the write is still
atomic (temporary file, fsync, ``os.replace``), so it looked safe. One
process, or writers taking turns, never shows it.

Breaks: ST-033 (no acknowledged message lost among concurrent writers),
ST-010 (a repeated id is refused) across processes, ST-001.
"""

from __future__ import annotations

from collections.abc import Sequence

from corpus.round5.stores.jsonfiles.base import JsonFilesStore
from memconform.contract import DuplicateIdError
from memconform.harness.faults import batch_row_pause
from memconform.values import Message

__all__ = ["CheckBeforeLockStore", "make"]


class CheckBeforeLockStore(JsonFilesStore):
    """The base store validating appends outside the lock."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        ids, new_lines = self._encode_batch(list(batch))
        if not new_lines:
            return
        path = self._thread_path(thread_id)
        # --- BUG: snapshot and checks taken before the lock ("short critical section") ---
        old_lines = self._thread_lines(path)
        repeated = sorted(set(ids) & set(self._ids(old_lines, thread_id)))
        if repeated:
            raise DuplicateIdError(f"message ids {repeated} are already in thread {thread_id!r}")
        with self._locked(path):
            staged = list(old_lines)
            for line in new_lines:
                batch_row_pause()
                staged.append(line)
            self._write_thread(path, thread_id, staged)


def make(**kwargs: str) -> CheckBeforeLockStore:
    """``...v07_check_before_lock:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return CheckBeforeLockStore(path)
