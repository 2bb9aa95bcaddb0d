"""Value types shared by the simulator, the adapters and the steps.

Every value is a frozen dataclass that converts to and from plain JSON data
(``to_json`` / ``from_json``), so a store in any language, a results file and a
script can carry it unchanged. Nothing here performs I/O.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ROLES",
    "ErrorRecord",
    "Fact",
    "JSONValue",
    "Message",
    "Role",
    "StateEntry",
    "TurnRecord",
    "freeze_json",
    "same_value",
    "scribble",
]

JSONValue = Any
"""Plain JSON data: ``None``, ``bool``, ``int``, ``float``, ``str``, lists and str-keyed dicts."""

Role = Literal["user", "assistant", "tool", "system"]
ROLES: tuple[Role, ...] = ("user", "assistant", "tool", "system")


def freeze_json(value: JSONValue) -> JSONValue:
    """Return a deep copy of ``value`` made only of JSON types (tuples become lists).

    Raises ``TypeError`` naming the offending type when ``value`` is not JSON data.
    """
    kind = type(value)
    if kind is str or kind is int or value is None or kind is float or kind is bool:
        return value
    if kind is list:
        return [freeze_json(item) for item in value]
    if kind is dict or isinstance(value, Mapping):
        out: dict[str, JSONValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be str, got {type(key).__name__}")
            out[key] = freeze_json(item)
        return out
    if isinstance(value, bool | int | float | str):  # a subclass: an enum member...
        return value
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return [freeze_json(item) for item in value]
    raise TypeError(f"not JSON data: {type(value).__name__}")


def same_value(expected: Any, observed: Any) -> bool:
    """Whether ``observed`` equals ``expected`` with every JSON value of the same
    kind, all the way down: ``True`` is not ``1``, ``1.0`` is not ``1``, ``"1"`` is
    not ``1`` and ``-0.0`` is not ``0.0`` (Python's ``==`` says they are).

    Lists and tuples are both JSON arrays and any mapping is a JSON object; the
    value types of this module compare field by field. Anything else compares
    with ``==``.
    """
    kind = type(expected)
    if kind is type(observed):  # the common case, decided without the tests below
        if kind is str or kind is int or kind is bool:
            return bool(expected == observed)
        if kind is dict:
            return expected.keys() == observed.keys() and all(
                same_value(v, observed[k]) for k, v in expected.items()
            )
        if kind is list:
            return len(expected) == len(observed) and all(
                same_value(e, o) for e, o in zip(expected, observed, strict=True)
            )
    if isinstance(expected, bool) or isinstance(observed, bool):
        return type(expected) is type(observed) and expected == observed
    if isinstance(expected, int) and isinstance(observed, int):
        return bool(expected == observed)
    if isinstance(expected, float) or isinstance(observed, float):
        return (
            isinstance(expected, float)
            and isinstance(observed, float)
            and expected == observed
            and math.copysign(1.0, expected) == math.copysign(1.0, observed)
        )
    if isinstance(expected, str) or isinstance(observed, str):
        return isinstance(expected, str) and isinstance(observed, str) and expected == observed
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        return type(expected) is type(observed) and all(
            same_value(getattr(expected, f.name), getattr(observed, f.name))
            for f in dataclasses.fields(expected)
        )
    if isinstance(expected, Mapping) or isinstance(observed, Mapping):
        return (
            isinstance(expected, Mapping)
            and isinstance(observed, Mapping)
            and expected.keys() == observed.keys()
            and all(same_value(v, observed[k]) for k, v in expected.items())
        )
    if isinstance(expected, list | tuple) or isinstance(observed, list | tuple):
        return (
            isinstance(expected, list | tuple)
            and isinstance(observed, list | tuple)
            and len(expected) == len(observed)
            and all(same_value(e, o) for e, o in zip(expected, observed, strict=True))
        )
    return bool(expected == observed)


def _require(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    if key not in data:
        raise ValueError(f"{what}: missing field {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise ValueError(f"{what}: field {key!r} has type {type(value).__name__}")
    return value


def _optional(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        raise ValueError(f"{what}: field {key!r} has type {type(value).__name__}")
    return value


def _or_default(value: str | None, default: str) -> str:
    return default if value is None else value


@dataclass(frozen=True)
class Message:
    """One stored conversation message.

    ``id`` is unique within its thread. ``parts`` holds structured content (tool
    calls, tool results, payloads) as JSON objects. ``run_id`` and ``round`` come
    from document 000, ``turn_id`` from document 002, ``committed`` is the
    visibility flag of document 001 (``True`` means in the model's view).
    """

    id: str
    role: Role
    text: str
    parts: tuple[JSONValue, ...] = ()
    run_id: str | None = None
    round: int | None = None
    turn_id: str | None = None
    committed: bool = True
    metadata: Mapping[str, JSONValue] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSONValue]:
        """Plain JSON form; every field is present."""
        return {
            "id": self.id,
            "role": self.role,
            "text": self.text,
            "parts": [freeze_json(p) for p in self.parts],
            "run_id": self.run_id,
            "round": self.round,
            "turn_id": self.turn_id,
            "committed": self.committed,
            "metadata": freeze_json(dict(self.metadata)),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        """Parse the JSON form; raises ``ValueError`` naming the bad field."""
        what = "message"
        if not isinstance(data, Mapping):
            raise ValueError(f"{what}: expected an object, got {type(data).__name__}")
        role = _require(data, "role", str, what)
        if role not in ROLES:
            raise ValueError(f"{what}: field 'role' must be one of {ROLES}, got {role!r}")
        rnd = _optional(data, "round", int, what)
        if isinstance(rnd, bool):
            raise ValueError(f"{what}: field 'round' has type bool")
        committed = data.get("committed", True)
        if not isinstance(committed, bool):
            raise ValueError(f"{what}: field 'committed' has type {type(committed).__name__}")
        return cls(
            id=_require(data, "id", str, what),
            role=role,
            text=_require(data, "text", str, what),
            parts=tuple(freeze_json(p) for p in (_optional(data, "parts", list, what) or [])),
            run_id=_optional(data, "run_id", str, what),
            round=rnd,
            turn_id=_optional(data, "turn_id", str, what),
            committed=committed,
            metadata=freeze_json(_optional(data, "metadata", Mapping, what) or {}),
        )


@dataclass(frozen=True)
class ErrorRecord:
    """A run failure kept apart from the transcript (document 000's ``recordError``).

    ``messages`` are all the run's new messages, including ones already stored;
    ``error`` describes the run's error (``type`` and ``message`` at least).
    """

    run_id: str
    error: Mapping[str, JSONValue]
    messages: tuple[Message, ...] = ()
    scope: str | None = None
    recorded_at: str | None = None

    def to_json(self) -> dict[str, JSONValue]:
        """Plain JSON form; every field is present."""
        return {
            "run_id": self.run_id,
            "error": freeze_json(dict(self.error)),
            "messages": [m.to_json() for m in self.messages],
            "scope": self.scope,
            "recorded_at": self.recorded_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ErrorRecord:
        """Parse the JSON form; raises ``ValueError`` naming the bad field."""
        what = "error record"
        if not isinstance(data, Mapping):
            raise ValueError(f"{what}: expected an object, got {type(data).__name__}")
        return cls(
            run_id=_require(data, "run_id", str, what),
            error=freeze_json(_require(data, "error", Mapping, what)),
            messages=tuple(
                Message.from_json(m) for m in (_optional(data, "messages", list, what) or [])
            ),
            scope=_optional(data, "scope", str, what),
            recorded_at=_optional(data, "recorded_at", str, what),
        )


@dataclass(frozen=True)
class TurnRecord:
    """What a settled turn of document 002 leaves behind to explain its execution.

    ``outcome`` is one of ``completed``, ``failed``, ``cut``, ``stopped``,
    ``truncated``, ``refused``. ``usage`` belongs to this turn only (a child's
    usage is never folded into its parent's).
    """

    turn_id: str
    thread_id: str
    outcome: str
    parent_turn_id: str | None = None
    continues_from: str | None = None
    grant: Mapping[str, JSONValue] = field(default_factory=dict)
    steps_used: int = 0
    tier: str | None = None
    fallbacks: tuple[JSONValue, ...] = ()
    usage: Mapping[str, JSONValue] = field(default_factory=dict)
    timing: Mapping[str, JSONValue] = field(default_factory=dict)
    metadata: Mapping[str, JSONValue] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSONValue]:
        """Plain JSON form; every field is present."""
        return {
            "turn_id": self.turn_id,
            "thread_id": self.thread_id,
            "outcome": self.outcome,
            "parent_turn_id": self.parent_turn_id,
            "continues_from": self.continues_from,
            "grant": freeze_json(dict(self.grant)),
            "steps_used": self.steps_used,
            "tier": self.tier,
            "fallbacks": [freeze_json(f) for f in self.fallbacks],
            "usage": freeze_json(dict(self.usage)),
            "timing": freeze_json(dict(self.timing)),
            "metadata": freeze_json(dict(self.metadata)),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TurnRecord:
        """Parse the JSON form; raises ``ValueError`` naming the bad field."""
        what = "turn record"
        if not isinstance(data, Mapping):
            raise ValueError(f"{what}: expected an object, got {type(data).__name__}")
        return cls(
            turn_id=_require(data, "turn_id", str, what),
            thread_id=_require(data, "thread_id", str, what),
            outcome=_require(data, "outcome", str, what),
            parent_turn_id=_optional(data, "parent_turn_id", str, what),
            continues_from=_optional(data, "continues_from", str, what),
            grant=freeze_json(_optional(data, "grant", Mapping, what) or {}),
            steps_used=_optional(data, "steps_used", int, what) or 0,
            tier=_optional(data, "tier", str, what),
            fallbacks=tuple(freeze_json(_optional(data, "fallbacks", list, what) or [])),
            usage=freeze_json(_optional(data, "usage", Mapping, what) or {}),
            timing=freeze_json(_optional(data, "timing", Mapping, what) or {}),
            metadata=freeze_json(_optional(data, "metadata", Mapping, what) or {}),
        )


@dataclass(frozen=True)
class StateEntry:
    """One key of working state (document 004) with its compare-and-set version.

    ``version`` starts at 1 on the first write and grows by one per write.
    """

    key: str
    value: JSONValue
    version: int

    def to_json(self) -> dict[str, JSONValue]:
        """Plain JSON form."""
        return {"key": self.key, "value": freeze_json(self.value), "version": self.version}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StateEntry:
        """Parse the JSON form; raises ``ValueError`` naming the bad field."""
        what = "state entry"
        if not isinstance(data, Mapping):
            raise ValueError(f"{what}: expected an object, got {type(data).__name__}")
        if "value" not in data:
            raise ValueError(f"{what}: missing field 'value'")
        version = _require(data, "version", int, what)
        if isinstance(version, bool):
            raise ValueError(f"{what}: field 'version' has type bool")
        return cls(
            key=_require(data, "key", str, what),
            value=freeze_json(data["value"]),
            version=version,
        )


@dataclass(frozen=True)
class Fact:
    """One entry of durable knowledge (document 004), keyed by ``subject``.

    Provenance: ``writer`` (who or what wrote it), ``source`` (where the content
    came from), ``evidence`` and ``written_at``. ``trust`` is ``trusted`` or
    ``untrusted``; ``origin`` is ``concluded`` (the agent's own conclusion) or
    ``copied`` (quoted from a tool result or document). ``kind`` separates a
    person's ``preference`` from an agent's ``inference`` and other facts.
    ``recheck_at`` is the date after which the fact counts as unverified.
    """

    subject: str
    statement: str
    writer: str
    source: str
    evidence: str
    written_at: str
    kind: str = "observation"
    trust: str = "trusted"
    origin: str = "concluded"
    recheck_at: str | None = None
    metadata: Mapping[str, JSONValue] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSONValue]:
        """Plain JSON form; every field is present."""
        return {
            "subject": self.subject,
            "statement": self.statement,
            "writer": self.writer,
            "source": self.source,
            "evidence": self.evidence,
            "written_at": self.written_at,
            "kind": self.kind,
            "trust": self.trust,
            "origin": self.origin,
            "recheck_at": self.recheck_at,
            "metadata": freeze_json(dict(self.metadata)),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fact:
        """Parse the JSON form; raises ``ValueError`` naming the bad field."""
        what = "fact"
        if not isinstance(data, Mapping):
            raise ValueError(f"{what}: expected an object, got {type(data).__name__}")
        return cls(
            subject=_require(data, "subject", str, what),
            statement=_require(data, "statement", str, what),
            writer=_require(data, "writer", str, what),
            source=_require(data, "source", str, what),
            evidence=_require(data, "evidence", str, what),
            written_at=_require(data, "written_at", str, what),
            # an absent field takes its default; one present (even empty) is kept as given
            kind=_or_default(_optional(data, "kind", str, what), "observation"),
            trust=_or_default(_optional(data, "trust", str, what), "trusted"),
            origin=_or_default(_optional(data, "origin", str, what), "concluded"),
            recheck_at=_optional(data, "recheck_at", str, what),
            metadata=freeze_json(_optional(data, "metadata", Mapping, what) or {}),
        )


_MARK = "changed by the caller"


def scribble(value: Any) -> None:
    """Change every mutable container inside ``value`` in place, as a caller reusing
    an object would: dicts get a key, lists an item; frozen value types and tuples
    are walked, not changed. What a store stored or handed back must not show it."""
    if isinstance(value, dict):
        for item in list(value.values()):
            scribble(item)
        value[_MARK] = True
    elif isinstance(value, list):
        for item in value:
            scribble(item)
        value.append(_MARK)
    elif isinstance(value, tuple):
        for item in value:
            scribble(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            scribble(getattr(value, f.name))
