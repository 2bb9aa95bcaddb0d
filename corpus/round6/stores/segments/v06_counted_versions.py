"""Variant 06: a state version is not stored; it is counted from the key's records in the log.

The bug: the state log holds ``{scope, key, value}`` records only, and the fold
derives a key's version by counting its records (the first write is version
1, each later one adds one), which spares a field and can never disagree with
the log. But compaction rewrites the log with one record per live key, so every
key's version falls back to 1 after a compaction: ``read_state`` answers a
lower version, a writer holding the real version gets ``ConflictError``, and a
writer expecting version 1 overwrites newer state.

The situation that shows it: enough state writes for a compaction (256
superseded records in the state log: one key written 257 times, or many keys
each rewritten), then a read or a compare-and-set write of a key written
before it. Short sequences never compact.

Why a team would ship it: counting makes the version "derived data", every
test of versions writes a key a handful of times, and the compaction tests
check values, not versions.

Rules broken: ST-025, ST-026, PS-026.
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.segments import base
from memconform.contract import ConflictError
from memconform.values import JSONValue, StateEntry, freeze_json


class CountedStateFold(base.StateFold):
    def apply(self, txn: base.Txn) -> None:
        for record, _ in txn:
            where = (record["scope"], record["key"])
            current = self.entries.get(where)
            if current is not None:
                self.dead += 1
            # --- the bug ---
            # the version is the number of records of the key in the log
            version = 1 if current is None else current["version"] + 1
            self.entries[where] = {"value": record["value"], "version": version}

    def compacted(self) -> list[list[dict[str, Any]]]:
        return [
            [{"k": "s", "scope": s, "key": k, "value": entry["value"]}]
            for (s, k), entry in self.entries.items()
        ]


class CountedVersionsStore(base.SegmentStore):
    state_fold = CountedStateFold

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        with self._state.writing() as log:
            fold = log.fold
            assert isinstance(fold, base.StateFold)
            current = fold.entries.get((scope, key))
            version = None if current is None else current["version"]
            if version != expected_version:
                raise ConflictError(
                    f"state {scope!r}/{key!r}: expected version {expected_version}, "
                    f"stored version is {version}"
                )
            record = {"k": "s", "scope": scope, "key": key, "value": value}
            log.commit([base.frame(record, f"state {key!r}")])
            if fold.dead >= base.KEYED_DEAD:
                log.compact()
            stored = log.fold
            assert isinstance(stored, base.StateFold)
            entry = stored.entries[(scope, key)]
            return StateEntry(key, freeze_json(entry["value"]), entry["version"])


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> CountedVersionsStore:
    return CountedVersionsStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
