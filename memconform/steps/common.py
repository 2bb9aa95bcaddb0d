"""Shared helpers for step definitions: capability checks, structured mismatches
and transcript tables.

A step that finds a broken rule raises :class:`Mismatch` (an ``AssertionError``)
with what was expected and what was observed; the kit puts both into the
rule's evidence. A scenario needing a capability the store declares absent
calls :func:`require_capability`, which ends it as ``unsupported``. A scenario
whose rule is claimed but which the kit could not exercise (a kill that never
landed while a write was in flight, a fault it could not inject) calls
:func:`inconclusive`: never a pass, and the rule's class is not achieved.

A check names the rules it decides: a ``Then`` step decorated with
:func:`decides` is one check. Its :class:`Mismatch` is recorded (by the
scenario's :class:`CheckRecorder`) instead of ending the scenario, so the
row's remaining checks still run, and the plugin gives each rule of the row
the verdict of its own checks only. A ``Mismatch`` raised with ``rules`` names
them itself; one raised by an undecorated step decides every rule on the row.

:class:`Mismatch`, :class:`CheckResult` and the skip prefixes are the words the
judgement of a row reads; they live in :mod:`memconform.reports.checks` and
are re-exported here for the step modules.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import pytest

from memconform.contract import CAPABILITY_METHODS
from memconform.excerpt import LIMIT, difference
from memconform.reports.checks import (
    INCONCLUSIVE_PREFIX,
    UNSUPPORTED_PREFIX,
    CheckResult,
    Mismatch,
)
from memconform.values import Message, same_value

__all__ = [
    "HOW_PASSED",
    "INCONCLUSIVE_PREFIX",
    "POLICIES_RUN",
    "PROMISES",
    "UNSUPPORTED_PREFIX",
    "CheckRecorder",
    "CheckResult",
    "Mismatch",
    "decides",
    "expect_equal",
    "how_passed",
    "inconclusive",
    "measures_unclaimed",
    "note_policies",
    "require_capability",
    "transcript_table",
    "unsupported",
]

def expect_equal(
    what: str, expected: Any, observed: Any, rules: Iterable[str] | None = None
) -> None:
    """Raise :class:`Mismatch` (deciding ``rules``) unless ``observed`` equals
    ``expected`` with every value of the same type
    (:func:`~memconform.values.same_value`: ``True`` is not ``1``, ``1.0`` is not ``1``).

    The mismatch shows both values (a list of messages as a
    :func:`transcript_table`, anything else by its ``repr``); when either
    rendering is longer than :data:`~memconform.excerpt.LIMIT` characters it
    shows instead the path to their first differing part and, for two texts
    there, both lengths, the first differing position and an excerpt of each
    (:func:`~memconform.excerpt.difference`)."""
    if not same_value(expected, observed):
        shown = (_render(expected), _render(observed))
        if max(len(s) for s in shown) > LIMIT:
            shown = difference(expected, observed)
        raise Mismatch(what, *shown, rules=rules)


@dataclass
class CheckRecorder:
    """The checks of one scenario row, in the order they ran (soft assertions:
    a failed check is recorded and the row goes on)."""

    step: str = ""
    """The step running now (set by the plugin before each step call)."""
    results: list[CheckResult] = field(default_factory=list)

    def record(self, rules: tuple[str, ...] | None, failure: Mismatch | None) -> None:
        """Record the current step's check: passed, or failed with ``failure``."""
        self.results.append(CheckResult(self.step, rules, failure))


def decides(*rules: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Make a ``Then`` step a check deciding ``rules`` (of those tagged on the row).

    Place it below the ``@then`` decorators. The step's :class:`Mismatch` is
    recorded, not raised, so the row's later checks still run; any other
    exception still ends the scenario (it decides every rule on the row). On a
    row tagged with none of ``rules`` the check is a premise: when it fails,
    the row's rules get no verdict from that row.
    """
    if not rules:
        raise ValueError("a check decides at least one rule")
    decided = tuple(rules)

    def wrap(func: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(func)
        if "check_recorder" in signature.parameters:
            raise TypeError(f"{func.__name__} already takes check_recorder")

        @functools.wraps(func)
        def check(*args: Any, check_recorder: CheckRecorder | None = None, **kwargs: Any) -> None:
            if check_recorder is None:  # called by another step: part of that check
                func(*args, **kwargs)
                return
            try:
                func(*args, **kwargs)
            except Mismatch as failure:
                check_recorder.record(failure.rules or decided, failure)
                return
            check_recorder.record(decided, None)

        recorder = inspect.Parameter("check_recorder", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        check.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[recorder, *signature.parameters.values()]
        )
        check.rules = decided  # type: ignore[attr-defined]
        return check

    return wrap


def _render(value: Any) -> str:
    if isinstance(value, list | tuple) and value and all(isinstance(v, Message) for v in value):
        return transcript_table(value)
    return repr(value)


def unsupported(reason: str) -> NoReturn:
    """End the scenario as ``unsupported`` with ``reason``."""
    pytest.skip(UNSUPPORTED_PREFIX + reason)


def inconclusive(reason: str, rules: Sequence[str] | None = None) -> NoReturn:
    """End the scenario as ``inconclusive``: the rule is claimed, but the kit could
    not exercise it here; ``reason`` says what was missing (it is shown as the
    verdict's reason). ``rules``, where given, are the only rules of the
    scenario's tags this concerns (the others are not decided by it)."""
    skipped = pytest.skip.Exception(INCONCLUSIVE_PREFIX + reason)
    if rules is not None:
        skipped.rules = tuple(rules)  # type: ignore[attr-defined]
    raise skipped


HOW_PASSED = pytest.StashKey[str]()
"""Where :func:`how_passed` keeps its note on the test item."""


def how_passed(request: pytest.FixtureRequest, how: str) -> None:
    """Say how the scenario's check was reached (where a kill landed, how many
    writers ran, best effort or not); should the scenario pass, ``how`` becomes
    its message in the outcomes, results.json, JUnit and the report."""
    request.node.stash[HOW_PASSED] = how


POLICIES_RUN = pytest.StashKey[list[str]]()
"""Where :func:`note_policies` keeps the save policies a scenario executed."""


def note_policies(request: pytest.FixtureRequest, policies: Sequence[str]) -> None:
    """Record the save policies the scenario configured for the runtime (the
    outcome record carries them, so a runtime conformance class per policy is
    judged only from the scenarios of that policy and those naming none)."""
    request.node.stash[POLICIES_RUN] = sorted(
        {*request.node.stash.get(POLICIES_RUN, []), *policies})


PROMISES = frozenset(c.value for c, methods in CAPABILITY_METHODS.items() if not methods)
"""Capabilities that are promises alone (``durable``, ``atomic-batch``,
``concurrent-writers``): every store has the methods to be measured on them."""


def measures_unclaimed(config: pytest.Config, capability: str) -> bool:
    """Whether this run measures the promise ``capability`` even where the store
    does not claim it (``--memconform-measure-unclaimed``): its rules are then
    reported ``informational``, never counted."""
    wanted = bool(config.getoption("--memconform-measure-unclaimed", default=False))
    return wanted and capability in PROMISES


def require_capability(capabilities: Iterable[str], capability: str) -> None:
    """End the scenario as ``unsupported`` unless ``capability`` is declared."""
    if capability not in set(capabilities):
        # str() first: a Capability member's repr is <Capability.X: 'x'>, not its name
        unsupported(f"the store does not declare the capability {str(capability)!r}")


def transcript_table(messages: Sequence[Message]) -> str:
    """Messages as a fixed-width text table: id, role, round/turn, committed, text."""
    rows = [("id", "role", "round", "turn", "committed", "text")]
    for m in messages:
        text = m.text if len(m.text) <= 60 else m.text[:57] + "..."
        rows.append(
            (
                m.id,
                m.role,
                "" if m.round is None else str(m.round),
                m.turn_id or "",
                "yes" if m.committed else "no",
                ascii(text)[1:-1] if not text.isprintable() else text,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
