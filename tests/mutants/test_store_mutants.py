"""Every store mutant is rejected by the scenarios of the rules it claims to
break, and the working stores pass every store scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.mutants import store, store_processes
from tests.mutant_harness import rejected_rules, rules_with, run_suite

TARGET = "tests/features/test_store.py"
MUTANTS = [*store.MUTANTS, *store_processes.MUTANTS]
MULTI_PROCESS_MUTANTS = store.MULTI_PROCESS_MUTANTS | store_processes.MULTI_PROCESS_MUTANTS
TIMED_KILLS = frozenset({
    "store-row-by-row", "store-checks-then-row-by-row", "store-cas-checked-by-a-read",
})
"""Mutants the kit has no point inside of: the row-by-row writers (the kills that
catch them fall where timing puts them) and the compare-and-set checked by a read
(racing writers in two processes meet in its gap only as the scheduler lets them),
so a run that misses on a loaded machine gets another try."""
TIMED_RETRIES = 2


def _store_options(name: str | None, tmp_path: Path) -> list[str]:
    if name in MULTI_PROCESS_MUTANTS:
        return ["--memconform-store", f"sqlite:///{tmp_path / 'mutant.db'}"]
    return ["--memconform-store", "memory://"]


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_mutant_is_killed(mutant, tmp_path: Path) -> None:
    outcomes = run_suite(
        TARGET, tmp_path, "--memconform-mutant", mutant.name, *_store_options(mutant.name, tmp_path)
    )
    rejected = rejected_rules(mutant, outcomes)
    missed = sorted(mutant.kills - rejected)
    for n in range(TIMED_RETRIES if mutant.name in TIMED_KILLS else 0):
        if not missed:
            break
        folder = tmp_path / f"again-{n}"
        # caught by kills at times spread over an append (no row point): best
        # effort, its rate is measured in tests/test_process_checks.py
        again = run_suite(
            TARGET, folder, "--memconform-mutant", mutant.name,
            *_store_options(mutant.name, folder), "-m", " or ".join(missed),
        )
        missed = sorted(set(missed) - rejected_rules(mutant, again))
    assert not missed, f"{mutant.name} ({mutant.doc}) survived the scenarios of {missed}"


@pytest.mark.slow
@pytest.mark.parametrize("url", ["memory://", "sqlite"])
def test_working_stores_pass_every_store_scenario(url: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'ok.db'}" if url == "sqlite" else url
    outcomes = run_suite(TARGET, tmp_path, "--memconform-store", store)
    bad = [
        (o["scenario"], o["outcome"], o["message"][:300])
        for o in outcomes
        if o["outcome"] not in ("passed", "unsupported")
    ]
    assert not bad
    assert len(outcomes) >= 50


NAME_MUTANTS = (
    "store-prefix-matched-names", "store-case-folded-names", "store-normalised-names",
    "store-empty-name-defaulted",
)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAME_MUTANTS)
def test_a_name_mutant_fails_the_name_scenarios_and_no_other(name: str, tmp_path: Path) -> None:
    """Namespaces have one width, so a store mixing look-alike names mixes only the
    twins of one scenario: every other store scenario still passes."""
    outcomes = run_suite(
        TARGET, tmp_path, "--memconform-mutant", name, "--memconform-store", "memory://", "-m", ""
    )
    assert rules_with(outcomes, "failed", "error") == {"ST-035"}
    assert rules_with(outcomes, "passed") >= {"ST-001", "ST-009", "ST-027", "ST-031"}


def test_every_must_rule_of_the_store_profile_is_killed() -> None:
    killed = {rule for m in MUTANTS for rule in m.kills}
    musts = {r.id for r in load_catalogue().select(profiles=["store"]) if r.level == "MUST"}
    assert musts - killed == set()
    assert killed - musts == set()
