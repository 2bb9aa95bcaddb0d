"""The words of a results file: verdicts, scenario outcomes, class and baseline statuses.

:class:`Verdict` and :class:`~memconform.outcome_log.Outcome` are string
enumerations whose values are the text results files, JUnit XML and the
HTML report carry, so a member is written exactly as the plain text was.
The tuples keep the order reports list them in.
"""

from __future__ import annotations

import enum

from memconform.outcome_log import Outcome

__all__ = [
    "BASELINE_STATUSES",
    "CLASS_STATUSES",
    "EVIDENCE_OUTCOMES",
    "MEASURED",
    "OUTCOMES",
    "VERDICTS",
    "Outcome",
    "Verdict",
]


class Verdict(enum.StrEnum):
    """What a run established about one rule (see :mod:`memconform.reports.verdict`)."""

    PASS = "pass"
    FAIL = "fail"
    """A MUST rule was broken."""
    WARN = "warn"
    """A SHOULD or MAY rule was broken."""
    INCONCLUSIVE = "inconclusive"
    ADAPTER_PROVIDED = "adapter-provided"
    UNSUPPORTED = "unsupported"
    INFORMATIONAL = "informational"
    XFAIL = "xfail"
    STALE = "stale"
    ERROR = "error"
    NOT_RUN = "not-run"
    NOT_SCORED = "not-scored"


VERDICTS: tuple[Verdict, ...] = tuple(Verdict)
"""Every verdict, in the order reports list them."""

MEASURED: tuple[Verdict, ...] = (
    Verdict.PASS, Verdict.FAIL, Verdict.WARN, Verdict.INCONCLUSIVE, Verdict.ERROR,
)
"""What an ``informational`` rule's own scenarios showed (its ``measured`` field)."""

OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
"""Scenario outcomes as the pytest plugin records them."""

EVIDENCE_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.FAILED, Outcome.ERROR, Outcome.CRASHED, Outcome.INCONCLUSIVE,
)
"""Outcomes whose timeline entries and Gherkin text are kept in full as evidence."""

CLASS_STATUSES = ("achieved", "partial", "not-achieved", "not-claimed", "not-scored")
BASELINE_STATUSES = ("applied", "stale", "expired", "not-applied")
