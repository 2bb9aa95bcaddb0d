"""Every report file of a run stays small, whatever the store hands back.

A store that cuts message text at 1,000 characters used to get reports of
40-60 MB each (the 1 MiB and 16 MiB texts of the round-trip rules embedded
whole in ``expected``, ``message`` and every store call). The evidence now
says the lengths, the first differing position and a short excerpt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from memconform.reports import build_results, write_reports
from memconform.steps.common import Mismatch, expect_equal
from tests.reports.factory import HOSTILE, catalogue, header, outcome, store_outcomes

MAX_BYTES = 2_000_000

CUTTING_STORE = '''\
"""A store that keeps only the first 1,000 characters of every message's text."""

import dataclasses

from memconform.adapters.memory import MemoryStore


class CuttingStore(MemoryStore):
    def append(self, thread_id, batch):
        super().append(thread_id, [dataclasses.replace(m, text=m.text[:1000]) for m in batch])


def make():
    return CuttingStore()
'''


def _scenarios(results: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return next(r["scenarios"] for r in results["rules"] if r["id"] == rule)


def test_a_store_cutting_text_at_1000_characters_gets_small_reports_naming_the_difference(
    tmp_path: Path,
) -> None:
    (tmp_path / "cutting_store.py").write_text(CUTTING_STORE, encoding="utf-8")
    out = tmp_path / "report"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "memconform", "run", "--store", "cutting_store:make",
         "--rule", "ST-014", "--out", str(out)],
        capture_output=True, text=True, check=False, cwd=tmp_path, timeout=900,
        env={**env, "CI": "true"},
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    sizes = {name: (out / name).stat().st_size
             for name in ("results.json", "report.html", "junit.xml", "pytest.log")}
    assert all(size < MAX_BYTES for size in sizes.values()), sizes

    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert next(r["verdict"] for r in results["rules"] if r["id"] == "ST-014") == "fail"
    name = "Store keeps a text of 16777216 bytes of 2-byte characters exactly"
    big = next(s for s in _scenarios(results, "ST-014") if s["scenario"] == name)
    assert big["outcome"] == "failed"
    assert big["expected"].startswith(
        "at [0]: 8,388,608 characters; first difference at 1,000: …'éé")
    assert big["observed"].startswith("at [0]: 1,000 characters; first difference at 1,000: …'éé")
    assert "8,388,608 characters" in big["message"]
    assert "1,000 characters" in big["message"]
    texts = [m["text"] for call in big["store_calls"] for a in call.get("args", [])
             if isinstance(a, list) for m in a if isinstance(m, dict)]
    assert texts
    assert all(t.endswith(" characters]") for t in texts)
    assert "8,388,608 characters; first difference at 1,000" in (
        out / "report.html").read_text(encoding="utf-8")
    assert "8,388,608 characters; first difference at 1,000" in (
        out / "junit.xml").read_text(encoding="utf-8")


def test_long_hostile_evidence_is_bounded_and_still_escaped(tmp_path: Path) -> None:
    try:
        expect_equal("the text read back", [HOSTILE * 100_000], [HOSTILE * 10])
    except Mismatch as failure:
        evidence = failure
    records = [
        *store_outcomes(),
        outcome(["ST-001"], "failed", name="hostile", message=str(evidence),
                expected=evidence.expected, observed=evidence.observed,
                failing_step="Then the text is read back"),
    ]
    paths = write_reports(build_results(records, catalogue(), header()), tmp_path)
    page = paths[1].read_text(encoding="utf-8")
    assert "first difference at 510: " in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    assert "\x00" not in page
    assert "\x1b" not in page


def test_no_path_writes_an_unbounded_field(tmp_path: Path) -> None:
    """Evidence that reached the outcomes whole (a crash's message, a store call)
    is still cut when the results are built."""
    huge = "x" * 10_000_000
    records = [
        *store_outcomes(),
        outcome(["ST-001"], "crashed", name="crash", message=huge, expected=huge,
                observed={"text": huge}, failing_step=huge, gherkin=[huge],
                store_calls=[{"seq": 1, "kind": "store", "name": "append",
                              "args": ["t", [{"text": "y" * 100_000}] * 200],
                              "result": None}]),
    ]
    paths = write_reports(build_results(records, catalogue(), header()), tmp_path)
    sizes = {p.name: p.stat().st_size for p in paths}
    assert all(size < MAX_BYTES for size in sizes.values()), sizes
    results = json.loads(paths[0].read_text(encoding="utf-8"))
    crash = next(s for s in _scenarios(results, "ST-001") if s["scenario"] == "crash")
    assert crash["message"].endswith("… [10,000,000 characters]")
    assert crash["store_calls"][0]["args"][1][-1] == "… 150 more items"
