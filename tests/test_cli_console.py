"""What ``memconform run`` says on the console, driven through the command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _memconform(tmp_path: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--out", str(tmp_path / "report"), *args],
        capture_output=True, text=True, check=False, cwd=cwd, timeout=600,
        env={**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)},
    )


def test_a_misspelt_capability_is_an_adapter_error_naming_the_known_ones(
    tmp_path: Path,
) -> None:
    done = _memconform(
        tmp_path, "--store", "tests.bad_store_adapters:misspelt_capability", "--rule", "ST-001"
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "unknown capability 'commit-flag'" in done.stderr
    assert "(known: commit-flags, errors, turn-records" in done.stderr


def test_the_run_ends_naming_each_failed_errored_and_stale_rule(tmp_path: Path) -> None:
    baseline = tmp_path / "known.toml"
    baseline.write_text('[[entry]]\nrule = "ST-001"\nreason = "thought broken"\n', "utf-8")
    store = "tests.bad_store_adapters:bare_core_wrong_window"
    done = _memconform(
        tmp_path, "--store", store, "--rule", "ST-003", "--rule", "st-001",
        "--baseline", str(baseline),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    summary = lines[lines.index("memconform: short summary") + 1 :]
    assert summary[0].startswith("FAIL  ST-003: MUST broken in ")
    assert summary[1] == f"      re-run: memconform run --store {store} --rule ST-003"
    assert summary[2].startswith("STALE ST-001: ")
    assert summary[3].startswith("      re-run: memconform run --store ")
    assert summary[4].startswith("memconform: fail 1, ")
    broken = _memconform(
        tmp_path, "--store", "tests.bad_store_adapters:misspelt_capability", "--rule", "ST-001"
    )
    assert "ERROR ST-001: the adapter broke the contract" in broken.stdout


def test_a_store_module_beside_the_working_directory_imports_as_with_python_m(
    tmp_path: Path,
) -> None:
    """The ``memconform`` script run in the folder holding ``mystore.py``, with
    nothing on PYTHONPATH, imports it as ``python -m`` would."""
    (tmp_path / "mystore.py").write_text(
        "from memconform.adapters.memory import MemoryStore\n\n\n"
        "def make():\n    return MemoryStore()\n",
        encoding="utf-8",
    )
    script = Path(sys.executable).parent / "memconform"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(script), "run", "--store", "mystore:make", "--rule", "ST-001", "--out", "report"],
        capture_output=True, text=True, check=False, cwd=tmp_path, timeout=600,
        env={**env, "CI": "true"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass 1" in done.stdout


def test_a_store_module_that_cannot_be_found_says_how_to_make_it_importable(
    tmp_path: Path,
) -> None:
    done = _memconform(tmp_path, "--store", "nosuchmodule_xyz:make", cwd=tmp_path)
    assert done.returncode == 5, done.stdout + done.stderr
    assert "run from the folder that holds it, or put that folder on PYTHONPATH" in done.stderr


def test_jobs_needs_nothing_beyond_the_plain_install(tmp_path: Path) -> None:
    """pytest-xdist is one of memconform's own dependencies (not only the test
    extra's), and ``--jobs 2`` runs through it."""
    from importlib.metadata import requires

    plain = [r for r in requires("memconform") or [] if "extra ==" not in r]
    assert any(r.startswith("pytest-xdist") for r in plain), plain
    done = _memconform(tmp_path, "--store", "memory://", "--rule", "ST-001", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass 1" in done.stdout


def test_the_readme_counts_the_files_a_run_writes(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"`memconform run --out DIR` writes (\w+) files", readme)
    assert said, "the README says how many files a run writes"
    done = _memconform(tmp_path, "--store", "memory://", "--rule", "ST-001")
    assert done.returncode == 0, done.stdout + done.stderr
    written = sorted(p.name for p in (tmp_path / "report").iterdir())
    numbers = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight"]
    assert said[1] == numbers[len(written)], written
    for name in written:
        assert f"| `{name}` |" in readme, f"the README's table names {name}"


def test_a_store_ending_the_process_while_opened_is_an_adapter_error(tmp_path: Path) -> None:
    """A store whose constructor calls sys.exit(0) must not end the run with exit 0
    and no report: it is the adapter's error, with a report saying so."""
    (tmp_path / "exiting_store.py").write_text(
        "import sys\n\nclass Exiting:\n    def __init__(self):\n        sys.exit(0)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--out", str(tmp_path / "report"),
         "--store", "exiting_store:Exiting", "--rule", "ST-001"],
        capture_output=True, text=True, check=False, cwd=tmp_path, timeout=600,
        env={**os.environ, "CI": "true", "PYTHONPATH": os.pathsep.join([str(tmp_path),
                                                                      str(ROOT)])},
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "raised SystemExit(0) while the kit opened it" in done.stdout + done.stderr
    assert (tmp_path / "report" / "results.json").is_file()


def test_a_missing_framework_extra_is_one_usage_line_naming_the_runtime_and_the_extra(
    tmp_path: Path,
) -> None:
    # the framework's library made unimportable in this process only; the
    # message comes from the real adapter, registry and command
    script = (
        "import sys; sys.modules['agents'] = None\n"
        "from memconform.cli import main\n"
        f"sys.exit(main(['run', '--runtime', 'openai-agents', '--out', {str(tmp_path)!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=ROOT,
        timeout=600, env={**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 5, done.stdout + done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("memconform: usage error: the runtime openai-agents cannot be built: ")
    assert line.endswith("install it with: pip install 'memconform[openai-agents]'")
    assert "store" not in line


def test_a_store_failing_to_open_is_named_once_with_how_many_rules_it_errored(
    tmp_path: Path,
) -> None:
    (tmp_path / "raising_store.py").write_text(
        "def open_it():\n    raise ConnectionError('no server at 127.0.0.1:1')\n", "utf-8"
    )
    done = _memconform(tmp_path, "--store", "raising_store:open_it", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 1, done.stdout
    judged = re.search(r"memconform: error (\d+)", done.stdout)
    assert judged is not None, done.stdout
    assert errors[0].endswith(f"no server at 127.0.0.1:1 (and {int(judged[1]) - 1} more times)")


def test_the_console_names_the_store_classes_as_it_names_the_runtime_classes() -> None:
    from memconform.cli.summary import store_classes_line

    data = {
        "header": {"subject": "store"},
        "classes": [
            {"name": "core", "claimed": True, "status": "achieved"},
            {"name": "state", "claimed": True, "status": "not-achieved"},
            {"name": "durable", "claimed": False, "status": "not-claimed"},
        ],
    }
    assert store_classes_line(data) == (
        "memconform: store classes achieved: core; not achieved: state (not-achieved)"
    )
    assert store_classes_line({**data, "header": {"subject": "runtime"}}) is None
