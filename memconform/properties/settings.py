"""The two Hypothesis settings of the property checks.

``fast`` is derandomized and small, for ordinary runs and CI; ``thorough``
explores far more (``memconform run --certify`` uses it). Both are
deterministic: the same store gives the same examples on every run.
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings

__all__ = ["SETTINGS"]

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
