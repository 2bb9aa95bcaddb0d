"""v08: the turn-record log is compacted grouped by thread.

Bug: every 64 records, ``append_record`` compacts ``records.jsonl``: it reads
the log, drops a torn tail, and rewrites it atomically with the records
*grouped by thread* (a stable sort on ``thread_id``), so that a reader of one
thread finds that thread's records as one contiguous run. Each thread's own
records keep their order, but ``records()`` without a thread no longer returns
the records in append order once more than 64 records of interleaved threads
were written: the first 64 come back thread by thread, the rest in append
order after them.

Why a team ships it: ``records(thread_id)`` scanned a log of hundreds of
thousands of lines; grouping was meant as a first step toward an index. The
team's tests read records per thread, or wrote a handful of records from one
thread, and ``records()`` still "returns every record".

Breaks: ST-023 (turn records come back in append order), TU-030 and ST-024
(reading without a thread returns the records of every thread, in append
order).
"""

from __future__ import annotations

from corpus.round5.stores.jsonfiles.base import JsonFilesStore, _dumps
from memconform.values import TurnRecord

__all__ = ["CompactionGroupsStore", "make"]

COMPACT_EVERY = 64


class CompactionGroupsStore(JsonFilesStore):
    """The base store with a grouping compaction of the turn-record log."""

    def append_record(self, record: TurnRecord) -> None:
        super().append_record(record)
        path = self._records_path()
        with self._locked(path):
            entries = self._read_log(path)
            if not entries or len(entries) % COMPACT_EVERY:
                return
            # --- BUG: compaction groups the log by thread (stable), losing append order ---
            entries.sort(key=lambda e: e.get("thread_id", "") if isinstance(e, dict) else "")
            self._write_text(path, "".join(_dumps(e, "turn record") + "\n" for e in entries))


def make(**kwargs: str) -> CompactionGroupsStore:
    """``...v08_compaction_groups:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return CompactionGroupsStore(path)
