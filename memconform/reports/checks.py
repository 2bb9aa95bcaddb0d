"""What a check says: the words a scenario row uses to tell the verdicts.

A step that finds a broken rule raises :class:`Mismatch` (an ``AssertionError``)
with what was expected and what was observed; each check that ran on a row is
one :class:`CheckResult`. A scenario ends as ``unsupported`` or
``inconclusive`` by a pytest skip whose reason starts with
:data:`UNSUPPORTED_PREFIX` or :data:`INCONCLUSIVE_PREFIX`. The step helpers
(:mod:`memconform.steps.common`) speak these words; the judgement of a row
(:mod:`memconform.reports.judgement`) reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memconform.excerpt import LIMIT, clip, contrast

__all__ = ["INCONCLUSIVE_PREFIX", "UNSUPPORTED_PREFIX", "CheckResult", "Mismatch"]

UNSUPPORTED_PREFIX = "unsupported: "
INCONCLUSIVE_PREFIX = "inconclusive: "


class Mismatch(AssertionError):
    """A rule check failed: ``expected`` and ``observed`` are human-readable text.

    The evidence is bounded: when either text is longer than
    :data:`~memconform.excerpt.LIMIT` characters, both are replaced by their
    lengths, the first position at which they differ and an excerpt of each
    around it (:func:`~memconform.excerpt.contrast`), and ``what`` is clipped
    to the same length. The check's outcome is the same either way.

    ``rules`` names the rules the failed check decides; ``None`` leaves that to
    the check that raised it (:func:`~memconform.steps.common.decides`), or,
    outside any check, to every rule on the row."""

    def __init__(
        self, what: str, expected: str, observed: str,
        rules: Iterable[str] | None = None,
    ) -> None:
        if len(expected) > LIMIT or len(observed) > LIMIT:
            expected, observed = contrast(expected, observed)
        what = clip(what)
        super().__init__(f"{what}\nexpected:\n{expected}\nobserved:\n{observed}")
        self.what = what
        self.expected = expected
        self.observed = observed
        self.rules: tuple[str, ...] | None = None if rules is None else tuple(rules)


@dataclass(frozen=True)
class CheckResult:
    """One check that ran on a row: the step, the rules it decides (``None``:
    every rule on the row) and its :class:`Mismatch` when it failed."""

    step: str
    rules: tuple[str, ...] | None
    failure: Mismatch | None = None
