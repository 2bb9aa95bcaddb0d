"""A runtime declares the profiles it executes: every runtime rule of a profile
it does not declare is ``unsupported`` naming the profile, its scenarios do not
run, and the runtime is never handed a script of that profile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters.memory import MemoryStore
from memconform.catalogue import load_catalogue
from memconform.contract import Capability
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.harness.runtime import (
    RUNTIME_PROFILES,
    SCRIPT_SCHEMA,
    ProfileNotDeclared,
    declared_profiles,
    observe,
)
from memconform.reports.verdict import build_results
from memconform.simulator.runtime import Simulator

ROOT = Path(__file__).resolve().parent.parent
UNDECLARED = ("strict-write", "turns", "candidates", "persisted-state")

RUNTIMES = '''
from tests.anvia_like_runtime import anvia_like_runtime

class SavePolicyOnly:
    """The public-API runtime of the kit's tests, behind an adapter that, as a
    framework's does, refuses a profile it does not implement."""

    profiles = frozenset({"save-policy"})
    version = "myframework==1.2.3"

    def __init__(self):
        self.inner = anvia_like_runtime()

    def execute(self, script, env):
        if script.get("profile") != "save-policy":
            raise ValueError(f"profile {script.get('profile')!r} is not implemented")
        return self.inner.execute(script, env)

class OneName(SavePolicyOnly):
    profiles = "save-policy"

class Misspelt(SavePolicyOnly):
    profiles = frozenset({"save-policy", "strict_write"})

class RaisingProfiles(SavePolicyOnly):
    @property
    def profiles(self):
        raise RuntimeError("profiles exploded")
'''


def _run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    (tmp_path / "declaring_profiles.py").write_text(RUNTIMES, encoding="utf-8")
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.cli", "run", "--out", str(out), *args],
        capture_output=True, text=True, check=False, cwd=tmp_path,
        env={**os.environ, "CI": "true", "PYTHONPATH": os.pathsep.join([str(tmp_path),
                                                                          str(ROOT)])},
    )
    path = out / "results.json"
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return proc.returncode, results, proc.stdout + proc.stderr


class _Declares:
    def __init__(self, profiles: object) -> None:
        self.profiles = profiles


def test_a_profiles_declaration_is_read_and_checked() -> None:
    assert declared_profiles(Simulator()) == frozenset(RUNTIME_PROFILES)
    assert declared_profiles(_Declares(["turns"])) == {"turns"}
    assert declared_profiles(_Declares(frozenset())) == frozenset()
    with pytest.raises(ValueError, match="declares no profiles"):
        declared_profiles(object())
    with pytest.raises(ValueError, match="profiles is str, expected a set of names"):
        declared_profiles(_Declares("turns"))
    with pytest.raises(ValueError, match=r"unknown profiles store \(known: save-policy, "):
        declared_profiles(_Declares({"turns", "store"}))


def test_a_script_of_an_undeclared_profile_never_reaches_the_runtime() -> None:
    called: list[object] = []

    class TurnsOnly:
        profiles = frozenset({"turns"})

        def execute(self, script: Any, env: Any) -> Any:
            called.append(script["profile"])
            return {}

    proxy = RecordingStore(MemoryStore())
    with pytest.raises(ProfileNotDeclared, match=r"does not declare the strict-write profile "
                                                 r"\(its profiles: turns\)"):
        observe(TurnsOnly(), {"schema": SCRIPT_SCHEMA, "profile": "strict-write"}, proxy)
    assert called == []
    with pytest.raises(AdapterContractError, match=r"observation-turns\.schema\.json"):
        observe(TurnsOnly(), {"schema": SCRIPT_SCHEMA, "profile": "turns"}, proxy)  # {}
    assert called == ["turns"]
    proxy.close()


def _verdicts(declares: dict[str, Any] | None) -> dict[str, tuple[str, str]]:
    catalogue = load_catalogue()
    outcomes = [{"nodeid": f"n-{r.id}", "scenario": r.id, "rules": [r.id], "outcome": "passed"}
                for r in catalogue if r.subject == "runtime"]
    header: dict[str, Any] = {"subject": "runtime", "runtime": "m:f",
                              "capabilities": [c.value for c in Capability]}
    if declares is not None:
        header["runtime_declares"] = declares
    results = build_results(outcomes, catalogue, header)
    return {r.id: (r.verdict, r.reason) for r in results.rules}


def test_the_verdicts_follow_the_declared_profiles() -> None:
    every = _verdicts({"profiles": list(RUNTIME_PROFILES), "policies": None})
    assert {v for v, _ in every.values()} == {"pass", "not-scored"}
    assert every == _verdicts(None)  # no declaration known: judged as before
    only = _verdicts({"profiles": ["save-policy"], "policies": None})
    for rule in load_catalogue():
        if rule.subject != "runtime":
            assert only[rule.id] == every[rule.id]
        elif rule.profile == "save-policy":
            assert only[rule.id][0] == "pass"
        else:
            assert only[rule.id] == (
                "unsupported", f"the runtime does not declare the {rule.profile} profile "
                               f"(its profiles: save-policy)")


def test_a_save_policy_runtime_is_judged_on_save_policy_alone(tmp_path: Path) -> None:
    profiles = [a for p in UNDECLARED for a in ("--profile", p)]
    code, results, output = _run(tmp_path, "--runtime", "declaring_profiles:SavePolicyOnly",
                                 "--rule", "SP-001", *profiles)
    assert code in (0, 1), output
    rules = {r["id"]: r for r in results["rules"]}
    assert not [r for r in rules.values() if r["verdict"] == "error"], output
    assert rules["SP-001"]["verdict"] == "pass"
    catalogue = load_catalogue()
    undeclared = [r for r in catalogue if r.subject == "runtime" and r.profile in UNDECLARED]
    assert undeclared
    for rule in undeclared:
        got = rules[rule.id]
        assert got["verdict"] == "unsupported", got
        assert got["reason"].startswith(f"the runtime does not declare the {rule.profile} "
                                        f"profile"), got
        assert got["scenarios"] == []  # not one of its scenarios ran
    classes = {c["name"]: c["status"] for c in results["runtime_classes"]}
    assert all(classes[p] == "not-claimed" for p in UNDECLARED)
    assert results["header"]["runtime"]["declares"]["profiles"] == ["save-policy"]
    assert results["header"]["runtime"]["version"] == "myframework==1.2.3"  # a label only


def test_a_selection_of_undeclared_profiles_alone_runs_nothing(tmp_path: Path) -> None:
    code, results, output = _run(tmp_path, "--runtime", "declaring_profiles:SavePolicyOnly",
                                 "--profile", "turns")
    assert code == 0, output
    verdicts = {r["verdict"] for r in results["rules"] if r["profile"] == "turns"
                and r["subject"] == "runtime"}
    assert verdicts == {"unsupported"}
    assert "(0 scenarios run)" in output


@pytest.mark.parametrize(("factory", "said"), [
    ("OneName", "profiles is str, expected a set of names (save-policy, strict-write, "),
    ("Misspelt", "declares unknown profiles strict_write (known: save-policy, "),
])
def test_a_malformed_profiles_declaration_is_the_adapters_error(
    tmp_path: Path, factory: str, said: str
) -> None:
    code, _, output = _run(tmp_path, "--runtime", f"declaring_profiles:{factory}",
                           "--rule", "SP-001")
    assert code == 3, output
    assert said in output


def test_a_declaration_that_raises_is_the_adapters_error(tmp_path: Path) -> None:
    code, _, output = _run(tmp_path, "--runtime", "declaring_profiles:RaisingProfiles",
                           "--rule", "SP-001")
    assert code == 3, output
    assert "raised RuntimeError when asked what it declares: profiles exploded" in output
