"""Run a part of the conformance suite in a child pytest and read its outcomes.

Used by the mutant tests: each runs the features of one profile against one
mutant and checks which rules its scenarios reject.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, get_mutant
from memconform.outcome_log import read_outcomes

ROOT = Path(__file__).resolve().parent.parent


def run_suite(target: str, tmp_path: Path, *options: str) -> list[dict[str, Any]]:
    """Run pytest on ``target`` (a test file) with ``options``; return the outcomes.

    The child's exit code is not checked: failing scenarios are the point.
    Both subjects are judged unless ``options`` name one (``--memconform-subject``).
    A child that wrote no outcomes (a crash of the kit) fails loudly. With
    ``--memconform-mutant NAME`` and no ``-m`` of its own, only the scenarios tagged with
    the rules the mutant claims to break are run: that is what the mutant test
    asserts, and it keeps the mutant matrix fast.
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    if "--memconform-subject" not in options:
        # judge what the scenarios of both subjects decide, as the mutant tests
        # assert: a store option alone would deselect every runtime scenario
        options = (*options, "--memconform-subject", "both")
    if "--memconform-mutant" in options and "-m" not in options:
        kills = get_mutant(options[options.index("--memconform-mutant") + 1]).kills
        options = (*options, "-m", " or ".join(sorted(kills)))
    out = tmp_path / "outcomes.json"
    proc = subprocess.run(
        [
            sys.executable, "-m", "pytest", target, "-q", "-p", "no:cacheprovider",
            "-p", "no:randomly", "--memconform-outcomes", str(out), *options,
        ],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    if not out.exists():
        raise AssertionError(
            f"the suite wrote no outcomes:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
    return read_outcomes(out).outcomes


def rules_with(outcomes: list[dict[str, Any]], *kinds: str) -> set[str]:
    """The rule ids tagged on scenarios whose outcome is one of ``kinds``."""
    return {rule for o in outcomes if o["outcome"] in kinds for rule in o["rules"]}


def killed_by_own_checks(outcomes: list[dict[str, Any]]) -> set[str]:
    """The rules a check naming them failed (a crash or a failed premise of the
    row does not count: it is no evidence that the rule's own check can fail)."""
    return {
        rule for o in outcomes
        if o["outcome"] == "failed" and o.get("decided_by") == "check" for rule in o["rules"]
    }


def rejected_rules(mutant: Mutant, outcomes: list[dict[str, Any]]) -> set[str]:
    """The rules the suite rejected ``mutant`` on: a runtime mutant only through
    the rules' own checks; a store mutant also through adapter errors."""
    if mutant.kind == "runtime":
        return killed_by_own_checks(outcomes)
    return rules_with(outcomes, "failed", "error")
