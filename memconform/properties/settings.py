"""The two Hypothesis settings of the property checks, and the draws they make.

``fast`` is derandomized and small, for ordinary runs and CI; ``thorough``
explores far more (``memconform run --certify`` uses it). Both are
deterministic: the same store gives the same examples on every run, whatever
else the process has imported (see :func:`fixed_draws`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import HealthCheck, Phase, settings

__all__ = ["SETTINGS", "fixed_draws"]

_COMMON = {
    "derandomize": True,
    "deadline": None,
    "database": None,
    # No explain phase: after shrinking it replays the failing operations hundreds of
    # times to annotate the report, which costs more than finding and shrinking, and
    # the exported counterexample says all that is needed.
    "phases": [Phase.explicit, Phase.generate, Phase.shrink],
    # One failure is enough to judge the rules; shrinking a second one costs as much.
    "report_multiple_bugs": False,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
}

SETTINGS: dict[str, settings] = {
    "fast": settings(max_examples=60, stateful_step_count=12, **_COMMON),  # type: ignore[arg-type]
    "thorough": settings(max_examples=300, stateful_step_count=40, **_COMMON),  # type: ignore[arg-type]
}


@contextmanager
def fixed_draws() -> Iterator[None]:
    """Run a search whose draws depend on its settings and the store alone.

    Hypothesis mixes into what it draws the literals of every module of the
    project that the process has imported so far (its pool of "local
    constants"). Which modules that is changes with the adapter module, the way
    the kit is installed (editable or not) and the order the kit imports its own
    modules, so the same store could meet other examples in another process, and
    a mutant found in one run go unfound in the next. Inside this block the pool is
    empty; Hypothesis's own constants (edge cases of every type) are kept.

    On a Hypothesis without that pool the block changes nothing."""
    from hypothesis.internal.conjecture import providers

    scan = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    empty = getattr(providers, "Constants", None)
    if scan is None or cache is None or empty is None:
        yield
        return
    none = empty()
    providers._get_local_constants = lambda: none
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = scan
        cache.cache.clear()
