"""How reliably the multi-process checks catch the stores they must reject.

Runs ST-033's check (:func:`memconform.steps.contract_checks.
check_concurrent_writers`) against the lost-update mutant (a JSON file
rewritten without a lock, ``store-lost-update``) RUNS times, each on a new
SQLite file, and prints how many runs missed it (target: 0 of 300), which
round of writers caught it, and the time per run. ``--kills`` does the same
for ST-034's check against the row-by-row mutants (``store-row-by-row``,
``store-checks-then-row-by-row``), which have no row point, so every kill is
timed.

Run: ``.venv/bin/python bench/concurrency_bench.py [RUNS] [--kills]``. Not a
timed test: it reports figures and says whether the target was met.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from memconform.steps.contract_checks import check_atomic_batch, check_concurrent_writers

TARGET_MISSES = 0


def _one(mutant: str, kills: bool, folder: Path, n: int) -> tuple[bool, str]:
    url = f"sqlite:///{folder / f'bench-{n}.db'}"
    if kills:
        result = check_atomic_batch(
            url, f"k{n}", capabilities={"durable", "atomic-batch"}, mutant=mutant
        )
    else:
        result = check_concurrent_writers(url, f"c{n}", mutant=mutant)
    if result.adapter_error is not None:
        raise SystemExit(f"run {n}: the check broke: {result.evidence}")
    caught = not result.passed and result.conclusive
    where = re.findall(r"^(c\d+-r\d+)", result.evidence, re.MULTILINE)
    return caught, (where[0].rsplit("-", 1)[1] if where else "kill")


def main(argv: list[str]) -> int:
    kills = "--kills" in argv
    numbers = [a for a in argv if not a.startswith("--")]
    runs = int(numbers[0]) if numbers else 300
    mutants = (
        ["store-row-by-row", "store-checks-then-row-by-row"] if kills else ["store-lost-update"]
    )
    ok = True
    for mutant in mutants:
        misses = 0
        caught_in: Counter[str] = Counter()
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="memconform-bench-") as tmp:
            for n in range(runs):
                caught, where = _one(mutant, kills, Path(tmp), n)
                if caught:
                    caught_in[where] += 1
                else:
                    misses += 1
        took = time.monotonic() - started
        print(
            f"{mutant}: {runs} runs, {misses} missed ({(runs - misses) / runs:.2%} caught); "
            f"caught in {dict(sorted(caught_in.items()))}; {took / runs:.2f} s per run"
        )
        ok = ok and misses <= TARGET_MISSES
    print("target met" if ok else f"target missed: more than {TARGET_MISSES} misses")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
