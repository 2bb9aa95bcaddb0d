"""``memconform run`` end to end: the four files, the verdicts and the exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
