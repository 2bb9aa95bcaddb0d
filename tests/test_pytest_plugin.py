"""The installed pytest plugin stays out of the way until a session asks for it.

Every pytest session in an environment with memconform installed loads the
``memconform`` entry point; these tests run such sessions in a folder of their
own and check that an unrelated suite (even one with its own ``--store``
option) runs unchanged, and that each way of asking wakes the plugin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = '''
import sys


def test_probe(request):
    markers = " ".join(request.config.getini("markers"))
    loaded = "memconform.steps.plugin" in sys.modules
    catalogue = "memconform.catalogue" in sys.modules
    steps = "memconform.steps.store" in sys.modules
    print(f"PROBE plugin={loaded} catalogue={catalogue} steps={steps} "
          f"marker={'ST-001:' in markers}")
'''

VENDOR_CONFTEST = '''
def pytest_addoption(parser):
    parser.addoption("--store", default="default-store", help="the vendor's own option")
    parser.addoption("--runtime", default="default-runtime", help="the vendor's own option")
'''

VENDOR_TEST = '''
def test_the_vendor_option_is_the_vendors(request):
    assert request.config.getoption("--store") == "vendor://db"
    assert request.config.getoption("--runtime") == "default-runtime"


def test_something_else():
    assert sum([1, 2]) == 3
'''


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *args],
        cwd=folder, capture_output=True, text=True, check=False, env=env, timeout=300,
    )


def _probe(tmp_path: Path, *args: str, ini: str = "") -> str:
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    if ini:
        (tmp_path / "pytest.ini").write_text(ini, encoding="utf-8")
    done = _pytest(tmp_path, "--strict-config", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return next(line for line in done.stdout.splitlines() if line.startswith("PROBE"))


def test_an_unrelated_session_loads_no_catalogue_markers_or_steps(tmp_path: Path) -> None:
    assert _probe(tmp_path) == "PROBE plugin=False catalogue=False steps=False marker=False"


@pytest.mark.parametrize(
    ("args", "ini"),
    [
        (("--memconform-timeout", "5"), ""),
        (("--memconform-store", "memory://"), ""),
        (("-p", "memconform.steps.plugin"), ""),
        ((), "[pytest]\nmemconform = true\n"),
    ],
    ids=["an option", "the store option", "explicit -p", "the ini key"],
)
def test_each_way_of_asking_wakes_the_plugin(
    tmp_path: Path, args: tuple[str, ...], ini: str
) -> None:
    assert _probe(tmp_path, *args, ini=ini) == (
        "PROBE plugin=True catalogue=True steps=True marker=True"
    )


def test_the_ini_key_false_keeps_it_dormant(tmp_path: Path) -> None:
    probe = _probe(tmp_path, ini="[pytest]\nmemconform = false\n")
    assert probe == "PROBE plugin=False catalogue=False steps=False marker=False"


@pytest.mark.parametrize("woken", [False, True], ids=["dormant", "woken"])
def test_a_vendor_suite_with_its_own_store_option_runs_unchanged(
    tmp_path: Path, woken: bool
) -> None:
    (tmp_path / "conftest.py").write_text(VENDOR_CONFTEST, encoding="utf-8")
    (tmp_path / "test_vendor.py").write_text(VENDOR_TEST, encoding="utf-8")
    extra = ("--memconform-timeout", "5") if woken else ()
    done = _pytest(tmp_path, "--store", "vendor://db", *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_the_old_short_options_are_not_pytest_options(tmp_path: Path) -> None:
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    done = _pytest(tmp_path, "--mutant", "x")
    assert done.returncode == 4
    assert "unrecognized arguments: --mutant" in done.stderr


def test_stress_scenarios_are_collected_after_every_other_one() -> None:
    """A hung stress-size call keeps a thread running that no one can stop, so
    the ``@stress`` rows run last and cannot slow the rules judged after them."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "memconform.steps.plugin", "memconform/steps/suite.py",
         "--memconform-store", "memory://"],
        cwd=root, capture_output=True, text=True, check=False,
    )
    items = [line for line in done.stdout.splitlines() if "::" in line]
    stress = [i for i, line in enumerate(items)
              if line.endswith(("[10000]", "[1048576-ASCII]", "[1048577-4-byte]",
                                "[16777216-2-byte]"))]
    assert len(stress) == 4, done.stdout[-2000:]
    assert stress == list(range(len(items) - 4, len(items)))


def test_a_counterexample_that_cannot_be_written_leaves_the_verdict_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The export folder is a file: the failure is still judged (nothing
    raises out of the hook) and the log says what was lost."""
    from types import SimpleNamespace

    from memconform.steps import _capture

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    options = {"--memconform-export-failures": str(blocked / "sub"),
               "--memconform-store": "memory://", "--memconform-mutant": None}
    item = SimpleNamespace(name="test_x", config=SimpleNamespace(getoption=options.get))
    failure = SimpleNamespace(steps=[{"op": "append", "thread": "t", "batch": []}])
    _capture._export(item, ["ST-001"], failure)  # type: ignore[arg-type]
    assert "the counterexample of test_x could not be written" in capsys.readouterr().err
