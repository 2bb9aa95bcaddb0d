"""The environment of a fresh process: the deployment's configuration as the
kit found it, never the kit's own variables, never what a store wrote later."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PROBE = """
import json, os
from memconform.harness import fresh_process
os.environ["WRITTEN_LATER"] = "by the store"
print(json.dumps(fresh_process.fresh_environment("/tmp/new-folder", {"TZ": "UTC"})))
"""


def test_a_fresh_process_gets_the_starting_environment_less_the_kits_own() -> None:
    env = {
        "PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT),
        "STORE_DSN": "postgresql://db/agents", "HOME": "/home/someone",
        "MEMCONFORM_FORK_SERVER": "0", "PYTEST_XDIST_WORKER": "gw3",
        "COV_CORE_SOURCE": "x", "TMPDIR": "/tmp/old-folder", "TMP": "/tmp/old",
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
        check=True, timeout=120,
    )
    seen = json.loads(done.stdout)
    seen.pop("LC_CTYPE", None)  # the interpreter's own, set at start-up in the C locale
    assert seen == {
        "PATH": env["PATH"], "STORE_DSN": "postgresql://db/agents", "HOME": "/home/someone",
        "TMPDIR": "/tmp/new-folder", "TZ": "UTC",
    }


def test_a_store_located_by_an_environment_variable_passes_ps_031(tmp_path: Path) -> None:
    """A store opened the way deployments open them, its file named by a
    variable, is read back by the fresh process PS-031 starts."""
    (tmp_path / "envstore.py").write_text(
        "import os\n\nfrom memconform.adapters.sqlite import SQLiteStore\n\n\n"
        "def make():\n    return SQLiteStore(os.environ['ENVSTORE_PATH'])\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--store", "envstore:make",
         "--rule", "PS-031", "--out", str(tmp_path / "report")],
        capture_output=True, text=True, check=False, cwd=tmp_path, timeout=600,
        env={**os.environ, "CI": "true", "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
             "ENVSTORE_PATH": str(tmp_path / "deployed.db")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass 1" in done.stdout, done.stdout
