"""No runtime verdict rests on a claim: the reference simulator with every claim
field deleted or replaced by a plausible lie is judged exactly as the simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import Environment
from memconform.harness.proxy import RecordingStore
from tests.lying_runtime import CLAIMS, RECORD_CLAIMS, SCHEMAS, plausible_lie
from tests.mutant_harness import run_suite

STORE = ("--memconform-store", "memory://")
FEATURES = {
    "save-policy": "tests/features/test_save_policy.py",
    "strict-write": "tests/features/test_strict_write.py",
    "turns": "tests/features/test_turns.py",
    "candidates": "tests/features/test_candidates.py",
    "persisted-state": "tests/features/test_persisted_state.py",
}
SAMPLE = {
    "save-policy": "SP-003 or SP-011 or SP-014 or SP-022 or SP-031",
    "turns": "TU-004 or TU-005",
    "persisted-state": "PS-016",
    "strict-write": "SW-001 or SW-002",
    "candidates": "CA-001 or CA-003",
}
"""The rules whose checks once read a claim (what the model was sent, the run's
new messages, the ledger, the evictions, the answer's own steps), and a few
others of each profile."""

RUNTIMES = ("tests.lying_runtime:lying_runtime", "tests.lying_runtime:deleting_runtime")


def _not_passed(outcomes: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Rows neither passed nor skipped; a row that needs a durable store (a real
    kill or restart, which the in-memory store of these runs cannot outlive) is
    left out: its verdicts rest on the store read back, never on a claim."""
    return [(o["nodeid"], o["outcome"], str(o.get("message"))[:300]) for o in outcomes
            if o["outcome"] not in ("passed", "skipped")
            and not (o["outcome"] == "unsupported" and "'durable'" in str(o.get("message")))]


def _schema(profile: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (SCHEMAS / f"observation-{profile}.schema.json").read_text("utf-8"))
    return data


def _property(schema: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The schema of the field ``path`` (``runs[].model_calls``), following $refs."""
    node: Any = schema
    for part in path.split("."):
        key = part.removesuffix("[]")
        found = _find(schema, node, key)
        if found is None:
            return None
        node = found
        if part.endswith("[]"):
            node = _deref(schema, node.get("items", {}))
    return node if isinstance(node, dict) else None


def _deref(schema: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _find(schema: dict[str, Any], node: Any, key: str) -> dict[str, Any] | None:
    node = _deref(schema, node)
    if not isinstance(node, dict):
        return None
    props = node.get("properties", {})
    if key in props:
        value: dict[str, Any] = props[key]
        return value
    for branch in node.get("oneOf", []) + node.get("anyOf", []):
        found = _find(schema, branch, key)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("profile", sorted(FEATURES))
def test_each_observation_schema_marks_its_claims(profile: str) -> None:
    """``x-claims`` lists each claim; each is marked, described and optional."""
    schema = _schema(profile)
    assert schema["x-kit"] == ["ledger", "timeline"]
    assert "caller's view" in schema["x-views"]
    assert profile in CLAIMS
    for claim in CLAIMS[profile]:
        field = _property(schema, claim)
        assert field is not None, claim
        assert field.get("x-view") == "claim", claim
        assert "claim" in str(field.get("description", "")).lower(), claim
    marked = json.dumps(schema).count('"x-view": "claim"')
    assert marked >= len(CLAIMS[profile])
    for name in ("model_calls", "new_messages", "views"):
        assert name not in json.dumps(schema.get("required", [])), name


def test_the_claims_are_the_ones_the_issue_names() -> None:
    every = {claim for claims in CLAIMS.values() for claim in claims}
    assert {"runs[].model_calls", "runs[].new_messages", "views", "records"} <= every
    assert every >= RECORD_CLAIMS


def test_plausible_lies_keep_the_kind_of_value() -> None:
    assert plausible_lie([1, 2, 3]) == [2, 1]
    assert plausible_lie(True) is False
    assert plausible_lie({"a": [{"b": "x"}, {"b": "y"}]}) == {"a": [{"b": "x (lie)"}]}


def test_the_ledger_is_kept_by_the_kit() -> None:
    """A runtime that rewrites ``env.ledger`` changes nothing the kit observed."""
    store = RecordingStore(MemoryStore())
    env = Environment({"tools": {"send": {"result": "ok", "effect": "sent"}}}, store)
    env.tool("send", {}, "call-1")
    env.ledger.clear()
    env.ledger.append({"tool": "lie", "effect": "lie"})
    assert env.ledger == [{"tool": "send", "call_id": "call-1", "effect": "sent"}]
    store.close()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_sample_of_scenarios_is_judged_the_same_without_claims(
    runtime: str, tmp_path: Path
) -> None:
    """The rules whose checks once read a claim, and a few others of each
    profile, on the simulator with every claim deleted or falsified and the
    ledger rewritten."""
    targets = [FEATURES[p] for p in sorted(FEATURES)]
    outcomes = run_suite(targets[0], tmp_path, *targets[1:], *STORE,
                         "--memconform-runtime", runtime,
                         "-m", " or ".join(SAMPLE[p] for p in sorted(SAMPLE)))
    assert {o["nodeid"].split("::")[0] for o in outcomes} == set(targets)
    assert _not_passed(outcomes) == []


@pytest.mark.slow
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("profile", sorted(FEATURES))
def test_every_runtime_scenario_is_judged_the_same_without_claims(
    profile: str, runtime: str, tmp_path: Path
) -> None:
    """On SQLite, so that the scenarios needing a durable store run too."""
    store = ("--memconform-store", f"sqlite:///{tmp_path / 'claims.db'}")
    outcomes = run_suite(FEATURES[profile], tmp_path, *store, "--memconform-runtime", runtime)
    assert len(outcomes) >= 20
    assert _not_passed(outcomes) == []
    assert all(o["outcome"] == "passed" for o in outcomes)


@pytest.mark.slow
def test_a_lie_in_the_internal_steps_fails_only_the_rules_about_that_record(
    tmp_path: Path,
) -> None:
    """Document 003 makes the steps part of the answer: CA-017 to CA-020 compare
    them with the timeline, and no other check reads them."""
    outcomes = run_suite(FEATURES["candidates"], tmp_path, *STORE,
                         "--memconform-runtime", "tests.lying_runtime:steps_lying_runtime")
    record_rules = {"CA-017", "CA-018", "CA-019", "CA-020"}
    failed = [o for o in outcomes if o["outcome"] != "passed"]
    assert failed
    for outcome in failed:
        assert outcome["decided_by"] == "check", outcome["nodeid"]
        assert set(outcome["rules"]) & record_rules, outcome["nodeid"]
        assert "internal step" in str(outcome.get("failing_step")), outcome["nodeid"]
