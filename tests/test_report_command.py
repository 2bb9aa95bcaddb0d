"""``memconform report`` re-renders a run's results to the same bytes, and the
header names a store as it names itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memconform import __version__
from memconform.adapters.memory import MemoryStore
from memconform.adapters.stdio import StdioStore
from memconform.cli import _store_identity

FILES = ("results.json", "report.html", "junit.xml", "badge.svg")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memconform.cli", *args],
        capture_output=True, text=True, check=False, env={**os.environ, "CI": "true"},
    )


@pytest.mark.slow
def test_the_report_of_run_and_the_one_report_renders_again_are_identical(
    tmp_path: Path,
) -> None:
    run = _cli("run", "--store", "tests.bad_store_adapters:bare_core_wrong_window",
               "--rule", "ST-003", "--rule", "ST-017", "--out", str(tmp_path / "run"))
    assert run.returncode == 1, run.stdout + run.stderr
    again = _cli("report", str(tmp_path / "run" / "results.json"),
                 "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stdout + again.stderr
    for name in FILES:
        written, rendered = tmp_path / "run" / name, tmp_path / "again" / name
        assert written.read_bytes() == rendered.read_bytes(), name
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    st003 = next(r for r in results["rules"] if r["id"] == "ST-003")
    headline = next(s for s in st003["scenarios"] if s["outcome"] == "failed")
    assert headline["feature"].startswith("features/store/window.feature:")
    assert headline["gherkin"][0].startswith("Scenario")
    assert results["header"]["store"]["type"] == "tests.bad_store_adapters._BareCore"


def test_a_stdio_store_is_named_by_its_hello_and_a_built_in_store_by_the_kit() -> None:
    server = [sys.executable, "-m", "memconform.adapters.stdio_server", "memory://"]
    store = StdioStore(server)
    try:
        identity = _store_identity(store)
    finally:
        store.close()
    assert identity == {"store_type": "MemoryStore (stdio)", "store_version": __version__}
    assert _store_identity(MemoryStore()) == {
        "store_type": "memconform.adapters.memory.MemoryStore", "store_version": __version__,
    }


def test_a_stdio_store_passes_on_what_its_adapter_provides() -> None:
    url = "tests.bad_store_adapters:window_by_adapter"
    store = StdioStore([sys.executable, "-m", "memconform.adapters.stdio_server", url])
    try:
        assert store.provides == frozenset({"window"})
    finally:
        store.close()
