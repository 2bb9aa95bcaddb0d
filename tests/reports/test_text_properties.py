"""Properties of the text hygiene: any text survives every rendering intact."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memconform.reports import build_results, canonical_json
from memconform.reports.escaping import display_document, display_text, xml_text
from memconform.reports.junit import render_junit
from tests.reports.factory import catalogue, header, outcome, store_outcomes

ANY_TEXT = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF))
JSON_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)
SETTINGS = settings(derandomize=True, database=None, max_examples=150, deadline=None)


@SETTINGS
@given(JSON_DATA)
def test_canonical_json_round_trips_any_data_as_printable_utf8(data: Any) -> None:
    raw = canonical_json({"data": data})
    text = raw.decode("utf-8")
    assert all(c.isprintable() or c == "\n" for c in text)
    assert json.loads(text) == {"data": data}
    assert canonical_json(json.loads(text)) == raw


@SETTINGS
@given(ANY_TEXT)
def test_visible_text_is_legal_xml_and_printable(text: str) -> None:
    shown = display_text(text)
    assert xml_text(shown) == shown
    assert all(c.isprintable() or c in "\n\t" for c in shown)
    assert display_document(text) == shown
    shown.encode("utf-8")


@settings(derandomize=True, database=None, max_examples=40, deadline=None)
@given(ANY_TEXT)
def test_junit_parses_whatever_a_store_said(text: str) -> None:
    records = [
        *store_outcomes(),
        outcome(["ST-001"], "failed", name=text, message=text, expected=text, observed=text,
                failing_step=text, store_calls=[{"seq": 1, "name": text}]),
    ]
    root = ET.fromstring(render_junit(build_results(records, catalogue(), header())))
    failure = next(c for c in root.iter("testcase") if c.get("name", "").startswith("ST-001"))
    assert failure.find("failure") is not None
