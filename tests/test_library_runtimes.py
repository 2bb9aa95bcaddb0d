"""Each framework runtime of the runtime page, judged again in its extra's own
environment, and each runtime finding reproduced with the framework alone.

- That the kept results regenerate ``docs/runtimes.md`` with no difference is
  checked without any environment, in the fast suite
  (``tests/test_runtime_compliance.py``).
- For every runtime target the whole kept run is repeated: ``memconform run
  --runtime R --profile save-policy --fingerprint`` in the extra's environment,
  its hand-written scenario outcomes compared with the kept ones (as for the
  stores), and its fingerprint (nearest policy, distances, what was stored at
  every point, the points not run) compared with the kept one. This costs
  about 15 s for ``openai-agents``, 30 s of CPU for each LangGraph mode and
  under a minute for ``pydantic-ai`` and ``google-adk`` on a quiet machine (the
  fingerprint alone 3 to 6 s), so nothing is left out.
- Every runtime finding's library-only script (``docs/reproduce/runtime_*.py``)
  runs from an empty folder with nothing of the kit on its path and must print
  ``<rule> reproduced: ...`` for each finding of its targets (but those found to
  be the kit's side, which the framework alone cannot show).

The environments live in ``.venvs/``; without a package index these tests skip
with the reason, and with ``CI=true`` they fail instead (as the stores' do).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from memconform.catalogue import load_catalogue
from memconform.compliance import TARGETS, load_findings
from memconform.reports import load_results
from memconform.runtime_compliance import (
    KEPT,
    RUNTIME_TARGETS,
    RuntimeTarget,
    run_runtime_target,
    runtime_scripts,
)
from tests.test_library_stores import _agree, _plain_environment, _scenario_outcomes, _venv

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

pytestmark = [pytest.mark.slow, pytest.mark.libraries]


def _fingerprint_view(data: dict[str, Any] | None) -> dict[str, Any]:
    """What the page says of a fingerprint: the nearest policy, the distances,
    each point's projection and the points not run."""
    if data is None:
        return {}
    return {
        "nearest": data["nearest"],
        "distances": data["distances"],
        "points": {p["name"]: p["stored"] for p in data["points"]},
        "unsupported": [p["name"] for p in data["unsupported"]],
    }


PYTHON_TARGETS = [t for t in RUNTIME_TARGETS if not t.node]
"""The Python frameworks (tests/test_node_frameworks.py reruns the Node ones)."""


@pytest.mark.parametrize("target", PYTHON_TARGETS, ids=[t.name for t in PYTHON_TARGETS])
def test_the_runtime_page_still_matches_the_framework(
    target: RuntimeTarget, tmp_path: Path
) -> None:
    kept = DOCS / KEPT / f"{target.name}.json"
    if not kept.is_file():
        pytest.skip(f"the runtime page keeps no results for {target.name} yet")
    venv = _venv(target.extra)
    run = run_runtime_target(target, venv, tmp_path / "results.json", timeout=900)
    assert run.results is not None, run.problem
    assert run.problem == "", run.problem
    errors = [f"{r.id}: {r.reason}" for r in run.results.rules if r.verdict == "error"]
    assert errors == [], "the adapter broke the contract:\n" + "\n".join(errors)
    page = load_results(kept)
    before, now = _scenario_outcomes(page), _scenario_outcomes(run.results)
    changed = [f"{k}: page says {before.get(k)}, now {v}" for k, v in now.items()
               if not _agree(before.get(k, []), v)]
    regenerate = f"'memconform compliance --out docs --target {target.name}'"
    assert changed == [], (
        f"the runtime page no longer matches the framework; regenerate it with {regenerate}:\n"
        + "\n".join(changed)
    )
    assert _fingerprint_view(run.results.fingerprint) == _fingerprint_view(page.fingerprint), (
        f"the fingerprint changed; regenerate the page with {regenerate}"
    )


SCRIPTS = {name: script for name, script in runtime_scripts(DOCS).items()
           if script.endswith(".py")}
"""The Python frameworks' scripts (tests/test_node_frameworks.py runs the Node ones)."""


def _findings_of(script: str) -> dict[str, set[str]]:
    """Target name -> the rules of its findings, for the targets sharing ``script``;
    a ``kit-side`` finding (the kit's or its adapter's) is no framework behaviour
    and has nothing to reproduce."""
    names = {t.name for t in TARGETS} | {t.name for t in RUNTIME_TARGETS}
    findings = load_findings(DOCS / "findings.toml", load_catalogue().ids, names)
    targets = {t.name for t in RUNTIME_TARGETS if SCRIPTS.get(t.name) == script}
    found: dict[str, set[str]] = {}
    for (target, rule), finding in findings.items():
        if target in targets and finding.severity != "kit-side":
            found.setdefault(target, set()).add(rule)
    return found


@pytest.mark.parametrize("script", sorted(set(SCRIPTS.values())))
def test_the_framework_only_script_reproduces_every_runtime_finding(
    script: str, tmp_path: Path
) -> None:
    """The script runs as a framework's maintainer would run it: ``python
    script.py``, from an empty folder, with no PYTHON* variable (its own folder
    first on its import path, as it is for them)."""
    target = next(t for t in RUNTIME_TARGETS if SCRIPTS.get(t.name) == script)
    venv = _venv(target.extra)
    path = DOCS / script
    assert "memconform" not in path.read_text(encoding="utf-8").replace(
        "memconform compliance", ""), "a reproduction script imports nothing of the kit"
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(path)], cwd=tmp_path,
        env=_plain_environment(),
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shown = {line.split(" reproduced: ", 1)[0].split()[-1]
             for line in done.stdout.splitlines() if " reproduced: " in line
             and " NOT reproduced: " not in line}
    for name, rules in _findings_of(script).items():
        assert rules <= shown, f"{name}: no reproduction of {sorted(rules - shown)}"
