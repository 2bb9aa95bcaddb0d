"""Every ``persisted-state`` mutant is rejected by the scenarios of the rules it
claims to break, every MUST rule of the profile is claimed by some mutant, and
the reference simulator passes the whole profile.

Mutants that break the rules judged by a real kill or a fresh process run
against a SQLite file, because those scenarios need a store that outlives its
process; the others run against ``memory://``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.mutants import Mutant, persisted_state, public_jobs
from tests.mutant_harness import rejected_rules, run_suite

MUTANTS = [*persisted_state.MUTANTS, *public_jobs.MUTANTS]
TARGET = "tests/features/test_persisted_state.py"
DURABLE_RULES = frozenset({"PS-009", "PS-031", "PS-033"})
"""Rules with a scenario that needs a store outliving its process (a fresh process
reads it, or a resume follows a kill)."""
KILLED_RULES = frozenset({"PS-001", "PS-005", "PS-006", "PS-007", "PS-008", "PS-009", "PS-025"})
"""Rules with a scenario whose job is really killed (needs a durable store)."""
HAS_SQLITE = importlib.util.find_spec("memconform.adapters.sqlite") is not None


def _store_for(rules: frozenset[str], tmp_path: Path) -> tuple[str, str]:
    if rules & (DURABLE_RULES | KILLED_RULES):
        if not HAS_SQLITE:
            pytest.skip("needs a durable store: memconform.adapters.sqlite is not available")
        return ("--memconform-store", f"sqlite:///{tmp_path / 'mutant.db'}")
    return ("--memconform-store", "memory://")


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_persisted_state_mutant_is_killed(mutant: Mutant, tmp_path: Path) -> None:
    store = _store_for(mutant.kills, tmp_path)
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", mutant.name, *store)
    rejected = rejected_rules(mutant, outcomes)
    missed = sorted(mutant.kills - rejected)
    assert not missed, f"{mutant.name} ({mutant.doc}) survived the scenarios of {missed}"


@pytest.mark.slow
def test_the_simulator_passes_every_persisted_state_scenario_in_memory(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, "--memconform-store", "memory://")
    bad = [(o["scenario"], o["outcome"], o["message"][:300]) for o in outcomes
           if o["outcome"] not in ("passed", "unsupported")]
    assert not bad
    unsupported = {r for o in outcomes if o["outcome"] == "unsupported" for r in o["rules"]}
    assert unsupported <= DURABLE_RULES | KILLED_RULES
    assert len(outcomes) >= 40


@pytest.mark.slow
@pytest.mark.skipif(not HAS_SQLITE, reason="memconform.adapters.sqlite is not available")
def test_the_simulator_passes_every_persisted_state_scenario_on_sqlite(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, "--memconform-store", f"sqlite:///{tmp_path / 'ok.db'}")
    bad = [(o["scenario"], o["outcome"], o["message"][:300]) for o in outcomes
           if o["outcome"] != "passed"]
    assert not bad


def test_every_must_rule_of_the_persisted_state_profile_is_killed() -> None:
    rules = load_catalogue().select(profiles=["persisted-state"])
    killed = {rule for m in MUTANTS for rule in m.kills}
    musts = {r.id for r in rules if r.level == "MUST"}
    assert musts - killed == set()
    assert killed <= {r.id for r in rules}


def test_persisted_state_mutant_names_are_unique_and_documented() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    assert all(n.startswith("ps-") for n in names)
    assert all(m.doc and m.profile == "persisted-state" and m.kind in ("store", "runtime")
               for m in MUTANTS)


def test_the_public_jobs_mutant_uses_no_simulator_code() -> None:
    """The module-globals runtime sees the kit only through the public API."""
    source = Path(public_jobs.__file__).read_text(encoding="utf-8")
    assert "memconform.simulator" not in source
