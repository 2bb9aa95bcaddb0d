"""The store properties find broken stores, shrink the counterexample and export
it as a feature that reproduces the failure without Hypothesis."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutant_harness import rules_with, run_suite

PROPERTIES = "tests/features/test_properties.py"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("factory", "rule"),
    [
        ("tests.properties.broken_stores:oldest_window", "ST-003"),
        ("tests.properties.broken_stores:duplicates_accepted", "ST-010"),
    ],
)
def test_a_broken_store_is_found_shrunk_and_exported(
    factory: str, rule: str, tmp_path: Path
) -> None:
    exported = tmp_path / "exported"
    outcomes = run_suite(
        PROPERTIES, tmp_path, "--store", factory, "--export-failures", str(exported)
    )
    assert rule in rules_with(outcomes, "failed")
    features = sorted(exported.glob("*.feature"))
    assert len(features) == 1
    text = features[0].read_text(encoding="utf-8")
    assert f"@{rule}" in text
    assert text.isascii()

    replay = tmp_path / "test_replay.py"
    replay.write_text(
        "from pytest_bdd import scenarios\n"
        f"scenarios({str(exported)!r})\n",
        encoding="utf-8",
    )
    against_broken = run_suite(str(replay), tmp_path / "a", "--store", factory)
    assert {o["outcome"] for o in against_broken} == {"failed"}
    against_sqlite = run_suite(str(replay), tmp_path / "b")
    assert {o["outcome"] for o in against_sqlite} == {"passed"}
