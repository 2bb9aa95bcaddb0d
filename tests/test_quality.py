"""The package stays clean under ruff and mypy --strict (configured in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (it comes with the [test] extra)")
    return found


def test_ruff_is_clean() -> None:
    proc = subprocess.run(
        [_tool("ruff"), "check", "memconform", "tests", "bench"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_strict_is_clean_on_the_package() -> None:
    proc = subprocess.run(
        [_tool("mypy")], cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
