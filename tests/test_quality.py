"""The package stays clean under ruff and mypy --strict (configured in
pyproject.toml), and no module of it grows past 800 lines."""

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


MAX_MODULE_LINES = 800
"""A module longer than this is split by what it does (CONTRIBUTING.md)."""


def long_modules(root: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """The modules under ``root`` longer than ``limit`` lines, with their lengths."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found.append(f"{path.relative_to(root.parent)}: {lines} lines")
    return found


def test_no_module_of_the_package_exceeds_800_lines() -> None:
    assert long_modules(ROOT / "memconform") == []


def test_the_length_check_can_fail(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (package / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert long_modules(package) == [f"pkg/long.py: {MAX_MODULE_LINES + 1} lines"]
