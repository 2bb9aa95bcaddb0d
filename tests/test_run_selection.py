"""What ``memconform run --store`` judges and which scenarios it runs, and the
progress it shows on a terminal, driven through the command."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memconform import steps
from memconform.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parent.parent
SUITE = [
    str(Path(steps.__file__).resolve().parent / "suite.py"),
    str(Path(steps.__file__).resolve().parent / "generated_checks.py"),
]
RAN = re.compile(r"\((\d+) scenarios? run\)")
PROGRESS = re.compile(r"\r\x1b\[Kmemconform: \[ *(\d+)/(\d+)\]")


def _env(**changes: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, value in changes.items():
        env.pop(name, None)
        if value is not None:
            env[name] = value
    return env


def _memconform(out: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--out", str(out), *args],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=900, env=env,
    )


def _collected(subject: str, tmp_path: Path) -> tuple[int, int]:
    """(scenarios the suite's pytest would run, scenarios it deselects) for a
    session judging ``subject``, collected only."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *SUITE, "--collect-only", "-q",
         "-p", "no:cacheprovider", "-p", "memconform.steps.plugin", "-c", os.devnull,
         "--rootdir", str(tmp_path), "--memconform-subject", subject],
        capture_output=True, text=True, check=False, cwd=tmp_path, timeout=600, env=_env(),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    chosen = re.search(r"(\d+)(?:/(\d+))? tests? collected", last)
    assert chosen is not None, last
    deselected = re.search(r"(\d+) deselected", last)
    return int(chosen.group(1)), int(deselected.group(1)) if deselected else 0


def _executed(log: Path) -> tuple[int, int]:
    """(scenarios run, scenarios deselected) from the last line of pytest.log."""
    last = log.read_text(encoding="utf-8").strip().splitlines()[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", last)}
    ran = sum(counts.get(k, 0) for k in ("passed", "failed", "skipped", "error", "errors",
                                         "xfailed", "xpassed"))
    return ran, counts.get("deselected", 0)


def _scenarios_of(results: dict[str, Any], subject: str) -> set[str]:
    return {
        scenario["nodeid"]
        for rule in results["rules"] if rule["subject"] == subject
        for scenario in rule.get("scenarios") or []
    }


@pytest.mark.slow
def test_a_store_run_judges_every_store_rule_and_runs_only_their_scenarios(
    tmp_path: Path,
) -> None:
    done = _memconform(tmp_path / "report", "--store", "memory://", env=_env(CI="true"))
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8"))
    verdicts = {rule["id"]: rule["verdict"] for rule in results["rules"]}
    store_rules = [r.id for r in load_catalogue() if r.subject == "store"]
    assert len(store_rules) >= 46  # store rules sit in every profile, not only `store`
    assert {r for r in store_rules if verdicts[r] == "not-scored"} == set()
    assert {verdicts[r.id] for r in load_catalogue() if r.subject == "runtime"} == {"not-scored"}

    found = RAN.search(done.stdout)
    assert found is not None, done.stdout
    ran, deselected = _executed(tmp_path / "report" / "pytest.log")
    assert int(found.group(1)) == ran
    # Every scenario that ran is evidence of a store rule: no runtime-only one ran.
    assert len(_scenarios_of(results, "store")) == ran
    # ... and the runtime-only ones are exactly those left out, so the run is
    # shorter than the whole suite by every one of them.
    everything, _ = _collected("both", tmp_path)
    judged, left_out = _collected("store", tmp_path)
    assert (ran, deselected) == (judged, left_out)
    assert ran + deselected == everything
    assert deselected > ran  # most of the suite judges runtimes only


def test_a_store_run_narrowed_to_a_runtime_profile_runs_only_that_profiles_store_scenarios(
    tmp_path: Path,
) -> None:
    """``--profile save-policy`` on a store run: the profile's one store rule is
    judged, and only its scenarios run, not the profile's runtime scenarios."""
    done = _memconform(
        tmp_path / "report", "--store", "memory://", "--profile", "save-policy",
        env=_env(CI="true"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8"))
    judged = {r["id"] for r in results["rules"] if r["verdict"] != "not-scored"}
    assert judged == {
        r.id for r in load_catalogue() if r.profile == "save-policy" and r.subject == "store"
    }
    ran, deselected = _executed(tmp_path / "report" / "pytest.log")
    assert ran == len(_scenarios_of(results, "store")) > 0
    assert deselected > 0
    assert f"({ran} scenario{'s' if ran != 1 else ''} run)" in done.stdout


def test_a_quick_run_leaves_out_the_stress_rows_and_the_generated_checks(
    tmp_path: Path,
) -> None:
    """``--quick`` with ``--rule ST-001``: the rule's ordinary rows run, its
    10,000-message row and every generated check do not, and the report says so."""
    done = _memconform(
        tmp_path / "report", "--store", "memory://", "--quick", "--rule", "ST-001",
        env=_env(CI="true"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "quick: stress-size rows and generated checks left out" in done.stdout
    results = json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8"))
    assert results["header"]["mode"] == "quick"
    rule = next(r for r in results["rules"] if r["id"] == "ST-001")
    assert rule["verdict"] == "pass"
    ran = {s["nodeid"] for s in rule["scenarios"]}
    assert any("[1000]" in nodeid for nodeid in ran)
    assert not any("[10000]" in nodeid or "answers_like_the_reference" in nodeid
                   for nodeid in ran)


def test_certify_refuses_quick(tmp_path: Path) -> None:
    done = _memconform(tmp_path / "report", "--certify", "--quick", env=_env(CI="true"))
    assert done.returncode == 5
    assert "--quick" in done.stderr


def _on_a_terminal(out: Path, *args: str, env: dict[str, str]) -> tuple[int, str]:
    """Run the command with its standard output and error on a pseudo-terminal;
    its exit code and everything it wrote there."""
    main, secondary = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memconform", "run", "--out", str(out), *args],
            stdin=subprocess.DEVNULL, stdout=secondary, stderr=secondary, cwd=ROOT, env=env,
        )
    finally:
        os.close(secondary)
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal's other side is closed: the command ended
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(main)
    return proc.wait(timeout=600), b"".join(chunks).decode("utf-8", "replace")


SMALL = ("--store", "memory://", "--rule", "SP-018")


def test_a_run_on_a_terminal_shows_its_progress(tmp_path: Path) -> None:
    code, shown = _on_a_terminal(tmp_path / "report", *SMALL, env=_env(CI=None))
    assert code == 0, shown
    steps_shown = [(int(n), int(total)) for n, total in PROGRESS.findall(shown)]
    assert steps_shown, shown
    found = RAN.search(shown)
    assert found is not None, shown
    ran = int(found.group(1))
    assert steps_shown[-1] == (ran, ran)  # the last state shown: every scenario ended
    assert [n for n, _ in steps_shown] == sorted(n for n, _ in steps_shown)
    # the line is cleared before the summary, and pytest's own output went to the log
    assert shown.index("  exit code 0") > shown.rindex("\r\x1b[K")
    assert "passed" not in shown
    assert "passed" in (tmp_path / "report" / "pytest.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("where", ["a log file", "a terminal with CI set"])
def test_a_run_in_a_ci_log_shows_no_progress(tmp_path: Path, where: str) -> None:
    if where == "a log file":
        done = _memconform(tmp_path / "report", *SMALL, env=_env(CI=None))
        code, shown = done.returncode, done.stdout + done.stderr
    else:
        code, shown = _on_a_terminal(tmp_path / "report", *SMALL, env=_env(CI="true"))
    assert code == 0, shown
    assert "\r" not in shown.replace("\r\n", "\n")
    assert "\x1b" not in shown
    assert not re.search(r"\[ *\d+/\d+\]", shown)
    assert RAN.search(shown) is not None
    assert "passed" in (tmp_path / "report" / "pytest.log").read_text(encoding="utf-8")


@pytest.mark.parametrize(("args", "said"), [
    (["--store", "memory://", "--rule", "SP-001"],
     "SP-001 is a runtime rule; --store judges store rules"),
    (["--store", "memory://", "--profile", "candidates"],
     "--profile candidates selects only runtime rules; --store judges store rules"),
    (["--runtime", "simulator", "--profile", "store", "--rule", "st-001"],
     "--profile store --rule ST-001 selects only store rules; --runtime judges runtime rules"),
])
def test_a_selection_judging_no_rule_of_the_subject_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str,
) -> None:
    from memconform.cli import main

    assert main(["run", "--out", str(tmp_path / "report"), *args]) == 5
    err = capsys.readouterr().err
    assert err == f"memconform: usage error: {said}\n"
    assert not (tmp_path / "report").exists()  # refused before anything ran
