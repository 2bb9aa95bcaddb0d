"""Runtime conformance classes: per profile, per save policy for save-policy,
claimed only for what the runtime declared."""

from __future__ import annotations

import dataclasses
from typing import Any

from memconform.reports import build_results
from memconform.reports.results import Results
from tests.reports.factory import catalogue, header, outcome

ALL = ["candidates", "persisted-state", "save-policy", "strict-write", "turns"]


def _declares(policies: list[str] | None) -> dict[str, Any]:
    return {"profiles": ALL, "policies": policies}


def _classes(results: Results) -> dict[str, str]:
    return {c.name: c.status for c in results.runtime_classes}


def _run(records: list[dict[str, Any]], policies: list[str] | None) -> Results:
    declared = [{**r, "runtime_declares": _declares(policies)} for r in records]
    return build_results(declared, catalogue(), header(subject="runtime"))


def test_a_runtime_declaring_turn_achieves_only_the_turn_class() -> None:
    records = [
        outcome(["SP-001"], name="turn row", policies=["turn"]),
        outcome(["SP-001"], "unsupported", name="message row", policies=["message"]),
        outcome(["SP-002"], name="no policy configured", policies=[]),
        outcome(["SW-001"]),
    ]
    results = _run(records, ["turn"])
    assert _classes(results) == {
        "save-policy/message": "not-claimed",
        "save-policy/turn": "achieved",
        "save-policy/run": "not-claimed",
        "strict-write": "achieved",
    }
    assert results.runtime_achieved == ["save-policy/turn", "strict-write"]
    assert results.header["runtime"]["declares"] == _declares(["turn"])
    data = results.to_json()
    assert [c["name"] for c in data["runtime_classes"]][:3] == [
        "save-policy/message", "save-policy/turn", "save-policy/run"]
    assert _classes(Results.from_json(data)) == _classes(results)


def test_a_class_is_judged_from_its_own_policy_only() -> None:
    # the message rows fail, the turn rows pass: only the message class is lost
    records = [
        outcome(["SP-001"], name="turn row", policies=["turn"]),
        outcome(["SP-001"], "failed", name="message row", policies=["message"]),
    ]
    results = _run(records, ["message", "turn"])
    classes = _classes(results)
    assert classes["save-policy/turn"] == "achieved"
    assert classes["save-policy/message"] == "not-achieved"
    assert {r.id: r.verdict for r in results.rules}["SP-001"] == "fail"


def test_a_runtime_declaring_no_policies_achieves_no_save_policy_class() -> None:
    records = [outcome(["SP-001"], policies=["turn"]), outcome(["SP-002"])]
    results = _run(records, None)
    classes = _classes(results)
    assert {classes[f"save-policy/{p}"] for p in ("message", "turn", "run")} == {"not-claimed"}
    assert not [n for n in results.runtime_achieved if n.startswith("save-policy")]
    # its scenarios were still judged rule by rule
    assert {r.id: r.verdict for r in results.rules}["SP-001"] == "pass"


def test_a_runtime_declaring_nothing_achieves_nothing() -> None:
    records = [{**outcome(["SP-001"], policies=["turn"]),
                "runtime_declares": {"profiles": [], "policies": None}}]
    results = build_results(records, catalogue(), header(subject="runtime"))
    assert set(_classes(results).values()) == {"not-claimed"}
    assert results.runtime_achieved == []


def test_a_store_run_has_no_runtime_classes() -> None:
    results = build_results([outcome(["ST-001"])], catalogue(), header(subject="store"))
    assert results.runtime_classes == ()
    assert "runtime_classes" not in results.to_json()
    assert "declares" not in results.header["runtime"]


def _complete(results: Results) -> Results:
    """``results`` as a complete report (the synthetic catalogue's other rules
    have no scenario here, which would mark it incomplete)."""
    assert results.footer is not None
    return dataclasses.replace(
        results, footer=dataclasses.replace(results.footer, complete=True), problems=())


def test_the_badge_and_the_comparison_show_a_runtimes_classes() -> None:
    from memconform.reports.badge import badge_text, badge_title
    from memconform.reports.compare import render_comparison

    records = [
        outcome(["SP-001"], name="turn row", policies=["turn"]),
        outcome(["SP-001"], "failed", name="message row", policies=["message"]),
        outcome(["SW-001"]),
    ]
    results = _complete(_run(records, ["message", "turn"]))
    assert results.of_runtime
    assert [c.name for c in results.subject_classes] == [c.name for c in results.runtime_classes]
    # the store classes of a runtime run say nothing of the runtime
    _, message, _ = badge_text(results)
    assert message == "2/3 classes"  # turn and strict-write of message, turn, strict-write
    title = badge_title(results)
    assert "runtime classes · achieved: save-policy/turn, strict-write" in title
    assert "not achieved: save-policy/message" in title
    page = render_comparison([results]).decode()
    assert "runtime: save-policy/turn, strict-write</td>" in page
    assert "profiles: candidates, persisted-state, save-policy, strict-write, turns; " \
           "save policies: message, turn</td>" in page


def test_a_runtime_declaring_no_policy_claims_nothing_on_the_badge() -> None:
    from memconform.reports.badge import badge_text, badge_title
    from memconform.reports.compare import render_comparison

    results = _complete(build_results(
        [{**outcome(["SP-001"]), "runtime_declares": {"profiles": ["save-policy"],
                                                       "policies": []}}],
        catalogue(), header(subject="runtime")))
    assert badge_text(results)[1] == "0/0 classes"
    assert "runtime classes: none declared · achieved: none" in badge_title(results)
    assert "save policies: none</td><td>runtime: none</td>" in render_comparison(
        [results]).decode()


def test_a_store_run_keeps_its_store_classes_on_the_badge() -> None:
    from memconform.reports.badge import badge_text

    results = _complete(build_results([outcome(["ST-001"]), outcome(["ST-002"])], catalogue(),
                                      header()))
    assert not results.of_runtime
    assert results.subject_classes == results.classes
    claimed = [c for c in results.classes if c.claimed and c.status != "not-scored"]
    assert badge_text(results)[1] == f"{len(results.achieved)}/{len(claimed)} classes"
