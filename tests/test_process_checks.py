"""The multi-process checks against stores they must pass and stores they must
reject: a writer killed after acknowledging (ST-032), writers released at once
(ST-033) and kills timed over an append for stores without the row point
(ST-034, ST-016), each run repeatedly where it depends on timing."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.adapters.contract_checks import (
    check_atomic_batch,
    check_concurrent_writers,
    check_durable,
)
from tests.mutant_harness import run_suite

REPEATS = 20
"""How often the timing-dependent mutants are run in a row; the benchmark
(bench/concurrency_bench.py, 300 runs) shows none of them is ever missed."""

CLAIMS = frozenset({"durable", "atomic-batch", "concurrent-writers"})


def _sqlite(tmp_path: Path, name: str = "s.db") -> str:
    return f"sqlite:///{tmp_path / name}"


def _locked(tmp_path: Path) -> str:
    return f"tests.bad_store_adapters:locked_file_store?path={tmp_path / 'locked.json'}"


@pytest.mark.slow
def test_a_correct_store_without_row_point_passes_the_timed_kills(tmp_path: Path) -> None:
    result = check_atomic_batch(_locked(tmp_path), "k", capabilities=CLAIMS)
    assert result.passed, result.evidence
    assert result.conclusive
    assert not result.deterministic
    assert "best effort" in result.evidence
    assert "3 of them while their append was in flight" in result.evidence
    concurrent = check_concurrent_writers(_locked(tmp_path), "c", rounds=1)
    assert concurrent.passed, concurrent.evidence
    assert "round 1: 3 writers released at the same instant" in concurrent.evidence


@pytest.mark.slow
def test_too_few_kills_in_flight_are_inconclusive(tmp_path: Path) -> None:
    result = check_atomic_batch(
        _locked(tmp_path), "k", capabilities=CLAIMS, kills=50, attempts=2
    )
    assert not result.conclusive
    assert "of the 50 kills needed landed while an append was in flight" in result.evidence


@pytest.mark.slow
def test_a_store_invisible_to_other_processes_is_inconclusive_for_kills() -> None:
    result = check_atomic_batch("memory://", "k", capabilities=CLAIMS)
    assert not result.conclusive
    assert "invisible" in result.evidence


@pytest.mark.slow
def test_the_durable_check_kills_the_writer_and_says_so(tmp_path: Path) -> None:
    result = check_durable(_sqlite(tmp_path), "d", capabilities=CLAIMS)
    assert result.passed, result.evidence
    assert "killed with SIGKILL right after it acknowledged" in result.evidence


@pytest.mark.slow
@pytest.mark.parametrize("run", range(REPEATS))
def test_a_store_buffering_until_close_is_caught(tmp_path: Path, run: int) -> None:
    result = check_durable(
        _sqlite(tmp_path), f"d{run}", capabilities=CLAIMS, mutant="store-buffers-until-close"
    )
    assert not result.passed
    assert result.adapter_error is None
    assert "read []" in result.evidence


@pytest.mark.slow
@pytest.mark.parametrize("run", range(REPEATS))
def test_a_lost_update_store_is_caught(tmp_path: Path, run: int) -> None:
    result = check_concurrent_writers(_sqlite(tmp_path), f"c{run}", mutant="store-lost-update")
    assert not result.passed, result.evidence
    assert result.adapter_error is None, result.evidence
    assert "lost acknowledged" in result.evidence


@pytest.mark.slow
@pytest.mark.parametrize("run", range(REPEATS))
@pytest.mark.parametrize("mutant", ["store-row-by-row", "store-checks-then-row-by-row"])
def test_a_row_by_row_store_without_row_point_is_caught(
    tmp_path: Path, mutant: str, run: int
) -> None:
    result = check_atomic_batch(_sqlite(tmp_path), f"k{run}", capabilities=CLAIMS, mutant=mutant)
    assert not result.passed, result.evidence
    assert result.conclusive, result.evidence
    assert result.adapter_error is None, result.evidence
    assert "partly stored" in result.evidence or "saw" in result.evidence


@pytest.mark.slow
def test_a_refusal_up_front_without_row_point_is_inconclusive_not_pass(tmp_path: Path) -> None:
    outcomes = run_suite(
        "tests/features/test_store.py", tmp_path, "--memconform-store", _sqlite(tmp_path),
        "--memconform-mutant", "store-checks-then-row-by-row", "-m", "ST-016",
    )
    assert outcomes
    assert {o["outcome"] for o in outcomes} == {"inconclusive"}, outcomes
    assert {tuple(o["rules"]) for o in outcomes} == {("ST-016",)}  # not ST-001, also tagged
    assert all("row point" in o["message"] for o in outcomes)


@pytest.mark.slow
def test_a_passing_kill_rule_says_how_it_passed(tmp_path: Path) -> None:
    outcomes = run_suite(
        "tests/features/test_store.py", tmp_path, "--memconform-store", _sqlite(tmp_path),
        "-m", "ST-032 or ST-033 or ST-034",
    )
    how = {o["rules"][0]: (o["outcome"], o["message"]) for o in outcomes}
    assert how["ST-032"][0] == how["ST-033"][0] == how["ST-034"][0] == "passed"
    assert "SIGKILL" in how["ST-032"][1]
    assert "released at the same instant" in how["ST-033"][1]
    assert "at the adapter's row point" in how["ST-034"][1]
