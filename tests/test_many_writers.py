"""Writes of every kind made by several processes: raced, and relayed across
time zones (:mod:`memconform.steps.contract_checks.many_writers`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.steps.contract_checks import check_raced_writes, check_relayed_writes
from memconform.steps.contract_checks.many_writers import _judge

RACED = ("commit", "error", "record", "key", "fact")
RELAYED = ("message", "error", "record")


def test_a_lost_write_a_repeated_one_and_a_writer_out_of_order_are_each_named() -> None:
    made = [["w0-000", "w0-001"], ["w1-000", "w1-001"]]
    assert _judge("error", made, ["w1-000", "w0-000", "w0-001", "w1-001"], relayed=False) == []
    lost = _judge("error", made, ["w0-000", "w0-001", "w1-001"], relayed=False)
    assert lost == ["1 of 4 acknowledged error records are not held: w1-000"]
    twice = _judge("fact", made, ["w0-000", "w0-000", "w0-001", "w1-000", "w1-001"],
                   relayed=False)
    assert twice == ["held more than once: w0-000"]
    swapped = _judge("record", made, ["w0-001", "w0-000", "w1-000", "w1-001"], relayed=False)
    assert swapped == ["writer 0's turn records come back as ['w0-001', 'w0-000'], "
                       "not in its order"]
    # keys and facts keep no order of writing; a relay keeps the relay's order
    assert _judge("key", made, ["w1-001", "w0-001", "w0-000", "w1-000"], relayed=False) == []
    relay = _judge("message", made, ["w1-000", "w1-001", "w0-000", "w0-001"], relayed=True)
    assert len(relay) == 1
    assert "not in the order the processes made them" in relay[0]


@pytest.mark.slow
@pytest.mark.parametrize("write", RACED)
def test_the_built_in_store_keeps_every_raced_write(tmp_path: Path, write: str) -> None:
    result = check_raced_writes(f"sqlite:///{tmp_path / 'ok.db'}", "W", write)
    assert result.passed, result.evidence
    assert "4 writers in 4 time zones released at the same instant" in result.evidence


@pytest.mark.slow
@pytest.mark.parametrize("write", RACED)
def test_a_store_rewriting_one_shared_document_loses_raced_writes(
    tmp_path: Path, write: str
) -> None:
    result = check_raced_writes(f"sqlite:///{tmp_path / 'bad.db'}", "W", write,
                                mutant="store-side-writes-in-one-file")
    assert not result.passed
    assert "acknowledged" in result.evidence
    assert "are not held" in result.evidence


@pytest.mark.slow
@pytest.mark.parametrize("write", RELAYED)
def test_the_relay_keeps_its_order_on_the_built_in_store_and_not_by_local_time(
    tmp_path: Path, write: str
) -> None:
    ok = check_relayed_writes(f"sqlite:///{tmp_path / 'ok.db'}", "Z", write)
    assert ok.passed, ok.evidence
    assert "Pacific/Kiritimati, Pacific/Pago_Pago, Asia/Kathmandu" in ok.evidence
    bad = check_relayed_writes(f"sqlite:///{tmp_path / 'bad.db'}", "Z", write,
                               mutant="store-ordered-by-local-time")
    assert not bad.passed
    assert "not in the order the processes made them" in bad.evidence
    assert bad.deterministic  # a relay meets no race: the same order every run
