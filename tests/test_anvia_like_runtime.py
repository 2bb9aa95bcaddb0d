"""A runtime that behaves as the Anvia runtime was observed to, written on the
public API only, is not failed by the save-policy rules the observations bear on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.mutant_harness import run_suite

OBSERVED_RULES = (
    "SP-009", "SP-010", "SP-011", "SP-013", "SP-014", "SP-024", "SP-025", "SP-028", "SP-030",
    "SP-031",
)


def test_the_anvia_like_runtime_uses_no_simulator_code() -> None:
    tree = ast.parse(Path(__file__).with_name("anvia_like_runtime.py").read_text("utf-8"))
    modules = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m.startswith("memconform.simulator") for m in modules)


@pytest.mark.slow
def test_the_anvia_like_runtime_passes_the_rules_the_observations_bear_on(
    tmp_path: Path,
) -> None:
    """On SQLite, so that the rows needing a durable store (the kill scenarios) run too."""
    outcomes = run_suite(
        "tests/features/test_save_policy.py", tmp_path,
        "--memconform-store", f"sqlite:///{tmp_path / 'anvia.db'}",
        "--memconform-runtime", "tests.anvia_like_runtime:anvia_like_runtime",
        "-m", " or ".join(OBSERVED_RULES),
    )
    assert outcomes
    assert {rule for o in outcomes for rule in o["rules"]} >= set(OBSERVED_RULES)
    failed = [(o["nodeid"], o.get("message")) for o in outcomes if o["outcome"] != "passed"]
    assert failed == []
