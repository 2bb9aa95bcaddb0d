"""Every exit code the results can produce (5, usage, belongs to the command line)."""

from __future__ import annotations

from typing import Any

from memconform.reports import build_results, exit_code
from tests.reports.factory import catalogue, header, outcome, store_outcomes


def _code(*extra: dict[str, Any], **head: Any) -> int:
    return exit_code(build_results([*store_outcomes(), *extra], catalogue(), header(**head)))


def test_all_passing_is_0() -> None:
    assert _code() == 0


def test_a_broken_should_rule_alone_is_0() -> None:
    assert _code(outcome(["ST-003"], "failed", name="warn")) == 0


def test_unsupported_alone_is_0() -> None:
    results = build_results(
        [outcome(["ST-001", "ST-002", "ST-003", "ST-004"], "unsupported")],
        catalogue(), header(),
    )
    assert exit_code(results) == 0


def test_a_broken_must_rule_is_1() -> None:
    assert _code(outcome(["ST-001"], "failed", name="fail")) == 1


def test_an_incomplete_report_is_1() -> None:
    results = build_results([outcome(["ST-001"])], catalogue(), header())
    assert exit_code(results) == 1


def test_an_adapter_error_is_3_even_beside_failures() -> None:
    assert _code(outcome(["ST-001"], "failed", name="f"), outcome(["ST-002"], "error")) == 3


def test_a_kit_crash_is_4_even_beside_adapter_errors() -> None:
    assert _code(outcome(["ST-001"], "error"), outcome(["ST-002"], "crashed")) == 4


def test_unknown_rules_in_outcomes_are_4() -> None:
    assert _code(outcome(["ST-999"])) == 4


def test_the_footer_records_the_same_code() -> None:
    results = build_results(
        [*store_outcomes(), outcome(["ST-001"], "failed", name="f")], catalogue(), header()
    )
    assert results.footer is not None
    assert results.footer.exit_code == exit_code(results) == 1


def test_an_inconclusive_must_rule_is_1_never_conformant() -> None:
    assert _code(outcome(["ST-001"], "inconclusive", name="kill")) == 1


def test_an_inconclusive_should_rule_alone_is_0_like_a_warn() -> None:
    assert _code(outcome(["ST-003"], "inconclusive", name="weak")) == 0


def test_an_adapter_provided_must_rule_is_1_and_informational_alone_is_0() -> None:
    from dataclasses import replace

    from memconform.catalogue import Catalogue

    base = catalogue()
    rules = tuple(replace(r, rests_on=("ids",)) if r.id == "ST-001" else r for r in base)
    provided = header(store={"url": "x://", "capabilities": ["errors"], "provides": ["ids"]})
    results = build_results(store_outcomes(), Catalogue(rules, base.version, base.digest), provided)
    assert exit_code(results) == 1
    measured = outcome(["ST-004"], "failed", name="durable anyway", needs=["durable"])
    assert _code(measured) == 0
