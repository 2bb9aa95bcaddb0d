"""v05: a fact's time stamps are stored converted to the server's local time.

Bug: before a fact is written, ``written_at`` and ``recheck_at`` are parsed
with ``datetime.fromisoformat`` and, when they carry an offset, rewritten with
``.astimezone().isoformat()``: the same instant, in the writing process's local
zone. "2024-05-01T12:00:00+02:00" comes back as "2024-05-01T10:00:00+00:00" on a
UTC host, "…Z" comes back as "…+00:00", and what comes back depends on the zone
of whichever process wrote it. Stamps without an offset, and text that is no
ISO time stamp, are kept as they are.

Why a team ships it: operators read the facts files by hand and compared
stamps written by agents in several regions; "one zone per file" (the
server's) made them comparable, and every test used naive stamps or ran on a
host whose zone matched the offset in the fixture.

Breaks: ST-029 and PS-028 (every provenance field, ``written_at`` and
``recheck_at`` included, comes back exactly as given).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from corpus.round5.stores.jsonfiles.base import JsonFilesStore
from memconform.values import Fact

__all__ = ["LocalTimeFactsStore", "make"]


def _local(stamp: str) -> str:
    """The stamp in this host's zone (--- BUG: the caller's text is replaced ---)."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        return stamp
    return moment.astimezone().isoformat()


class LocalTimeFactsStore(JsonFilesStore):
    """The base store normalising fact time stamps to local time."""

    def _fact_json(self, fact: Fact) -> dict[str, Any]:
        fact = dataclasses.replace(
            fact,
            written_at=_local(fact.written_at),
            recheck_at=None if fact.recheck_at is None else _local(fact.recheck_at),
        )
        return super()._fact_json(fact)


def make(**kwargs: str) -> LocalTimeFactsStore:
    """``...v05_local_time_facts:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return LocalTimeFactsStore(path)
