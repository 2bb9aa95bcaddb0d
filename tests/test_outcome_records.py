"""The outcomes file's lines: the plugin's per-scenario records and the closing
session line, against ``spec/schemas/outcomes.schema.json``; the outcome and
verdict enumerations against the schemas that name their values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memconform.outcome_log import DecidedBy, Outcome, ScenarioRecord
from memconform.reports.vocabulary import Verdict
from memconform.resources import spec_dir

SCHEMA = json.loads((spec_dir() / "schemas" / "outcomes.schema.json").read_text("utf-8"))
RESULTS_SCHEMA = json.loads((spec_dir() / "schemas" / "results.schema.json").read_text("utf-8"))


def _validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


SCENARIOS = '''
import pytest

from memconform.steps.common import Mismatch, inconclusive, unsupported


@getattr(pytest.mark, "ST-001")
@getattr(pytest.mark, "durable")
def test_passes(store, namespace):
    store.messages(namespace + "-t")


@getattr(pytest.mark, "ST-002")
@getattr(pytest.mark, "SP-001")
def test_check_fails():
    raise Mismatch("the order", "a, b", "b, a")


@getattr(pytest.mark, "ST-003")
def test_crashes():
    raise RuntimeError("the kit broke")


@getattr(pytest.mark, "ST-004")
def test_inconclusive():
    inconclusive("no kill landed")


@getattr(pytest.mark, "ST-005")
def test_unsupported():
    unsupported("the store does not declare the capability 'errors'")


@getattr(pytest.mark, "ST-006")
def test_skipped():
    pytest.skip("needs a server")


@pytest.fixture
def broken():
    raise RuntimeError("setup broke")


@getattr(pytest.mark, "ST-007")
def test_setup_fails(broken):
    pass
'''


def _lines(tmp_path: Path) -> list[dict[str, Any]]:
    (tmp_path / "test_scenarios.py").write_text(SCENARIOS, encoding="utf-8")
    out = tmp_path / "outcomes.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "test_scenarios.py", "-q", "-p", "no:cacheprovider",
         "--memconform-outcomes", str(out), "--memconform-store", "memory://"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_every_line_a_session_writes_matches_the_schema(tmp_path: Path) -> None:
    lines = _lines(tmp_path)
    validator = _validator()
    for line in lines:
        assert list(validator.iter_errors(line)) == [], line
    outcomes = {tuple(o["rules"]): o["outcome"] for o in lines if "session" not in o}
    assert outcomes == {
        ("ST-001",): "passed", ("SP-001", "ST-002"): "failed", ("ST-003",): "crashed",
        ("ST-004",): "inconclusive", ("ST-005",): "unsupported", ("ST-006",): "skipped",
        ("ST-007",): "crashed",
    }
    failed = next(o for o in lines if o.get("outcome") == "failed")
    assert (failed["expected"], failed["observed"]) == ("a, b", "b, a")
    assert next(o for o in lines if o.get("rules") == ["ST-001"])["needs"] == ["durable"]
    assert lines[-1]["session"]["stopped"] is None


def _record(**changed: Any) -> ScenarioRecord:
    fields: dict[str, Any] = {
        "nodeid": "features/x.feature::test_x", "scenario": "x", "feature": "features/x:3",
        "gherkin": ("Scenario: x", "  Given y"), "rules": ("TU-001",),
        "outcome": Outcome.PASSED, "message": "", "failing_step": None, "expected": None,
        "observed": None, "decided_by": DecidedBy.CHECK,
        "store_calls": ({"seq": 1, "kind": "store", "name": "append"},),
        "needs": (), "provided": {"store": [], "runtime": ["ids"]}, "policies": ("turn",),
    }
    return ScenarioRecord(**{**fields, **changed})


@pytest.mark.parametrize("outcome", list(Outcome))
def test_a_record_of_every_outcome_matches_the_schema(outcome: Outcome) -> None:
    declares = {"profiles": ["turns"], "policies": None}
    for record in (_record(outcome=outcome), _record(outcome=outcome, runtime_declares=declares)):
        data = json.loads(json.dumps(record.to_json()))
        assert list(_validator().iter_errors(data)) == []


def test_a_record_is_written_as_plain_text_in_its_key_order() -> None:
    written = json.dumps(_record(outcome=Outcome.INCONCLUSIVE, decided_by=DecidedBy.SCENARIO)
                         .to_json())
    assert '"outcome": "inconclusive"' in written
    assert '"decided_by": "scenario"' in written
    assert list(json.loads(written)) == [
        "nodeid", "scenario", "feature", "gherkin", "rules", "outcome", "message",
        "failing_step", "expected", "observed", "decided_by", "store_calls", "needs",
        "provided", "policies",
    ]
    assert "runtime_declares" in _record(runtime_declares={"profiles": [], "policies": None}
                                         ).to_json()


def test_a_record_outside_the_schema_is_refused() -> None:
    data = json.loads(json.dumps(_record().to_json()))
    assert list(_validator().iter_errors({**data, "outcome": "pass"}))
    assert list(_validator().iter_errors({**data, "surprise": 1}))


def test_the_enumerations_are_the_schemas_words() -> None:
    assert [o.value for o in Outcome] == SCHEMA["$defs"]["outcome"]["enum"]
    scenario = RESULTS_SCHEMA["$defs"]["scenario"]["properties"]["outcome"]["enum"]
    assert [o.value for o in Outcome] == scenario
    assert [v.value for v in Verdict] == RESULTS_SCHEMA["$defs"]["verdict"]["enum"]
