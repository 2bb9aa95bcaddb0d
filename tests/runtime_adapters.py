"""Runtime adapters for the kit's own tests, opened as ``tests.runtime_adapters:NAME``."""

from __future__ import annotations

from memconform.simulator.runtime import Simulator


class _StampingRuntime(Simulator):
    """The reference runtime behind an adapter that says it stamps run ids and
    rounds itself (as an adapter over a framework without them would)."""

    provides = frozenset({"run-ids", "rounds"})


class _MisspeltRuntime(Simulator):
    provides = frozenset({"round"})


def stamping_runtime() -> Simulator:
    """A correct runtime whose adapter provides run ids and rounds."""
    return _StampingRuntime()


def misspelt_runtime() -> Simulator:
    """A runtime naming a provision that does not exist (an adapter error)."""
    return _MisspeltRuntime()
