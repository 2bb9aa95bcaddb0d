"""The kit's cost stays near its recorded ratio to pytest-bdd's own floor.

``bench/ratio_bench.py`` measures a ``memconform run`` and a bare pytest-bdd
suite of the same scenario count one after the other, in one run, and takes
the ratio of their CPU times; ``bench/ratios.json`` records it. This test
measures the ``memory://`` store run (the cheapest configuration that passes
through every layer of the kit) and fails when its ratio is more than 25% above
the record. A ratio, never an absolute time: both sides meet the same machine
and the same load. A first measurement over the limit is taken again once (a
burst of load on one side only), and the lower ratio is judged.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIGURATION = "memory:// store"
MARGIN = 1.25

pytestmark = pytest.mark.slow


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ratio_bench", ROOT / "bench" / "ratio_bench.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ratio_bench", module)
    spec.loader.exec_module(module)
    return module


def test_the_store_run_stays_within_a_quarter_of_its_recorded_ratio() -> None:
    from memconform import measurement

    if measurement.active():
        pytest.skip("coverage measurement is on: it changes the kit's side of the ratio only")
    recorded = float(json.loads((ROOT / "bench" / "ratios.json").read_text())[CONFIGURATION])
    bench = _bench()
    limit = recorded * MARGIN
    ratios = [float(bench.measure(CONFIGURATION)["ratio"])]
    if ratios[0] > limit:
        ratios.append(float(bench.measure(CONFIGURATION)["ratio"]))
    assert min(ratios) <= limit, (
        f"the {CONFIGURATION} run costs {min(ratios):.2f}x the floor's CPU time "
        f"(measured {', '.join(f'{r:.2f}' for r in ratios)}), more than 25% above the "
        f"recorded {recorded:.2f}x in bench/ratios.json: find what made it slower, or, "
        "if the cost is deliberate, record the new ratio with bench/ratio_bench.py --json"
    )
