"""Every ``strict-write`` mutant is rejected by the scenarios of the rules it claims
to break, every MUST rule of the profile is claimed by some mutant, and the
reference simulator passes the whole profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.mutants import Mutant
from memconform.mutants.strict_write import MUTANTS
from tests.mutant_harness import rejected_rules, run_suite

TARGET = "tests/features/test_strict_write.py"
STORE = ("--memconform-store", "memory://")


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_strict_write_mutant_is_killed(mutant: Mutant, tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", mutant.name, *STORE)
    rejected = rejected_rules(mutant, outcomes)
    missed = sorted(mutant.kills - rejected)
    assert not missed, f"{mutant.name} ({mutant.doc}) survived the scenarios of {missed}"


@pytest.mark.slow
def test_the_simulator_passes_every_strict_write_scenario(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, *STORE)
    bad = [(o["scenario"], o["outcome"], o["message"][:300]) for o in outcomes
           if o["outcome"] != "passed"]
    assert not bad
    assert len(outcomes) >= 45


def test_every_must_rule_of_the_strict_write_profile_is_killed() -> None:
    rules = load_catalogue().select(profiles=["strict-write"])
    killed = {rule for m in MUTANTS for rule in m.kills}
    musts = {r.id for r in rules if r.level == "MUST"}
    assert musts - killed == set()
    assert killed <= {r.id for r in rules}


def test_strict_write_mutant_names_are_unique_and_documented() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    assert all(n.startswith("sw-") for n in names)
    assert all(m.doc and m.profile == "strict-write" and m.kind in ("store", "runtime")
               for m in MUTANTS)


@pytest.mark.slow
def test_a_runtime_breaking_only_sw_015_fails_only_sw_015(tmp_path: Path) -> None:
    """Rows tagged with SW-015 and other rules: only SW-015's own check fails;
    the row's other rules keep the verdict of their own checks."""
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", "sw-failed-turn-replies", *STORE)
    failed = {r for o in outcomes if o["outcome"] != "passed" for r in o["rules"]}
    assert failed == {"SW-015"}
    shared = {o["nodeid"] for o in outcomes if "SW-015" in o["rules"]}
    passed_beside = {r for o in outcomes if o["nodeid"] in shared and o["outcome"] == "passed"
                     for r in o["rules"]}
    assert {"SW-007", "SW-008", "SW-010", "SW-014", "SW-029"} <= passed_beside
