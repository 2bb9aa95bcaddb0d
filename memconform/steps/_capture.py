"""Outcome capture: what happened to each scenario row, handed to the judgement.

The pytest-bdd hooks keep the scenario's Gherkin and the step that raised;
``pytest_runtest_makereport`` captures how the row ended (the pytest report,
the exception, the checks recorded) as a
:class:`~memconform.reports.judgement.Happened`, has
:func:`~memconform.reports.judgement.judge_row` say what it means for each
rule, and attaches one :class:`~memconform.outcome_log.ScenarioRecord` per
group of rules judged alike to the report; ``pytest_runtest_logreport``
(where every report arrives, also from xdist workers) writes them to the
outcomes file and counts failures against ``--memconform-maxfail``.
Registered through :mod:`memconform.steps.plugin`, which re-exports every hook.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from memconform.contract import Capability
from memconform.excerpt import bounded
from memconform.outcome_log import Outcome, ScenarioRecord
from memconform.reports.judgement import Happened, RuleVerdict, grouped, judge_row, narrowed
from memconform.steps._fixtures import (
    CHECKS,
    RUNTIME_DECLARES,
    RUNTIME_PROVIDES,
    STORE_PROVIDES,
    TIMELINE,
)
from memconform.steps._session import SESSION, count_failure, rules_of
from memconform.steps.common import HOW_PASSED, POLICIES_RUN, CheckResult

__all__ = [
    "pytest_bdd_before_scenario",
    "pytest_bdd_before_step_call",
    "pytest_bdd_step_error",
    "pytest_runtest_logreport",
    "pytest_runtest_makereport",
]

_STEP = pytest.StashKey[str]()
_GHERKIN = pytest.StashKey[tuple[str, str, list[str]]]()
_CAPABILITY_TAGS = frozenset(c.value for c in Capability)
_FAILING = frozenset({Outcome.FAILED, Outcome.ERROR, Outcome.CRASHED})
"""Outcomes counted against ``--memconform-maxfail``."""


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    request.node.stash[_GHERKIN] = _gherkin(feature, scenario)


def _gherkin(feature: Any, scenario: Any) -> tuple[str, str, list[str]]:
    """(scenario title, ``features/<file>:<line>``, the scenario as Gherkin lines)
    of a pytest-bdd scenario, its outline values filled in."""
    where = f"features/{Path(str(feature.rel_filename)).as_posix()}:{scenario.line_number}"
    lines = [f"{scenario.keyword}: {scenario.name}"]
    lines += [f"  {step.keyword} {step.name}" for step in scenario.steps]
    return str(scenario.name), where, lines


def _gherkin_of(item: pytest.Item) -> tuple[str, str, list[str]] | None:
    """The item's scenario as the ``pytest_bdd_before_scenario`` hook saw it; for a
    scenario that never started (its setup failed) the unrendered template."""
    found = item.stash.get(_GHERKIN, None)
    if found is not None:
        return found
    try:
        from pytest_bdd.scenario import scenario_wrapper_template_registry
    except ImportError:  # pragma: no cover - an older or newer pytest-bdd
        return None
    function = getattr(item, "function", None)
    template = None if function is None else scenario_wrapper_template_registry.get(function)
    if template is None:
        return None
    return _gherkin(template.feature, template)


def pytest_bdd_before_step_call(
    request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any,
    step_func: Any, step_func_args: Any,
) -> None:
    recorder = request.node.stash.get(CHECKS, None)
    if recorder is not None:
        recorder.step = f"{step.keyword} {step.name}"


def pytest_bdd_step_error(
    request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any,
    step_func: Any, step_func_args: Any, exception: Exception,
) -> None:
    request.node.stash[_STEP] = f"{step.keyword} {step.name}"


def _first_exception(call: pytest.CallInfo[None]) -> BaseException | None:
    """The exception a test ended with; a group (Hypothesis reports a flaky or a
    multiple failure as one) stands for its first member."""
    exc = call.excinfo.value if call.excinfo else None
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _happened(
    item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
) -> Happened:
    """What happened to the row, as its pytest report and stashes tell."""
    exc = _first_exception(call)
    recorder = item.stash.get(CHECKS, None)
    checks = () if recorder is None or report.when != "call" else tuple(recorder.results)
    skipped = None
    if report.skipped:
        skipped = ""
        if isinstance(report.longrepr, tuple):
            skipped = str(report.longrepr[2]).removeprefix("Skipped: ")
    return Happened(
        rules=tuple(sorted(set(rules_of(item)))),
        phase=report.when,
        passed=report.passed,
        skipped=skipped,
        exception=exc,
        report_text=str(report.longrepr)[-2000:] if report.failed else "",
        checks=checks,
        step=item.stash.get(_STEP, None),
        how_passed=item.stash.get(HOW_PASSED, ""),
    )


def _records(item: pytest.Item, verdicts: list[RuleVerdict]) -> list[ScenarioRecord]:
    """One record per group of the row's rules judged alike. The store calls are
    the timeline's last 50 entries, :func:`~memconform.excerpt.bounded` (each
    text clipped, each long list cut): the timeline itself keeps every value
    whole for the checks that read it."""
    timeline = item.stash.get(TIMELINE, None)
    calls = () if timeline is None else tuple(bounded(timeline.to_json()[-50:]))
    gherkin = _gherkin_of(item)
    needs = tuple(sorted({m.name for m in item.iter_markers()} & _CAPABILITY_TAGS))
    provided = {
        "store": item.stash.get(STORE_PROVIDES, []),
        "runtime": item.config.stash.get(RUNTIME_PROVIDES, []),
    }
    ran: list[str] = item.stash.get(POLICIES_RUN, [])
    policies = tuple(ran)
    records = []
    for group in grouped(verdicts):
        first = group[0]
        records.append(ScenarioRecord(
            nodeid=item.nodeid,
            scenario=getattr(item, "originalname", item.name) if gherkin is None else gherkin[0],
            feature=None if gherkin is None else gherkin[1],
            gherkin=() if gherkin is None else tuple(gherkin[2]),
            rules=tuple(v.rule for v in group),
            outcome=first.outcome,
            message=first.message,
            failing_step=first.step,
            expected=getattr(first.evidence, "expected", None),
            observed=getattr(first.evidence, "observed", None),
            decided_by=first.decided_by,
            store_calls=calls,
            needs=needs,
            provided=provided,
            policies=policies,
            runtime_declares=item.config.stash.get(RUNTIME_DECLARES, None),
        ))
    return records


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Capture the row (its call, or a setup that did not pass), judge it, and
    attach its records to the report (a row whose checks failed fails in
    pytest too)."""
    report = yield
    if report.when == "call" or (report.when == "setup" and not report.passed):
        happened = _happened(item, call, report)
        verdicts = judge_row(happened)
        if happened.rules and happened.checks:
            _fail_report(report, list(happened.checks))
        else:
            rules = narrowed(happened.rules, happened.exception)
            if rules is not None:
                _export(item, list(rules), happened.exception)
        for record in _records(item, verdicts):
            report.user_properties.append(("memconform", json.dumps(record.to_json())))
        _name_rules(report, verdicts)
    return report


def _name_rules(report: pytest.TestReport, verdicts: list[RuleVerdict]) -> None:
    """A failed row says in pytest's own output which rules its failure breaks:
    in the one-line summary and under the traceback."""
    broken = sorted({v.rule for v in verdicts if v.outcome == Outcome.FAILED})
    if not report.failed or not broken:
        return
    named = ", ".join(broken)
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and isinstance(getattr(crash, "message", None), str):
        crash.message = f"breaks {named}: {crash.message}"
    add = getattr(report.longrepr, "addsection", None)
    if callable(add):
        add("memconform", f"this failure breaks {named}")
    elif isinstance(report.longrepr, str):
        report.longrepr = f"breaks {named}\n{report.longrepr}"


def _fail_report(report: pytest.TestReport, checks: list[CheckResult]) -> None:
    """A row whose checks failed fails in pytest too, listing every failed check."""
    failed = [c for c in checks if c.failure is not None]
    if not failed or not report.passed:
        return
    report.outcome = "failed"
    report.longrepr = "\n\n".join(
        f"{c.step} [{', '.join(c.rules or ('every rule of the row',))}]\n{c.failure}"
        for c in failed
    )


def _export(item: pytest.Item, rules: list[str], exc: BaseException | None) -> None:
    """Write a property counterexample as a feature when ``--export-failures`` is set."""
    folder = item.config.getoption("--memconform-export-failures")
    steps = getattr(exc, "steps", None)
    if not folder or not isinstance(steps, list):
        return
    from memconform.properties.export import export_counterexample

    store = item.config.getoption("--memconform-store") or "the default store"
    mutant = item.config.getoption("--memconform-mutant")
    origin = f"{item.name} against {store}" + (f" (mutant {mutant})" if mutant else "")
    try:
        export_counterexample(Path(folder), item.name, rules, steps, origin)
    except (OSError, TypeError, ValueError) as exc_export:
        # the verdict stands on the failure itself; only its replayable copy is lost
        print(f"memconform: the counterexample of {item.name} could not be written: "
              f"{type(exc_export).__name__}: {exc_export}", file=sys.stderr)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    failing = False  # a scenario (one report, one record per group of its rules)
    for key, value in report.user_properties:
        if key != "memconform":
            continue
        record = json.loads(str(value))
        if SESSION.log is not None:
            SESSION.log.add(record)
        if record["outcome"] in _FAILING and set(record["rules"]) & SESSION.judged:
            failing = True
    if failing:
        count_failure()
