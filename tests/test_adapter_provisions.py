"""No pass rests on what an adapter supplies itself.

The same library (its window is the oldest N, LlamaIndex's defect) is judged
twice: bare, and behind an adapter that takes the newest N itself and declares
``provides = {"window"}``. A rule the bare library fails and the adapted one
passes held only through the adapter, so it must be reported
``adapter-provided``, never ``pass``: its ``rests_on`` in the catalogue has to
name the window. A rule missing that declaration (TU-031 once was) fails here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memconform.reports import load_results

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _verdicts(tmp_path: Path, store: str) -> dict[str, str]:
    out = tmp_path / store
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--out", str(out),
         "--store", f"tests.provision_stores:{store}"],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=900,
        env={**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    results = load_results(out / "results.json")
    return {r.id: r.verdict for r in results.rules if r.subject == "store"}


def test_a_rule_held_only_by_the_adapters_window_is_never_a_pass(tmp_path: Path) -> None:
    bare = _verdicts(tmp_path, "oldest_window")
    adapted = _verdicts(tmp_path, "adapter_window")
    failed_bare = {rule for rule, verdict in bare.items() if verdict == "fail"}
    assert {"ST-003", "TU-031"} <= failed_bare, "the bare library's window must be caught"
    earned_by_adapter = sorted(r for r in failed_bare if adapted[r] == "pass")
    assert earned_by_adapter == [], (
        f"passes that only the adapter's window made: {earned_by_adapter}; "
        "their rules must rest on the window (rests_on in spec/)"
    )
    assert {r for r in failed_bare if adapted[r] == "adapter-provided"} >= {"ST-003", "TU-031"}
    # what the library does itself is judged the same behind the adapter (a rule
    # resting on the window is adapter-provided there even where the bare
    # library happened to pass it: ST-004's zero window)
    kept = {r for r, v in bare.items() if v == "pass"}
    assert {r for r in kept if adapted[r] not in ("pass", "adapter-provided")} == set()


def test_a_divergence_the_replay_does_not_repeat_is_charged_to_the_rule_it_broke(
    tmp_path: Path,
) -> None:
    """Hypothesis reports that it could not repeat the failure (here a
    FlakyFailure; a FlakyStrategyDefinition, which carries no divergence, is
    what LangGraph's SqliteStore gives); the kit charges the rules of the first
    divergence it saw (the facts listing, ST-028), not every rule the generated
    comparison covers."""
    verdicts = _verdicts(tmp_path, "first_listing_reversed")
    failed = {rule for rule, verdict in verdicts.items() if verdict == "fail"}
    assert failed == {"ST-028"}, failed
