"""The reference executor of the save-policy profile: every failure point under
every policy, the golden batch sequences, determinism, variants, schemas and
malformed scripts."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Sequence
from typing import Any

import jsonschema
import pytest

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import IdSource, ScriptError
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import observe
from memconform.resources import spec_dir
from memconform.simulator.runtime import Simulator
from memconform.steps._save_policy_scripts import (
    EFFECT,
    EXPECTED,
    apply_failure_point,
    base_script,
    batches_text,
    refusing_store,
    store_refusals,
)
from memconform.values import Message

POLICIES = ("message", "turn", "run")


class _CoreOnly:
    """A store with the required methods only (no errors capability)."""

    def __init__(self) -> None:
        self.inner = MemoryStore()
        self.capabilities: frozenset[str] = frozenset()

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(thread_id, batch)

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        return self.inner.messages(thread_id, limit)


@pytest.fixture
def proxy() -> Iterator[RecordingStore]:
    store = RecordingStore(MemoryStore())
    yield store
    store.close()


def _refusing(proxy: RecordingStore, point: str, policy: str | None) -> RecordingStore:
    """A proxy on ``proxy``'s store that refuses what ``point`` needs, sharing its timeline."""
    return RecordingStore(refusing_store(proxy.inner, store_refusals(point, policy)),
                          proxy.timeline)


def _observe(
    script: dict[str, Any], store: RecordingStore, variant: str | None = None
) -> dict[str, Any]:
    return observe(Simulator(variant), script, store)


def _store_calls(observation: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [e for e in observation["timeline"] if e["kind"] == "store" and e["name"] == name]


def _batches(observation: dict[str, Any]) -> str:
    return batches_text([
        [m["role"] for m in e["args"][1]]
        for e in _store_calls(observation, "append") if "raised" not in e
    ])


def _order(observation: dict[str, Any]) -> list[str]:
    names = []
    for e in observation["timeline"]:
        if e["kind"] == "store" and e["name"] in ("append", "record_error"):
            names.append(e["name"] + (" raised" if "raised" in e else ""))
        elif e["kind"] == "hook" and e["name"] in ("run_error", "run_end"):
            names.append(e["name"])
        elif e["kind"] == "event" and e["name"] == "outcome":
            names.append("outcome")
    return names


CELLS = [(point, policy) for point in EXPECTED for policy in POLICIES]


@pytest.mark.parametrize(("point", "policy"), CELLS, ids=[f"{p}-{q}" for p, q in CELLS])
def test_every_failure_point_under_every_policy(
    point: str, policy: str, proxy: RecordingStore
) -> None:
    expected = EXPECTED[point][policy]
    observation = _observe(apply_failure_point(base_script("t", policy), point),
                           _refusing(proxy, point, policy))
    run = observation["runs"][0]
    assert _batches(observation) == expected.batches
    assert run["outcome"] == expected.outcome
    assert (run["error"] or {}).get("type") == expected.error
    records = _store_calls(observation, "record_error")
    if expected.recorded is None:
        assert records == []
    else:
        assert len(records) == 1
        record = records[0]["args"][1]
        assert ",".join(m["role"] for m in record["messages"]) == expected.recorded
        assert record["messages"] == run["new_messages"]
        assert record["run_id"] == run["run_id"]
    if expected.outcome in ("failed", "cancelled"):
        recorded = "record_error raised" if point == "record_error" else "record_error"
        assert _order(observation)[-3:] == ["run_error", recorded, "outcome"]
    stored = proxy.messages("t")
    roles = [r for part in expected.batches.split() if part != "none"
             for r in part.strip("[]").split(",")]
    assert [m.role for m in stored] == roles


@pytest.mark.parametrize(
    ("policy", "golden"),
    [
        ("message", "[user] [assistant,tool] [assistant]"),
        ("turn", "[user,assistant,tool] [assistant]"),
        ("run", "[user,assistant,tool,assistant]"),
    ],
)
def test_golden_batch_sequences(policy: str, golden: str, proxy: RecordingStore) -> None:
    observation = _observe(base_script("t", policy), proxy)
    assert _batches(observation) == golden
    rounds = [2, 2, 2, 2] if policy == "run" else [1, 1, 1, 2]  # run: the round appended in
    assert [m.round for m in proxy.messages("t")] == rounds
    assert {m.run_id for m in proxy.messages("t")} == {observation["runs"][0]["run_id"]}


def test_the_default_policy_is_message(proxy: RecordingStore) -> None:
    observation = _observe(base_script("t", None), proxy)
    assert _batches(observation) == "[user] [assistant,tool] [assistant]"
    assert observation["save_policy"] == "message"


@pytest.mark.parametrize("point", ["none", "later model call", "record_error", "run-end cancel"])
def test_the_same_script_twice_gives_identical_json(point: str) -> None:
    script = apply_failure_point(base_script("t", "turn"), point)
    texts = []
    for _ in range(2):
        store = RecordingStore(refusing_store(MemoryStore(), store_refusals(point, "turn")))
        texts.append(json.dumps(_observe(copy.deepcopy(script), store), sort_keys=True))
        store.close()
    assert texts[0] == texts[1]


def test_the_policy_does_not_change_the_run() -> None:
    def behaviour(policy: str) -> Any:
        store = RecordingStore(MemoryStore())
        observation = _observe(apply_failure_point(base_script("t", policy), "tool"), store)
        store.close()
        calls = [e for e in observation["timeline"] if e["kind"] in ("model", "tool", "hook")]
        for e in calls:
            e.pop("seq")
        run = observation["runs"][0]
        return (calls, observation["ledger"], run["reply"], run["model_calls"])
    assert behaviour("message") == behaviour("turn") == behaviour("run")


def test_a_throwing_tool_becomes_the_result(proxy: RecordingStore) -> None:
    observation = _observe(apply_failure_point(base_script("t", "message"), "tool"), proxy)
    assert observation["runs"][0]["outcome"] == "completed"
    tool = next(m for m in proxy.messages("t") if m.role == "tool")
    assert tool.text == "ToolCallError: mail server said no"
    assert observation["ledger"] == [{"tool": "notify_customer", "call_id": "call-notify",
                                      "effect": EFFECT}]


def test_unknown_policy_is_refused_at_construction(proxy: RecordingStore) -> None:
    script = base_script("t", "batch")
    observation = _observe(script, proxy)
    assert observation["construction_error"]["field"] == "save_policy"
    assert "'batch'" in observation["construction_error"]["message"]
    assert observation["runs"] == []
    assert [e for e in observation["timeline"] if e["kind"] in ("model", "store")] == []


def test_anvia_main_accepts_an_unknown_policy_and_stores_nothing(proxy: RecordingStore) -> None:
    observation = _observe(base_script("t", "batch"), proxy, "anvia-main")
    assert observation["construction_error"] is None
    assert observation["runs"][0]["outcome"] == "completed"
    assert _store_calls(observation, "append") == []


def test_anvia_main_appends_the_tool_call_before_the_tool_runs(proxy: RecordingStore) -> None:
    observation = _observe(base_script("t", "message"), proxy, "anvia-main")
    assert _batches(observation) == "[user] [assistant] [tool] [assistant]"
    kinds = [e["kind"] for e in observation["timeline"] if e["kind"] in ("tool", "store")]
    assert kinds.index("tool") > 2  # load, user append, tool-call append, then the tool


def _needing_approval(policy: str, answer: dict[str, Any]) -> dict[str, Any]:
    script = base_script("t", policy)
    script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True
    script["runs"].append({"resume": answer})
    return script


def test_anvia_main_answers_an_approval_during_the_run(proxy: RecordingStore) -> None:
    """The main line never suspends: the approved tool runs inside the first run,
    and the later resume finds nothing to resume."""
    observation = _observe(_needing_approval("message", {"approved": True}), proxy, "anvia-main")
    first, second = observation["runs"]
    assert first["outcome"] == "completed"
    assert _batches(observation) == "[user] [assistant] [tool] [assistant]"
    assert len([e for e in observation["timeline"] if e["kind"] == "tool"]) == 1
    assert (second["outcome"], second["error"]["type"]) == ("failed", "NothingToResumeError")


def test_anvia_main_makes_a_rejected_approval_the_tool_result(proxy: RecordingStore) -> None:
    script = _needing_approval("turn", {"approved": False, "reason": "not today"})
    observation = _observe(script, proxy, "anvia-main")
    assert observation["runs"][0]["outcome"] == "completed"
    assert [e for e in observation["timeline"] if e["kind"] == "tool"] == []
    tools = [m for m in observation["runs"][0]["new_messages"] if m["role"] == "tool"]
    assert [m["text"] for m in tools] == ["ToolApprovalDenied: not today"]


def test_anvia_main_lets_max_rounds_1_make_three_model_calls(proxy: RecordingStore) -> None:
    script = base_script("t", "message")
    step = script["model"]["agent"][0]
    script["model"]["agent"] = [copy.deepcopy(step) for _ in range(4)] + [{"reply": "done"}]
    script["max_rounds"] = 1
    main = _observe(script, proxy, "anvia-main")["runs"][0]
    assert (main["outcome"], main["error"]["type"]) == ("failed", "MaxRoundsError")
    assert len(main["model_calls"]) == 3


def test_anvia_main_lets_a_failing_record_error_replace_the_error(proxy: RecordingStore) -> None:
    script = apply_failure_point(base_script("t", "run"), "record_error")
    refusing = _refusing(proxy, "record_error", "run")
    assert _observe(script, refusing, "anvia-main")["runs"][0]["error"]["type"] == "StoreError"
    other = RecordingStore(refusing_store(MemoryStore(), store_refusals("record_error", "run")))
    assert _observe(script, other)["runs"][0]["error"]["type"] == "ModelError"
    other.close()


def test_a_failing_append_reports_in_order(proxy: RecordingStore) -> None:
    observation = _observe(apply_failure_point(base_script("t", "message"), "last append"),
                           _refusing(proxy, "last append", "message"))
    assert _order(observation)[-4:] == ["append raised", "run_error", "record_error", "outcome"]
    refused = _store_calls(observation, "append")[-1]
    assert refused["raised"]["type"] == "StoreError"
    assert [m.role for m in proxy.messages("t")] == ["user", "assistant", "tool"]


def test_record_error_is_skipped_when_the_store_lacks_the_capability() -> None:
    store = RecordingStore(_CoreOnly())
    script = apply_failure_point(base_script("t", "message"), "later model call")
    observation = _observe(script, store)
    store.close()
    assert observation["runs"][0]["outcome"] == "failed"
    assert observation["runs"][0]["error"]["type"] == "ModelError"
    assert _store_calls(observation, "record_error") == []


@pytest.mark.parametrize("policy", POLICIES)
def test_retries_never_duplicate(policy: str, proxy: RecordingStore) -> None:
    script = base_script("t", policy)
    failure = {"fail": {"type": "ProviderError", "message": "busy", "status": 503}}
    script["model"]["agent"][1:1] = [failure, failure]
    observation = _observe(script, proxy)
    run = observation["runs"][0]
    assert run["outcome"] == "completed"
    assert [c["attempt"] for c in run["model_calls"]] == [1, 1, 2, 3]
    ids = [m.id for m in proxy.messages("t")]
    assert len(ids) == len(set(ids)) == 4


def test_retries_are_bounded(proxy: RecordingStore) -> None:
    script = base_script("t", "message")
    failure = {"fail": {"type": "ProviderError", "message": "busy", "status": 503}}
    script["model"]["agent"] = [failure, failure, failure]
    script["max_retries"] = 2
    run = _observe(script, proxy)["runs"][0]
    assert run["outcome"] == "failed"
    assert len(run["model_calls"]) == 3


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("point", ["none", "last append", "run-end hook"])
def test_streaming_persists_like_buffered(policy: str, point: str) -> None:
    results = []
    for stream in (False, True):
        store = RecordingStore(MemoryStore())
        script = apply_failure_point(base_script("t", policy), point)
        script["stream"] = stream
        observation = _observe(script, store)
        store.close()
        chunks = [e for e in observation["timeline"] if e["name"] == "chunk"]
        assert bool(chunks) == stream
        results.append((_batches(observation), observation["runs"][0]["outcome"]))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    ("policy", "suspended", "resumed"),
    [
        ("message", "[user] [assistant]", "[tool] [tool] [assistant]"),
        ("turn", "[user,assistant]", "[tool,tool] [assistant]"),
        ("run", "[user,assistant]", "[tool,tool,assistant]"),
    ],
)
def test_suspension_and_resume(
    policy: str, suspended: str, resumed: str, proxy: RecordingStore
) -> None:
    script = base_script("t", policy)
    script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True
    script["runs"].append({"resume": {"approved": True}})
    observation = _observe(script, proxy)
    first, second = observation["runs"]
    assert (first["outcome"], first["error"], second["outcome"]) == ("suspended", None, "completed")
    assert first["pending_tool_calls"][0]["id"] == "call-notify"
    assert _batches(observation) == f"{suspended} {resumed}"
    assert len(_store_calls(observation, "messages")) == 1
    assert _store_calls(observation, "record_error") == []
    assert [m.text for m in proxy.messages("t") if m.role == "tool"] == [
        "approval approved", "notified"
    ]


@pytest.mark.parametrize("policy", POLICIES)
def test_a_resume_given_the_callers_continuation_finds_the_run_in_the_store(
    policy: str, proxy: RecordingStore
) -> None:
    """Split as the kit splits it: the resume is a script of its own, executed by
    a new executor that holds nothing of the suspended run; the same batches and
    the same transcript as one script resuming in memory."""
    whole = base_script("t", policy)
    whole["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True
    whole["runs"].append({"resume": {"approved": True}})
    first = _observe({**whole, "runs": whole["runs"][:1]}, proxy)
    suspended = first["runs"][0]
    assert suspended["continuation"] == {"run_id": suspended["run_id"],
                                         "tool_call_ids": ["call-notify"]}
    later = {**whole, "model": {"agent": whole["model"]["agent"][1:]},
             "runs": [{"resume": {"approved": True, "continuation": suspended["continuation"]}}]}
    second = observe(Simulator(), later, proxy, lambda env: setattr(env, "ids", IdSource(2)))
    resumed = second["runs"][0]
    assert (resumed["kind"], resumed["outcome"], resumed["error"]) == ("resume", "completed", None)
    whole_proxy = RecordingStore(MemoryStore())
    try:
        expected = _observe(whole, whole_proxy)
        assert _batches(second) == _batches(expected)
        assert [(m.role, m.text) for m in proxy.messages("t")] == [
            (m.role, m.text) for m in whole_proxy.messages("t")]
    finally:
        whole_proxy.close()


def test_a_continuation_naming_nothing_pending_fails_the_resume(proxy: RecordingStore) -> None:
    script = base_script("t", "message")
    script["runs"] = [{"resume": {"approved": True,
                                  "continuation": {"run_id": "run-1", "tool_call_ids": ["x"]}}}]
    run = _observe(script, proxy)["runs"][0]
    assert (run["outcome"], run["error"]["type"]) == ("failed", "NothingToResumeError")


def test_a_denied_approval_does_not_run_the_tool(proxy: RecordingStore) -> None:
    script = base_script("t", "message")
    script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True
    script["runs"].append({"resume": {"approved": False, "reason": "not today"}})
    observation = _observe(script, proxy)
    assert observation["ledger"] == []
    assert observation["runs"][1]["outcome"] == "completed"
    assert [m.text for m in proxy.messages("t") if m.role == "tool"] == [
        "approval denied: not today", "ToolApprovalDenied: not today"
    ]


def test_output_guardrail_block_stores_the_replacement(proxy: RecordingStore) -> None:
    script = base_script("t", "run")
    script["hooks"]["output_guardrail"] = {"action": "block", "text": "No."}
    run = _observe(script, proxy)["runs"][0]
    assert (run["outcome"], run["stage"], run["reply"], run["error"]) == (
        "blocked", "output", "No.", None
    )
    assert proxy.messages("t")[-1].text == "No."


def test_input_guardrail_block_stores_nothing(proxy: RecordingStore) -> None:
    script = base_script("t", "message")
    script["hooks"]["input_guardrail"] = {"action": "block", "text": "no"}
    observation = _observe(script, proxy)
    assert (observation["runs"][0]["outcome"], observation["runs"][0]["stage"]) == (
        "blocked", "input"
    )
    assert _store_calls(observation, "append") == []
    assert _store_calls(observation, "record_error") == []


def test_a_later_run_sees_the_stored_history(proxy: RecordingStore) -> None:
    script = apply_failure_point(base_script("t", "message"), "later model call")
    script["runs"].append({"input": "again?"})
    script["model"]["agent"].append({"reply": "yes"})
    observation = _observe(script, proxy)
    context = observation["runs"][1]["model_calls"][0]["context"]
    assert [m["role"] for m in context] == ["user", "assistant", "tool", "user"]


def test_too_many_rounds_fail_the_run(proxy: RecordingStore) -> None:
    script = base_script("t", "turn")
    script["max_rounds"] = 1
    run = _observe(script, proxy)["runs"][0]
    assert (run["outcome"], run["error"]["type"]) == ("failed", "MaxRoundsError")


def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((spec_dir() / "schemas" / name).read_text("utf-8"))
    return loaded


@pytest.mark.parametrize("point", ["none", "later model call", "last append"])
def test_scripts_and_observations_match_their_schemas(point: str, proxy: RecordingStore) -> None:
    script = apply_failure_point(base_script("t", "message"), point)
    jsonschema.Draft202012Validator(_schema("script-save-policy.schema.json")).validate(script)
    observation = _observe(script, proxy)
    jsonschema.Draft202012Validator(
        _schema("observation-save-policy.schema.json")
    ).validate(observation)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: s.pop("thread"), "thread"),
        (lambda s: s.update(save_policy=3), "save_policy"),
        (lambda s: s.update(runs=[]), "runs"),
        (lambda s: s.update(runs=[{"input": 1}]), "runs[0].input"),
        (lambda s: s.update(runs=[{"input": "a", "resume": {"approved": True}}]), "runs[0]"),
        (lambda s: s.update(runs=[{"resume": {"approved": True}}]), "runs[0].resume"),
        (lambda s: s["runs"].append({"resume": {"approved": "yes"}}), "runs[1].resume.approved"),
        (lambda s: s["runs"].append({"resume": {"approved": True, "continuation": "run-1"}}),
         "runs[1].resume.continuation"),
        (lambda s: s["runs"][0].update(cancel_before_model_call=0),
         "runs[0].cancel_before_model_call"),
        (lambda s: s.update(store_faults={"fail_append": 1}), "store_faults"),
        (lambda s: s.update(max_rounds=0), "max_rounds"),
        (lambda s: s.update(variant="eddi-snapshot"), "variant"),
        (lambda s: s.update(stream="yes"), "stream"),
        (lambda s: s.update(policy="run"), "policy"),
        (lambda s: s["runs"].append({"resume": {"approved": True}}), "runs[1].resume"),
    ],
)
def test_malformed_scripts_name_the_field(
    change: Any, field: str, proxy: RecordingStore
) -> None:
    script = base_script("t", "message")
    change(script)
    with pytest.raises(ScriptError) as caught:
        _observe(script, proxy)
    assert str(caught.value).startswith(field)


def test_an_unscripted_model_call_is_a_script_error(proxy: RecordingStore) -> None:
    script = base_script("t", "message")
    script["model"]["agent"] = script["model"]["agent"][:1]
    with pytest.raises(ScriptError, match=r"model\.agent"):
        _observe(script, proxy)
