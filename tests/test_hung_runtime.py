"""A runtime whose ``execute`` never returns costs a run one execute bound, not
one per scenario: the in-process scenarios stop calling it, and the scenarios
that run it in a child process start no child once it has hung."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memconform.harness import answers
from memconform.harness.proxy import AdapterTimeoutError
from memconform.steps import child_runs

HANGING = '''\
import time

from memconform.simulator.runtime import Simulator


class Hanging(Simulator):
    def execute(self, script, env):
        time.sleep(3600)


def make():
    return Hanging()
'''


def test_no_child_is_started_for_a_runtime_that_hung(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answers._LIMIT, "seconds", 30.0)
    monkeypatch.setattr(answers._LIMIT, "hung", None)
    assert child_runs._bounded_runtime(["--runtime", "x:make"]) == ["--execute-limit", "30"]
    assert child_runs._bounded_runtime([]) == []  # the reference simulator: unbounded
    child_runs._note_hang("execute did not return within 30 s", ["--runtime", "x:make"])
    with pytest.raises(AdapterTimeoutError, match="not called"):
        child_runs._bounded_runtime(["--runtime", "x:make"])
    with pytest.raises(AdapterTimeoutError):
        child_runs.run_fresh("memory://", options=["--runtime", "x:make"])


@pytest.mark.slow
def test_a_hung_runtime_ends_the_run_with_exit_3_naming_execute(tmp_path: Path) -> None:
    (tmp_path / "hanging.py").write_text(HANGING, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--runtime", "hanging:make",
         "--timeout", "2", "--out", "out"],
        capture_output=True, text=True, check=False, cwd=tmp_path, env={**env, "CI": "true"},
        timeout=240,  # a run waiting on every child would take a quarter of an hour
    )
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
    assert "execute" in done.stdout
    assert "the store" not in done.stdout.split("short summary")[-1].split("\n")[1]
