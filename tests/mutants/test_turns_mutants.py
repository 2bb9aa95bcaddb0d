"""Every ``turns`` mutant is rejected by the scenarios of the rules it claims to
break, every MUST rule of the profile is claimed by some mutant, and the
reference simulator passes the whole profile.

A restart is real (the turns after it run in a fresh process on the same store),
so the mutants of the restart rules (TU-027, TU-028) run against a SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.mutants import Mutant, public_turns, turns
from tests.mutant_harness import rejected_rules, run_suite

MUTANTS = [*turns.MUTANTS, *public_turns.MUTANTS]
TARGET = "tests/features/test_turns.py"
STORE = ("--memconform-store", "memory://")
RESTART_RULES = frozenset({"TU-027", "TU-028"})
"""Rules with a scenario whose runtime restarts (a fresh process: a durable store)."""
RESTART_SCENARIOS = "restart"
"""The ``-k`` expression selecting those scenarios."""


def _store_for(mutant: Mutant, tmp_path: Path) -> tuple[str, str]:
    if mutant.kills & RESTART_RULES:
        return ("--memconform-store", f"sqlite:///{tmp_path / 'mutant.db'}")
    return STORE


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_turns_mutant_is_killed(mutant: Mutant, tmp_path: Path) -> None:
    store = _store_for(mutant, tmp_path)
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", mutant.name, *store)
    rejected = rejected_rules(mutant, outcomes)
    missed = sorted(mutant.kills - rejected)
    assert not missed, f"{mutant.name} ({mutant.doc}) survived the scenarios of {missed}"


@pytest.mark.slow
def test_the_simulator_passes_every_turns_scenario(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, *STORE)
    bad = [(o["scenario"], o["outcome"], o["message"][:300]) for o in outcomes
           if o["outcome"] != "passed"
           and not (o["outcome"] == "unsupported" and RESTART_SCENARIOS in o["scenario"])]
    assert not bad
    assert len(outcomes) >= 90


@pytest.mark.parametrize("name", [
    "turns-counter-never-restarts",
    pytest.param("turns-generator-ignored", marks=pytest.mark.slow),
])
def test_a_real_restart_rejects_the_restart_mutants(name: str, tmp_path: Path) -> None:
    """The turns after a restart run in a fresh process: a counter carried over
    through the store, or ids not from the generator, show on the stored records."""
    mutant = next(m for m in MUTANTS if m.name == name)
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", name,
                         *_store_for(mutant, tmp_path), "-k", RESTART_SCENARIOS)
    assert outcomes
    missed = sorted(mutant.kills - rejected_rules(mutant, outcomes))
    assert not missed, f"{name} survived the restart scenarios of {missed}"


@pytest.mark.slow
def test_the_simulator_passes_the_restart_scenarios(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, "--memconform-store",
                         f"sqlite:///{tmp_path / 'ok.db'}", "-k", RESTART_SCENARIOS)
    assert len(outcomes) == 2
    assert {o["outcome"] for o in outcomes} == {"passed"}


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
