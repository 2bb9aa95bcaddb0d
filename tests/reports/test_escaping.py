"""Stored text is shown as text in every rendering: HTML, JUnit, SVG, comparison.

Hostile text (markup, a CDATA end, control characters, a lone surrogate, a
bidirectional override) is planted in every field that can carry it: the
scenario message, failing step, expected and observed values, store calls,
the store and runtime identity, the baseline reason, even rule texts.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

from memconform.catalogue import Catalogue
from memconform.reports import build_results, write_comparison, write_reports
from memconform.reports.baseline import Baseline, BaselineEntry
from memconform.reports.escaping import display_text, redact_identity, xml_text
from memconform.reports.results import Results
from tests.reports.factory import HOSTILE, catalogue, header, outcome, rule, store_outcomes

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _hostile_catalogue() -> Catalogue:
    base = catalogue()
    rules = tuple(
        rule(r.id, r.level, r.subject, r.capability, r.untested, text=f"{r.id} {HOSTILE}")
        for r in base
    )
    return Catalogue(rules, f"v{HOSTILE}", "0123456789abcdef")


def _hostile_results() -> Results:
    records = [
        *store_outcomes(),
        outcome(
            ["ST-001"], "failed", name=f"scenario {HOSTILE}", message=f"message {HOSTILE}",
            failing_step=f"Then {HOSTILE}", expected=f"expected {HOSTILE}",
            observed={"observed": HOSTILE},
            store_calls=[
                {"seq": 1, "kind": "store", "name": f"append{HOSTILE}",
                 "args": ["t", [{"text": HOSTILE}]], "kwargs": {"k": HOSTILE},
                 "raised": {"type": "StoreError", "message": HOSTILE}},
            ],
        ),
        outcome(["ST-002"], "error", name="adapter", message=f"adapter {HOSTILE}"),
        outcome(["ST-003"], "failed", name="should", message=f"should {HOSTILE}"),
    ]
    baseline = Baseline(
        (BaselineEntry("ST-003", f"reason {HOSTILE}", None, "javascript:alert(1)"),),
        f"baseline {HOSTILE}.toml",
    )
    head = header(
        store=f"redis://h/{HOSTILE}", store_type=HOSTILE, store_version=HOSTILE,
        runtime=HOSTILE, mutant=HOSTILE, seed=HOSTILE, python=HOSTILE, os=HOSTILE,
        started="2026-11-30T02:00:00Z", certify=True, capabilities=["errors", HOSTILE],
    )
    return build_results(records, _hostile_catalogue(), head, baseline)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts = 0
        self.tags: list[str] = []
        self.text: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "script":
            self.scripts += 1
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self.text += [value or "" for _, value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _check_page(raw: bytes) -> _Page:
    text = raw.decode("utf-8")
    assert not _XML_ILLEGAL.search(text)
    assert "\u202e" not in text
    page = _Page()
    page.feed(text)
    assert page.scripts == 1, "only the kit's own script element"
    assert page.handlers == []
    assert "iframe" not in page.tags
    assert "img" not in page.tags
    shown = "".join(page.text)
    assert "<script>alert(1)</script>" in shown, "the planted markup is shown as text"
    assert "\\x00\\x01\\x0b\\x1b[31m \\ud800 \\u202e" in shown
    return page


def test_html_shows_stored_markup_as_text(tmp_path: Path) -> None:
    paths = write_reports(_hostile_results(), tmp_path)
    raw = paths[1].read_bytes()
    _check_page(raw)
    assert b"<script>alert(1)" not in raw
    assert b"javascript:alert(1)" not in raw.replace(b"(javascript:alert(1))", b"")


def test_html_allows_only_its_own_script_and_style() -> None:
    raw = write_reports_bytes(_hostile_results())["report.html"].decode("utf-8")
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', raw)
    assert csp is not None
    policy = html.unescape(csp.group(1))
    assert "default-src 'none'" in policy
    assert "unsafe-inline" not in policy
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", policy)
    assert "http" not in policy
    assert not re.search(r'(src|href)="(https?:)?//', raw), "nothing is fetched"


def write_reports_bytes(results: Results) -> dict[str, bytes]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return {p.name: p.read_bytes() for p in write_reports(results, Path(tmp))}


def _all_text(element: ET.Element) -> str:
    parts: list[str] = []
    for node in element.iter():
        parts += [node.text or "", node.tail or "", *node.attrib.values()]
    return "".join(parts)


def test_junit_is_well_formed_and_keeps_the_text_visible() -> None:
    raw = write_reports_bytes(_hostile_results())["junit.xml"]
    assert not _XML_ILLEGAL.search(raw.decode("utf-8"))
    root = ET.fromstring(raw)
    cases = {c.get("name", "")[:6]: c for c in root.iter("testcase")}
    assert len(cases) == 8
    failure = cases["ST-001"].find("failure")
    assert failure is not None
    assert "<script>alert(1)</script> ]]>" in (failure.text or "")
    assert "\\x00\\x01\\x0b" in (failure.text or "")
    error = cases["ST-002"].find("error")
    assert error is not None
    assert error.get("type") == "adapter-error"
    skipped = cases["ST-003"].find("skipped")
    assert skipped is not None
    assert "<script>" in (skipped.get("message") or "")
    assert "<script>alert(1)</script>" in _all_text(root)


def test_junit_maps_verdicts_to_elements() -> None:
    records = [
        outcome(["ST-001"], "failed", name="f"),
        outcome(["ST-002"], "crashed"),
        outcome(["ST-003"]),
        outcome(["ST-004"], "unsupported"),
    ]
    results = build_results(records, catalogue(), header())
    root = ET.fromstring(write_reports_bytes(results)["junit.xml"])
    kinds = {}
    for case in root.iter("testcase"):
        child = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "ok")
        kinds[case.get("name", "")[:6]] = (case.get("classname"), child)
    assert kinds == {
        "SP-001": ("save-policy", "skipped"),
        "SP-002": ("save-policy", "skipped"),
        "SP-003": ("save-policy", "skipped"),
        "SW-001": ("strict-write", "skipped"),
        "ST-001": ("store", "failure"),
        "ST-002": ("store", "error"),
        "ST-003": ("store", "ok"),
        "ST-004": ("store", "skipped"),
    }
    store = next(s for s in root.iter("testsuite") if s.get("name") == "store")
    assert (store.get("tests"), store.get("failures"), store.get("errors")) == ("4", "1", "1")
    error = next(c for c in root.iter("testcase") if c.get("name", "").startswith("ST-002"))
    assert error.find("error") is not None
    assert error.find("error").get("type") == "kit-error"  # type: ignore[union-attr]
    assert root.get("tests") == "8"


def test_badge_is_well_formed_svg_with_escaped_text() -> None:
    raw = write_reports_bytes(_hostile_results())["badge.svg"]
    text = raw.decode("utf-8")
    assert not _XML_ILLEGAL.search(text)
    root = ET.fromstring(raw)
    assert root.tag.endswith("svg")
    shown = _all_text(root)
    assert "memconform v<script>alert(1)</script>" in shown
    assert "<script>" not in text


def test_badge_states_classes_and_must_share() -> None:
    results = build_results(store_outcomes(), catalogue(), header())
    text = write_reports_bytes(results)["badge.svg"].decode("utf-8")
    assert ">2/2 classes</text>" in text
    assert "<title>memconform test-1 · achieved: core, errors · MUST 100% (2 of 2)</title>" in text
    incomplete = build_results([outcome(["ST-001"])], catalogue(), header())
    shown = write_reports_bytes(incomplete)["badge.svg"].decode("utf-8")
    assert ">incomplete</text>" in shown
    assert "incomplete report" in shown
    partial = build_results([outcome(["ST-001"])], catalogue(), header(selection=["ST-001"]))
    shown = write_reports_bytes(partial)["badge.svg"].decode()
    assert ">partial run</text>" in shown
    assert "partial run: no class claimed" in shown


def test_comparison_page_escapes_every_identity(tmp_path: Path) -> None:
    plain = build_results(store_outcomes(), catalogue(), header())
    path = write_comparison([plain, _hostile_results()], tmp_path)
    _check_page(path.read_bytes())


def test_text_helpers() -> None:
    assert xml_text("a\x00b\ud800c\ufffed\te\n") == "a\\x00b\\ud800c\\ufffed\te\n"
    assert display_text("x\u202ey\u200bz\n") == "x\\u202ey\\u200bz\n"
    assert redact_identity("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"
    assert redact_identity("redis://h/0?token=abc&db=1") == "redis://h/0?token=***&db=1"
    assert redact_identity("memory://") == "memory://"
    assert redact_identity("http://[bad") == "http://[bad"



def test_junit_maps_baseline_and_missing_verdicts() -> None:
    from memconform.reports.baseline import parse_baseline

    baseline = parse_baseline(
        '[[entry]]\nrule = "ST-001"\nreason = "known"\n[[entry]]\nrule = "ST-003"\nreason = "old"\n'
    )
    records = [outcome(["ST-001"], "failed", name="f"), outcome(["ST-003"])]
    results = build_results(records, catalogue(), header(), baseline)
    root = ET.fromstring(write_reports_bytes(results)["junit.xml"])
    cases = {c.get("name", "")[:6]: c for c in root.iter("testcase")}
    xfail = cases["ST-001"].find("skipped")
    assert xfail is not None
    assert (xfail.get("message") or "").startswith("xfail: known failure in the baseline: known")
    stale = cases["ST-003"].find("failure")
    assert stale is not None
    assert stale.get("type") == "stale"
    not_run = cases["ST-002"].find("failure")
    assert not_run is not None
    assert not_run.get("type") == "not-run"
