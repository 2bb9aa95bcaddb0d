"""What ``memconform run`` says on the console, driven through the command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _memconform(tmp_path: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--out", str(tmp_path / "report"), *args],
        capture_output=True, text=True, check=False, cwd=cwd, timeout=600,
        env={**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)},
    )


def test_a_misspelt_capability_is_an_adapter_error_naming_the_known_ones(
    tmp_path: Path,
) -> None:
    done = _memconform(
        tmp_path, "--store", "tests.bad_store_adapters:misspelt_capability", "--rule", "ST-001"
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "unknown capability 'commit-flag'" in done.stderr
    assert "(known: commit-flags, errors, turn-records" in done.stderr
