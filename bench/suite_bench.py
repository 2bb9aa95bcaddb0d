"""Wall time of the whole conformance suite against ``memory://`` and SQLite.

Run ``python bench/suite_bench.py``; it prints one line per configuration with
the wall time, the rule count and the exit code. Target: the whole suite
against ``memory://`` in under 60 s on 2 cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIGURATIONS = [
    ("memory://, serial", ["--store", "memory://"]),
    ("memory://, 2 workers", ["--store", "memory://", "--jobs", "2"]),
    ("simulator + SQLite, serial", []),
]


def main() -> int:
    """Run each configuration once and print its figures."""
    print(f"{'configuration':<30} {'wall s':>8} {'rules':>6} {'exit':>5}")
    for name, extra in CONFIGURATIONS:
        with tempfile.TemporaryDirectory() as out:
            began = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "memconform.cli", "run", "--out", out, *extra],
                capture_output=True, text=True, check=False,
                env={**os.environ, "CI": "true"},
            )
            wall = time.perf_counter() - began
            results = Path(out) / "results.json"
            rules = len(json.loads(results.read_text())["rules"]) if results.exists() else 0
        print(f"{name:<30} {wall:>8.1f} {rules:>6} {proc.returncode:>5}")
    print(f"machine: {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
