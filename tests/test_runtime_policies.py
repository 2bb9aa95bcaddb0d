"""A runtime declares the save policies it implements: scenarios of the others
are unsupported, and it claims runtime classes only for what it declared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memconform.harness.runtime import SAVE_POLICIES, declared_policies
from memconform.mutants import get_mutant
from memconform.simulator.runtime import Simulator

SCHEMA = Path(__file__).resolve().parent.parent / "spec" / "schemas" / "results.schema.json"

RUNTIMES = '''
from memconform.simulator.runtime import Simulator

class TurnOnly(Simulator):
    policies = frozenset({"turn"})

class Misnamed(Simulator):
    policies = frozenset({"turn", "per-round"})
'''


def _run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    (tmp_path / "declaring.py").write_text(RUNTIMES, encoding="utf-8")
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.cli", "run", "--out", str(out), *args],
        capture_output=True, text=True, check=False,
        env={**os.environ, "CI": "true", "PYTHONPATH": str(tmp_path)},
    )
    path = out / "results.json"
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return proc.returncode, results, proc.stdout + proc.stderr


class _Declares:
    def __init__(self, policies: object) -> None:
        self.policies = policies


def test_the_simulator_and_its_save_policy_mutants_declare_every_policy() -> None:
    assert declared_policies(Simulator()) == frozenset(SAVE_POLICIES)
    assert declared_policies(Simulator("anvia-main")) == frozenset(SAVE_POLICIES)
    assert declared_policies(get_mutant("sp-zero-based-rounds").build()) == frozenset(
        SAVE_POLICIES)


def test_a_declaration_is_read_and_checked() -> None:
    assert declared_policies(object()) is None
    assert declared_policies(_Declares(None)) is None
    assert declared_policies(_Declares(frozenset())) == frozenset()
    assert declared_policies(_Declares(["turn", "run"])) == {"turn", "run"}
    with pytest.raises(ValueError, match=r"unknown save policies turns \(known: message, turn, "
                                         r"run\)"):
        declared_policies(_Declares({"turns"}))
    with pytest.raises(ValueError, match="policies is str, expected a set"):
        declared_policies(_Declares("turn"))


def test_a_turn_only_runtime_gets_unsupported_elsewhere_and_only_the_turn_class(
    tmp_path: Path,
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    code, results, output = _run(tmp_path, "--runtime", "declaring:TurnOnly",
                                 "--rule", "SP-003", "--rule", "SP-011")
    assert code == 0, output
    rules = {r["id"]: r for r in results["rules"]}
    # SP-003's Gherkin rows are all message and run: unsupported, naming them
    # (its generated check runs the turn scripts and those naming no policy)
    rows = [sc for sc in rules["SP-003"]["scenarios"] if sc["feature"] is not None]
    assert rows
    assert {sc["outcome"] for sc in rows} == {"unsupported"}
    assert any("does not implement the message, run save policy" in sc["message"]
               for sc in rows)
    # SP-011's turn rows ran and passed; its message and run rows are unsupported
    assert rules["SP-011"]["verdict"] == "pass"
    outcomes = {s["outcome"] for s in rules["SP-011"]["scenarios"]}
    assert outcomes == {"passed", "unsupported"}
    refused = [s["message"] for s in rules["SP-011"]["scenarios"] if s["outcome"] == "unsupported"]
    assert all("implement the message save policy" in m or "implement the run save policy" in m
               for m in refused)
    classes = {c["name"]: c["status"] for c in results["runtime_classes"]}
    assert classes["save-policy/message"] == classes["save-policy/run"] == "not-claimed"
    assert classes["save-policy/turn"] == "partial"  # --rule selected: nothing is claimed
    assert results["header"]["runtime"]["declares"]["policies"] == ["turn"]
    assert "runtime classes achieved: none; not achieved: save-policy/turn (partial)" in output
    jsonschema.validate(results, json.loads(SCHEMA.read_text(encoding="utf-8")))
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "Runtime conformance classes" in html
    assert "save-policy/turn" in html


def test_an_unknown_policy_name_is_the_adapters_error(tmp_path: Path) -> None:
    code, _, output = _run(tmp_path, "--runtime", "declaring:Misnamed", "--rule", "SP-011")
    assert code == 3, output
    assert "unknown save policies per-round (known: message, turn, run)" in output


def test_the_summary_line_names_the_runtime_classes_and_what_was_declared() -> None:
    from memconform.cli import _runtime_classes_line

    def data(policies: list[str] | None, status: str, claimed: bool) -> dict[str, Any]:
        return {
            "header": {"runtime": {"declares": {"profiles": ["save-policy"],
                                                "policies": policies}}},
            "runtime_classes": [{"name": "save-policy/turn", "claimed": claimed,
                                 "status": status}],
        }

    assert _runtime_classes_line({"runtime_classes": []}) is None
    assert _runtime_classes_line(data(["turn"], "achieved", True)) == (
        "memconform: runtime classes achieved: save-policy/turn")
    assert _runtime_classes_line(data(None, "not-claimed", False)) == (
        "memconform: runtime classes: none claimed (profiles: save-policy; "
        "no save policies declared)")
    assert _runtime_classes_line(data([], "not-claimed", False)).endswith(  # type: ignore[union-attr]
        "(profiles: save-policy; save policies: none)")


def test_the_generated_runs_use_only_the_declared_policies() -> None:
    from memconform.adapters.memory import MemoryStore
    from memconform.harness.proxy import RecordingStore
    from memconform.properties.runs import run_property
    from memconform.properties.settings import SETTINGS

    seen: set[object] = set()

    class Recording(Simulator):
        policies = frozenset({"turn"})

        def execute(self, script: Any, env: Any) -> Any:
            seen.add(script.get("save_policy"))
            return super().execute(script, env)

    store = RecordingStore(MemoryStore())
    try:
        run_property(Recording(), store, SETTINGS["fast"], policies=frozenset({"turn"}))()
    finally:
        store.close()
    assert seen == {"turn", None}
