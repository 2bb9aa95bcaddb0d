"""The TypeScript frameworks on the runtimes page: their targets' plumbing (the
lock-file freeze, the install check, the commands the page prints), and, with
Node.js and each framework's packages installed, that a fresh run still gives
the kept verdicts and that each framework-only reproduction script still finds
what the page says.

The runs need ``node`` (22 or later) on the PATH and ``npm ci`` done in each
framework's folder (``.ci/run`` does both): without them those tests are
skipped, except in CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.compliance import TARGETS, load_findings
from memconform.runtime_compliance import (
    KEPT,
    RUNTIME_TARGETS,
    RuntimeTarget,
    node_freeze,
    prepare_node,
)
from tests.adapters_support import ROOT, in_ci, require_server

DOCS = ROOT / "docs"
NODE_TARGETS = [t for t in RUNTIME_TARGETS if t.node]


def _probe(node: str) -> None:
    path = shutil.which(node)
    if path is None:
        raise FileNotFoundError(f"{node} is not on the PATH")
    version = subprocess.run([path, "--version"], capture_output=True, text=True, check=True)
    if int(version.stdout.strip().lstrip("v").split(".")[0]) < 22:
        raise RuntimeError(f"Node.js 22 or later is needed, found {version.stdout.strip()}")


def _need_packages(target: RuntimeTarget) -> None:
    """Skip (fail in CI) unless ``npm ci`` has installed the target's folder; skip a
    framework built outside the kit unless its variable names the built file."""
    if target.built():
        pytest.skip(f"{target.label}: {target.built()}")
    if (ROOT / target.node / "node_modules").is_dir():
        return
    reason = f"{target.label}: run npm ci in {target.node} first"
    if in_ci():
        pytest.fail(f"{reason} (CI=true: .ci/run installs it)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def node() -> str:
    return require_server("Node.js", "MEMCONFORM_NODE", "node", _probe)


def _lock(folder: Path, packages: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    entries: dict[str, dict[str, str]] = {"": {"name": "x"}}
    for name, version in packages.items():
        entries[f"node_modules/{name}"] = {"version": version}
    entries["node_modules/a/node_modules/b"] = {"version": "0.1.0"}  # nested: not top level
    (folder / "package-lock.json").write_text(json.dumps({"packages": entries}), encoding="utf-8")


def _install(folder: Path, packages: dict[str, str]) -> None:
    for name, version in packages.items():
        manifest = folder / "node_modules" / name / "package.json"
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_text(json.dumps({"name": name, "version": version}), encoding="utf-8")


def test_the_freeze_is_the_locks_top_level_packages(tmp_path: Path) -> None:
    _lock(tmp_path, {"@scope/one": "1.2.3", "b": "2.0.0"})
    assert node_freeze(tmp_path) == "@scope/one==1.2.3\nb==2.0.0\n"
    assert node_freeze(tmp_path / "missing") == ""


def test_an_installed_folder_is_not_installed_again(tmp_path: Path) -> None:
    target = RuntimeTarget("t", "stdio:node t.mjs", "", "T", ("b",), "t", "", node="pkg")
    _lock(tmp_path / "pkg", {"b": "2.0.0"})
    _install(tmp_path / "pkg", {"b": "2.0.0"})
    assert prepare_node(target, tmp_path) == ""  # no npm call: nothing to do


def test_a_folder_that_npm_cannot_install_says_why(tmp_path: Path) -> None:
    target = RuntimeTarget("t", "stdio:node t.mjs", "", "T", ("b",), "t", "", node="pkg")
    _lock(tmp_path / "pkg", {"b": "2.0.0"})
    _install(tmp_path / "pkg", {"b": "1.0.0"})  # another version: npm ci must run, and fails
    problem = prepare_node(target, tmp_path, timeout=120)
    assert "npm" in problem


def test_a_node_target_names_its_files_from_the_checkout() -> None:
    for target in NODE_TARGETS:
        files = [w for w in target.runtime_at(ROOT).split() if w.endswith(".mjs")]
        assert files
        assert all(Path(w).is_absolute() and Path(w).is_file() for w in files)
        assert f"(cd {target.node} && npm ci)" in target.reproduce("SP-001")
        assert target.reproduce("SP-001").endswith("--fingerprint --rule SP-001")
        assert f"'{target.runtime}'" in target.command()


@pytest.mark.slow
@pytest.mark.parametrize("target", NODE_TARGETS, ids=lambda t: t.name)
def test_a_fresh_run_gives_the_kept_verdicts(
    node: str, target: RuntimeTarget, tmp_path: Path
) -> None:
    """The page's figures are what the framework does now: each save-policy rule's
    verdict and the fingerprint's nearest policy and distance, rerun here."""
    _need_packages(target)
    kept = json.loads((DOCS / KEPT / f"{target.name}.json").read_text(encoding="utf-8"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    line = shlex.split(target.command(target.runtime_at(ROOT)))
    done = subprocess.run(
        [sys.executable, "-m", *line, "--out", "out"], capture_output=True, text=True,
        check=False, cwd=tmp_path, env=env, timeout=900,
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    fresh = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))

    def verdicts(results: dict[str, object]) -> dict[str, str]:
        rules = results["rules"]
        assert isinstance(rules, list)
        return {r["id"]: r["verdict"] for r in rules if r["profile"] == "save-policy"}

    assert verdicts(fresh) == verdicts(kept)
    for key in ("nearest", "distance"):
        assert fresh["fingerprint"][key] == kept["fingerprint"][key]


@pytest.mark.slow
@pytest.mark.parametrize("target", NODE_TARGETS, ids=lambda t: t.name)
def test_the_framework_alone_reproduces_every_finding(node: str, target: RuntimeTarget) -> None:
    _need_packages(target)
    script = DOCS / "reproduce" / f"runtime_{target.script}.mjs"
    if target.needs and not script.is_file():
        pytest.skip(f"{target.label}: no framework-only script (the framework is built outside)")
    done = subprocess.run([node, str(script)], capture_output=True, text=True, check=False,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "NOT reproduced" not in done.stdout
    names = {t.name for t in RUNTIME_TARGETS} | {t.name for t in TARGETS}
    findings = load_findings(DOCS / "findings.toml", load_catalogue().ids, names)
    wanted = {rule for (name, rule), f in findings.items()
              if name == target.name and f.severity != "kit-side"}
    missing = {rule for rule in wanted if f"{rule} reproduced:" not in done.stdout}
    assert not missing, f"findings the script does not check: {sorted(missing)}"


def test_a_fingerprint_per_policy_is_compared_with_that_policys_reference() -> None:
    """The page's table compares each policy's fingerprint with the simulator
    under the same policy, whatever reference happens to be nearest."""
    from memconform.runtime_compliance import _policy_lines

    same = {"appends": "[user] [assistant]", "stored": "user,assistant", "outcome": "completed"}
    other = {**same, "appends": "[user,assistant]"}
    taken = {
        "nearest": "run", "distance": 0,
        "points": [{"name": "none", "stored": other}, {"name": "tool throws", "stored": same}],
        "references": {"message": {"none": same, "tool throws": same},
                       "run": {"none": other, "tool throws": same}},
    }
    lines = _policy_lines({"message": taken})
    assert "| message | 1 of 2: none | run (0) |" in lines
    assert any("under message, **none**: appends: [user,assistant] (message: [user] "
               "[assistant])" in line for line in lines)


def test_the_anvia_build_script_builds_the_commits_the_page_names() -> None:
    """``node/frameworks/anvia-build.sh`` rebuilds what the page judges: it parses,
    and pins the commit each Anvia target's label names."""
    script = ROOT / "node" / "frameworks" / "anvia-build.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text(encoding="utf-8")
    built = [t for t in NODE_TARGETS if t.needs]
    assert {t.name for t in built} == {"anvia", "anvia-main"}
    for target in built:
        found = re.search(r"\b[0-9a-f]{8}\b", target.label)
        assert found, f"{target.name}: its label names no commit"
        commit = found.group()
        assert f"={commit}" in text, f"{target.name}: the script does not build {commit}"
        assert target.needs in text
