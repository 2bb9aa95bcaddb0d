"""What one scenario row says about each rule it names.

The pytest plugin captures what happened to a row (:class:`Happened`: how its
pytest report ended, the exception, the checks recorded, the failing step)
and hands it here; :func:`judge_row` gives each rule of the row an
:class:`Outcome`, its message and what decided it (:class:`RuleVerdict`).
The per-rule verdict over all of a rule's rows is
:mod:`memconform.reports.verdict`'s.

How a row ends (:func:`classify`): a pass is ``passed``; a skip is
``unsupported`` or ``inconclusive`` when its reason says so (the prefixes of
:mod:`memconform.reports.checks`), else ``skipped``. Of a failure, the first
that holds of the exception and its chain decides: a profile the runtime does
not declare is ``unsupported``; an adapter contract error is ``error``; an
exception out of the adapter is ``error``; a failed check
(``AssertionError``) is ``failed``, and so is a Hypothesis run that went
differently on replay (the store answered differently); an exception raised
from or while handling one out of the adapter is ``error``; anything else is
the kit's ``crashed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis.errors import Flaky, FlakyFailure

from memconform.harness.proxy import AdapterContractError, raised_by_adapter
from memconform.harness.runtime import ProfileNotDeclared
from memconform.outcome_log import DecidedBy, Outcome
from memconform.reports.checks import (
    INCONCLUSIVE_PREFIX,
    UNSUPPORTED_PREFIX,
    CheckResult,
    Mismatch,
)

__all__ = ["Happened", "RuleVerdict", "classify", "grouped", "judge_row", "narrowed"]


@dataclass(frozen=True)
class Happened:
    """What happened to one scenario row, as the plugin captured it.

    ``rules``: the rule tags of the row, sorted; ``phase``: the pytest phase
    reported (``setup`` or ``call``); ``passed`` and ``skipped`` (the skip
    reason, ``None`` when the row was not skipped) as pytest reported them;
    ``exception``: what the row ended with (a group stands for its first
    member); ``report_text``: the tail of pytest's report of a failure (empty
    otherwise); ``checks``: the checks recorded while the row ran; ``step``:
    the step that raised; ``how_passed``: the row's note of how its check was
    reached (its message should it pass)."""

    rules: tuple[str, ...]
    phase: str
    passed: bool
    skipped: str | None = None
    exception: BaseException | None = None
    report_text: str = ""
    checks: tuple[CheckResult, ...] = ()
    step: str | None = None
    how_passed: str = ""


@dataclass(frozen=True)
class RuleVerdict:
    """What one row says about one of its rules: the scenario outcome for that
    rule, why, the failing step and mismatch (if any), and ``decided_by``:
    ``check`` when a check naming the rule decided it, ``scenario`` when the
    row as a whole did (a crash, an adapter error, a skip)."""

    rule: str
    outcome: Outcome
    message: str
    step: str | None
    evidence: BaseException | None
    decided_by: DecidedBy


def _chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling."""
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def _adapter_raised(exc: BaseException) -> str:
    """The reason of an ``error`` for an exception out of the adapter that no
    step judged: where the rule needs another answer, it is the adapter's."""
    return (
        f"{raised_by_adapter(exc)}: raised {type(exc).__name__}: {exc}, "
        "which no check of this scenario expects"
    )


def _skipped(reason: str) -> tuple[Outcome, str]:
    if reason.startswith(UNSUPPORTED_PREFIX):
        return Outcome.UNSUPPORTED, reason.removeprefix(UNSUPPORTED_PREFIX)
    if reason.startswith(INCONCLUSIVE_PREFIX):
        return Outcome.INCONCLUSIVE, reason.removeprefix(INCONCLUSIVE_PREFIX)
    return Outcome.SKIPPED, reason


def _not_repeatable(exc: Flaky) -> str:
    # The kit's generated operations are deterministic, so a run that went
    # differently on replay did so because the store answered differently:
    # a failure of the rules under test, not a crash of the kit.
    first = next(iter(exc.exceptions), exc) if isinstance(exc, FlakyFailure) else exc
    return (
        "the store answered differently when the same operations were replayed "
        f"(not repeatable): {type(first).__name__}: {first}"
    )


def _failure(happened: Happened) -> tuple[Outcome, str]:
    exc = happened.exception
    chain = _chain(exc)
    for link in chain:
        if isinstance(link, ProfileNotDeclared):
            return Outcome.UNSUPPORTED, str(link)
    for link in chain:
        if isinstance(link, AdapterContractError):
            return Outcome.ERROR, str(link)
    if exc is not None and raised_by_adapter(exc) is not None:
        return Outcome.ERROR, _adapter_raised(exc)
    if isinstance(exc, AssertionError):
        return Outcome.FAILED, str(exc)
    if isinstance(exc, Flaky):
        return Outcome.FAILED, _not_repeatable(exc)
    for link in chain:
        if raised_by_adapter(link) is not None:
            return Outcome.ERROR, _adapter_raised(link)
    if exc is not None and happened.phase == "call":
        return Outcome.CRASHED, f"{type(exc).__name__}: {exc}"
    return Outcome.CRASHED, happened.report_text


def classify(happened: Happened) -> tuple[Outcome, str]:
    """How the row ended as a whole, and why (see the module's docstring)."""
    if happened.passed:
        return Outcome.PASSED, ""
    if happened.skipped is not None:
        return _skipped(happened.skipped)
    return _failure(happened)


def _decided_by(exc: BaseException | None, passed: bool) -> DecidedBy:
    """A row without recorded checks: its checks decide every rule of the row."""
    if passed or isinstance(exc, AssertionError):
        return DecidedBy.CHECK
    return DecidedBy.SCENARIO


def _by_checks(happened: Happened) -> list[RuleVerdict]:
    """Each rule of the row judged by its own checks.

    A rule one of whose checks failed fails. An exception that is not a
    check's :class:`Mismatch` (the runtime or the kit crashed, an adapter broke
    the contract, the scenario was skipped) decides every other rule of the
    row. Otherwise a rule passes when a check of it ran and passed; when a
    premise of the row (a check deciding none of the row's rules) failed, or no
    check of the rule ran, the rule gets no verdict from this row (``skipped``).
    """
    checks = list(happened.checks)
    exc = happened.exception
    step = happened.step
    if isinstance(exc, Mismatch) and exc.rules is not None:
        checks = [*checks, CheckResult(step or "", exc.rules, exc)]
        exc = None
    tagged = set(happened.rules)
    premises = [c for c in checks if c.failure is not None and c.rules is not None
                and not tagged & set(c.rules)]
    out = []
    for rule in happened.rules:
        own = [c for c in checks if c.rules is None or rule in c.rules]
        failed = [c for c in own if c.failure is not None]
        if failed:
            first = failed[0]
            assert first.failure is not None
            out.append(RuleVerdict(rule, Outcome.FAILED, str(first.failure), first.step,
                                   first.failure, DecidedBy.CHECK))
        elif exc is not None or not happened.passed:
            outcome, message = classify(happened)
            out.append(RuleVerdict(rule, outcome, message, step, exc,
                                   _decided_by(exc, happened.passed)))
        elif premises:
            what = premises[0].failure.what if premises[0].failure is not None else ""
            out.append(RuleVerdict(
                rule, Outcome.SKIPPED, f"not judged on this row: its premise failed ({what})",
                premises[0].step, None, DecidedBy.SCENARIO))
        elif own:
            out.append(RuleVerdict(rule, Outcome.PASSED, happened.how_passed, None, None,
                                   DecidedBy.CHECK))
        else:
            out.append(RuleVerdict(rule, Outcome.SKIPPED, f"no check of {rule} ran on this row",
                                   None, None, DecidedBy.SCENARIO))
    return out


def narrowed(rules: tuple[str, ...], exc: BaseException | None) -> tuple[str, ...] | None:
    """The rules of the row an exception names itself (a property's
    counterexample, an ``inconclusive`` for some rules), when it names any of
    them; ``None`` otherwise. Such a row without recorded checks decides only those."""
    named = getattr(exc, "rules", None)
    if rules and isinstance(named, tuple) and set(named) & set(rules):
        return tuple(sorted(set(named) & set(rules)))
    return None


def judge_row(happened: Happened) -> list[RuleVerdict]:
    """What the row says about each rule it names (or, without recorded
    checks, about the rules its exception names: :func:`narrowed`).

    A row with recorded checks gives each rule the verdict of its own checks
    (see :func:`_by_checks`); one without gives every rule the row's outcome
    (:func:`classify`), a pass carrying ``how_passed`` as its message."""
    if happened.rules and happened.checks:
        return _by_checks(happened)
    rules = narrowed(happened.rules, happened.exception) or happened.rules
    outcome, message = classify(happened)
    if outcome == Outcome.PASSED:
        message = happened.how_passed
    decided_by = _decided_by(happened.exception, happened.passed)
    return [RuleVerdict(rule, outcome, message, happened.step, happened.exception, decided_by)
            for rule in rules]


def grouped(verdicts: list[RuleVerdict]) -> list[list[RuleVerdict]]:
    """Rules with the same outcome, reason and evidence share one record."""
    groups: dict[tuple[Any, ...], list[RuleVerdict]] = {}
    for v in verdicts:
        key = (v.outcome, v.message, v.step, id(v.evidence), v.decided_by)
        groups.setdefault(key, []).append(v)
    return list(groups.values())
