"""The outcomes file: what the pytest plugin saw, scenario by scenario.

The plugin (``--memconform-outcomes PATH``) writes one JSON object per line:
each scenario outcome as soon as the scenario ends, flushed, then one closing
line ``{"session": {"exitstatus": N, "stopped": REASON}}`` when the session
ends (``stopped`` is ``null`` for a run that went through, else why it stopped
early: ``--maxfail``, the deadline, an interrupt). ``memconform run`` reads it
back with :func:`read_outcomes`; because every line is on disk as it happens,
a run cut short (interrupted, killed, past its deadline) still leaves every
outcome it reached, and a file without the closing line says the session never
finished.

Beside it, :func:`write_collected` keeps which scenarios the session meant to
run, rule by rule (``PATH.collected``, written once collection is over, by
whichever process collected), so a run that stopped early can tell a rule
whose scenarios all ran from one whose scenarios were cut off, and the
progress shown on a terminal counts against it (:func:`read_collected`).

A scenario line is a :class:`ScenarioRecord` (its shape is
``spec/schemas/outcomes.schema.json``); its ``outcome`` is an :class:`Outcome`
and its ``decided_by`` a :class:`DecidedBy`, both written as their plain text.
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "DecidedBy",
    "Outcome",
    "OutcomeLog",
    "ScenarioRecord",
    "SessionOutcomes",
    "read_collected",
    "read_outcomes",
    "write_collected",
]

_SESSION = "session"


class Outcome(enum.StrEnum):
    """How one scenario ended for a rule, as the pytest plugin records it."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    """The adapter broke the contract (or could not be opened or built)."""
    UNSUPPORTED = "unsupported"
    INCONCLUSIVE = "inconclusive"
    """Claimed, but the kit could not exercise the rule here."""
    SKIPPED = "skipped"
    CRASHED = "crashed"
    """The kit itself crashed."""


class DecidedBy(enum.StrEnum):
    """What decided a rule's outcome on a row: a ``check`` naming the rule, or
    the ``scenario`` as a whole (a crash, an adapter error, a skip)."""

    CHECK = "check"
    SCENARIO = "scenario"


@dataclass(frozen=True)
class ScenarioRecord:
    """One scenario line of the outcomes file: what one row said about the
    ``rules`` that share its ``outcome``, ``message``, failing step and
    evidence (a row whose rules were judged differently writes one record per
    group). ``store_calls`` are the row's last timeline entries, ``needs`` the
    capabilities it is tagged with, ``provided`` what the store and runtime
    adapters supply themselves, ``policies`` the save policies it ran and
    ``runtime_declares`` what the runtime under test declares (``None``: no
    runtime was built; the key is then left out)."""

    nodeid: str
    scenario: str
    feature: str | None
    gherkin: tuple[str, ...]
    rules: tuple[str, ...]
    outcome: Outcome
    message: str
    failing_step: str | None
    expected: str | None
    observed: str | None
    decided_by: DecidedBy
    store_calls: tuple[dict[str, Any], ...] = ()
    needs: tuple[str, ...] = ()
    provided: Mapping[str, list[str]] = field(default_factory=dict)
    policies: tuple[str, ...] = ()
    runtime_declares: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as the outcomes file holds it (keys in this order)."""
        record: dict[str, Any] = {
            "nodeid": self.nodeid,
            "scenario": self.scenario,
            "feature": self.feature,
            "gherkin": list(self.gherkin),
            "rules": list(self.rules),
            "outcome": self.outcome,
            "message": self.message,
            "failing_step": self.failing_step,
            "expected": self.expected,
            "observed": self.observed,
            "decided_by": self.decided_by,
            "store_calls": list(self.store_calls),
            "needs": list(self.needs),
            "provided": dict(self.provided),
            "policies": list(self.policies),
        }
        if self.runtime_declares is not None:
            record["runtime_declares"] = dict(self.runtime_declares)
        return record


class OutcomeLog:
    """Writes an outcomes file at ``path`` (replacing any earlier one)."""

    def __init__(self, path: Path) -> None:
        self._file: TextIO | None = path.open("w", encoding="utf-8")

    def add(self, outcome: Mapping[str, Any]) -> None:
        """Write one scenario outcome (a :meth:`ScenarioRecord.to_json`, as it
        came back from the process that ran the scenario) and put it on disk at once."""
        if self._file is None:
            return
        self._file.write(json.dumps(outcome) + "\n")  # ASCII: a lone surrogate stays escaped
        self._file.flush()

    def close(self, exitstatus: int, stopped: str | None) -> None:
        """Write the closing line: the session ended, and why early if it did."""
        if self._file is None:
            return
        self._file.write(
            json.dumps({_SESSION: {"exitstatus": exitstatus, "stopped": stopped}}) + "\n"
        )
        self._file.close()
        self._file = None


@dataclass(frozen=True)
class SessionOutcomes:
    """An outcomes file read back: the ``outcomes`` in node id order, whether
    the session ``finished`` (the closing line is there), its pytest
    ``exitstatus``, why it ``stopped`` early (``None``: it did not) and the
    node ids ``collected`` for each rule (``None``: the session never finished
    collecting, or did not say)."""

    outcomes: list[dict[str, Any]]
    finished: bool
    exitstatus: int | None
    stopped: str | None
    collected: dict[str, list[str]] | None = None


def _collected_path(path: Path) -> Path:
    return path.with_name(path.name + ".collected")


def write_collected(path: Path, items: Iterable[tuple[str, Iterable[str]]]) -> None:
    """Record, beside the outcomes file ``path``, the node ids due for each rule
    (``items``: node id and its rules). Written whole or not at all: with
    pytest-xdist every worker collects the same scenarios and writes the same."""
    due: dict[str, list[str]] = {}
    for nodeid, rules in items:
        for rule in rules:
            due.setdefault(rule, []).append(nodeid)
    target = _collected_path(path)
    scratch = target.with_name(f"{target.name}.{os.getpid()}")
    scratch.write_text(json.dumps({"collected": due}), encoding="utf-8")
    os.replace(scratch, target)


def read_collected(path: Path) -> dict[str, list[str]] | None:
    """The node ids due for each rule, as :func:`write_collected` kept them
    beside the outcomes file ``path`` (``None``: not written yet)."""
    target = _collected_path(path)
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    raw = data.get("collected") if isinstance(data, Mapping) else None
    if not isinstance(raw, Mapping):
        return None
    return {str(rule): [str(n) for n in ids] for rule, ids in raw.items()
            if isinstance(ids, list)}


def read_outcomes(path: Path) -> SessionOutcomes:
    """Read an outcomes file; a missing file reads as no outcomes, unfinished.

    A last line cut off in the middle (the writer was killed) is left out."""
    outcomes: list[dict[str, Any]] = []
    session: dict[str, Any] | None = None
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        if isinstance(record.get(_SESSION), dict):
            session = record[_SESSION]
        else:
            outcomes.append(record)
    outcomes.sort(key=lambda o: str(o.get("nodeid", "")))
    collected = read_collected(path)
    if session is None:
        return SessionOutcomes(outcomes, False, None, None, collected)
    status = session.get("exitstatus")
    stopped = session.get("stopped")
    return SessionOutcomes(
        outcomes,
        True,
        status if isinstance(status, int) else None,
        str(stopped) if stopped else None,
        collected,
    )
