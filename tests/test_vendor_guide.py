"""docs/vendor-guide.md works as written: its adapter template is certified
(core achieved) by ``memconform run`` from the folder holding it, and its
worked example runs the store scenarios from the vendor's own pytest."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "vendor-guide.md"


def _vendor_project(tmp_path: Path) -> Path:
    """The guide's two Python blocks as the files they name, in a folder of their own."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 2, "the template and the worked example's test file"
    (tmp_path / "mystore.py").write_text(blocks[0], encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_memconform.py").write_text(blocks[1], encoding="utf-8")
    return tmp_path


def _env() -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)
           and not k.startswith("PYTEST_")},
        "CI": "true",
    }


@pytest.mark.slow
def test_the_guides_template_is_certified_core_achieved(tmp_path: Path) -> None:
    project = _vendor_project(tmp_path)
    command = re.search(r"```sh\n(memconform run [^\n]+)\n```", GUIDE.read_text("utf-8"))
    assert command, "the guide shows the certify command"
    argv = command[1].split()
    assert argv[:4] == ["memconform", "run", "--store", "mystore:make"]
    done = subprocess.run(
        [str(Path(sys.executable).parent / "memconform"), *argv[1:], "--jobs", "2"],
        capture_output=True, text=True, check=False, cwd=project, env=_env(), timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((project / "report" / "results.json").read_text(encoding="utf-8"))
    assert results["conformance"]["claimed"] == ["core"]
    assert results["conformance"]["achieved"] == ["core"]


def _pytest_command() -> list[str]:
    """The guide's pytest command, as printed, run by the ``pytest`` script
    installed beside this interpreter (what a vendor's shell finds)."""
    command = re.search(r"```sh\n(pytest [^\n]+)\n```", GUIDE.read_text("utf-8"))
    assert command, "the guide shows the pytest command"
    argv = command[1].split()
    return [str(Path(sys.executable).parent / "pytest"), *argv[1:], "-p", "no:cacheprovider"]


@pytest.mark.slow
def test_the_guides_worked_example_runs_from_the_vendors_own_pytest(tmp_path: Path) -> None:
    """The bare ``pytest`` script, not ``python -m pytest``: the folder it is run
    from is on the import path of pytest and of the processes the kit starts."""
    project = _vendor_project(tmp_path)
    done = subprocess.run(
        [*_pytest_command(), "-q"],
        capture_output=True, text=True, check=False, cwd=project, env=_env(), timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert re.match(r"\d+ passed, \d+ skipped", summary), summary


@pytest.mark.slow
def test_a_failure_in_the_vendors_own_pytest_names_the_rule(tmp_path: Path) -> None:
    """A store whose window returns the oldest messages fails, and pytest's own
    output names the rule the failure breaks."""
    project = _vendor_project(tmp_path)
    store = project / "mystore.py"
    text = store.read_text(encoding="utf-8")
    broken = text.replace("found = found[-limit:] if limit else []", "found = found[:limit]")
    assert broken != text
    store.write_text(broken, encoding="utf-8")
    done = subprocess.run(
        [*_pytest_command(), "-q", "-m", "ST-003"],
        capture_output=True, text=True, check=False, cwd=project, env=_env(), timeout=900,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    failures = done.stdout[done.stdout.find("FAILURES"):]
    assert "ST-003" in failures, failures[-3000:]
