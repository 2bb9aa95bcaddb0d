"""results.json: schema, canonical bytes, round trip, completeness on load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memconform.reports import (
    ResultsError,
    build_results,
    canonical_json,
    load_results,
    write_reports,
)
from memconform.reports.baseline import parse_baseline
from memconform.reports.results import Results
from memconform.resources import spec_dir
from tests.reports.factory import HOSTILE, catalogue, header, outcome, store_outcomes

SCHEMA = json.loads((spec_dir() / "schemas" / "results.schema.json").read_text("utf-8"))


def _validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def _hostile_outcome(rule: str = "ST-001", result: str = "failed") -> dict[str, Any]:
    return outcome(
        [rule], result, name=f"hostile {HOSTILE}",
        message=f"stored text was {HOSTILE}", failing_step=f"Then {HOSTILE}",
        expected=HOSTILE, observed=[HOSTILE, {"nested": HOSTILE}],
        store_calls=[
            {"seq": 1, "kind": "store", "name": "append", "args": ["t", [{"text": HOSTILE}]],
             "raised": {"type": "StoreError", "message": HOSTILE}},
            {"seq": 2, "kind": "store", "name": "messages", "args": ["t", None], "hung": True},
        ],
    )


def _results(**head: Any) -> Results:
    baseline = parse_baseline('[[entry]]\nrule = "ST-003"\nreason = "known"\n')
    records = [
        *store_outcomes(),
        _hostile_outcome(),
        outcome(["ST-003"], "failed", name="weak"),
        outcome(["SP-001"], "crashed", message="TypeError"),
    ]
    return build_results(records, catalogue(), header(**head), baseline)


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("subject", ["store", "runtime", "both"])
def test_results_validate_against_the_schema(tmp_path: Path, subject: str) -> None:
    paths = write_reports(_results(subject=subject), tmp_path)
    errors = list(_validator().iter_errors(_json(paths[0])))
    assert errors == []


def test_an_incomplete_and_kit_error_run_validates_too(tmp_path: Path) -> None:
    results = build_results(
        [outcome(["ST-999"]), outcome(["ST-001"], "crashed")], catalogue(),
        header(selection={"profiles": ["store"], "rules": ["SP-001"]}, stopped_early="killed"),
    )
    paths = write_reports(results, tmp_path)
    assert list(_validator().iter_errors(_json(paths[0]))) == []


def test_the_schema_rejects_what_the_loader_rejects(tmp_path: Path) -> None:
    data = _results().to_json()
    data["rules"][0]["verdict"] = "maybe"
    assert list(_validator().iter_errors(data))
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ResultsError, match=r"rules\[0\]\.verdict"):
        load_results(path)


def test_two_identical_runs_give_byte_identical_files(tmp_path: Path) -> None:
    first = write_reports(_results(), tmp_path / "a")
    second = write_reports(_results(), tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_outcome_order_does_not_change_the_bytes(tmp_path: Path) -> None:
    records = [*store_outcomes(), _hostile_outcome()]
    one = build_results(records, catalogue(), header())
    two = build_results(list(reversed(records)), catalogue(), header())
    assert canonical_json(one.to_json()) == canonical_json(two.to_json())


def test_canonical_json_sorts_keys_keeps_letters_and_escapes_the_unprintable() -> None:
    data = {"b": "été 日本 \u00a0\u200b\u202e\x7f\x85\ud800\U000e0001", "a": "\n\t\x00"}
    raw = canonical_json(data)
    text = raw.decode("utf-8")  # always valid UTF-8, even with a lone surrogate inside
    assert text.index('"a"') < text.index('"b"')
    assert "été 日本" in text
    for escaped in ("\\u00a0", "\\u200b", "\\u202e", "\\u007f", "\\u0085", "\\ud800",
                    "\\udb40\\udc01", "\\n", "\\t", "\\u0000"):
        assert escaped in text
    assert all(c.isprintable() or c == "\n" for c in text)
    assert json.loads(text) == data
    assert text.endswith("}\n")


def test_results_round_trip_through_the_file(tmp_path: Path) -> None:
    results = _results()
    (path, *_) = write_reports(results, tmp_path)
    loaded = load_results(path)
    assert loaded.to_json() == results.to_json()
    assert loaded.complete == results.complete
    again = write_reports(loaded, tmp_path / "again")
    assert again[0].read_bytes() == path.read_bytes()


def test_a_report_without_footer_loads_as_incomplete(tmp_path: Path) -> None:
    data = _results().to_json()
    del data["footer"]
    path = tmp_path / "results.json"
    path.write_bytes(canonical_json(data))
    loaded = load_results(path)
    assert not loaded.complete
    assert "no footer" in (loaded.incomplete_reason or "")
    assert list(_validator().iter_errors(data)) == []  # the shape is fine; it is cut short


def test_fewer_rules_than_the_catalogue_without_selection_loads_as_incomplete(
    tmp_path: Path,
) -> None:
    data = build_results(store_outcomes(), catalogue(), header()).to_json()
    data["rules"] = data["rules"][:-1]
    data["footer"]["rules"] -= 1
    data["footer"]["totals"]["unsupported"] -= 1
    path = tmp_path / "results.json"
    path.write_bytes(canonical_json(data))
    loaded = load_results(path)
    assert not loaded.complete
    assert "7 of the 8 catalogue rules" in (loaded.incomplete_reason or "")


def test_fewer_rules_with_a_stated_selection_is_fine(tmp_path: Path) -> None:
    data = build_results(
        [outcome(["ST-001"])], catalogue(), header(selection=["ST-001"])
    ).to_json()
    keep = [r for r in data["rules"] if r["id"] == "ST-001"]
    data["rules"] = keep
    data["footer"]["rules"] = 1
    data["footer"]["totals"] = {**data["footer"]["totals"], "not-scored": 0}
    path = tmp_path / "results.json"
    path.write_bytes(canonical_json(data))
    assert load_results(path).complete


def test_a_footer_disagreeing_with_the_rules_loads_as_incomplete(tmp_path: Path) -> None:
    data = build_results(store_outcomes(), catalogue(), header()).to_json()
    data["rules"][4]["verdict"] = "fail"  # edited after the fact
    path = tmp_path / "results.json"
    path.write_bytes(canonical_json(data))
    loaded = load_results(path)
    assert not loaded.complete
    assert "disagree" in (loaded.incomplete_reason or "")


def test_an_incomplete_footer_stays_incomplete_when_loaded(tmp_path: Path) -> None:
    results = build_results([outcome(["ST-001"])], catalogue(), header())
    (path, *_) = write_reports(results, tmp_path)
    loaded = load_results(path)
    assert not loaded.complete
    assert loaded.incomplete_reason == results.incomplete_reason


@pytest.mark.parametrize(
    ("raw", "complaint"),
    [
        (b'{"format": "memconform-results/1", "header": {', "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"format": "other/9"}', "format"),
        (b"[]", "expected an object"),
        (b'{"format": "memconform-results/1"}', "header: missing"),
    ],
)
def test_unreadable_results_are_refused(tmp_path: Path, raw: bytes, complaint: str) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(raw)
    with pytest.raises(ResultsError, match=complaint):
        load_results(path)


def _paths(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every object member in ``data`` (first list items only)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            found.append((*path, key))
            found += _paths(value, (*path, key))
    elif isinstance(data, list) and data:
        found += _paths(data[0], (*path, 0))
    return found


def _without(data: Any, path: tuple[Any, ...]) -> Any:
    copy = json.loads(json.dumps(data))
    node = copy
    for step in path[:-1]:
        node = node[step]
    del node[path[-1]]
    return copy


def test_schema_and_loader_agree_on_every_required_member(tmp_path: Path) -> None:
    data = _results().to_json()
    validator = _validator()
    skipped = {("footer",), ("header", "extra", "extra_field")}
    free = {"totals", "store_calls", "extra"}  # members inside these are free-form
    checked = 0
    for path in _paths(data):
        if path in skipped or any(step in free for step in path[:-1]):
            continue
        if path[0] == "conformance" and len(path) > 1:
            continue  # derived data; the loader recomputes it
        broken = _without(data, path)
        assert list(validator.iter_errors(broken)), f"schema accepts a missing {path}"
        target = tmp_path / "results.json"
        target.write_bytes(canonical_json(broken))
        with pytest.raises(ResultsError):
            load_results(target)
        checked += 1
    assert checked > 60


def test_loading_redacts_a_password_left_in_the_store_url(tmp_path: Path) -> None:
    data = _results().to_json()
    data["header"]["store"]["url"] = "postgresql://admin:hunter2@db/x"
    path = tmp_path / "results.json"
    path.write_bytes(canonical_json(data))
    assert load_results(path).header["store"]["url"] == "postgresql://admin:***@db/x"


def test_unknown_members_are_refused_by_schema_and_loader(tmp_path: Path) -> None:
    data = _results().to_json()
    data["rules"][0]["surprise"] = True
    assert list(_validator().iter_errors(data))
    path = tmp_path / "results.json"
    path.write_bytes(canonical_json(data))
    with pytest.raises(ResultsError, match="surprise"):
        load_results(path)


_WRITE_SCRIPT = """
import sys
from pathlib import Path
from memconform.reports import build_results, write_reports
from memconform.reports.baseline import parse_baseline
from tests.reports.factory import catalogue, header, outcome, store_outcomes
baseline = parse_baseline('[[entry]]\\nrule = "ST-003"\\nreason = "known"\\n')
records = [*store_outcomes(), outcome(["ST-003"], "failed", name="w"),
           outcome(["ST-999"]), outcome(["ST-002"], "error", message="boom")]
results = build_results(records, catalogue(), header(capabilities=["state", "errors", "durable"]),
                        baseline)
write_reports(results, Path(sys.argv[1]))
"""


def test_separate_processes_with_different_hash_seeds_write_the_same_bytes(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    outputs = []
    for seed in ("1", "4242"):
        out = tmp_path / seed
        subprocess.run(
            [sys.executable, "-c", _WRITE_SCRIPT, str(out)], cwd=root, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == 4


def test_each_rule_names_the_mutants_its_scenarios_reject(tmp_path: Path) -> None:
    from memconform.mutants import mutants_by_rule

    results = _results()
    by_id = {r.id: r for r in results.rules}
    assert by_id["ST-003"].mutants == mutants_by_rule()["ST-003"]
    assert "store-window-oldest" in by_id["ST-003"].mutants
    (path, *_) = write_reports(results, tmp_path)
    assert {r.id: r.mutants for r in load_results(path).rules}["ST-003"] == by_id["ST-003"].mutants
    assert "store-window-oldest" in (tmp_path / "report.html").read_text(encoding="utf-8")
