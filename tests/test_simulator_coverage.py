"""The reference simulator's branch coverage by the conformance scenarios alone.

Runs ``memconform run --coverage memconform.simulator`` (every scenario and
property, no unit test) through ``bench/simulator_coverage.py`` and holds the
figure to its threshold; every function with a branch no scenario takes must be
explained in ``docs/simulator-coverage.toml``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "simulator_coverage.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("simulator_coverage", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_scenarios_alone_take_the_simulators_branches(tmp_path: Path) -> None:
    bench = _bench()
    code, section, _ = bench.measure(tmp_path / "report")
    assert code == 0
    assert section["packages"] == ["memconform.simulator"]
    assert section["not_found"] == []
    figure = bench.share(section)
    assert figure >= bench.THRESHOLD, (
        f"the scenarios take {figure:.1%} of the simulator's branches, "
        f"under the threshold {bench.THRESHOLD:.0%}"
    )
    missing = bench.unexplained(bench.gaps(section), bench.reasons())
    assert missing == [], (
        "functions with a branch no scenario takes and no reason in "
        f"docs/simulator-coverage.toml: {missing}"
    )


def test_every_reason_names_a_simulator_function() -> None:
    bench = _bench()
    root = Path(__file__).resolve().parent.parent
    for path, function in bench.reasons():
        source = (root / path).read_text(encoding="utf-8")
        if function != "<module>":
            assert function in set(bench._functions(source).values()), (path, function)
