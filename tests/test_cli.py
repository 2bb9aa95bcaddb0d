"""The command line: help, version, the catalogue printout and usage errors."""

from __future__ import annotations

import json

import pytest

from memconform import __version__
from memconform.catalogue import PROFILES, load_catalogue
from memconform.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "run" in capsys.readouterr().out


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
