"""docs/runtime-guide.md works as written: its minimal runtime is certified
(save-policy/message achieved) by the printed ``memconform run`` command from
the folder holding it, and its worked example runs the save-policy scenarios
from the framework team's own pytest."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_contributing import missing_names

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "runtime-guide.md"


def _guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def _runtime_project(tmp_path: Path) -> Path:
    """The guide's two Python blocks as the files they name, in a folder of their own."""
    blocks = re.findall(r"```python\n(.*?)```", _guide(), re.S)
    assert len(blocks) == 2, "the minimal runtime and the worked example's test file"
    assert blocks[0].startswith('"""myruntime.py:')
    assert blocks[1].startswith('"""tests/test_memconform.py:')
    (tmp_path / "myruntime.py").write_text(blocks[0], encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_memconform.py").write_text(blocks[1], encoding="utf-8")
    return tmp_path


def _env() -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)
           and not k.startswith("PYTEST_")},
        "CI": "true",
    }


def _command(program: str) -> list[str]:
    """The guide's ``program`` command, as printed, run by the script of that
    name installed beside this interpreter (what a team's shell finds)."""
    command = re.search(rf"```sh\n({program} [^\n]+)\n```", _guide())
    assert command, f"the guide shows the {program} command"
    argv = command[1].split()
    return [str(Path(sys.executable).parent / program), *argv[1:]]


def test_every_path_and_module_the_guide_names_exists() -> None:
    """As CONTRIBUTING.md's are checked; class names (``save-policy/message``)
    and the script's schema id hold a ``/`` too and are not paths."""
    not_paths = re.compile(r"save-policy/\w+|memconform\.\w+/\d+")
    missing = [n for n in missing_names(_guide(), ROOT) if not not_paths.fullmatch(n)]
    assert not missing, missing


def test_every_env_member_the_guide_names_exists() -> None:
    source = (ROOT / "memconform" / "harness" / "environment.py").read_text(encoding="utf-8")
    named = set(re.findall(r"`env\.(\w+)", _guide()))
    assert {"model", "tool", "hook", "emit", "ids", "store", "clock", "ledger"} <= named
    missing = [n for n in sorted(named)
               if not re.search(rf"self\.{n}\b|def {n}\(", source)]
    assert not missing, missing


def test_the_guides_runtime_declares_one_policy_and_the_hooks_it_calls(tmp_path: Path) -> None:
    """The declarations the guide describes are the ones its code makes."""
    source = (_runtime_project(tmp_path) / "myruntime.py").read_text(encoding="utf-8")
    assert 'profiles = frozenset({"save-policy"})' in source
    assert 'policies = frozenset({"message"})' in source
    hooks = re.search(r"hooks = frozenset\(\{([^}]*)\}\)", source)
    assert hooks, "the runtime declares its hooks"
    for hook in re.findall(r'"(\w+)"', hooks[1]):
        assert f'env.hook("{hook}"' in source, f"declares {hook} without calling it"
    assert "model_calls" not in source, "no claims"
    assert "new_messages" not in source, "no claims"


@pytest.mark.slow
def test_the_guides_runtime_is_certified_save_policy_message(tmp_path: Path) -> None:
    project = _runtime_project(tmp_path)
    argv = _command("memconform")
    assert argv[1:5] == ["run", "--runtime", "myruntime:make", "--profile"]
    out = argv[argv.index("--out") + 1]
    done = subprocess.run(
        [*argv, "--jobs", "2"],
        capture_output=True, text=True, check=False, cwd=project, env=_env(), timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "runtime classes achieved: save-policy/message" in done.stdout, done.stdout
    results = json.loads((project / out / "results.json").read_text(encoding="utf-8"))
    assert results["header"]["runtime"]["declares"]["policies"] == ["message"]
    classes = {c["name"]: c for c in results["runtime_classes"]}
    assert [n for n, c in classes.items() if c["claimed"]] == ["save-policy/message"]
    assert classes["save-policy/message"]["status"] == "achieved"
    verdicts = {r["id"]: r["verdict"] for r in results["rules"]
                if r["profile"] == "save-policy" and r["id"] != "SP-018"}
    assert set(verdicts.values()) <= {"pass", "unsupported"}, verdicts


@pytest.mark.slow
def test_the_guides_worked_example_runs_from_the_teams_own_pytest(tmp_path: Path) -> None:
    project = _runtime_project(tmp_path)
    done = subprocess.run(
        [*_command("pytest"), "-p", "no:cacheprovider", "-q"],
        capture_output=True, text=True, check=False, cwd=project, env=_env(), timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert re.match(r"\d+ passed, \d+ skipped", summary), summary
