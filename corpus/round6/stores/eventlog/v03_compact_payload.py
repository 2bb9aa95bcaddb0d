"""v03: message payloads leave out "empty" optional fields, and the reader fills in defaults.

The bug: to keep the events table small, ``MessageAppended`` payloads omit the
optional fields that hold nothing (``parts``, ``run_id``, ``round``,
``turn_id``, ``metadata``) and the fold fills in the defaults when a field is
missing. "Holds nothing" is tested with Python truthiness, so a round of ``0``
and an empty-string run id or turn id are dropped as well and read back as
``None``.

Situation that shows it: a message appended with ``round=0`` (or
``run_id=""``, ``turn_id=""``) comes back with ``None`` there. Ordinary
messages (round 1 and up, real ids) are unaffected.

Why a team would ship it: the compaction halved the table on real data, where
rounds count from 1 and ids are never empty; ``if value:`` is the idiom the team
uses for "present" everywhere else.

Rules broken: ST-013
"""

from __future__ import annotations

from corpus.round6.stores.eventlog.base import EventLogStore, encode
from memconform.values import Message

__all__ = ["CompactPayloadStore", "make"]

_OPTIONAL = ("parts", "run_id", "round", "turn_id", "metadata")


class CompactPayloadStore(EventLogStore):
    def _message_payload(self, message: Message) -> str:
        data = message.to_json()
        for field_name in _OPTIONAL:
            # --- the bug ---
            # truthiness drops round 0 and empty-string ids along with None, [] and {}
            if not data[field_name]:
                del data[field_name]
        return encode(data)


def make(path: str | None = None, timeout: str = "30") -> CompactPayloadStore:
    if not path:
        raise ValueError("eventlog needs ?path=FILE")
    return CompactPayloadStore(path, timeout=float(timeout))
