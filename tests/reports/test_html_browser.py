"""report.html in a real browser: headless Chromium, driven by Playwright.

Needs the Debian package ``chromium`` (``/usr/bin/chromium``, or the path in
``MEMCONFORM_CHROMIUM``) and ``playwright`` from PyPI; Playwright's own browser
download is never used. Skips with the reason when either is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memconform.reports import build_results, write_comparison, write_reports
from memconform.reports.html import rule_order
from memconform.reports.results import Results
from tests.reports.factory import catalogue, header, outcome, store_outcomes

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("MEMCONFORM_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
PLANTED = (
    "<script>window.__planted = 'script ran'; document.title = 'pwned'</script>"
    "<img src=x onerror=\"window.__planted = 'handler ran'\">"
)


def _browser_or_skip() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright; no browser download)")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"Chromium not found at {CHROMIUM} (Debian: apt-get install chromium)")
    return sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _browser_or_skip()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def _results() -> Results:
    records = [
        *store_outcomes(),
        outcome(
            ["ST-001"], "failed", name="planted", message=f"stored message: {PLANTED}",
            expected=PLANTED, observed=PLANTED,
            store_calls=[{"seq": 1, "kind": "store", "name": "append",
                          "args": ["t", [{"text": PLANTED}]], "result": None}],
        ),
        outcome(["ST-003"], "failed", name="should"),
    ]
    return build_results(records, catalogue(), header(subject="both", store=f"memory://{PLANTED}"))


class _Page:
    """A loaded page with its console errors and the requests it made."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.goto(path.as_uri())

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {message.text}")

    def visible_ids(self) -> list[str]:
        ids: list[str] = self.page.eval_on_selector_all(
            "#rule-table tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.id.slice(5))"
        )
        return ids


def test_report_opens_offline_with_every_rule_and_no_errors(
    browser: Any, tmp_path: Path
) -> None:
    results = _results()
    path = write_reports(results, tmp_path)[1]
    view = _Page(browser, path)
    scored = [r.id for r in rule_order(results.rules) if r.verdict != "not-scored"]
    assert view.visible_ids() == scored
    assert view.page.text_content("#shown") == f"{len(scored)} of 8 rules shown"
    view.page.check("#f-unscored")
    assert view.visible_ids() == [r.id for r in rule_order(results.rules)]
    assert view.errors == []
    assert all(url.startswith("file://") for url in view.requests), view.requests
    view.page.close()


def test_filters_by_verdict_profile_level_and_text(browser: Any, tmp_path: Path) -> None:
    results = _results()
    view = _Page(browser, write_reports(results, tmp_path)[1])
    page = view.page
    page.select_option("#f-verdict", "fail")
    assert view.visible_ids() == [r.id for r in results.rules if r.verdict == "fail"] == ["ST-001"]
    assert page.text_content("#shown") == "1 of 8 rules shown"
    page.select_option("#f-verdict", "")
    page.select_option("#f-profile", "save-policy")
    assert view.visible_ids() == ["SP-001", "SP-002"]  # SP-003 is not scored: hidden
    page.check("#f-unscored")
    assert view.visible_ids() == ["SP-001", "SP-002", "SP-003"]
    page.uncheck("#f-unscored")
    page.select_option("#f-level", "SHOULD")
    assert view.visible_ids() == ["SP-002"]
    page.select_option("#f-profile", "")
    page.select_option("#f-level", "")
    page.fill("#f-search", "rule st-00")
    assert view.visible_ids() == ["ST-001", "ST-003", "ST-002", "ST-004"]  # fail, warn, pass, n/a
    page.fill("#f-search", "")
    page.click("#by-level a[data-filter-verdict='warn']")
    assert view.visible_ids() == ["ST-003"]
    assert view.errors == []
    page.close()


def test_planted_script_in_a_stored_message_is_shown_not_run(
    browser: Any, tmp_path: Path
) -> None:
    view = _Page(browser, write_reports(_results(), tmp_path)[1])
    page = view.page
    page.click("#rule-ST-001 summary")
    evidence = page.text_content("#rule-ST-001 details") or ""
    assert "<script>window.__planted = 'script ran'" in evidence
    assert "onerror=" in evidence
    assert page.evaluate("typeof window.__planted") == "undefined"
    assert page.title().startswith("memconform report")
    planted = page.eval_on_selector_all("#rule-table script, #rule-table img", "e => e.length")
    assert planted == 0
    assert view.errors == []
    page.close()


def test_a_rule_link_opens_its_evidence(browser: Any, tmp_path: Path) -> None:
    path = write_reports(_results(), tmp_path)[1]
    page = browser.new_page()
    page.goto(path.as_uri() + "#rule-ST-001")
    assert page.eval_on_selector("#rule-ST-001 details", "d => d.open") is True
    page.close()


def test_comparison_page_filters_and_stays_inert(browser: Any, tmp_path: Path) -> None:
    plain = build_results(store_outcomes(), catalogue(), header())
    path = write_comparison([plain, _results()], tmp_path)
    view = _Page(browser, path)
    page = view.page
    assert page.eval_on_selector_all("tr.rule", "rows => rows.length") == 8
    page.check("#f-differs")
    differing = page.eval_on_selector_all(
        "tr.rule", "rows => rows.filter(r => !r.hidden).map(r => r.cells[0].textContent)"
    )
    assert differing == ["SP-001", "SP-002", "SW-001", "ST-001", "ST-003"]
    assert page.evaluate("typeof window.__planted") == "undefined"
    assert view.errors == []
    page.close()


def _store_run() -> Results:
    mismatch = "the messages read\nexpected:\nm1, m2, m3\nobserved:\nm3, m2, m1"
    records = [
        *store_outcomes(),
        outcome(
            ["ST-001"], "failed", name="Store window of 3 over 3 messages",
            feature="features/store/window.feature:14", message=mismatch,
            expected="m1, m2, m3", observed="m3, m2, m1",
            failing_step="Then the store read returns messages 1 to 3 in append order",
            gherkin=[
                "Scenario Outline: Store window of 3 over 3 messages",
                "  Given store thread \"A\" holds 3 messages",
                "  When the newest 3 messages of store thread \"A\" are read",
                "  Then the store read returns messages 1 to 3 in append order",
            ],
        ),
        outcome(["ST-001"], "failed", name="test_transcript_answers_like_the_reference",
                feature=None, message=mismatch, expected="m1, m2, m3", observed="m3, m2, m1"),
    ]
    return build_results(records, catalogue(), header(subject="store"))


def test_a_store_run_shows_failures_first_with_their_reason_and_hides_the_unscored(
    browser: Any, tmp_path: Path
) -> None:
    results = _store_run()
    view = _Page(browser, write_reports(results, tmp_path)[1])
    page = view.page
    assert view.visible_ids() == ["ST-001", "ST-002", "ST-003", "ST-004"]  # fail first
    assert page.text_content("#shown") == "4 of 8 rules shown"
    why = page.locator("#rule-ST-001 summary .why")
    assert why.is_visible()  # collapsed, the row still says why it failed
    assert (why.text_content() or "").startswith(
        "MUST broken in 2 of 4 scenarios; first “Store window of 3 over 3 messages”"
    )
    assert not page.locator("#rule-ST-002 summary .why").count()  # a pass needs no reason
    page.check("#f-unscored")
    assert view.visible_ids()[-4:] == ["SP-001", "SP-002", "SP-003", "SW-001"]
    assert view.errors == []
    page.close()


def test_evidence_is_headed_by_the_gherkin_scenario_and_shows_values_once(
    browser: Any, tmp_path: Path
) -> None:
    view = _Page(browser, write_reports(_store_run(), tmp_path)[1])
    page = view.page
    page.click("#rule-ST-001 summary")
    heads = page.eval_on_selector_all(
        "#rule-ST-001 .sc .head", "hs => hs.map(h => h.textContent)"
    )
    assert heads == [
        "failed · Store window of 3 over 3 messages",
        "failed · generated check test_transcript_answers_like_the_reference",
    ]
    first = page.locator("#rule-ST-001 .sc").first
    assert "Scenario Outline: Store window of 3 over 3 messages" in (
        first.locator("pre.gherkin").text_content() or ""
    )
    failing = first.locator("pre.gherkin span.failing").text_content() or ""
    assert failing.strip() == "Then the store read returns messages 1 to 3 in append order"
    shown = first.inner_text()
    assert shown.count("m3, m2, m1") == 1  # observed once, not again inside the message
    assert "the messages read" in shown
    assert view.errors == []
    page.close()


def test_comparison_cells_give_their_reason_and_link_to_the_evidence(
    browser: Any, tmp_path: Path
) -> None:
    plain = build_results(store_outcomes(), catalogue(), header())
    path = write_comparison([plain, _store_run()], tmp_path)
    view = _Page(browser, path)
    page = view.page
    row = page.locator("tr.rule", has_text="ST-001")
    cell = row.locator("td").nth(5)
    title = cell.locator("summary").get_attribute("title") or ""
    assert title.startswith("MUST broken in 2 of 4 scenarios")
    assert not cell.locator(".reason").is_visible()
    cell.locator("summary").click()
    assert cell.locator(".reason").is_visible()
    cell.locator("a", has_text="evidence").click()
    page.wait_for_load_state()
    assert page.url.endswith("reports/2/report.html#rule-ST-001")
    assert page.eval_on_selector("#rule-ST-001 details", "d => d.open") is True
    assert view.errors == []
    page.close()
