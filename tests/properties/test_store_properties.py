"""The store properties find every in-process store mutant, shrink the
counterexample and export it as a feature that reproduces the failure without
Hypothesis: it fails against the mutant and passes against SQLite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memconform.mutants import Mutant, all_mutants
from tests.mutant_harness import rules_with, run_suite

PROPERTIES = "tests/features/test_properties.py"

matrix = pytest.mark.skipif(
    os.environ.get("MEMCONFORM_PROPERTY_MATRIX") != "1",
    reason="the property x mutant matrix takes about 20 minutes on 2 cores; run it with "
    "MEMCONFORM_PROPERTY_MATRIX=1 python -m pytest tests/properties",
)
MULTI_PROCESS = {"store-process-scoped-threads", "ps-store-not-durable"}
"""Mutants only another process can see; the contract checks kill them."""

NOT_YET_REACHED = {
    "store-window-counts-hidden": "the generated flag changes rarely leave a hidden message "
    "inside a window",
    "store-uncommitted-visible": "as above: hidden messages are too rare in generated threads",
    "sw-store-loses-committed-flag-on-read": "as above",
    "turns-store-records-every-thread": "records of a second thread are too rare",
    "ps-store-shared-scope": "the shared scope of this mutant is keyed differently from the "
    "scopes the properties use",
}
"""Known gaps of the properties (the scenarios kill these mutants); tracked as open work."""

STORE_MUTANTS = [
    pytest.param(
        m, id=m.name,
        marks=[pytest.mark.xfail(reason=NOT_YET_REACHED[m.name], strict=False)]
        if m.name in NOT_YET_REACHED else [],
    )
    for m in all_mutants().values()
    if m.kind == "store" and m.name not in MULTI_PROCESS
]


@matrix
@pytest.mark.slow
@pytest.mark.parametrize("mutant", STORE_MUTANTS)
def test_properties_find_shrink_and_export_the_mutant(mutant: Mutant, tmp_path: Path) -> None:
    exported = tmp_path / "exported"
    outcomes = run_suite(
        PROPERTIES, tmp_path / "search", "--store", "memory://", "--mutant", mutant.name,
        "-m", "property", "--export-failures", str(exported),
    )
    assert rules_with(outcomes, "failed"), f"the properties did not find {mutant.name}"
    features = sorted(exported.glob("*.feature"))
    assert features, "no counterexample was exported"
    for feature in features:
        assert feature.read_text(encoding="utf-8").isascii()

    replay = tmp_path / "test_replay.py"
    replay.write_text(
        f"from pytest_bdd import scenarios\nscenarios({str(exported)!r})\n", encoding="utf-8"
    )
    against_mutant = run_suite(
        str(replay), tmp_path / "mutant", "--store", "memory://", "--mutant", mutant.name,
        "-m", "not nothing",
    )
    assert "failed" in {o["outcome"] for o in against_mutant}
    against_sqlite = run_suite(str(replay), tmp_path / "sqlite")
    assert {o["outcome"] for o in against_sqlite} == {"passed"}


@matrix
@pytest.mark.slow
def test_the_thorough_setting_finds_nothing_against_memory_and_sqlite(tmp_path: Path) -> None:
    for name, store in (("memory", ("--store", "memory://")), ("sqlite", ())):
        outcomes = run_suite(
            PROPERTIES, tmp_path / name, *store, "--memconform-thoroughness", "thorough"
        )
        assert {o["outcome"] for o in outcomes} == {"passed"}, name
