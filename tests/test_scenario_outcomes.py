"""How the plugin records a scenario's outcome: ``unsupported`` and
``inconclusive`` are told apart from a plain skip by the reason's prefix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCENARIOS = '''
import pytest

from memconform.steps.common import inconclusive, unsupported


@getattr(pytest.mark, "ST-001")
def test_claimed_but_not_exercised():
    inconclusive("no kill landed while an append was in flight (0 of 5)")


@getattr(pytest.mark, "ST-002")
def test_not_declared():
    unsupported("the store does not declare the capability 'errors'")


@getattr(pytest.mark, "ST-003")
def test_plain_skip():
    pytest.skip("needs a server")
'''


def test_inconclusive_and_unsupported_are_recorded_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "test_scenarios.py").write_text(SCENARIOS, encoding="utf-8")
    out = tmp_path / "outcomes.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "test_scenarios.py", "-q", "-p", "no:cacheprovider",
         "--memconform-outcomes", str(out)],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    recorded = {o["rules"][0]: (o["outcome"], o["message"]) for o in json.loads(out.read_text())}
    assert recorded == {
        "ST-001": ("inconclusive", "no kill landed while an append was in flight (0 of 5)"),
        "ST-002": ("unsupported", "the store does not declare the capability 'errors'"),
        "ST-003": ("skipped", "needs a server"),
    }
