"""Every ``turns`` mutant is rejected by the scenarios of the rules it claims to
break, every MUST rule of the profile is claimed by some mutant, and the
reference simulator passes the whole profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.mutants import Mutant, public_turns, turns
from tests.mutant_harness import rejected_rules, run_suite

MUTANTS = [*turns.MUTANTS, *public_turns.MUTANTS]
TARGET = "tests/features/test_turns.py"
STORE = ("--memconform-store", "memory://")


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_turns_mutant_is_killed(mutant: Mutant, tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", mutant.name, *STORE)
    rejected = rejected_rules(mutant, outcomes)
    missed = sorted(mutant.kills - rejected)
    assert not missed, f"{mutant.name} ({mutant.doc}) survived the scenarios of {missed}"


@pytest.mark.slow
def test_the_simulator_passes_every_turns_scenario(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, *STORE)
    bad = [(o["scenario"], o["outcome"], o["message"][:300]) for o in outcomes
           if o["outcome"] != "passed"]
    assert not bad
    assert len(outcomes) >= 90


def test_every_must_rule_of_the_turns_profile_is_killed() -> None:
    rules = load_catalogue().select(profiles=["turns"])
    killed = {rule for m in MUTANTS for rule in m.kills}
    musts = {r.id for r in rules if r.level == "MUST"}
    assert musts - killed == set()
    assert killed <= {r.id for r in rules}


def test_turns_mutant_names_are_unique_and_documented() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    assert all(m.doc and m.profile == "turns" and m.kind in ("store", "runtime")
               for m in MUTANTS)


def test_the_public_turns_mutants_use_no_simulator_code() -> None:
    """A vendor's runtime sees the kit only through Runtime and the environment."""
    source = Path(public_turns.__file__).read_text(encoding="utf-8")
    assert "memconform.simulator" not in source
