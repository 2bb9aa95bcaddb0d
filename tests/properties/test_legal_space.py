"""The legal-space lint: every field of the contract's values and every argument
of its methods has a value catalogue, and every count a ladder the sweep climbs."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

from memconform import contract
from memconform.properties import legal_space as space
from memconform.properties import sweep
from memconform.values import ErrorRecord, Fact, Message, StateEntry, TurnRecord

VALUE_TYPES = (Message, ErrorRecord, TurnRecord, StateEntry, Fact)
PROTOCOLS = (
    contract.Store, contract.CommitFlagsStore, contract.ErrorsStore, contract.TurnRecordsStore,
    contract.StateStore, contract.KnowledgeStore,
)
WHOLE_VALUES = {"self", "batch", "record", "fact", "include_uncommitted"}
"""Arguments that carry a whole value of the contract (its fields have catalogues)
or only switch a read."""
ALIASES = {
    "key": "StateEntry.key", "value": "StateEntry.value", "subject": "Fact.subject",
    "committed": "Message.committed",
}
"""Arguments whose catalogue is that of the field they fill."""


def contract_fields() -> list[str]:
    """``Class.field`` for every field of every value the contract exchanges."""
    return [f"{t.__name__}.{f.name}" for t in VALUE_TYPES for f in dataclasses.fields(t)]


def contract_arguments() -> set[str]:
    """Every argument name of every method of the contract's protocols."""
    names: set[str] = set()
    for protocol in PROTOCOLS:
        for name, method in inspect.getmembers(protocol, inspect.isfunction):
            if not name.startswith("_"):
                names.update(inspect.signature(method).parameters)
    return names - WHOLE_VALUES


def missing(fields: list[str], arguments: set[str]) -> list[str]:
    """The fields and arguments with no catalogue in ``FIELDS``."""
    known = space.FIELDS
    lacking = [f for f in fields if f not in known]
    lacking += sorted(a for a in arguments if ALIASES.get(a, a) not in known)
    return lacking


def test_every_field_and_argument_has_a_catalogue() -> None:
    assert missing(contract_fields(), contract_arguments()) == []


def test_the_lint_fails_on_a_field_without_a_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    without = {k: v for k, v in space.FIELDS.items() if k != "Fact.recheck_at"}
    monkeypatch.setattr(space, "FIELDS", without)
    assert missing(contract_fields(), contract_arguments()) == ["Fact.recheck_at"]


def test_every_catalogue_holds_values() -> None:
    for field, values in space.FIELDS.items():
        assert values, field


def test_every_ladder_rises_and_the_sweep_climbs_it() -> None:
    source = Path(sweep.__file__).read_text(encoding="utf-8")
    for count, ladder in space.COUNTS.items():
        assert len(ladder) >= 3, count
        assert list(ladder) == sorted(set(ladder)), count
    climbed = {c for c in space.COUNTS if f'"{c}"' in source}
    described = {"threads", "scopes", "ids per flag change", "nesting depth", "text length",
                 "thread length", "repeated ids in a batch"}
    assert set(space.COUNTS) - climbed <= described, set(space.COUNTS) - climbed


def test_the_catalogues_cross_the_thresholds_they_name() -> None:
    """The values sit on both sides of the limits the docstrings name."""
    lengths = {len(t.encode("utf-8")) for t in space.TEXTS}
    assert {65_535, 65_536, 65_537} <= lengths | {len(t) for t in space.TEXTS} or (
        max(lengths) >= 1 << 20 and any(65_535 <= n <= 65_540 for n in lengths)
    )
    assert {2**53, 2**53 + 1, 2**63 - 1} <= {n for n in space.NUMBERS if type(n) is int}
    assert any(type(n) is float and n == int(n) for n in space.NUMBERS)  # 1.0 is not 1
    depth, value = 0, space.VALUES[-1]
    while isinstance(value, dict):
        depth, value = depth + 1, value["n"]
    assert depth == max(space.COUNTS["nesting depth"])


def test_every_message_value_is_a_legal_message() -> None:
    """Each catalogue value builds a message that survives its own JSON form."""
    for field, values in space.FIELDS.items():
        if not field.startswith("Message."):
            continue
        name = field.split(".")[1]
        for value in values:
            message = dataclasses.replace(Message(id="m", role="user", text="t"), **{name: value})
            assert Message.from_json(message.to_json()) == message, (field, value)


def optional_texts() -> list[str]:
    """``Class.field`` for every field that holds a text or nothing."""
    return [f"{t.__name__}.{f.name}" for t in VALUE_TYPES for f in dataclasses.fields(t)
            if str(f.type).replace(" ", "") == "str|None"]


def test_a_field_holding_a_text_or_nothing_is_tried_with_both_and_the_empty_text() -> None:
    """A store that keeps an empty text as nothing (a NOT NULL column read back
    with ``or None``), or nothing as an empty text, breaks ST-013."""
    fields = optional_texts()
    assert "Message.run_id" in fields
    assert "Fact.recheck_at" in fields
    lacking = [f for f in fields if not {None, ""} <= set(space.FIELDS[f])]
    assert lacking == []
