"""A store that declares no optional capability gets ``unsupported`` for every
rule that needs one, from the properties as from the scenarios: never an error."""

from __future__ import annotations

from pathlib import Path

from tests.mutant_harness import rules_with, run_suite


def test_the_keyed_property_is_unsupported_without_keyed_capabilities(tmp_path: Path) -> None:
    outcomes = run_suite(
        "tests/features/test_properties.py",
        tmp_path,
        "--memconform-store",
        "tests.bad_store_adapters:core_only",
        "-k",
        "keyed",
    )
    assert outcomes, "the keyed-data property did not run"
    assert {o["outcome"] for o in outcomes} == {"unsupported"}
    assert "ST-023" in rules_with(outcomes, "unsupported")
    assert "declares none of" in outcomes[0]["message"]


def test_answers_that_change_on_replay_fail_the_rules_and_are_no_crash(tmp_path: Path) -> None:
    outcomes = run_suite(
        "tests/features/test_properties.py",
        tmp_path,
        "--memconform-store",
        "tests.bad_store_adapters:moody",
        "-k",
        "transcript",
    )
    assert [o["outcome"] for o in outcomes] == ["failed"]
