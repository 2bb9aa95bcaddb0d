"""One ordered log of everything observable in a run.

The kit, not the runtime, writes the timeline: the recording proxy appends each
store call, the environment appends each model call, tool run, hook call and
emitted event. Batching and ordering rules assert on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from memconform.values import JSONValue, freeze_json

__all__ = ["Entry", "Timeline"]


@dataclass(frozen=True)
class Entry:
    """One observed happening: ``kind`` is ``store``, ``model``, ``tool``, ``hook``
    or ``event``; ``name`` is the method, component, tool, hook or event name."""

    seq: int
    kind: str
    name: str
    data: dict[str, JSONValue]

    def to_json(self) -> dict[str, JSONValue]:
        """Plain JSON form."""
        return {"seq": self.seq, "kind": self.kind, "name": self.name, **self.data}


@dataclass
class Timeline:
    """An append-only list of :class:`Entry`, numbered from 1.

    ``watchers`` are the kit's own callbacks, each called with every entry right
    after it is added (a scenario uses one to act as another writer of the store
    at a point it observed); a runtime never sees them."""

    entries: list[Entry] = field(default_factory=list)
    watchers: list[Callable[[Entry], None]] = field(
        default_factory=list, repr=False, compare=False
    )

    def add(self, kind: str, name: str, **data: Any) -> Entry:
        """Append an entry; ``data`` is copied as JSON data."""
        entry = Entry(len(self.entries) + 1, kind, name, freeze_json(data))
        self.entries.append(entry)
        for watcher in list(self.watchers):
            watcher(entry)
        return entry

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def of(self, kind: str, name: str | None = None) -> list[Entry]:
        """Entries of one kind (and name, when given), in order."""
        return [e for e in self.entries if e.kind == kind and (name is None or e.name == name)]

    def to_json(self) -> list[dict[str, JSONValue]]:
        """Plain JSON form."""
        return [e.to_json() for e in self.entries]
