"""The Node runtime example over the runtime protocol: the clean one achieves
every save-policy class, as the simulator does, and each named defect of its
broken twin is rejected on the rules the twin's header names.

Needs ``node`` (20 or later) on the PATH: without it the tests are skipped,
except in CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adapters_support import ROOT, require_server

EXAMPLES = ROOT / "node" / "examples"
DEFECTS = {
    "message-defers-input": {"SP-001", "SP-005", "SP-021", "SP-031"},
    "run-stores-failed-run": {"SP-009", "SP-011", "SP-028"},
    "blocked-input-stored": {"SP-004"},
    "error-record-skipped": {"SP-013", "SP-015"},
}
"""Each defect of the twin, and rules it must fail (a part of what its header lists)."""


def _probe(node: str) -> None:
    path = shutil.which(node)
    if path is None:
        raise FileNotFoundError(f"{node} is not on the PATH")
    version = subprocess.run([path, "--version"], capture_output=True, text=True, check=True)
    if int(version.stdout.strip().lstrip("v").split(".")[0]) < 20:
        raise RuntimeError(f"Node.js 20 or later is needed, found {version.stdout.strip()}")


@pytest.fixture(scope="module")
def node() -> str:
    return require_server("Node.js", "MEMCONFORM_NODE", "node", _probe)


def _run(tmp_path: Path, runtime: str, *rules: str) -> tuple[int, dict[str, str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    selection = [w for rule in rules for w in ("--rule", rule)] or ["--profile", "save-policy"]
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--runtime", runtime, *selection,
         "--out", "out"],
        capture_output=True, text=True, check=False, cwd=tmp_path, env=env, timeout=600)
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    verdicts = {r["id"]: r["verdict"] for r in results["rules"] if r["profile"] == "save-policy"}
    return done.returncode, verdicts, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.slow
def test_the_example_passes_every_save_policy_rule(node: str, tmp_path: Path) -> None:
    runtime = f"stdio:{shlex.quote(node)} {shlex.quote(str(EXAMPLES / 'save-policy-runtime.mjs'))}"
    code, verdicts, said = _run(tmp_path, runtime)
    assert code == 0, said
    # as for the simulator: every save-policy rule a runtime keeps passes (SP-018
    # is the store's to keep, not scored when a runtime is judged)
    assert set(verdicts.values()) <= {"pass", "not-scored"}, verdicts
    assert sum(1 for v in verdicts.values() if v == "pass") >= 30


@pytest.mark.slow
@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_defect_of_the_twin_is_rejected(node: str, tmp_path: Path, defect: str) -> None:
    twin = EXAMPLES / "save-policy-runtime-broken.mjs"
    runtime = f"stdio:{shlex.quote(node)} {shlex.quote(str(twin))} {defect}"
    code, verdicts, said = _run(tmp_path, runtime, *sorted(DEFECTS[defect]))
    assert code == 1, said
    passing = {rule for rule in DEFECTS[defect] if verdicts.get(rule) != "fail"}
    assert not passing, f"{defect} went unnoticed by {sorted(passing)}"


def test_a_node_runtime_refusing_its_configuration_reads_as_a_value_error(
    node: str, tmp_path: Path
) -> None:
    """``ConfigurationRefused`` thrown out of ``execute`` is the protocol's
    ``configuration`` answer, which the kit reads as a Python runtime's
    ``ValueError`` naming the setting; any other error stays the adapter's."""
    from memconform.adapters.memory import MemoryStore
    from memconform.adapters.stdio_runtime import ConfigurationRejected, StdioRuntime
    from memconform.harness.environment import Environment
    from memconform.harness.proxy import RecordingStore

    harness = (ROOT / "node" / "runtime.mjs").as_uri()
    child = tmp_path / "refusing.mjs"
    child.write_text(
        f'import {{ serve, ConfigurationRefused }} from "{harness}";\n'
        'serve({ profiles: ["turns"], policies: null, hooks: null, provides: [],\n'
        '  async execute(script) {\n'
        '    if (script.history_window < 0) throw new ConfigurationRefused(\n'
        '      `history_window must be 0 or more, got ${script.history_window}`);\n'
        '    throw new Error("not a configuration problem");\n'
        '  } });\n', encoding="utf-8")
    runtime = StdioRuntime([node, str(child)], timeout=30)
    try:
        env = Environment({"history_window": -1}, RecordingStore(MemoryStore()))
        with pytest.raises(ConfigurationRejected, match="history_window must be 0") as raised:
            runtime.execute({"history_window": -1}, env)
        assert isinstance(raised.value, ValueError)
        other = Environment({"history_window": 2}, RecordingStore(MemoryStore()))
        with pytest.raises(Exception, match="not a configuration problem") as wrong:
            runtime.execute({"history_window": 2}, other)
        assert not isinstance(wrong.value, ValueError)
    finally:
        runtime.close()
