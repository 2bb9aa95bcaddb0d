"""The OpenAI Agents SDK runtime adapter: the SDK's ``Runner`` on the kit's fake
model, tools and store, checked against what the store and the model recorded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

pytest.importorskip("agents", reason="needs the openai-agents extra")

from memconform.adapters.libraries.openai_agents_runtime import (
    ITEM_KEY,
    OpenAIAgentsRuntime,
    openai_agents_runtime,
)
from memconform.adapters.memory import MemoryStore
from memconform.adapters.registry import BUILTIN_RUNTIMES, resolve_runtime
from memconform.fingerprint import declared_hooks, subject_for
from memconform.harness.environment import Environment
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import declared_policies
from memconform.steps._save_policy_scripts import (
    ANSWER,
    EFFECT,
    PROMPT,
    TOOL,
    apply_failure_point,
    base_script,
)

THREAD = "t1"


def _run(script: dict[str, Any]) -> tuple[Mapping[str, Any], MemoryStore, list[dict[str, Any]],
                                          Environment]:
    store = MemoryStore()
    proxy = RecordingStore(store)
    env = Environment(script, proxy)
    try:
        answer = openai_agents_runtime().execute(script, env)
    finally:
        proxy.close()
    return answer, store, [e.to_json() for e in proxy.timeline], env


def _appends(timeline: list[dict[str, Any]]) -> list[list[str]]:
    return [[m["role"] for m in e["args"][1]] for e in timeline
            if e["kind"] == "store" and e["name"] == "append" and "raised" not in e]


def _model_calls(timeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in timeline if e["kind"] == "model"]


def _shown(call: Mapping[str, Any]) -> list[str]:
    return [m["role"] for m in call["request"]["messages"]]


def test_a_plain_run_stores_the_input_then_the_answer() -> None:
    script = base_script(THREAD, None)
    script["model"]["agent"] = [{"reply": "Hello."}]
    answer, store, timeline, env = _run(script)
    assert answer["runs"] == [
        {"outcome": "completed", "stage": None, "reply": "Hello.", "error": None}
    ]
    assert _appends(timeline) == [["user"], ["assistant"]]
    stored = store.messages(THREAD)
    assert [(m.role, m.text) for m in stored] == [("user", PROMPT), ("assistant", "Hello.")]
    assert len({m.id for m in stored}) == 2
    calls = _model_calls(timeline)
    assert len(calls) == 1
    assert _shown(calls[0]) == ["user"]
    assert calls[0]["request"]["messages"][0]["text"] == PROMPT
    assert env.ledger == []


def test_a_tool_call_runs_the_kit_tool_and_stores_each_turn_as_one_batch() -> None:
    answer, store, timeline, env = _run(base_script(THREAD, None))
    assert answer["runs"][0]["outcome"] == "completed"
    assert answer["runs"][0]["reply"] == ANSWER
    assert _appends(timeline) == [["user"], ["assistant", "tool"], ["assistant"]]
    stored = store.messages(THREAD)
    call, result = stored[1], stored[2]
    assert call.parts[0]["type"] == "tool_call"
    assert call.parts[0]["name"] == TOOL
    assert call.parts[0]["id"] == "call-notify"
    assert call.parts[0]["args"] == {"order": "A-1"}
    assert result.parts[0] == {"type": "tool_result", "call_id": "call-notify",
                               "result": "notified"}
    assert dict(result.metadata)[ITEM_KEY]["type"] == "function_call_output"
    assert env.ledger == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]
    tools = [e for e in timeline if e["kind"] == "tool"]
    assert [(t["name"], t["args"]) for t in tools] == [(TOOL, {"order": "A-1"})]
    assert [_shown(c) for c in _model_calls(timeline)] == [["user"], ["user", "assistant", "tool"]]
    assert "model_calls" not in answer["runs"][0]
    assert "new_messages" not in answer["runs"][0]


def test_a_model_error_fails_the_run_with_what_was_stored_before_it() -> None:
    script = base_script(THREAD, None)
    script.update(apply_failure_point(script, "later model call"))
    answer, store, timeline, _ = _run(script)
    run = answer["runs"][0]
    assert run["outcome"] == "failed"
    assert run["error"]["type"] == "ModelError"
    assert _appends(timeline) == [["user"], ["assistant", "tool"]]
    assert [m.role for m in store.messages(THREAD)] == ["user", "assistant", "tool"]
    calls = _model_calls(timeline)
    assert len(calls) == 2
    assert "failed" in calls[1]


def test_a_second_run_reads_the_history_back_from_the_kit_store() -> None:
    script = base_script(THREAD, None)
    script["runs"].append({"input": "And order A-2?"})
    script["model"]["agent"].append({"reply": "Tuesday."})
    answer, store, timeline, _ = _run(script)
    assert [r["outcome"] for r in answer["runs"]] == ["completed", "completed"]
    last = _model_calls(timeline)[-1]
    assert _shown(last) == ["user", "assistant", "tool", "assistant", "user"]
    assert [m.role for m in store.messages(THREAD)][-2:] == ["user", "assistant"]


def test_a_blocking_input_guardrail_is_the_sdks_tripwire() -> None:
    script = base_script(THREAD, None)
    script["hooks"]["input_guardrail"] = {"action": "block", "text": "not allowed"}
    answer, _, timeline, _ = _run(script)
    assert answer["runs"][0]["outcome"] == "blocked"
    assert answer["runs"][0]["stage"] == "input"
    assert answer["runs"][0]["reply"] == "not allowed"
    hooks = [e["name"] for e in timeline if e["kind"] == "hook"]
    assert "input_guardrail" in hooks


def test_the_runtime_is_named_and_declares_what_it_translates() -> None:
    assert resolve_runtime("openai-agents") == BUILTIN_RUNTIMES["openai-agents"]
    runtime = openai_agents_runtime()
    assert isinstance(runtime, OpenAIAgentsRuntime)
    assert runtime.profiles == frozenset({"save-policy"})
    assert declared_hooks(runtime) == frozenset(
        {"input_guardrail", "output_guardrail", "tool_error"})
    # its fingerprint matches no save policy (nearest message, 11 points differ)
    assert declared_policies(runtime) == frozenset()
    assert not hasattr(runtime, "provides")
    assert subject_for("openai-agents").label == "openai-agents"
