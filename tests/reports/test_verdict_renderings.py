"""Each verdict beyond pass and fail in every rendering: results.json (valid
against the schema, read back unchanged), report.html, JUnit XML, the badge and
the comparison page."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema

from memconform.reports import build_results, load_results, write_comparison, write_reports
from memconform.reports.results import Results
from memconform.resources import spec_dir
from tests.reports.factory import catalogue, header, outcome, store_outcomes

SCHEMA = json.loads((spec_dir() / "schemas" / "results.schema.json").read_text("utf-8"))


def _written(results: Results, folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in write_reports(results, folder)}


def _case(junit: bytes, rule_id: str) -> ET.Element:
    root = ET.fromstring(junit)
    return next(c for c in root.iter("testcase") if c.get("name", "").startswith(rule_id))


def _inconclusive(**head: Any) -> Results:
    records = [
        *store_outcomes(),
        outcome(["ST-001"], "inconclusive", name="kill during append",
                message="no kill landed while an append was in flight (0 of 5)"),
        outcome(["ST-003"], "inconclusive", name="weak",
                message="the fault could not be injected"),
    ]
    return build_results(records, catalogue(), header(**head))


def test_inconclusive_in_json_html_junit_badge_and_comparison(tmp_path: Path) -> None:
    results = _inconclusive()
    files = _written(results, tmp_path)
    data = json.loads(files["results.json"])
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data)) == []
    rules = {r["id"]: r for r in data["rules"]}
    assert rules["ST-001"]["verdict"] == "inconclusive"
    assert "0 of 5" in rules["ST-001"]["reason"]
    assert rules["ST-001"]["scenarios"][0]["outcome"] == "inconclusive"
    assert data["footer"]["totals"]["inconclusive"] == 2
    assert data["footer"]["exit_code"] == 1
    assert "core" not in data["conformance"]["achieved"]
    assert load_results(tmp_path / "results.json").to_json() == results.to_json()

    page = files["report.html"].decode()
    assert '<tr id="rule-ST-001" data-verdict="inconclusive">' in page
    assert "2 inconclusive" in page
    assert "Exit code 1" in page

    must = _case(files["junit.xml"], "ST-001").find("failure")
    assert must is not None
    assert must.get("type") == "inconclusive"
    should = _case(files["junit.xml"], "ST-003").find("skipped")
    assert should is not None
    assert (should.get("message") or "").startswith("inconclusive: ")

    badge = files["badge.svg"].decode()
    assert ">1/2 classes</text>" in badge
    assert "achieved: errors · not achieved: core · " in badge
    assert "· 2 inconclusive</title>" in badge

    compare = write_comparison([results], tmp_path / "cmp").read_text(encoding="utf-8")
    assert '<span class="verdict v-inconclusive">inconclusive</span>' in compare


def test_a_version_1_file_is_still_read(tmp_path: Path) -> None:
    data = build_results(store_outcomes(), catalogue(), header()).to_json()
    data["format"] = "memconform-results/1"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_results(path)
    assert loaded.complete
    assert loaded.to_json()["format"] == "memconform-results/2"


def test_a_version_1_file_written_again_is_a_valid_version_2_file(tmp_path: Path) -> None:
    data = build_results(store_outcomes(), catalogue(), header()).to_json()
    data["format"] = "memconform-results/1"
    for part in ("store", "runtime"):
        del data["header"][part]["provides"]
    for rule in data["rules"]:
        del rule["rests_on"], rule["measured"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    again = write_reports(load_results(path), tmp_path / "again")[0]
    written = json.loads(again.read_text(encoding="utf-8"))
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(written)) == []
    assert load_results(again).complete


def _adapter_and_informational() -> Results:
    from dataclasses import replace

    from memconform.catalogue import Catalogue

    base = catalogue()
    rules = tuple(replace(r, rests_on=("window",)) if r.id == "ST-001" else r for r in base)
    records = [
        *store_outcomes(),
        outcome(["ST-004"], "failed", name="durable anyway", needs=["durable"],
                message="a fresh process read nothing"),
    ]
    head = header(store={"url": "x://", "capabilities": ["errors"], "provides": ["window"]})
    return build_results(records, Catalogue(rules, base.version, base.digest), head)


def test_adapter_provided_and_informational_in_every_rendering(tmp_path: Path) -> None:
    results = _adapter_and_informational()
    files = _written(results, tmp_path)
    data = json.loads(files["results.json"])
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data)) == []
    rules = {r["id"]: r for r in data["rules"]}
    assert rules["ST-001"]["verdict"] == "adapter-provided"
    assert rules["ST-001"]["rests_on"] == ["window"]
    assert (rules["ST-004"]["verdict"], rules["ST-004"]["measured"]) == ("informational", "fail")
    assert data["header"]["store"]["provides"] == ["window"]
    assert data["footer"]["totals"]["informational"] == 1
    assert data["footer"]["exit_code"] == 1  # the adapter-provided MUST rule, not the finding
    assert load_results(tmp_path / "results.json").to_json() == results.to_json()

    page = files["report.html"].decode()
    assert 'data-verdict="adapter-provided"' in page
    assert 'data-verdict="informational"' in page
    assert "1 adapter-provided" in page
    assert "1 informational finding: promises the store does not claim" in page
    assert "store adapter provides</dt><dd>window" in page
    assert "<dt>measured</dt><dd>fail (not claimed, not counted)</dd>" in page

    adapter = _case(files["junit.xml"], "ST-001").find("failure")
    assert adapter is not None
    assert adapter.get("type") == "adapter-provided"
    finding = _case(files["junit.xml"], "ST-004").find("skipped")
    assert finding is not None
    assert (finding.get("message") or "").startswith("informational: not claimed")

    badge = files["badge.svg"].decode()
    assert ">1/2 classes</text>" in badge
    assert "not achieved: core · MUST 50% (1 of 2) · 1 adapter-provided · " in badge
    assert "1 informational (not claimed, not counted)</title>" in badge

    compare = write_comparison([results], tmp_path / "cmp").read_text(encoding="utf-8")
    assert '<span class="verdict v-adapter-provided">adapter-provided</span>' in compare
    assert '<span class="verdict v-informational">informational</span>' in compare


def test_an_informational_finding_alone_leaves_the_exit_code_at_0(tmp_path: Path) -> None:
    records = [*store_outcomes(), outcome(["ST-004"], "failed", name="d", needs=["durable"])]
    results = build_results(records, catalogue(), header())
    data = json.loads(_written(results, tmp_path)["results.json"])
    assert data["footer"]["exit_code"] == 0
    assert data["conformance"]["achieved"] == ["core", "errors"]


def test_the_badge_stays_badge_sized_with_every_class_achieved(tmp_path: Path) -> None:
    import re
    from dataclasses import replace

    from memconform.catalogue import Catalogue
    from memconform.reports.verdict import CLASSES

    # a store claiming and achieving every class: one passing MUST rule each
    rules = tuple(
        replace(catalogue()["ST-001"], id=f"ST-{n:03d}", capability=None if c == "core" else c)
        for n, c in enumerate(CLASSES, 1)
    )
    records = [outcome([r.id], name=r.id) for r in rules]
    results = build_results(
        records, Catalogue(rules, "1", "0"), header(capabilities=list(CLASSES[1:]))
    )
    assert results.achieved == list(CLASSES)
    badge = _written(results, tmp_path)["badge.svg"].decode()
    found = re.search(r'<svg [^>]*width="(\d+)"', badge)
    assert found is not None
    assert int(found.group(1)) <= 170  # shields.io sets this text in about 156 px
    assert 'height="20"' in badge
    assert ">9/9 classes</text>" in badge
    assert "achieved: core, commit-flags, errors, turn-records, state, knowledge" in badge


def test_a_pass_that_says_how_it_passed_shows_it_in_json_junit_and_html(tmp_path: Path) -> None:
    how = "best effort: 3 of 4 kills landed while an append was in flight (at 62%, 24%, 85%)"
    records = [
        *[o for o in store_outcomes() if "ST-004" not in o["rules"]],
        outcome(["ST-004"], "passed", name="killed writer", message=how),
    ]
    results = build_results(records, catalogue(), header(capabilities=["durable"]))
    st4 = next(r for r in results.rules if r.id == "ST-004")
    assert st4.verdict == "pass"
    assert [s.message for s in st4.scenarios] == [how]
    files = _written(results, tmp_path)
    written = {r["id"]: r for r in json.loads(files["results.json"])["rules"]}
    assert written["ST-004"]["scenarios"][0]["message"] == how
    case = _case(files["junit.xml"], "ST-004")
    out = case.find("system-out")
    assert out is not None
    assert f"how: {how}" in str(out.text)
    assert case.find("failure") is None
    assert f"how: {how}" in files["report.html"].decode("utf-8")
