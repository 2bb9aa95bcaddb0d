"""``memconform run`` end to end: the four files, the verdicts and the exit codes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from memconform.catalogue import load_catalogue

SCHEMA = Path(__file__).resolve().parent.parent / "spec" / "schemas" / "results.schema.json"


def _run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.cli", "run", "--out", str(out), *args],
        capture_output=True, text=True, check=False, env={**os.environ, "CI": "true"},
    )
    results_path = out / "results.json"
    results = json.loads(results_path.read_text(encoding="utf-8")) if results_path.exists() else {}
    return proc.returncode, results, proc.stdout + proc.stderr


def _verdicts(results: dict[str, Any]) -> dict[str, str]:
    return {rule["id"]: rule["verdict"] for rule in results["rules"]}


@pytest.mark.slow
def test_the_default_run_passes_every_rule_and_writes_four_valid_files(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    code, results, output = _run(tmp_path)
    assert code == 0, output
    verdicts = _verdicts(results)
    assert set(verdicts) == load_catalogue().ids
    assert set(verdicts.values()) == {"pass"}, output
    for name in ("results.json", "report.html", "junit.xml", "badge.svg"):
        assert (tmp_path / "report" / name).is_file()
    jsonschema.validate(results, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert results["footer"]["complete"] is True
    # without --coverage nothing is measured
    assert "coverage" not in results
    assert not (tmp_path / "report" / "coverage-html").exists()


@pytest.mark.slow
def test_a_serial_and_a_parallel_run_give_the_same_verdicts(tmp_path: Path) -> None:
    serial_code, serial, _ = _run(tmp_path / "serial", "--store", "memory://")
    parallel_code, parallel, _ = _run(tmp_path / "parallel", "--store", "memory://", "--jobs", "2")
    assert serial_code == parallel_code == 0
    assert _verdicts(serial) == _verdicts(parallel)


@pytest.mark.slow
def test_a_mutant_fails_the_rules_it_breaks_and_exits_1(tmp_path: Path) -> None:
    code, results, output = _run(tmp_path, "--mutant", "anvia-main", "--profile", "save-policy")
    assert code == 1, output
    verdicts = _verdicts(results)
    assert "fail" in verdicts.values()


@pytest.mark.slow
def test_a_baseline_turns_a_failure_into_xfail_and_a_pass_into_stale(tmp_path: Path) -> None:
    code, results, _ = _run(
        tmp_path / "first", "--mutant", "anvia-main", "--profile", "save-policy"
    )
    failing = sorted(r for r, v in _verdicts(results).items() if v == "fail")
    passing = sorted(r for r, v in _verdicts(results).items() if v == "pass")
    baseline = tmp_path / "baseline.toml"
    baseline.write_text(
        "".join(f'[[entry]]\nrule = "{r}"\nreason = "known"\n' for r in failing),
        encoding="utf-8",
    )
    code, results, output = _run(
        tmp_path / "second", "--mutant", "anvia-main", "--profile", "save-policy",
        "--baseline", str(baseline),
    )
    assert code == 0, output
    assert {_verdicts(results)[r] for r in failing} == {"xfail"}
    baseline.write_text(
        f'[[entry]]\nrule = "{passing[0]}"\nreason = "fixed long ago"\n', encoding="utf-8"
    )
    code, results, _ = _run(tmp_path / "third", "--profile", "save-policy",
                            "--baseline", str(baseline))
    assert code == 1
    assert _verdicts(results)[passing[0]] == "stale"


@pytest.mark.slow
def test_a_store_that_breaks_the_contract_gives_errors_and_exit_3(tmp_path: Path) -> None:
    code, results, output = _run(
        tmp_path, "--store", "tests.bad_store_adapters:wrong_shape", "--profile", "store"
    )
    assert code == 3, output
    errors = [r for r in results["rules"] if r["verdict"] == "error"]
    assert errors
    assert any("messages" in json.dumps(r) for r in errors)


@pytest.mark.slow
def test_a_store_raising_keyerror_on_an_unknown_thread_is_an_adapter_error(
    tmp_path: Path,
) -> None:
    # ST-003's generated runs read threads through the reference runtime, where
    # nothing judges the KeyError: it is the adapter's, never a crash of the kit
    code, results, output = _run(
        tmp_path, "--store", "tests.bad_store_adapters:unknown_thread_raises",
        "--rule", "ST-003", "--rule", "ST-008",
    )
    assert code == 3, output
    assert results["footer"]["kit_error"] is False
    rules = {r["id"]: r for r in results["rules"]}
    for rule_id in ("ST-003", "ST-008"):
        assert rules[rule_id]["verdict"] == "error", rules[rule_id]["reason"]
        assert rules[rule_id]["kit_error"] is False
        assert "messages: raised KeyError" in rules[rule_id]["reason"]


def _module(tmp_path: Path, name: str, source: str) -> dict[str, str]:
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    return {"PYTHONPATH": str(tmp_path)}


def _run_with(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.cli", "run", "--out", str(out), *args],
        capture_output=True, text=True, check=False,
        env={**os.environ, "CI": "true", **env},
    )
    results_path = out / "results.json"
    results = json.loads(results_path.read_text(encoding="utf-8")) if results_path.exists() else {}
    return proc.returncode, results, proc.stderr


_NO_DEPENDENCY = "import memconform_no_such_dependency\n"


@pytest.mark.parametrize(
    ("source", "cause"),
    [
        ("def make(:\n    pass\n", "'vendorstore' does not import: SyntaxError: invalid syntax"),
        (_NO_DEPENDENCY, "'vendorstore' does not import: ModuleNotFoundError: No module named"),
        ("def make():\n    raise ConnectionRefusedError('no server')\n", "ConnectionRefusedError"),
    ],
    ids=["syntax-error", "import-error", "factory-raises"],
)
def test_a_store_that_cannot_be_opened_fails_fast_with_exit_3(
    tmp_path: Path, source: str, cause: str
) -> None:
    """Opened once up front: no scenario runs, every store rule is an error with
    the cause, one line on the console, the report is written whole."""
    env = _module(tmp_path, "vendorstore", source)
    code, results, stderr = _run_with(tmp_path, env, "--store", "vendorstore:make")
    assert code == 3, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("memconform: adapter error: cannot open the store")
    assert cause in lines[0]
    assert not (tmp_path / "report" / "pytest.log").exists()
    store_rules = [r for r in results["rules"] if r["subject"] == "store"]
    core = [r for r in store_rules if r["capability"] is None]
    assert core
    assert {r["verdict"] for r in core} == {"error"}
    assert all(cause in r["reason"] for r in core)
    # what the store would declare is unknown: its capability rules are errors
    # too (the kit could not judge them), never unsupported
    claimed = [r for r in store_rules if r["capability"] is not None]
    assert claimed
    assert {r["verdict"] for r in store_rules} == {"error"}
    assert all(cause in r["reason"] for r in claimed)
    assert results["footer"]["complete"] is True
    assert results["footer"]["exit_code"] == 3


def test_a_store_module_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    code, results, stderr = _run_with(tmp_path, {}, "--store", "memconform_no_such_store:make")
    assert code == 5, stderr
    assert results == {}


def test_a_runtime_that_cannot_be_built_fails_fast_with_exit_3(tmp_path: Path) -> None:
    env = _module(tmp_path, "vendorruntime", "def make(:\n")
    code, results, stderr = _run_with(tmp_path, env, "--runtime", "vendorruntime:make")
    assert code == 3, stderr
    assert "the runtime module 'vendorruntime' does not import: SyntaxError" in stderr
    runtime_rules = [r for r in results["rules"] if r["subject"] == "runtime"]
    assert "pass" not in {r["verdict"] for r in runtime_rules}
    assert "error" in {r["verdict"] for r in runtime_rules}
    assert {r["verdict"] for r in runtime_rules} == {"error"}  # capability rules too


@pytest.mark.slow
def test_a_hanging_store_ends_the_full_run_within_two_minutes_with_exit_3(
    tmp_path: Path,
) -> None:
    """The store's ``messages`` never returns. With the default timeout, after
    three hangs in a row the kit stops calling it: the rules not yet judged get
    ``error`` with that reason, and the report is written."""
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.cli", "run", "--out", str(out),
         "--store", "tests.bad_store_adapters:hanging_messages"],
        capture_output=True, text=True, check=False, env={**os.environ, "CI": "true"},
        timeout=120,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["footer"]["complete"] is True
    assert results["footer"]["kit_error"] is False
    judged = [r for r in results["rules"] if r["verdict"] != "not-scored"]
    assert {r["verdict"] for r in judged} <= {"pass", "unsupported", "informational", "error"}
    stopped = [r for r in judged if "the kit stopped calling the store after messages did not "
               "return within 20 s 3 times in a row" in r["reason"]]
    assert len(stopped) >= len(judged) // 2, [r["reason"] for r in judged]
    for name in ("report.html", "junit.xml", "badge.svg"):
        assert (out / name).is_file()


def _wait_ready(fifo: Path, limit: float) -> bool:
    """Whether the store under test wrote ``ready`` into ``fifo`` within ``limit`` s."""
    got: list[str] = []

    def read() -> None:
        with fifo.open(encoding="utf-8") as ready:
            got.append(ready.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(limit)
    return got == ["ready"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_writes_a_partial_report_marked_incomplete(
    tmp_path: Path, sig: signal.Signals
) -> None:
    fifo = tmp_path / "ready"
    os.mkfifo(fifo)
    out = tmp_path / "report"
    proc = subprocess.Popen(
        [sys.executable, "-m", "memconform.cli", "run", "--out", str(out),
         "--store", "tests.bad_store_adapters:announcing"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "CI": "true", "MEMCONFORM_TEST_READY_FIFO": str(fifo)},
    )
    try:
        assert _wait_ready(fifo, 300), "the run never got under way"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    # the store is correct: what ran passed, the rest was not reached
    assert proc.returncode == 1, stdout + stderr
    assert f"the run stopped early: interrupted by {sig.name}" in stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["header"]["stopped_early"] == f"interrupted by {sig.name}"
    footer = results["footer"]
    assert footer["complete"] is False
    assert f"the run stopped early: interrupted by {sig.name}" in footer["reason"]
    assert footer["exit_code"] == 1
    assert any(r["scenarios"] for r in results["rules"]), "outcomes before the signal are kept"
    verdicts = {r["verdict"] for r in results["rules"] if r["verdict"] != "not-scored"}
    assert "not-run" in verdicts
    assert verdicts <= {"pass", "not-run", "unsupported", "informational", "inconclusive"}
    not_run = [r for r in results["rules"] if r["verdict"] == "not-run"]
    assert all(r["reason"].startswith("not reached: the run stopped early") for r in not_run
               if not r["scenarios"])
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Incomplete" in html
    assert f"interrupted by {sig.name}" in html
    for name in ("junit.xml", "badge.svg"):
        assert (out / name).is_file()


@pytest.mark.slow
def test_maxfail_stops_after_the_first_failing_scenario_and_says_so(tmp_path: Path) -> None:
    code, results, output = _run(
        tmp_path, "--store", "memory://", "--mutant", "store-unknown-thread-raises", "-x"
    )
    assert code == 3, output
    assert results["header"]["stopped_early"] == "-x: stopped after 1 failing scenario"
    assert results["footer"]["complete"] is False
    counts: dict[str, int] = {}
    for rule in results["rules"]:
        counts[rule["verdict"]] = counts.get(rule["verdict"], 0) + 1
    assert counts.get("error", 0) + counts.get("fail", 0) >= 1
    assert counts["not-run"] > 10
    assert "memconform: the run stopped early: -x: stopped after 1 failing scenario" in output


@pytest.mark.slow
def test_a_rule_whose_scenarios_were_cut_off_by_maxfail_is_inconclusive_never_pass(
    tmp_path: Path,
) -> None:
    """ST-001's ten scenarios pass, ST-002's fails next and -x stops the run
    before ST-001's generated check: ST-001 did not all run, so it is not
    ``pass``; the report is incomplete and the exit code is not 0."""
    code, results, output = _run(
        tmp_path, "--store", "memory://", "--rule", "ST-001", "--rule", "ST-002",
        "--mutant", "store-caller-timestamp-order", "-x",
    )
    assert code == 1, output
    rules = {r["id"]: r for r in results["rules"]}
    assert rules["ST-002"]["verdict"] == "fail"
    cut = rules["ST-001"]
    assert cut["verdict"] == "inconclusive", cut["reason"]
    assert cut["reason"].startswith(
        "the run stopped before all of this rule's scenarios ran (-x: stopped after 1 "
        "failing scenario)"
    )
    assert {s["outcome"] for s in cut["scenarios"]} == {"passed"}
    assert "pass" not in {r["verdict"] for r in results["rules"]}
    assert results["footer"]["complete"] is False
    assert results["footer"]["exit_code"] == 1


@pytest.mark.slow
def test_past_the_deadline_the_run_stops_and_says_why(tmp_path: Path) -> None:
    code, results, output = _run(tmp_path, "--store", "memory://", "--deadline", "0.001")
    assert code == 1, output
    assert results["header"]["stopped_early"] == "the deadline of 0.001 s passed"
    assert results["footer"]["complete"] is False
    assert not any(r["scenarios"] for r in results["rules"]), "no scenario started"
    judged = {r["verdict"] for r in results["rules"] if r["verdict"] != "not-scored"}
    assert "not-run" in judged
    assert judged <= {"not-run", "unsupported"}  # unsupported: capabilities not declared


@pytest.mark.parametrize(
    "option", [["--maxfail", "0"], ["--deadline", "0"], ["--deadline", "-5"],
               ["--max-timeouts", "-1"]],
)
def test_stop_options_out_of_range_are_usage_errors(tmp_path: Path, option: list[str]) -> None:
    code, results, output = _run(tmp_path, "--store", "memory://", *option)
    assert code == 5, output
    assert results == {}


@pytest.mark.slow
def test_a_property_failure_leaves_its_shrunk_counterexample_beside_the_report(
    tmp_path: Path,
) -> None:
    """The generated check finds the mutant (reads ordered by the caller's
    timestamps), and the run writes the shrunk operations as a replayable
    scenario into counterexamples/, named in the summary; an earlier run's
    counterexample in that folder is gone."""
    stale = tmp_path / "report" / "counterexamples" / "counterexample-00000000.feature"
    stale.parent.mkdir(parents=True)
    stale.write_text("Feature: from an earlier run\n", encoding="utf-8")
    code, results, output = _run(
        tmp_path, "--store", "memory://", "--rule", "ST-002",
        "--mutant", "store-caller-timestamp-order",
    )
    assert code == 1, output
    assert "fail" in {rule["verdict"] for rule in results["rules"]}
    assert not stale.exists()
    features = sorted((tmp_path / "report" / "counterexamples").glob("*.feature"))
    assert features, output
    text = features[0].read_text(encoding="utf-8")
    assert re.search(r"^  @ST-\d{3}", text, re.MULTILINE), text  # the rule it breaks
    assert "When the recorded operations are replayed on the store and the reference:" in text
    assert f"wrote {features[0]}" in output
