"""Second-condition pairs confirmed by mutants that break a rule only under that condition.

Each mutant below breaks one rule only when a second condition of
``spec/second-conditions.toml`` holds (a guardrail fails or blocks, the store
refuses an append while the run streams). For each, the rows tagged with the
rule and ``@with-<condition>`` reject the mutant through the rule's own check,
and the rule's rows without that tag let it pass: the pair's row is what finds
the bug.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.mutants import get_mutant
from memconform.second_conditions import load_second_conditions
from tests.mutant_harness import killed_by_own_checks, rules_with, run_suite

TARGET = "tests/features/test_save_policy.py"
STORE = ("--memconform-store", "memory://")

PAIRS = [
    ("sp-run-guardrail-fails-open", "SP-003", "guardrail"),
    ("sp-run-drops-output-block", "SP-010", "guardrail"),
    ("sp-guardrail-failure-recorded-twice", "SP-013", "guardrail"),
    ("sp-guardrail-failure-record-empty", "SP-014", "guardrail"),
    ("sp-streamed-refusal-retried", "SP-029", "store-refusal"),
]
"""(mutant, the rule it breaks, the only condition under which it breaks it)."""


def test_every_pair_is_listed_and_claimed() -> None:
    table = load_second_conditions()
    for name, rule, condition in PAIRS:
        assert condition in table.rules[rule], (rule, condition)
        assert get_mutant(name).kills == {rule}, name


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rule", "condition"), PAIRS, ids=[p[0] for p in PAIRS])
def test_only_the_rows_with_the_condition_reject_the_mutant(
    name: str, rule: str, condition: str, tmp_path: Path
) -> None:
    tag = f"with-{condition}"
    under = run_suite(TARGET, tmp_path / "under", "--memconform-mutant", name, *STORE,
                      "-m", f"{rule} and {tag}")
    assert under, f"no row of {rule} is tagged {tag}"
    assert rule in killed_by_own_checks(under), f"{name} survived the {tag} rows of {rule}"
    without = run_suite(TARGET, tmp_path / "without", "--memconform-mutant", name, *STORE,
                        "-m", f"{rule} and not {tag}")
    assert without, f"every row of {rule} is tagged {tag}"
    failing = [(o["scenario"], o["message"][:200]) for o in without
               if rule in o["rules"] and o["outcome"] in ("failed", "error")]
    assert rule not in rules_with(without, "failed", "error"), failing
