"""The modules that decide verdicts stay readable: no function in them exceeds
cyclomatic complexity 15 (ruff's mccabe rule C901), and the check can fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import memconform.reports.judgement
import memconform.reports.verdict

MAX_COMPLEXITY = 15
DECIDING = (
    Path(memconform.reports.verdict.__file__),
    Path(memconform.reports.judgement.__file__),
)


def too_complex(*paths: Path) -> list[str]:
    """The functions of ``paths`` above :data:`MAX_COMPLEXITY`, as ruff reports them."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "C901",
         "--config", f"lint.mccabe.max-complexity={MAX_COMPLEXITY}",
         "--output-format", "concise", "--no-cache", *map(str, paths)],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return [line for line in done.stdout.splitlines() if "C901" in line]


def test_no_function_that_decides_verdicts_is_too_complex() -> None:
    assert too_complex(*DECIDING) == []


def test_a_planted_complex_function_is_found(tmp_path: Path) -> None:
    branches = "\n".join(f"    if x == {n}:\n        return {n}" for n in range(MAX_COMPLEXITY))
    planted = tmp_path / "planted.py"
    planted.write_text(f"def tangled(x: int) -> int:\n{branches}\n    return -1\n",
                       encoding="utf-8")
    found = too_complex(planted)
    assert len(found) == 1
    assert "`tangled` is too complex (16 > 15)" in found[0]
