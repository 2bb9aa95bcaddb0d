"""Render the reports of a synthetic run of 10,000 rules; print time and sizes.

Targets: building and writing every report under 2 s of CPU time (CPU, not
wall time, and the best of three rounds, so a busy machine does not skew it),
and report.html under 5 MB.
The sizes of results.json and junit.xml are printed too; results.json is
larger because each rule entry carries its catalogue text, source and the
full evidence of failures, which keeps the file self-contained.
Run: ``.venv/bin/python bench/report_bench.py [RULES]``. Not a timed test: the
figures depend on the machine, so nothing here fails on them; it only says
whether the targets were met.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memconform.catalogue import PROFILE_PREFIXES, Catalogue, Rule
from memconform.reports import build_results, write_reports

TARGET_SECONDS = 2.0
TARGET_BYTES = 5 * 1024 * 1024
ROUNDS = 3
CAPABILITIES = (None, None, "errors", "commit-flags", "state", "knowledge", "durable")


def synthetic_catalogue(size: int) -> Catalogue:
    """``size`` rules spread over the profiles, levels and classes."""
    profiles = list(PROFILE_PREFIXES.items())
    rules = []
    for n in range(size):
        profile, prefix = profiles[n % len(profiles)]
        rules.append(
            Rule(
                id=f"{prefix}-{n:05d}",
                level=("MUST", "MUST", "SHOULD", "MAY")[n % 4],
                profile=profile,
                subject="store" if profile == "store" or n % 3 == 0 else "runtime",
                capability=CAPABILITIES[n % len(CAPABILITIES)],
                source_document=f"00{n % 5}",
                source_section=f"{n % 9}. A section of the document",
                text=f"Rule {n}: the store keeps every batch of run {n} whole and in order.",
                decision="Decided from the implementations." if n % 10 == 0 else None,
            )
        )
    return Catalogue(tuple(rules), "bench", "0" * 16)


def synthetic_outcomes(catalogue: Catalogue) -> list[dict[str, Any]]:
    """One or two scenarios per rule; one in ten fails with a diff and store calls."""
    outcomes = []
    for n, rule in enumerate(catalogue):
        failed = n % 10 == 7
        calls = [
            {"seq": k, "kind": "store", "name": "append",
             "args": [f"thread-{n}", [{"id": f"m{k}", "role": "user", "text": f"hello {k}"}]],
             "result": None}
            for k in range(1, 4 if not failed else 6)
        ]
        outcomes.append(
            {
                "nodeid": f"features/{rule.profile}/bench.feature::scenario {n}",
                "scenario": f"scenario {n}",
                "feature": f"features/{rule.profile}/bench.feature",
                "rules": [rule.id],
                "outcome": "failed" if failed else "passed",
                "message": "messages differ\nexpected: 2\nobserved: 1" if failed else "",
                "failing_step": "Then the thread holds 2 messages" if failed else None,
                "expected": "| user | hello |\n| assistant | hi |" if failed else None,
                "observed": "| user | hello |" if failed else None,
                "store_calls": calls,
            }
        )
    return outcomes


def main(argv: list[str]) -> int:
    size = int(argv[1]) if len(argv) > 1 else 10_000
    catalogue = synthetic_catalogue(size)
    outcomes = synthetic_outcomes(catalogue)
    header = {
        "kit_version": "bench", "subject": "both", "store": "memory://",
        "capabilities": ["errors", "commit-flags", "state"],
        "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:10:00Z",
    }
    timings: list[tuple[float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(ROUNDS):
            wall, cpu = time.perf_counter(), time.process_time()
            results = build_results(outcomes, catalogue, header)
            built_cpu = time.process_time()
            paths = write_reports(results, Path(tmp))
            timings.append(
                (built_cpu - cpu, time.process_time() - built_cpu, time.perf_counter() - wall)
            )
        sizes = {p.name: p.stat().st_size for p in paths}
    build, render, wall_time = min(timings, key=lambda t: t[0] + t[1])
    total_cpu = build + render
    print(
        f"{size} rules, best of {ROUNDS}: build {build:.2f} s, render+write {render:.2f} s, "
        f"total {total_cpu:.2f} s CPU ({wall_time:.2f} s wall; target < {TARGET_SECONDS:.0f} s)"
    )
    for name, nbytes in sizes.items():
        mark = "" if nbytes < TARGET_BYTES else "  (over 5 MB)"
        print(f"  {name:<13} {nbytes / 1024 / 1024:6.2f} MB{mark}")
    met = total_cpu < TARGET_SECONDS and sizes["report.html"] < TARGET_BYTES
    print("targets met (time, report.html size)" if met else "targets NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
