"""Baselines: parsing, xfail, stale and expiry (judged by the run's start date)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from memconform.reports import BaselineError, build_results, exit_code, load_baseline
from memconform.reports.baseline import parse_baseline
from tests.reports.factory import catalogue, header, outcome, store_outcomes


def _failing_st001() -> list[dict[str, object]]:
    return [*store_outcomes(), outcome(["ST-001"], "failed", name="broken")]


def test_a_baseline_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "baseline.toml"
    path.write_text(
        '[[entry]]\nrule = "ST-001"\nreason = "slow fix"\nexpires = 2027-01-31\n'
        '[[entry]]\nrule = "SP-002"\nreason = "upstream"\nexpires = "2026-12-01"\n'
        'issue = "https://example.org/1"\n',
        encoding="utf-8",
    )
    baseline = load_baseline(path)
    assert [e.rule for e in baseline.entries] == ["ST-001", "SP-002"]
    assert baseline.entries[0].expires == date(2027, 1, 31)
    assert baseline.entries[1].expires == date(2026, 12, 1)
    assert baseline.entries[1].issue == "https://example.org/1"
    assert baseline.source == "baseline.toml"


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("[[entry]\n", "not valid TOML"),
        ('rule = "ST-001"\n', "unknown top-level key"),
        ('entry = "x"\n', "array of tables"),
        ('[[entry]]\nreason = "x"\n', "'rule'"),
        ('[[entry]]\nrule = "XX-001"\nreason = "x"\n', "'rule'"),
        ('[[entry]]\nrule = "ST-001"\n', "'reason'"),
        ('[[entry]]\nrule = "ST-001"\nreason = "  "\n', "'reason'"),
        ('[[entry]]\nrule = "ST-001"\nreason = "x"\nexpires = "soon"\n', "'expires'"),
        ('[[entry]]\nrule = "ST-001"\nreason = "x"\nexpires = 5\n', "'expires'"),
        ('[[entry]]\nrule = "ST-001"\nreason = "x"\nwhy = "y"\n', "unknown key 'why'"),
        ('[[entry]]\nrule = "ST-001"\nreason = "x"\nissue = 3\n', "'issue'"),
        (
            '[[entry]]\nrule = "ST-001"\nreason = "x"\n[[entry]]\nrule = "ST-001"\nreason = "y"\n',
            "listed twice",
        ),
    ],
)
def test_a_malformed_baseline_is_a_clear_error(text: str, complaint: str) -> None:
    with pytest.raises(BaselineError, match=complaint) as info:
        parse_baseline(text, "b.toml")
    assert str(info.value).startswith("b.toml")


def test_a_baseline_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    path.write_bytes(b'[[entry]]\nrule = "ST-001"\nreason = "\xff"\n')
    with pytest.raises(BaselineError, match="UTF-8"):
        load_baseline(path)


def test_a_baseline_naming_a_rule_outside_the_catalogue_is_refused() -> None:
    baseline = parse_baseline('[[entry]]\nrule = "ST-777"\nreason = "typo"\n')
    with pytest.raises(BaselineError, match="ST-777"):
        build_results(store_outcomes(), catalogue(), header(), baseline)


def test_a_listed_failure_is_xfail_and_the_gate_passes() -> None:
    baseline = parse_baseline('[[entry]]\nrule = "ST-001"\nreason = "known bug #12"\n')
    results = build_results(_failing_st001(), catalogue(), header(), baseline)
    rule = next(r for r in results.rules if r.id == "ST-001")
    assert rule.verdict == "xfail"
    assert "known bug #12" in rule.reason
    assert rule.baseline is not None
    assert rule.baseline.status == "applied"
    assert exit_code(results) == 0
    core = next(c for c in results.classes if c.name == "core")
    assert (core.status, core.must_xfail) == ("not-achieved", 1)
    assert [e["rule"] for e in results.baseline_honoured] == ["ST-001"]


def test_a_listed_should_failure_is_xfail_too() -> None:
    baseline = parse_baseline('[[entry]]\nrule = "ST-003"\nreason = "later"\n')
    records = [*store_outcomes(), outcome(["ST-003"], "failed", name="weak")]
    results = build_results(records, catalogue(), header(), baseline)
    assert next(r for r in results.rules if r.id == "ST-003").verdict == "xfail"


def test_a_listed_rule_that_passes_is_stale_and_fails_the_gate() -> None:
    baseline = parse_baseline('[[entry]]\nrule = "ST-002"\nreason = "was broken"\n')
    results = build_results(store_outcomes(), catalogue(), header(), baseline)
    rule = next(r for r in results.rules if r.id == "ST-002")
    assert rule.verdict == "stale"
    assert "remove the entry" in rule.reason
    assert exit_code(results) == 1
    assert "errors" in results.achieved  # the rule itself passes


def test_an_expired_entry_counts_as_not_listed() -> None:
    baseline = parse_baseline(
        '[[entry]]\nrule = "ST-001"\nreason = "known"\nexpires = 2026-11-29\n'
        '[[entry]]\nrule = "ST-002"\nreason = "fixed"\nexpires = 2026-11-29\n'
    )
    results = build_results(_failing_st001(), catalogue(), header(), baseline)
    rules = {r.id: r for r in results.rules}
    assert rules["ST-001"].verdict == "fail"
    assert rules["ST-002"].verdict == "pass"
    assert "expired on 2026-11-29" in rules["ST-001"].reason
    assert results.baseline is not None
    assert [e["status"] for e in results.baseline["entries"]] == ["expired", "expired"]
    assert exit_code(results) == 1


def test_an_entry_is_valid_through_its_expiry_date_judged_by_the_run_start() -> None:
    baseline = parse_baseline(
        '[[entry]]\nrule = "ST-001"\nreason = "known"\nexpires = 2026-11-30\n'
    )
    same_day = build_results(_failing_st001(), catalogue(), header(), baseline)
    assert next(r for r in same_day.rules if r.id == "ST-001").verdict == "xfail"
    later = build_results(
        _failing_st001(), catalogue(), header(started="2026-12-01T00:00:00+00:00"), baseline
    )
    assert next(r for r in later.rules if r.id == "ST-001").verdict == "fail"


def test_without_a_start_time_an_expiring_entry_does_not_hide_a_failure() -> None:
    baseline = parse_baseline('[[entry]]\nrule = "ST-001"\nreason = "k"\nexpires = 2999-01-01\n')
    results = build_results(_failing_st001(), catalogue(), header(started=None), baseline)
    assert next(r for r in results.rules if r.id == "ST-001").verdict == "fail"


def test_a_baseline_never_hides_an_adapter_error() -> None:
    baseline = parse_baseline('[[entry]]\nrule = "ST-001"\nreason = "flaky"\n')
    records = [*store_outcomes(), outcome(["ST-001"], "error", name="hung")]
    results = build_results(records, catalogue(), header(), baseline)
    rule = next(r for r in results.rules if r.id == "ST-001")
    assert rule.verdict == "error"
    assert rule.baseline is not None
    assert rule.baseline.status == "not-applied"
    assert exit_code(results) == 3


def test_entries_for_rules_outside_the_run_are_reported_not_applied() -> None:
    baseline = parse_baseline('[[entry]]\nrule = "SP-001"\nreason = "runtime gap"\n')
    results = build_results(store_outcomes(), catalogue(), header(), baseline)
    assert results.baseline == {
        "source": "<baseline>",
        "entries": [
            {
                "rule": "SP-001", "reason": "runtime gap", "expires": None,
                "issue": None, "status": "not-applied",
            }
        ],
    }


def test_check_baseline_names_the_unknown_rule_before_any_run() -> None:
    from memconform.reports import check_baseline

    check_baseline(parse_baseline('[[entry]]\nrule = "ST-001"\nreason = "k"\n'), catalogue())
    with pytest.raises(BaselineError, match=r"b\.toml: rule SP-404 is not in catalogue test-1"):
        check_baseline(parse_baseline('[[entry]]\nrule = "SP-404"\nreason = "k"\n', "b.toml"),
                       catalogue())
