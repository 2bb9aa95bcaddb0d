"""The two Hypothesis settings of the property checks.

``fast`` is derandomized and small, for ordinary runs and CI; ``thorough``
explores far more (``memconform run --certify`` uses it). Both are
deterministic: the same store gives the same examples on every run.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

__all__ = ["SETTINGS"]

_COMMON = {
    "derandomize": True,
    "deadline": None,
    "database": None,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
}

SETTINGS: dict[str, settings] = {
    "fast": settings(max_examples=40, stateful_step_count=20, **_COMMON),  # type: ignore[arg-type]
    "thorough": settings(max_examples=300, stateful_step_count=40, **_COMMON),  # type: ignore[arg-type]
}
