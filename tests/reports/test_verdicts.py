"""Per-rule verdicts, subject scoring, classes and completeness."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.reports import build_results
from memconform.reports.results import Results, RuleResult
from tests.reports.factory import catalogue, header, outcome, store_outcomes


def _by_id(results: Results) -> dict[str, RuleResult]:
    return {r.id: r for r in results.rules}


def _verdicts(outcomes: list[dict[str, Any]], **head: Any) -> dict[str, str]:
    results = build_results(outcomes, catalogue(), header(**head))
    return {r.id: r.verdict for r in results.rules}


def test_every_catalogue_rule_has_an_entry_in_catalogue_order() -> None:
    results = build_results(store_outcomes(), catalogue(), header())
    assert [r.id for r in results.rules] == [r.id for r in catalogue()]
    assert results.footer is not None
    assert sum(results.footer.totals.values()) == results.footer.rules == len(catalogue())


@pytest.mark.parametrize(
    ("outcomes", "level", "expected"),
    [
        (["passed"], "MUST", "pass"),
        (["passed", "failed"], "MUST", "fail"),
        (["passed", "failed"], "SHOULD", "warn"),
        (["failed", "error"], "MUST", "error"),
        (["error", "crashed"], "MUST", "error"),
        (["unsupported"], "MUST", "unsupported"),
        (["passed", "unsupported"], "MUST", "pass"),
        (["inconclusive"], "MUST", "inconclusive"),
        (["passed", "inconclusive"], "MUST", "inconclusive"),
        (["inconclusive", "unsupported"], "MUST", "inconclusive"),
        (["inconclusive", "failed"], "MUST", "fail"),
        (["inconclusive", "error"], "MUST", "error"),
        (["skipped"], "MUST", "not-run"),
        ([], "MUST", "not-run"),
    ],
)
def test_outcomes_combine_into_one_verdict(
    outcomes: list[str], level: str, expected: str
) -> None:
    rule_id = "ST-001" if level == "MUST" else "ST-003"
    records = [outcome([rule_id], o, name=f"s{n}") for n, o in enumerate(outcomes)]
    assert _verdicts(records)[rule_id] == expected


def test_a_crashed_scenario_is_an_error_flagged_as_a_kit_bug() -> None:
    results = build_results(
        [outcome(["ST-001"], "crashed", message="KeyError: 'x'")], catalogue(), header()
    )
    rule = _by_id(results)["ST-001"]
    assert (rule.verdict, rule.kit_error) == ("error", True)
    assert "kit crashed" in rule.reason
    adapter = build_results([outcome(["ST-001"], "error")], catalogue(), header())
    assert not _by_id(adapter)["ST-001"].kit_error


def test_an_unknown_outcome_value_is_treated_as_a_kit_crash() -> None:
    results = build_results([outcome(["ST-001"], "exploded")], catalogue(), header())
    rule = _by_id(results)["ST-001"]
    assert rule.verdict == "error"
    assert rule.kit_error
    assert rule.scenarios[0].outcome == "crashed"


def test_a_store_run_scores_only_store_rules() -> None:
    verdicts = _verdicts([*store_outcomes(), outcome(["SP-001"], "failed")])
    assert verdicts["SP-001"] == "not-scored"
    assert verdicts["SW-001"] == "not-scored"
    assert verdicts["ST-001"] == "pass"


def test_a_runtime_run_scores_only_runtime_rules() -> None:
    records = [outcome(["SP-001"]), outcome(["SP-002"], "failed"), outcome(["SW-001"])]
    results = build_results(records, catalogue(), header(subject="runtime"))
    verdicts = {r.id: r.verdict for r in results.rules}
    assert verdicts == {
        "SP-001": "pass",
        "SP-002": "warn",
        "SP-003": "not-scored",  # untested by design
        "SW-001": "pass",
        "ST-001": "not-scored",
        "ST-002": "not-scored",
        "ST-003": "not-scored",
        "ST-004": "not-scored",
    }
    assert results.complete
    reasons = {r.id: r.reason for r in results.rules}
    assert reasons["ST-001"] == "a store rule; this run judged a runtime"
    assert reasons["SP-003"].startswith("untested by design")


def test_a_both_run_scores_every_rule() -> None:
    records = [*store_outcomes(), outcome(["SP-001", "SP-002", "SW-001"])]
    verdicts = _verdicts(records, subject="both")
    assert verdicts["SP-001"] == verdicts["ST-001"] == "pass"
    assert verdicts["SP-003"] == "not-scored"


def test_a_scored_rule_without_outcome_makes_the_report_incomplete() -> None:
    records = [o for o in store_outcomes() if o["rules"] != ["ST-002"]]
    results = build_results(records, catalogue(), header())
    assert _by_id(results)["ST-002"].verdict == "not-run"
    assert not results.complete
    assert results.footer is not None
    assert "ST-002" in (results.footer.reason or "")


def test_rules_outside_a_stated_selection_are_not_scored_and_the_report_complete() -> None:
    results = build_results(
        [outcome(["ST-001"])], catalogue(), header(selection=["ST-001"])
    )
    rules = _by_id(results)
    assert rules["ST-001"].verdict == "pass"
    assert rules["ST-002"].verdict == "not-scored"
    assert rules["ST-002"].reason == "not selected for this run"
    assert results.complete
    assert results.header["selection"] == {"profiles": [], "rules": ["ST-001"]}
    status = {c.name: c.status for c in results.classes}
    assert status["core"] == "partial"  # ST-003 was left out: a partial run claims nothing
    assert status["errors"] == "not-scored"
    assert results.achieved == []


def test_a_selection_by_profile_covers_the_profile_rules() -> None:
    results = build_results(
        store_outcomes(), catalogue(), header(selection={"profiles": ["store"], "rules": []})
    )
    assert results.complete
    assert _by_id(results)["ST-003"].verdict == "pass"
    # every store rule was selected in a store run: nothing left out
    assert results.achieved == ["core", "errors"]


def test_outcomes_naming_unknown_rules_are_a_kit_error_and_incomplete() -> None:
    results = build_results([*store_outcomes(), outcome(["ST-999"])], catalogue(), header())
    assert results.kit_error
    assert not results.complete
    assert results.footer is not None
    assert results.footer.unknown_rules == ("ST-999",)


def test_a_run_that_stopped_early_says_so() -> None:
    results = build_results(store_outcomes(), catalogue(), header(stopped_early="interrupted"))
    assert not results.complete
    assert "interrupted" in (results.incomplete_reason or "")


def test_a_stopped_run_passes_only_the_rules_whose_scenarios_all_ran() -> None:
    """ST-001 had a third scenario due that never ran; ST-002 and ST-003 ran
    whole; a run that stopped early without saying what was due passes nothing."""
    due = {
        "ST-001": ["features/x.feature::passed ST-001", "features/x.feature::second",
                   "features/x.feature::cut off"],
        "ST-002": ["features/x.feature::passed ST-002"],
        "ST-003": ["features/x.feature::second"],
    }
    stopped = header(stopped_early="-x: stopped after 1 failing scenario")
    results = build_results(store_outcomes(), catalogue(), stopped, collected=due)
    rules = _by_id(results)
    assert rules["ST-001"].verdict == "inconclusive"
    assert rules["ST-001"].reason == (
        "the run stopped before all of this rule's scenarios ran (-x: stopped after 1 "
        "failing scenario): 2 of 3 ran and passed, 1 did not run"
    )
    assert (rules["ST-002"].verdict, rules["ST-003"].verdict) == ("pass", "pass")
    assert not results.complete
    assert {c.name: c.status for c in results.classes}["core"] == "not-achieved"
    unknown = _by_id(build_results(store_outcomes(), catalogue(), stopped))
    assert {unknown[r].verdict for r in ("ST-001", "ST-002", "ST-003")} == {"inconclusive"}
    assert unknown["ST-002"].reason.startswith(
        "the run stopped before it could be shown that all of this rule's scenarios ran"
    )
    whole = _by_id(build_results(store_outcomes(), catalogue(), header(), collected=due))
    assert whole["ST-001"].verdict == "pass"  # a run that went through: as before


def test_classes_claimed_achieved_and_not_claimed() -> None:
    results = build_results(store_outcomes(), catalogue(), header(capabilities=["errors"]))
    status = {c.name: c.status for c in results.classes}
    assert status["core"] == "achieved"
    assert status["errors"] == "achieved"
    assert status["durable"] == "not-claimed"
    assert status["commit-flags"] == "not-claimed"
    assert results.claimed == ["core", "errors"]
    assert results.achieved == ["core", "errors"]
    assert results.must_share == (2, 2)


def test_a_failing_must_rule_denies_its_class_only() -> None:
    records = [*store_outcomes(), outcome(["ST-002"], "failed", name="broken")]
    results = build_results(records, catalogue(), header())
    status = {c.name: c.status for c in results.classes}
    assert status == {**status, "core": "achieved", "errors": "not-achieved"}


def test_a_failing_should_rule_does_not_deny_its_class() -> None:
    records = [*store_outcomes(), outcome(["ST-003"], "failed", name="weak")]
    results = build_results(records, catalogue(), header())
    assert _by_id(results)["ST-003"].verdict == "warn"
    assert "core" in results.achieved


def test_a_claimed_class_with_nothing_judged_is_not_scored_never_achieved() -> None:
    results = build_results(
        store_outcomes(), catalogue(), header(capabilities=["errors", "knowledge"])
    )
    status = {c.name: c.status for c in results.classes}
    assert status["knowledge"] == "not-scored"
    assert "knowledge" not in results.achieved


def test_evidence_keeps_what_the_scenario_saw() -> None:
    record = outcome(
        ["ST-001"], "failed", failing_step="Then the store holds 2 messages",
        expected="2 messages", observed={"count": 1},
    )
    rule = _by_id(build_results([record], catalogue(), header()))["ST-001"]
    (scenario,) = rule.scenarios
    assert scenario.failing_step == "Then the store holds 2 messages"
    assert scenario.expected == "2 messages"
    assert scenario.observed == '{"count": 1}'
    assert scenario.store_calls[0]["name"] == "append"


def test_the_rerun_command_names_the_redacted_store_and_the_rule() -> None:
    rule = _by_id(build_results(store_outcomes(), catalogue(), header()))["ST-001"]
    assert rule.rerun == (
        "memconform run --store "
        "'postgresql://user:***@db.example/test?sslpassword=***&app=a' --rule ST-001"
    )
    runtime = build_results(
        [outcome(["SP-001"])], catalogue(), header(subject="runtime", runtime="pkg.mod:make")
    )
    assert _by_id(runtime)["SP-001"].rerun == "memconform run --runtime pkg.mod:make --rule SP-001"
    assert _by_id(runtime)["ST-001"].rerun is None


def test_the_header_is_redacted_again_and_normalised() -> None:
    results = build_results(store_outcomes(), catalogue(), header(extra_field={"a": 1}))
    head = results.header
    assert "s3cret" not in str(head)
    assert head["store"]["url"] == "postgresql://user:***@db.example/test?sslpassword=***&app=a"
    assert head["catalogue"] == {"version": "test-1", "hash": "0123456789abcdef", "rules": 8}
    assert head["extra"] == {"extra_field": {"a": 1}}
    assert head["mode"] == "run"
    assert build_results([], catalogue(), header(certify=True)).header["mode"] == "certify"


def test_an_unknown_subject_is_refused() -> None:
    with pytest.raises(ValueError, match="subject"):
        build_results([], catalogue(), header(subject="everything"))


def test_an_inconclusive_must_rule_says_why_and_its_class_is_not_achieved() -> None:
    records = [
        *store_outcomes(),
        outcome(["ST-001"], "inconclusive", name="kill",
                message="no kill landed while an append was in flight"),
    ]
    results = build_results(records, catalogue(), header())
    rule = _by_id(results)["ST-001"]
    assert rule.verdict == "inconclusive"
    assert "no kill landed while an append was in flight" in rule.reason
    assert "“kill”" in rule.reason
    core = next(c for c in results.classes if c.name == "core")
    assert core.status == "not-achieved"
    assert (core.must_total, core.must_passed) == (1, 0)
    assert "core" not in results.achieved


def _rests_on_window() -> Any:
    from dataclasses import replace

    from memconform.catalogue import Catalogue

    base = catalogue()
    rules = tuple(
        replace(r, rests_on=("window",)) if r.id in ("ST-001", "ST-003") else r for r in base
    )
    return Catalogue(rules, base.version, base.digest)


def test_a_rule_resting_on_what_the_adapter_provides_is_adapter_provided() -> None:
    results = build_results(
        store_outcomes(), _rests_on_window(), header(store={
            "url": "x://", "capabilities": ["errors"], "provides": ["window"],
        }),
    )
    rules = _by_id(results)
    assert rules["ST-001"].verdict == "adapter-provided"
    assert "rests on window, which the adapter provides itself" in rules["ST-001"].reason
    assert rules["ST-003"].verdict == "adapter-provided"  # a SHOULD rule too
    assert rules["ST-002"].verdict == "pass"
    core = next(c for c in results.classes if c.name == "core")
    assert (core.status, core.must_total, core.must_passed) == ("not-achieved", 1, 0)


def test_provisions_recorded_by_the_scenarios_count_too_and_reach_the_header() -> None:
    records = [
        {**o, "provided": {"store": ["window"], "runtime": []}} for o in store_outcomes()
    ]
    results = build_results(records, _rests_on_window(), header())
    assert _by_id(results)["ST-001"].verdict == "adapter-provided"
    assert results.header["store"]["provides"] == ["window"]
    assert results.header["runtime"]["provides"] == []


def test_a_failure_stays_a_failure_when_the_adapter_provides_what_it_rests_on() -> None:
    records = [*store_outcomes(), outcome(["ST-001"], "failed", name="f")]
    head = header(store={"url": "x://", "capabilities": ["errors"], "provides": ["window"]})
    assert _by_id(build_results(records, _rests_on_window(), head))["ST-001"].verdict == "fail"


def test_a_runtime_provision_touches_runtime_rules_only() -> None:
    from dataclasses import replace

    from memconform.catalogue import Catalogue

    base = catalogue()
    rules = tuple(replace(r, rests_on=("ids",)) for r in base)
    records = [outcome(["SP-001"]), outcome(["ST-001"])]
    head = header(subject="both", runtime={"identity": "m:f", "provides": ["ids"]})
    judged = _by_id(build_results(records, Catalogue(rules, "t", "0"), head))
    assert judged["SP-001"].verdict == "adapter-provided"
    assert judged["ST-001"].verdict == "pass"


def test_an_undeclared_capability_is_decided_by_its_own_scenarios_only() -> None:
    # ST-004 needs `durable`, which the header does not declare. A check that is
    # not tagged with the capability names it too: it does not decide it.
    general = outcome(["ST-001", "ST-004"], name="property")
    own = outcome(["ST-004"], "unsupported", name="own", needs=["durable"],
                  message="the store does not declare the capability 'durable'")
    for records in ([general, own], [{**general, "outcome": "failed"}, own], [own]):
        rule = _by_id(build_results(records, catalogue(), header()))["ST-004"]
        assert (rule.verdict, rule.reason) == (
            "unsupported", "the store does not declare the capability 'durable'"
        )
        assert [s.scenario for s in rule.scenarios] == ["own"]
    alone = _by_id(build_results([general], catalogue(), header()))["ST-004"]
    assert alone.verdict == "unsupported"
    assert alone.scenarios == ()


def test_a_promise_not_claimed_but_measured_is_informational_and_not_counted() -> None:
    for result, measured in (("passed", "pass"), ("failed", "fail"), ("error", "error"),
                             ("inconclusive", "inconclusive")):
        records = [*store_outcomes(), outcome(["ST-004"], result, name="m", needs=["durable"])]
        results = build_results(records, catalogue(), header())
        rule = _by_id(results)["ST-004"]
        assert (rule.verdict, rule.measured) == ("informational", measured)
        assert rule.reason.startswith(
            "not claimed (the store does not declare the capability 'durable'), measured anyway"
        )
        assert results.footer is not None
        assert results.footer.exit_code == 0
        assert results.footer.scored == 3  # ST-001..ST-003; ST-004 is not counted
        assert results.must_share == (2, 2)
        durable = next(c for c in results.classes if c.name == "durable")
        assert (durable.status, durable.scored) == ("not-claimed", 0)


def test_a_kit_crash_in_an_unclaimed_rule_still_says_the_kit_failed() -> None:
    records = [*store_outcomes(), outcome(["ST-004"], "crashed", name="m", needs=["durable"])]
    rule = _by_id(build_results(records, catalogue(), header()))["ST-004"]
    assert (rule.verdict, rule.kit_error) == ("error", True)


def test_a_row_of_a_core_rule_that_needs_an_unclaimed_promise_decides_nothing() -> None:
    """A scenario of a core rule that needs `durable` (processes one after
    another) runs only when unclaimed promises are measured; failing then, it
    measures a promise the store does not make, and the rule stays as its
    other rows say."""
    measured = outcome(["ST-001"], "failed", name="zones", needs=["durable"])
    rule = _by_id(build_results([*store_outcomes(), measured], catalogue(), header()))["ST-001"]
    assert rule.verdict == "pass"
    assert "zones" not in [s.scenario for s in rule.scenarios]
    claimed = header(capabilities=["errors", "durable"])
    rule = _by_id(build_results([*store_outcomes(), measured], catalogue(), claimed))["ST-001"]
    assert rule.verdict == "fail"
