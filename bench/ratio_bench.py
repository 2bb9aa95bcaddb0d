"""The kit's cost as ratios to pytest-bdd's own floor, measured in one run.

``python bench/ratio_bench.py [--repeat N] [--only NAME]`` runs each
configuration below as a whole process (``memconform run``), and beside it a
bare pytest-bdd suite of the same number of five-step scenarios that this
script writes itself (the floor: what pytest-bdd costs before the kit does
anything). It prints, per configuration, the scenario count, the CPU time (user
and system time of the process and of every process it waited for), the wall
time and the peak memory of each side, and the ratio of CPU times. Ratios, not
times, are what to compare across machines and loads; the best of ``--repeat``
runs is kept. ``--json`` prints the ratios as one JSON object. The kit runs
with ``--jobs 1`` (``--jobs N`` changes it), as the floor does: a ratio of
the work each side does, not of how it is spread over the cores.

``bench/ratios.json`` holds the recorded ratios; ``tests/test_ratio_bench.py``
fails when a ratio measured in one run is more than 25% above its record.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CONFIGURATIONS: dict[str, list[str]] = {
    "quick start": [],
    "memory:// store": ["--store", "memory://"],
    "runtime": ["--runtime", "simulator"],
}
"""Name -> the ``memconform run`` options of each configuration."""

_SCENARIOS = re.compile(r"\((\d+) scenarios? run\)")

_STEPS = '''\
from pytest_bdd import given, parsers, scenarios, then, when

scenarios("floor.feature")


@given(parsers.parse("a counter at {n:d}"), target_fixture="counter")
def counter(n):
    return {"n": n}


@when("it is increased")
def increased(counter):
    counter["n"] += 1


@when("it is increased again")
def increased_again(counter):
    counter["n"] += 1


@then(parsers.parse("it holds {n:d}"))
def holds(counter, n):
    assert counter["n"] == n


@then("it is positive")
def positive(counter):
    assert counter["n"] > 0
'''


@dataclass(frozen=True)
class Cost:
    """What one process (and the processes it waited for) cost."""

    cpu: float
    wall: float
    peak_mib: float
    scenarios: int
    exit_code: int


_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[2:]).returncode\n"
    "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "open(sys.argv[1], 'w').write(json.dumps([use.ru_utime + use.ru_stime, use.ru_maxrss, code]))\n"
)


def _measure(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[Cost, str]:
    """Run ``command`` under a small wrapper process, so that the CPU time and
    peak memory are those of this command and its descendants alone."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as usage:
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _WRAPPER, usage.name, *command], cwd=cwd, env=env,
            capture_output=True, text=True, check=False,
        )
        wall = time.perf_counter() - began
        cpu, peak_kib, code = json.loads(Path(usage.name).read_text())
    found = _SCENARIOS.search(done.stdout + done.stderr)
    passed = re.search(r"(\d+) passed", done.stdout)
    count = int(found.group(1)) if found else int(passed.group(1)) if passed else 0
    return Cost(cpu, wall, peak_kib / 1024, count, code), done.stdout + done.stderr


def floor_suite(folder: Path, scenarios: int) -> Path:
    """Write a bare pytest-bdd suite of ``scenarios`` five-step scenarios."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["Feature: floor", ""]
    for i in range(scenarios):
        lines += [
            f"  Scenario: counter {i}",
            f"    Given a counter at {i}",
            "    When it is increased",
            "    And it is increased again",
            f"    Then it holds {i + 2}",
            "    And it is positive",
            "",
        ]
    (folder / "floor.feature").write_text("\n".join(lines), encoding="utf-8")
    (folder / "test_floor.py").write_text(_STEPS, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return folder


def measure(name: str, jobs: int = 1) -> dict[str, object]:
    """One configuration and its floor, measured one after the other."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    with tempfile.TemporaryDirectory(prefix="memconform-ratio-") as tmp:
        root = Path(tmp)
        kit, output = _measure(
            [sys.executable, "-m", "memconform.cli", "run", "--out", str(root / "report"),
             "--jobs", str(jobs), *CONFIGURATIONS[name]],
            root, env,
        )
        if kit.exit_code != 0 or kit.scenarios == 0:
            raise RuntimeError(f"{name}: exit code {kit.exit_code}\n{output[-2000:]}")
        suite = floor_suite(root / "floor", kit.scenarios)
        floor, output = _measure(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
            suite, env,
        )
        if floor.exit_code != 0:
            raise RuntimeError(f"the floor suite failed\n{output[-2000:]}")
    return {"kit": kit, "floor": floor, "ratio": kit.cpu / max(floor.cpu, 1e-9)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=sorted(CONFIGURATIONS))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--jobs", type=int, default=1, help="the kit's --jobs (default 1)")
    args = parser.parse_args(argv)
    names = [args.only] if args.only else list(CONFIGURATIONS)
    best: dict[str, dict[str, object]] = {}
    for name in names:
        for _ in range(args.repeat):
            got = measure(name, args.jobs)
            if name not in best or float(got["ratio"]) < float(best[name]["ratio"]):  # type: ignore[arg-type]
                best[name] = got
    if args.json:
        print(json.dumps({name: round(float(v["ratio"]), 2) for name, v in best.items()}))  # type: ignore[arg-type]
        return 0
    print(f"{'configuration':<18} {'scen.':>6} {'kit CPU s':>10} {'wall s':>7} {'MiB':>6}"
          f" {'floor CPU s':>12} {'ratio':>6}")
    for name, got in best.items():
        kit, floor = got["kit"], got["floor"]
        assert isinstance(kit, Cost)
        assert isinstance(floor, Cost)
        print(f"{name:<18} {kit.scenarios:>6} {kit.cpu:>10.1f} {kit.wall:>7.1f} "
              f"{kit.peak_mib:>6.0f} {floor.cpu:>12.1f} {float(got['ratio']):>6.2f}")  # type: ignore[arg-type]
    print(f"machine: {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
