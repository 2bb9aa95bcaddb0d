"""report.html and compare.html without a browser: content and layout promises."""

from __future__ import annotations

import re
from pathlib import Path

from memconform.reports import build_results, write_comparison, write_reports
from memconform.reports.baseline import parse_baseline
from memconform.reports.html import store_call_line
from tests.reports.factory import catalogue, header, outcome, store_outcomes


def _page(tmp_path: Path, certify: bool = True) -> str:
    baseline = parse_baseline(
        '[[entry]]\nrule = "ST-001"\nreason = "tracked in #42"\nexpires = 2027-01-31\n'
        '[[entry]]\nrule = "ST-002"\nreason = "fixed already"\n'
        '[[entry]]\nrule = "ST-003"\nreason = "old news"\nexpires = 2026-01-01\n'
    )
    records = [*store_outcomes(), outcome(["ST-001"], "failed", name="broken")]
    results = build_results(records, catalogue(), header(certify=certify), baseline)
    return write_reports(results, tmp_path)[1].read_text(encoding="utf-8")


def test_a_certify_run_shows_the_honoured_baseline_on_the_first_screen(tmp_path: Path) -> None:
    page = _page(tmp_path)
    box = page.index('id="baseline-first"')
    assert page.index('id="status"') < box < page.index('id="classes"')
    first_screen = page[box : page.index("</section>", box)]
    assert "Certified with known failures" in first_screen
    assert "tracked in #42" in first_screen
    assert "2027-01-31" in first_screen
    assert "stale: passes now, remove it" in first_screen
    assert "expired: no longer excuses anything" in first_screen


def test_a_plain_run_names_the_baseline_too(tmp_path: Path) -> None:
    page = _page(tmp_path, certify=False)
    assert 'id="baseline-first"' in page
    assert "Certified" not in page


def test_the_page_has_every_rule_with_filters_and_summaries(tmp_path: Path) -> None:
    page = _page(tmp_path)
    rows = re.findall(r'<tr id="rule-([A-Z]{2}-\d{3})" data-verdict="([a-z-]+)">', page)
    assert sorted(r[0] for r in rows) == sorted(r.id for r in catalogue())
    assert dict(rows)["ST-001"] == "xfail"
    for control in ("f-verdict", "f-profile", "f-level", "f-search"):
        assert f'id="{control}"' in page
    assert 'id="by-profile"' in page
    assert 'id="by-level"' in page
    assert '<details><summary><span class="text">Rule ST-001 holds.</span>' in page
    assert "Decided so because the documents are silent." in page


def test_classes_are_claimed_achieved_or_not_claimed_never_passed(tmp_path: Path) -> None:
    page = _page(tmp_path)
    section = page[page.index('id="classes"') : page.index('id="summary"')]
    assert "<td>durable</td><td class=\"c-not-claimed\">not claimed</td>" in section
    assert "passed</td>" not in section.replace("MUST passed</th>", "")


def test_an_incomplete_report_says_so_at_the_top(tmp_path: Path) -> None:
    results = build_results([outcome(["ST-001"])], catalogue(), header())
    page = write_reports(results, tmp_path)[1].read_text(encoding="utf-8")
    status = page[page.index('id="status"') : page.index("</section>")]
    assert "Incomplete:" in status
    assert "ST-002" in status


def test_store_calls_read_as_one_line_each() -> None:
    assert store_call_line(
        {"seq": 3, "kind": "store", "name": "append", "args": ["t1", [{"id": "m1"}]],
         "result": None}
    ) == '#3 store append("t1", [{"id": "m1"}]) → null'
    assert store_call_line(
        {"seq": 4, "kind": "store", "name": "messages", "args": ["t1", -1],
         "raised": {"type": "ValueError", "message": "negative limit"}}
    ) == '#4 store messages("t1", -1) raised ValueError: negative limit'
    assert store_call_line(
        {"seq": 5, "kind": "store", "name": "messages", "args": ["t1", None], "hung": True}
    ) == '#5 store messages("t1", null) (hung: no answer within the timeout)'
    assert store_call_line(
        {"seq": 6, "kind": "model", "name": "call", "reply": "hi"}
    ) == '#6 model call {"reply": "hi"}'
    assert store_call_line("odd") == '"odd"'
    assert store_call_line(
        {"seq": 7, "kind": "tool", "name": "search", "call_id": "c1",
         "args": {"query": "turn", "scope": "task"}, "result": ["T1"]}
    ) == '#7 tool search(query="turn", scope="task") {"call_id": "c1"} → ["T1"]'


def test_comparison_puts_each_identity_over_its_column(tmp_path: Path) -> None:
    one = build_results(store_outcomes(), catalogue(), header(store="postgresql://db/one"))
    two = build_results(
        [*store_outcomes(), outcome(["ST-001"], "failed", name="f")],
        catalogue(), header(store="redis://cache/0", capabilities=[]),
    )
    page = write_comparison([one, two], tmp_path).read_text(encoding="utf-8")
    assert "#1 postgresql://db/one" in page
    assert "#2 redis://cache/0" in page
    row = re.search(r'<tr class="rule"[^>]*><td>ST-001</td>.*?</tr>', page)
    assert row is not None
    assert re.findall(r'class="verdict v-([a-z-]+)"', row.group()) == ["pass", "fail"]
    assert 'data-differs="true"' in row.group()
    assert "Different catalogue versions" not in page


def test_comparison_flags_different_catalogue_versions(tmp_path: Path) -> None:
    from memconform.catalogue import Catalogue

    old = Catalogue(catalogue().rules[:-1], "test-0", "ffff")
    one = build_results(store_outcomes(), old, header())
    two = build_results(store_outcomes(), catalogue(), header())
    page = write_comparison([one, two], tmp_path).read_text(encoding="utf-8")
    assert "Different catalogue versions" in page
    row = re.search(r'<tr class="rule"[^>]*><td>ST-004</td>.*?</tr>', page)
    assert row is not None
    assert "<td>—</td>" in row.group()


def test_the_sources_line_names_each_document_once() -> None:
    from types import SimpleNamespace

    from memconform.reports.html import source_documents

    rules = [
        SimpleNamespace(source_document="000", source_title="Save policies"),
        SimpleNamespace(source_document="000, 002",
                        source_title="Save policies, History and records"),
        SimpleNamespace(source_document="004, 003",
                        source_title="What to persist, Manage memory"),
    ]
    assert source_documents(rules) == [
        ("000", "Save policies"), ("002", "History and records"), ("003", "Manage memory"),
        ("004", "What to persist"),
    ]
