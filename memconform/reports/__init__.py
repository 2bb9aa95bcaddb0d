"""Compliance results and their reports.

``results.json`` (canonical JSON, schema in ``spec/schemas/results.schema.json``)
is the single source; ``report.html``, ``junit.xml``, ``badge.svg`` and the
comparison page are renderings of it. The command line calls:

- :func:`build_results` — verdicts per rule from scenario outcomes;
- :func:`write_reports` — the four files of one run;
- :func:`load_results` — read a results file back (marking it incomplete
  when it is cut short or partial);
- :func:`write_comparison` — several results on one page;
- :func:`load_baseline` — known failures (raises :class:`BaselineError`), and
  :func:`check_baseline` — that its rules exist in the catalogue;
- :func:`exit_code` — the kit's exit code for the results.
"""

from __future__ import annotations

from memconform.reports.baseline import (
    Baseline,
    BaselineEntry,
    BaselineError,
    check_baseline,
    load_baseline,
)
from memconform.reports.compare import write_comparison
from memconform.reports.exitcode import exit_code
from memconform.reports.render_json import canonical_json
from memconform.reports.results import (
    VERDICTS,
    ClassResult,
    Footer,
    Results,
    ResultsError,
    RuleResult,
    ScenarioEvidence,
    load_results,
)
from memconform.reports.verdict import CLASSES, build_results
from memconform.reports.writer import write_reports

__all__ = [
    "CLASSES",
    "VERDICTS",
    "Baseline",
    "BaselineEntry",
    "BaselineError",
    "ClassResult",
    "Footer",
    "Results",
    "ResultsError",
    "RuleResult",
    "ScenarioEvidence",
    "build_results",
    "canonical_json",
    "check_baseline",
    "exit_code",
    "load_baseline",
    "load_results",
    "write_comparison",
    "write_reports",
]
