"""What a multi-process check concludes (:class:`CheckResult`), and the
failure of a child process that ends a check early (:class:`ChildError`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckResult", "ChildError", "error_result", "invisible"]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one multi-process check.

    ``expected`` and ``evidence`` are human-readable; the evidence always says
    how the result was reached. ``deterministic`` is ``False`` when the check
    could not control where the fault landed, and for a failure found only where
    timing put the processes (writers released at once, a reader polling): such
    a failure is real, but another run may not meet the same moment. ``adapter_error`` is
    ``(method, problem)`` when the store itself broke. ``conclusive`` is
    ``False`` when the check could not exercise the promise (what one process
    writes is invisible to the next, too few kills landed during an append):
    neither a pass nor a failure.
    """

    passed: bool
    expected: str
    evidence: str
    deterministic: bool = True
    adapter_error: tuple[str, str] | None = None
    conclusive: bool = True
    details: Mapping[str, Any] = field(default_factory=dict)


class ChildError(Exception):
    """A child could not do what the check needs. ``refused`` is ``True`` when the
    store refused the call with ``StoreError`` (a failure of the rule, not of the
    adapter)."""

    def __init__(self, method: str, problem: str, refused: bool = False) -> None:
        super().__init__(f"{method}: {problem}")
        self.method = method
        self.problem = problem
        self.refused = refused


def error_result(expected: str, exc: ChildError) -> CheckResult:
    if exc.refused:
        return CheckResult(False, expected, f"the store refused a call the check needs: {exc}")
    return CheckResult(False, expected, str(exc), adapter_error=(exc.method, exc.problem))


def invisible(expected: str) -> CheckResult:
    return CheckResult(
        False,
        expected,
        "what one process appended was invisible to the next, so a killed writer cannot "
        "be judged from another process",
        conclusive=False,
    )
