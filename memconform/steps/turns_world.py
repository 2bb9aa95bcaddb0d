"""What the steps of the ``turns`` profile share: :class:`TurnsRun` and the
phrase helpers.

:func:`phrase` builds a ``parse`` pattern in which ``{name:Text}``
matches text without quotes, so a quoted value never swallows the words
after it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_bdd import parsers

from memconform.harness.proxy import RecordingStore
from memconform.steps.common import Mismatch, require_capability
from memconform.timeline import Entry
from memconform.values import JSONValue, Message, TurnRecord

__all__ = ["PARTIAL", "TurnsRun", "json_value", "name_list", "phrase"]

PARTIAL = "partial "


def _quoted(text: str) -> str:
    return text


_quoted.pattern = r'[^"]*'  # type: ignore[attr-defined]


def phrase(pattern: str) -> parsers.parse:
    """A ``parse`` step pattern in which ``{name:Text}`` matches text without quotes,
    so a quoted value never swallows the words after it."""
    return parsers.parse(pattern, extra_types={"Text": _quoted})


def name_list(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def json_value(text: str) -> JSONValue:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"not a JSON value in the scenario: {text!r}") from None


@dataclass
class TurnsRun:
    """One run of a turns script: the observation, or the error the runtime raised."""

    script: dict[str, JSONValue]
    store: RecordingStore
    observation: dict[str, JSONValue] | None = None
    error: ValueError | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def thread(self) -> str:
        """The thread the script ran on."""
        return str(self.script["thread"])

    def observed(self) -> dict[str, JSONValue]:
        """The observation; a run the runtime rejected fails the check here."""
        if self.observation is None:
            raise Mismatch("the turns runtime ran the script", "an observation",
                           f"the runtime raised {self.error!r}")
        return self.observation

    def entries(self, kind: str, name: str | None = None) -> list[Entry]:
        """Timeline entries of one kind (and name)."""
        return self.store.timeline.of(kind, name)

    def settled(self) -> list[dict[str, JSONValue]]:
        """The ``turn.settled`` events, in order."""
        self.observed()
        return [e.data for e in self.entries("event", "turn.settled")]

    def model_calls(self, turn_id: str) -> list[dict[str, Any]]:
        """The requests the model received for ``turn_id``, in order."""
        self.observed()
        calls = []
        for entry in self.entries("model"):
            request = entry.data.get("request")
            if isinstance(request, Mapping) and request.get("turn_id") == turn_id:
                calls.append(dict(request))
        return calls

    def first_call(self, turn_id: str) -> dict[str, Any]:
        """What the model saw at the first call of ``turn_id``."""
        calls = self.model_calls(turn_id)
        if not calls:
            raise Mismatch(f"the model was called for turn {turn_id}", "at least one call",
                           "no model call for that turn")
        return calls[0]

    def records(self) -> list[TurnRecord]:
        """The thread's turn records as the store returns them."""
        self.observed()
        require_capability(self.store.capabilities, "turn-records")
        return self.store.records(self.thread)

    def record(self, turn_id: str) -> TurnRecord:
        """The one stored record of ``turn_id``."""
        found = [r for r in self.records() if r.turn_id == turn_id]
        if len(found) != 1:
            raise Mismatch(f"one turn record for {turn_id}", "1 record",
                           f"{len(found)} records: {[r.to_json() for r in found]}")
        return found[0]

    def messages(self) -> list[Message]:
        """The thread's stored messages."""
        self.observed()
        return self.store.messages(self.thread)
