"""v01: the facts snapshot is labelled with the new event's seq but taken before applying it.

The bug: ``put_fact`` decides to snapshot a scope's facts every
``SNAPSHOT_EVERY`` (64) events. It writes the snapshot between inserting the
``FactPut`` event and applying that event to the folded state, so the
snapshot claims to include event ``seq`` while holding the state as of the
event before. Every later fold starts from that snapshot and skips the event,
so the fact written by every 64th event of a scope is lost (its subject reads
as absent, or as the fact it was meant to supersede).

Situation that shows it: a scope with 64 or more fact events (puts and
forgets counted together); the fact put by the 64th (128th, ...) event is
missing from ``get_fact`` and ``facts``.

Why a team would ship it: snapshotting is an optimisation added late; the
tests wrote a handful of facts per scope, never reaching the threshold, and the
line order "record the event, snapshot, then update the in-memory fold" reads
naturally in review.

Rules broken: ST-028, PS-027
"""

from __future__ import annotations

import json

from corpus.round6.stores.eventlog.base import FACT_PUT, EventLogStore, encode, name, stream_of
from memconform.values import Fact

__all__ = ["SnapshotEarlyStore", "make"]


class SnapshotEarlyStore(EventLogStore):
    def put_fact(self, scope: str, fact: Fact) -> None:
        stream, subject = stream_of("facts", scope), name(fact.subject)
        payload = encode(fact.to_json())
        with self._tx() as cur:
            state, since = self._fold_facts(cur, stream)
            seq = self._emit(cur, stream, FACT_PUT, subject, payload)
            # --- the bug ---
            # the snapshot is labelled with this event's seq but holds the fold before it
            self._maybe_snapshot(cur, stream, state, seq, since + 1)
            state[subject] = json.loads(payload)



def make(path: str | None = None, timeout: str = "30") -> SnapshotEarlyStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return SnapshotEarlyStore(path, timeout=float(timeout))
