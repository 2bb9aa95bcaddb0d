"""Every check can fail: the mutant catalogue covers every MUST rule, and every
SHOULD rule of a runtime.

The per-profile mutant tests (tests/mutants/) run the suite against each mutant
and prove its ``kills``; this test checks the catalogue as a whole.
"""

from __future__ import annotations

from memconform.catalogue import load_catalogue
from memconform.mutants import all_mutants

KILLED_ELSEWHERE = {
    "ST-032": "tests/test_sqlite_store.py kills a store that forgets on reopen",
    "ST-033": "tests/test_sqlite_store.py kills a store that interleaves concurrent batches",
    "ST-034": "tests/test_sqlite_store.py kills a store that half-writes before a SIGKILL",
}
"""MUST rules whose mutants need several processes; the named test proves them."""


def test_every_must_rule_is_killed_by_some_mutant() -> None:
    killed = {rule for mutant in all_mutants().values() for rule in mutant.kills}
    must = {r.id for r in load_catalogue() if r.level == "MUST"}
    missing = sorted(must - killed - set(KILLED_ELSEWHERE))
    assert missing == [], f"MUST rules no mutant kills: {missing}"


def test_every_must_and_should_runtime_rule_is_killed_by_some_mutant() -> None:
    """The runtime mutant tests credit a kill only to a rule whose own check failed
    (tests/mutant_harness.py: killed_by_own_checks)."""
    killed = {rule for mutant in all_mutants().values() for rule in mutant.kills}
    runtime = {r.id for r in load_catalogue()
               if r.subject == "runtime" and r.level in ("MUST", "SHOULD")}
    assert sorted(runtime - killed) == []


def test_mutants_are_well_formed() -> None:
    ids = load_catalogue().ids
    for name, mutant in all_mutants().items():
        assert mutant.name == name
        assert mutant.kind in {"store", "runtime"}, name
        assert mutant.doc, name
        assert "\n" not in mutant.doc.strip(), name
        assert mutant.kills <= ids, f"{name} names unknown rules {sorted(mutant.kills - ids)}"
        assert mutant.kills, f"{name} kills nothing"
