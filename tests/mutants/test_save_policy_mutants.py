"""Every save-policy mutant is rejected by the scenarios of the rules it claims
to break, and the reference simulator passes every save-policy scenario.

The mutants that only a real kill exposes (batches held in memory until the run
stops, a round split over two writes) run against a SQLite file: the kill
scenarios need a store that outlives the killed process. So does the mutant
keeping a suspended run in process memory: only on a durable store is the
resume run in a second fresh process."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.mutants import get_mutant, public_api, save_policy
from tests.mutant_harness import rejected_rules, run_suite

MUTANTS = [*save_policy.MUTANTS, *public_api.MUTANTS]

TARGET = "tests/features/test_save_policy.py"
STORE = ("--memconform-store", "memory://")
KILL_MUTANTS = ("sp-message-flushes-at-stop", "sp-turn-flushes-at-stop", "sp-turn-splits-round")
"""Mutants judged by the kill scenarios (features/save-policy/kills.feature)."""
KILL_SCENARIOS = "killed"
"""The ``-k`` expression selecting the kill scenarios."""
KILL_RULES = frozenset({"SP-005", "SP-006", "SP-008", "SP-009", "SP-010", "SP-011", "SP-012",
                        "SP-025"})
"""The rules the kill scenarios decide."""


FRESH_RESUME_MUTANTS = ("sp-resume-from-process-memory",)
"""Mutants only a resume in a second fresh process exposes (a durable store)."""


def _store_for(name: str, tmp_path: Path) -> tuple[str, str]:
    if name in KILL_MUTANTS or name in FRESH_RESUME_MUTANTS:
        return ("--memconform-store", f"sqlite:///{tmp_path / 'mutant.db'}")
    return STORE


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_mutant_is_killed(mutant, tmp_path: Path) -> None:
    store = _store_for(mutant.name, tmp_path)
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", mutant.name, *store)
    rejected = rejected_rules(mutant, outcomes)
    missed = sorted(mutant.kills - rejected)
    assert not missed, f"{mutant.name} ({mutant.doc}) survived the scenarios of {missed}"


@pytest.mark.slow
def test_the_simulator_passes_every_save_policy_scenario(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, *STORE)
    bad = [(o["scenario"], o["outcome"], o["message"][:300]) for o in outcomes
           if o["outcome"] != "passed"
           and not (o["outcome"] == "unsupported" and KILL_SCENARIOS in o["scenario"])]
    assert not bad
    assert len(outcomes) >= 100


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=() if name == "sp-turn-flushes-at-stop" else pytest.mark.slow)
    for name in KILL_MUTANTS
])
def test_the_kill_scenarios_reject_a_runtime_a_kill_exposes(name: str, tmp_path: Path) -> None:
    """A run really killed in a child process: the thread read back by a fresh
    process shows the batches a runtime held in memory, or split, through the
    checks of the rules the mutant claims."""
    mutant = get_mutant(name)
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", name,
                         *_store_for(name, tmp_path), "-k", KILL_SCENARIOS)
    assert outcomes
    assert all(KILL_SCENARIOS in o["scenario"] for o in outcomes)
    assert mutant.kills & KILL_RULES
    missed = sorted((mutant.kills & KILL_RULES) - rejected_rules(mutant, outcomes))
    assert not missed, f"{name} survived the kill scenarios of {missed}"


def test_a_resume_in_a_fresh_process_rejects_pending_state_kept_in_memory(
    tmp_path: Path,
) -> None:
    """On SQLite the resume runs in a second fresh process, given the caller's
    continuation: a runtime holding the suspended run in process memory has
    nothing to resume there, and SP-028's own checks say so."""
    name = "sp-resume-from-process-memory"
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", name,
                         *_store_for(name, tmp_path), "-k", "resumed")
    assert outcomes
    assert "SP-028" in rejected_rules(get_mutant(name), outcomes)


@pytest.mark.slow
def test_the_simulator_passes_the_kill_scenarios(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, "--memconform-store",
                         f"sqlite:///{tmp_path / 'ok.db'}", "-k", KILL_SCENARIOS)
    assert len(outcomes) == 8
    assert {o["outcome"] for o in outcomes} == {"passed"}


def test_every_must_rule_of_the_save_policy_profile_is_killed() -> None:
    rules = load_catalogue().select(profiles=["save-policy"])
    killed = {rule for m in MUTANTS for rule in m.kills}
    musts = {r.id for r in rules if r.level == "MUST"}
    assert musts - killed == set()
    assert killed <= {r.id for r in rules}


def test_mutant_names_are_unique_and_documented() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    assert all(m.doc and m.profile == "save-policy" for m in MUTANTS)


def test_the_public_api_mutants_use_no_simulator_code() -> None:
    """A vendor's runtime sees the kit only through Runtime and the environment."""
    source = Path(public_api.__file__).read_text(encoding="utf-8")
    assert "memconform.simulator" not in source
