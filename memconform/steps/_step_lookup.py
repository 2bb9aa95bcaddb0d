"""A memo for pytest-bdd's step lookup: the same step text, seen from the same
place, finds the same step definitions.

For every step of every scenario, pytest-bdd (9.x) asks each fixture name the
session knows whether its definitions are visible to the test and parse the
step's text; with the kit's thousands of fixtures and steps that question costs
more than running most steps. Its answer depends only on the step's type and
text, on where the test sits (the fixtures visible to a test are those defined
in its module, its class and the conftests and plugins above it) and on which
step definitions exist. :func:`install` makes the lookup remember its answer
under exactly that key: the step's type and text, the test's parent node id and
the number of step definitions registered so far (a definition added later, in
a conftest or a module, makes a new key), kept on the session's fixture manager
(a new session starts with an empty memo).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["install"]

_MEMO = "_memconform_step_memo"


def install() -> None:
    """Wrap ``pytest_bdd.scenario.find_fixturedefs_for_step`` with the memo (once)."""
    import importlib

    from pytest_bdd import steps

    scenario: Any = importlib.import_module("pytest_bdd.scenario")  # the module, not its function

    found: Callable[..., Iterable[Any]] = scenario.find_fixturedefs_for_step
    if getattr(found, "memconform_memo", False):
        return
    registry = steps.step_function_context_registry

    def find_fixturedefs_for_step(step: Any, fixturemanager: Any, node: Any) -> list[Any]:
        memo: dict[tuple[str, str, str, int], list[Any]] | None = getattr(
            fixturemanager, _MEMO, None
        )
        if memo is None:
            memo = {}
            setattr(fixturemanager, _MEMO, memo)
        parent = node.parent.nodeid if node.parent is not None else ""
        key = (step.type, step.name, parent, len(registry))
        if key not in memo:
            memo[key] = list(found(step=step, fixturemanager=fixturemanager, node=node))
        return list(memo[key])

    find_fixturedefs_for_step.memconform_memo = True  # type: ignore[attr-defined]
    scenario.find_fixturedefs_for_step = find_fixturedefs_for_step
