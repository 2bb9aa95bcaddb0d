"""Each rule of a row gets the verdict of its own checks (reports.judgement.judge_row)."""

from __future__ import annotations

import importlib

import pytest

from memconform.reports.judgement import Happened, judge_row
from memconform.steps.common import CheckRecorder, CheckResult, Mismatch, decides


def _verdicts(rules: list[str], checks: list[CheckResult], exc: BaseException | None = None,
              passed: bool = True, report_text: str = "") -> dict[str, tuple[str, str]]:
    happened = Happened(tuple(rules), "call", passed, None, exc, report_text, tuple(checks))
    return {v.rule: (v.outcome, v.decided_by) for v in judge_row(happened)}


def _failure(*rules: str) -> Mismatch:
    return Mismatch("what", "a", "b", rules or None)


def test_a_failed_check_fails_only_the_rules_it_decides() -> None:
    checks = [CheckResult("Then one", ("SW-014",)),
              CheckResult("Then two", ("SW-015",), _failure())]
    assert _verdicts(["SW-014", "SW-015"], checks) == {
        "SW-014": ("passed", "check"), "SW-015": ("failed", "check")}


def test_a_rule_whose_check_did_not_run_gets_no_verdict_from_the_row() -> None:
    checks = [CheckResult("Then one", ("SW-014",))]
    assert _verdicts(["SW-014", "SW-015"], checks)["SW-015"] == ("skipped", "scenario")


def test_a_failed_premise_leaves_the_rows_rules_unjudged() -> None:
    checks = [CheckResult("Then outcome", ("SP-004",), _failure()),
              CheckResult("Then no record", ("SP-015",))]
    assert _verdicts(["SP-015"], checks) == {"SP-015": ("skipped", "scenario")}


def test_a_check_without_rules_decides_every_rule_of_the_row() -> None:
    checks = [CheckResult("Then all", None, _failure())]
    assert _verdicts(["A", "B"], checks) == {"A": ("failed", "check"), "B": ("failed", "check")}


def test_a_crash_decides_every_rule_without_a_failed_check() -> None:
    crash = RuntimeError("the runtime crashed")
    checks = [CheckResult("Then one", ("A",), _failure()), CheckResult("Then two", ("B",))]
    verdicts = _verdicts(["A", "B"], checks, crash, passed=False, report_text="x")
    assert verdicts == {"A": ("failed", "check"), "B": ("crashed", "scenario")}


def test_a_mismatch_naming_its_rules_outside_a_check_decides_those_rules() -> None:
    checks = [CheckResult("Then one", ("A",))]
    verdicts = _verdicts(["A", "B"], checks, _failure("B"))
    assert verdicts == {"A": ("passed", "check"), "B": ("failed", "check")}


def test_decides_records_the_mismatch_and_lets_the_row_go_on() -> None:
    @decides("SW-015")
    def check(value: int) -> None:
        if value:
            raise Mismatch("value", "0", str(value))

    recorder = CheckRecorder(step="Then it")
    check(value=1, check_recorder=recorder)
    check(value=0, check_recorder=recorder)
    assert [(r.rules, r.failure is not None) for r in recorder.results] == [
        (("SW-015",), True), (("SW-015",), False)]
    with pytest.raises(Mismatch):  # called by another step: part of that check
        check(value=1)


def test_every_runtime_then_step_names_the_rules_it_decides() -> None:
    from pytest_bdd.steps import step_function_context_registry

    from memconform.steps.plugin import step_modules

    profiles = ("candidates", "persisted_state", "save_policy", "strict_write", "turns")
    modules = [m for m in step_modules() if m.rsplit(".", 1)[-1].startswith(profiles)]
    for module in modules:
        importlib.import_module(module)
    undeclared = sorted(
        c.step_func.__name__ for c in step_function_context_registry.values()
        if c.type == "then" and c.step_func.__module__ in modules
        and not getattr(c.step_func, "rules", None)
    )
    assert undeclared == []
