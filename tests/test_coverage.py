"""``memconform run --coverage``: which lines of the code under test each rule reached.

The end-to-end test certifies a small adapter (written into a temporary folder)
with a branch no rule can reach and methods only the kit's fresh processes
call, and reads the coverage section of results.json and report.html.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memconform import measurement
from memconform.reports import build_results
from memconform.reports.html import branch_list, line_ranges, render_html
from memconform.reports.results import Results, ResultsError
from tests.reports import factory

SCHEMA = Path(__file__).resolve().parent.parent / "spec" / "schemas" / "results.schema.json"

ADAPTER = '''\
"""A small adapter over the kit's SQLite store, measured by the coverage test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.adapters.sqlite import SQLiteStore

DB = Path(__file__).resolve().parent.parent / "covered.db"


class CoveredStore:
    def __init__(self) -> None:
        self._inner = SQLiteStore(str(DB))
        self.capabilities = self._inner.capabilities

    def append(self, thread_id: str, batch: Any) -> None:
        self._inner.append(thread_id, batch)

    def messages(self, thread_id: str, limit: int | None = None, **kwargs: Any) -> Any:
        if thread_id == "a thread no rule names":
            return []  # UNREACHABLE
        return self._inner.messages(thread_id, limit, **kwargs)  # AFTER

    def read_state(self, scope: str, key: str) -> Any:
        return self._inner.read_state(scope, key)  # FRESH STATE

    def facts(self, scope: str) -> Any:
        return self._inner.facts(scope)  # FRESH FACTS

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def open_store() -> CoveredStore:
    return CoveredStore()
'''


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(ADAPTER.splitlines(), 1) if marker in text)


def _rules_at(section: dict[str, Any], line: int) -> list[str]:
    for run in section["reached"]:
        if run["from"] <= line <= run["to"]:
            return list(run["rules"])
    return []


@pytest.mark.slow
def test_the_report_names_the_line_no_rule_reached_and_the_rules_of_its_neighbours(
    tmp_path: Path,
) -> None:
    """ST-032 and PS-031 read back through fresh processes only: with just those
    rules (and ST-001 and ST-034, which read messages only) selected, read_state and
    facts run nowhere else."""
    jsonschema = pytest.importorskip("jsonschema")
    (tmp_path / "covered_store").mkdir()
    (tmp_path / "covered_store" / "__init__.py").write_text(ADAPTER, encoding="utf-8")
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.cli", "run", "--out", str(out),
         "--store", "covered_store:open_store", "--coverage", "covered_store",
         "--rule", "ST-001", "--rule", "ST-032", "--rule", "PS-031", "--rule", "ST-034",
         "--jobs", "2"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
        env={**os.environ, "CI": "true"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(results, json.loads(SCHEMA.read_text(encoding="utf-8")))
    coverage = results["coverage"]
    assert coverage["packages"] == ["covered_store"]
    (section,) = coverage["files"]
    assert section["path"] == "covered_store/__init__.py"

    unreachable = _line("# UNREACHABLE")
    assert section["missing_lines"] == [unreachable]
    assert section["missing_branches"] == [[unreachable - 1, unreachable]]
    assert _rules_at(section, unreachable) == []
    before, after = _rules_at(section, unreachable - 1), _rules_at(section, _line("# AFTER"))
    assert {"ST-001", "ST-032"} <= set(before)
    assert before == after

    # executed only in the fresh processes of ST-032 and PS-031
    for marker in ("# FRESH STATE", "# FRESH FACTS"):
        assert _rules_at(section, _line(marker)) == ["PS-031", "ST-032"], marker
    assert section["setup_only_lines"] == []

    # ST-034 kills writers in the middle of their batch and ST-032 kills its writer
    # once it acknowledged: those processes are not measurable, each is listed
    killed_rules = {rule for k in coverage["not_measured"] for rule in k["rules"]}
    assert "ST-034" in killed_rules
    assert killed_rules <= {"ST-032", "ST-034"}
    assert all("killed" in k["process"] for k in coverage["not_measured"])

    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"never executed</dt><dd>{unreachable}</dd>" in page
    assert f"{unreachable - 1}→{unreachable}" in page
    assert "<strong>Not measurable:</strong>" in page
    assert "UNREACHABLE" not in page
    assert "_inner" not in page
    source_page = next((out / "coverage-html").glob("*__init___py.html"))
    assert "UNREACHABLE" in source_page.read_text(encoding="utf-8")
    assert "coverage of covered_store" in proc.stdout


def test_a_scenario_context_carries_its_rules() -> None:
    context = measurement.scenario_context(["ST-032", "PS-031"], "features/x::test_y")
    assert context == "PS-031 ST-032|features/x::test_y"
    assert measurement.rules_of(context) == ["PS-031", "ST-032"]
    assert measurement.rules_of("") == []
    assert measurement.rules_of("ST-001 without a bar") == []


def test_package_names_are_checked() -> None:
    assert measurement.package_names("a.b, c,a.b") == ("a.b", "c")
    for bad in ("", "a-b", "a..b", " , "):
        with pytest.raises(ValueError, match="not a package name"):
            measurement.package_names(bad)


def test_definition_lines_are_what_an_import_runs() -> None:
    source = (
        "import os\n"            # 1
        "@dec\n"                 # 2
        "def f():\n"             # 3
        "    return 1\n"         # 4
        "class C:\n"             # 5
        "    x = 1\n"            # 6
        "    def g(self):\n"     # 7
        "        if x:\n"        # 8
        "            pass\n"     # 9
        "try:\n"                 # 10
        "    import json\n"      # 11
        "except ImportError:\n"  # 12
        "    json = None\n"      # 13
    )
    assert measurement.definition_lines(source) == {1, 2, 3, 5, 6, 7, 10, 11, 12, 13}
    assert measurement.definition_lines("def (") == set()


def test_without_a_measurement_nothing_is_measured() -> None:
    assert not measurement.active()
    assert measurement.child_argument() is None
    assert measurement.child_options() == []
    measurement.switch("ST-001|x")
    measurement.note_killed("nothing")  # writes nowhere


def test_a_measurement_survives_its_argument() -> None:
    spec = measurement.Measurement(("a", "b.c"), "/data", "ST-001|x")
    assert measurement.Measurement.from_json(spec.to_json()) == spec
    with pytest.raises(ValueError, match="not a measurement"):
        measurement.Measurement.from_json('{"packages": "a", "data": "/d"}')


def test_line_numbers_are_shown_as_ranges() -> None:
    assert line_ranges([9, 3, 4, 5]) == "3–5, 9"
    assert line_ranges([]) == ""
    assert branch_list([[12, 14], [20, -1]]) == "12→14, 20→exit"


def _results_with(coverage: Any) -> dict[str, Any]:
    records = [factory.outcome(["ST-001"]), factory.outcome(["ST-003"], "failed")]
    results = build_results(records, factory.catalogue(), factory.header(), None)
    data: dict[str, Any] = results.to_json()
    if coverage is not None:
        data["coverage"] = coverage
    return data


COVERAGE = {
    "packages": ["pkg"],
    "source_html": "coverage-html/index.html",
    "totals": {"statements": 3, "lines_covered": 2, "branches": 2, "branches_covered": 1},
    "files": [{
        "path": "pkg/mod.py", "statements": 3, "lines_covered": 2, "branches": 2,
        "branches_covered": 1, "missing_lines": [3], "setup_only_lines": [],
        "missing_branches": [[2, 3]], "reached": [{"from": 1, "to": 2, "rules": ["ST-001"]}],
    }],
    "not_found": [],
    "not_measured": [{"rules": ["ST-034"], "scenario": "x", "process": "the writer"}],
}


def test_the_coverage_section_reads_back_and_is_checked() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    data = _results_with(COVERAGE)
    jsonschema.validate(data, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert Results.from_json(data).to_json()["coverage"] == COVERAGE
    broken = json.loads(json.dumps(COVERAGE))
    broken["files"][0]["missing_lines"] = ["3"]
    with pytest.raises(ResultsError, match="missing_lines"):
        Results.from_json(_results_with(broken))


def test_report_html_shows_the_figures_and_line_numbers() -> None:
    results = Results.from_json(_results_with(COVERAGE))
    page = render_html(results).decode("utf-8")
    assert "<strong>2 of 3 lines</strong>" in page
    assert "never executed</dt><dd>3</dd>" in page
    assert "2→3" in page
    assert "1–2: ST-001" in page
    assert "ST-034: the writer (x)" in page
    assert "coverage-html/index.html" in page
    without = Results.from_json(_results_with(None))
    assert 'id="coverage"' not in render_html(without).decode("utf-8")
