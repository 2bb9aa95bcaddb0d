"""The command line: help, version, the catalogue printout and usage errors."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memconform import __version__
from memconform.catalogue import PROFILES, load_catalogue
from memconform.cli import main
from memconform.mutants import all_mutants


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_no_command_prints_help_and_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 5
    err = capsys.readouterr().err
    assert "run" in err
    assert "exit codes:" in err


def test_rules_as_json_cover_every_profile_with_the_documented_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rules", "--format", "json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    assert len(rules) == len(load_catalogue())
    assert {r["profile"] for r in rules} == set(PROFILES)
    for rule in rules:
        assert {"id", "level", "profile", "subject", "capability", "source", "text"} <= set(rule)


def test_rules_filter_by_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--format", "json", "--profile", "store"]) == 0
    rules = json.loads(capsys.readouterr().out)
    assert rules
    assert {r["profile"] for r in rules} == {"store"}


def test_rules_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    assert f"{len(load_catalogue())} rules" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["frobnicate"],
        ["rules", "--format", "yaml"],
        ["rules", "--profile", "nonsense"],
        ["run", "--rule", "XX-001"],
        ["run", "--profile", "nonsense"],
        ["run", "--certify", "--profile", "store"],
        ["run", "--store", "memory://", "--runtime", "memconform.simulator.runtime:Simulator"],
        ["run", "--store", "nosuchscheme://x"],
        ["run", "--jobs", "many"],
        ["mutants", "--rule", "XX-001"],
        ["compliance", "--target", "no-such-store"],
        ["run", "--mutant", "nope"],
        ["run", "--timeout", "0"],
        ["run", "--timeout", "-1"],
        ["run", "--timeout", "nan"],
        ["run", "--jobs", "0"],
        ["run", "--jobs", "-3"],
        ["run", "--out", "/proc/nope/x"],
    ],
)
def test_usage_errors_exit_5_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 5
    err = capsys.readouterr().err.strip()
    assert err.startswith("memconform: usage error:")
    assert len(err.splitlines()) == 1


def test_a_broken_baseline_is_a_usage_error(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.toml"  # type: ignore[operator]
    baseline.write_text("[[entry]\nrule = ", encoding="utf-8")
    assert main(["run", "--baseline", str(baseline)]) == 5
    assert "baseline" in capsys.readouterr().err


def test_mutants_filter_by_the_rule_they_break(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--rule", "ST-003", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows, "ST-003 (the newest-N window) has mutants"
    assert all("ST-003" in row["kills"] for row in rows)
    assert "store-window-oldest" in {row["name"] for row in rows}
    assert set(rows[0]) == {"name", "kind", "profile", "doc", "kills"}


def test_an_out_that_is_a_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("x", encoding="utf-8")
    assert main(["run", "--out", str(taken)]) == 5
    err = capsys.readouterr().err.strip()
    assert err == f"memconform: usage error: --out {taken}: exists and is not a folder"


def test_rule_ids_are_matched_in_any_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--rule", "st-003", "--format", "json"]) == 0
    assert "store-window-oldest" in {row["name"] for row in json.loads(capsys.readouterr().out)}
    assert main(["run", "--rule", "xx-001"]) == 5
    assert "unknown rule 'XX-001'" in capsys.readouterr().err


def test_rules_and_mutants_share_the_format_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--format", "text", "--profile", "store"]) == 0
    text = capsys.readouterr().out
    assert main(["rules", "--format", "table", "--profile", "store"]) == 0, "the earlier name"
    assert capsys.readouterr().out == text
    assert main(["mutants", "--format", "text", "--rule", "ST-003"]) == 0
    assert main(["mutants", "--format", "table", "--rule", "ST-003"]) == 0


def test_counts_are_in_the_singular_for_one(capsys: pytest.CaptureFixture[str]) -> None:
    killers: dict[str, int] = {}
    for mutant in all_mutants().values():
        for rule in mutant.kills:
            killers[rule] = killers.get(rule, 0) + 1
    lone = sorted(rule for rule, n in killers.items() if n == 1)
    many = sorted(rule for rule, n in killers.items() if n > 1)
    assert lone, "some rule is rejected by one mutant only"
    assert main(["mutants", "--rule", lone[0]]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1 mutant"
    assert main(["mutants", "--rule", many[0]]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"{killers[many[0]]} mutants"


def test_help_names_defaults_exit_codes_and_repeatable_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: memconform-report)" in text
    assert "auto, one per usable core (the default;" in text
    assert "exit codes: 0 conformant" in text
    assert "5 usage error" in text
    assert text.count("repeatable") >= 2
    assert "--store URL every store-subject rule, whichever profile holds it" in text
    assert "only the scenarios tagged with a store rule run" in text
    assert "--runtime module:factory every runtime-subject rule" in text
    assert ("only the scenarios tagged with a runtime rule of a profile the runtime declares "
            "run, the others' rules are unsupported") in text
    assert "Every runtime rule of a profile not declared is `unsupported`" in text
    assert "--profile P narrows that to the rules of profile P" in text
    assert "--rule ID narrows that to rule ID" in text
    assert "On a terminal a progress line" in text


def test_compliance_from_results_outside_a_checkout_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compliance", "--from-results", "--source", str(tmp_path),
                 "--out", str(tmp_path / "docs")])
    assert code == 5
    assert "not a checkout of the kit" in capsys.readouterr().err
    assert not (tmp_path / "docs").exists()


@pytest.mark.parametrize(
    ("module", "code", "says"),
    [("memconform", 5, "usage: memconform"), ("memconform.lint", 0, "no problems")],
)
def test_the_package_and_the_lint_run_with_python_m(module: str, code: int, says: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == code, done.stderr
    assert says in done.stdout + done.stderr


def test_a_closed_stdout_ends_the_command_quietly() -> None:
    listing = subprocess.Popen(
        # more than a pipe holds (64 KiB), so the writer is still writing when
        # the reader stops
        [sys.executable, "-m", "memconform", "rules", "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert listing.stdout is not None
    assert listing.stderr is not None
    assert listing.stdout.readline() == b"[\n"
    listing.stdout.close()  # the reader stops, as `| head -1` does
    with listing.stderr:
        err = listing.stderr.read().decode()
    assert listing.wait(timeout=60) == 0, err
    assert err == ""


@pytest.mark.parametrize(("command", "codes"), [
    ("run", [0, 1, 3, 4, 5]),
    ("rules", [0, 4, 5]),
    ("mutants", [0, 4, 5]),
    ("report", [0, 4, 5]),
    ("compliance", [0, 3, 4, 5]),
    ("fingerprint", [0, 1, 3, 4, 5]),
])
def test_each_help_ends_with_the_exit_codes_its_command_can_return(
    capsys: pytest.CaptureFixture[str], command: str, codes: list[int],
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    block = capsys.readouterr().out.rsplit("exit codes:\n", 1)[1]
    assert [int(line.split()[0]) for line in block.splitlines()] == codes


@pytest.mark.parametrize("name", [
    "simulator", "reference", "memconform.simulator:Simulator", "anvia-main", "eddi-snapshot",
])
def test_run_accepts_the_runtime_names_fingerprint_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
) -> None:
    from memconform import fingerprint

    fingerprint.subject_for(name)  # fingerprint accepts it
    # a rule of the other subject stops the run right after the runtime is named
    assert main(["run", "--runtime", name, "--rule", "ST-001", "--out", str(tmp_path)]) == 5
    assert capsys.readouterr().err == (
        "memconform: usage error: ST-001 is a store rule; --runtime judges runtime rules\n"
    )


def test_a_simulator_variant_is_judged_as_that_variant(tmp_path: Path) -> None:
    # anvia-main stores the tool-call batch before its tool results: SP-001 fails
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--runtime", "anvia-main",
         "--rule", "SP-001", "--out", str(tmp_path)],
        capture_output=True, text=True, check=False, timeout=600,
        env={**os.environ, "CI": "true"},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  SP-001: " in done.stdout


def test_jobs_default_to_one_worker_per_usable_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--jobs`` not given is ``auto`` unless ``MEMCONFORM_JOBS`` says otherwise;
    ``auto`` counts the cores this process may run on."""
    from memconform.cli.options import jobs

    cores = len(os.sched_getaffinity(0))
    monkeypatch.delenv("MEMCONFORM_JOBS", raising=False)
    assert jobs(None) == cores
    assert jobs("auto") == cores
    assert jobs(3) == 3
    monkeypatch.setenv("MEMCONFORM_JOBS", "1")
    assert jobs(None) == 1
    assert jobs(2) == 2, "the option outranks the environment"
    monkeypatch.setenv("MEMCONFORM_JOBS", "AUTO")
    assert jobs(None) == cores


@pytest.mark.parametrize("value", ["many", "0", "-1", ""])
def test_a_bad_memconform_jobs_is_a_usage_error_naming_it(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMCONFORM_JOBS", value)
    assert main(["run", "--store", "memory://"]) == 5
    err = capsys.readouterr().err.strip()
    assert "MEMCONFORM_JOBS" in err
    assert len(err.splitlines()) == 1


def test_auto_jobs_run_the_suite_in_xdist_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """With more than one usable core, the default run asks pytest for that many
    workers; with one, it runs in the pytest process itself."""
    from memconform.cli import supervision
    from memconform.cli.options import jobs

    args = argparse.Namespace(certify=False, jobs=jobs("auto"), exitfirst=False, maxfail=None)
    argv = supervision._thoroughness_and_limits(args)
    cores = len(os.sched_getaffinity(0))
    assert ("-n" in argv) == (cores > 1)
    if cores > 1:
        assert argv[argv.index("-n") + 1] == str(cores)
