"""The pydantic-ai runtime adapter: an ``Agent`` on the kit's fake model and tools,
saved through its ``ConversationStore`` into the kit's store, checked against what
the store, the model and the tools recorded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

pytest.importorskip("pydantic_ai.conversation_store", reason="needs the pydantic-ai extra")

from memconform.adapters.libraries.pydantic_ai_runtime import (
    MESSAGE_KEY,
    RECORD_KEY,
    ConversationRewriteError,
    PydanticAIRuntime,
    pydantic_ai_runtime,
)
from memconform.adapters.memory import MemoryStore
from memconform.adapters.registry import BUILTIN_RUNTIMES, resolve_runtime
from memconform.fingerprint import declared_hooks, fingerprint, render_json, subject_for
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
    refusing_store,
    store_refusals,
)

THREAD = "t1"


def _run(script: dict[str, Any], refuse: str | None = None
         ) -> tuple[Mapping[str, Any], MemoryStore, list[dict[str, Any]], Environment]:
    store = MemoryStore()
    handed: Any = store if refuse is None else refusing_store(store, store_refusals(refuse, None))
    proxy = RecordingStore(handed)
    env = Environment(script, proxy)
    try:
        answer = pydantic_ai_runtime().execute(script, env)
    finally:
        proxy.close()
    return answer, store, [e.to_json() for e in proxy.timeline], env


def _appends(timeline: list[dict[str, Any]]) -> list[list[str]]:
    return [[m["role"] for m in e["args"][1]] for e in timeline
            if e["kind"] == "store" and e["name"] == "append" and "raised" not in e]


def _shown(timeline: list[dict[str, Any]]) -> list[list[str]]:
    return [[m["role"] for m in e["request"]["messages"]] for e in timeline
            if e["kind"] == "model"]


def _approval(script: dict[str, Any]) -> dict[str, Any]:
    script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True
    return script


def test_a_completed_run_is_saved_after_it_as_one_batch() -> None:
    answer, store, timeline, env = _run(base_script(THREAD, None))
    assert answer["runs"] == [
        {"outcome": "completed", "stage": None, "reply": ANSWER, "error": None}
    ]
    # the documented loop saves the run's result once, after agent.run returned
    assert _appends(timeline) == [["user", "assistant", "tool", "assistant"]]
    kinds = [(e["kind"], e.get("name")) for e in timeline]
    assert kinds.index(("store", "append")) > max(
        i for i, k in enumerate(kinds) if k[0] == "model")
    stored = store.messages(THREAD)
    assert stored[0].text == PROMPT
    assert stored[1].parts[0] == {"type": "tool_call", "id": "call-notify", "name": TOOL,
                                  "args": {"order": "A-1"}}
    assert stored[2].parts[0] == {"type": "tool_result", "call_id": "call-notify",
                                  "name": TOOL, "result": "notified"}
    assert dict(stored[2].metadata)[MESSAGE_KEY]["kind"] == "request"
    assert RECORD_KEY in dict(stored[3].metadata)
    assert len({m.id for m in stored}) == 4
    assert env.ledger == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]
    assert _shown(timeline) == [["user"], ["user", "assistant", "tool"]]
    assert "model_calls" not in answer["runs"][0]
    assert "new_messages" not in answer["runs"][0]


def test_a_model_error_ends_the_run_failed_and_nothing_is_saved() -> None:
    script = apply_failure_point(base_script(THREAD, None), "later model call")
    answer, store, timeline, env = _run(script)
    run = answer["runs"][0]
    assert run["outcome"] == "failed"
    assert run["error"] == {"type": "ModelError", "message": "model call 2 failed"}
    assert _appends(timeline) == []
    assert store.messages(THREAD) == []
    # the tool's effect happened all the same: side effects are never rolled back
    assert env.ledger == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]


def test_a_tool_error_reaches_the_scripts_hook_and_becomes_a_failed_tool_return() -> None:
    answer, store, timeline, _ = _run(apply_failure_point(base_script(THREAD, None), "tool"))
    assert answer["runs"][0]["outcome"] == "completed"
    hooks = [e for e in timeline if e["kind"] == "hook" and e["name"] == "tool_error"]
    assert [(h["payload"]["tool"], h["payload"]["error"]["type"]) for h in hooks] == [
        (TOOL, "MailError")]
    result = store.messages(THREAD)[2]
    assert result.parts[0]["error"] == "MailError: mail server said no"
    assert dict(result.metadata)[MESSAGE_KEY]["parts"][0]["outcome"] == "failed"
    assert _shown(timeline)[-1] == ["user", "assistant", "tool"]


def test_a_terminating_or_failing_tool_error_hook_fails_the_run() -> None:
    script = apply_failure_point(base_script(THREAD, None), "tool-error hook terminate")
    answer, _, timeline, _ = _run(script)
    assert answer["runs"][0]["outcome"] == "failed"
    assert answer["runs"][0]["error"]["type"] == "MailError"
    assert _appends(timeline) == []
    script = apply_failure_point(base_script(THREAD, None), "tool-error hook")
    answer, _, _, _ = _run(script)
    assert answer["runs"][0]["error"] == {"type": "HookError",
                                          "message": "tool-error hook broke"}


def test_a_second_run_loads_the_conversation_back_from_the_kit_store() -> None:
    script = base_script(THREAD, None)
    script["runs"].append({"input": "And order A-2?"})
    script["model"]["agent"].append({"reply": "Tuesday."})
    answer, _, timeline, _ = _run(script)
    assert [r["outcome"] for r in answer["runs"]] == ["completed", "completed"]
    assert _shown(timeline)[-1] == ["user", "assistant", "tool", "assistant", "user"]
    assert _appends(timeline) == [["user", "assistant", "tool", "assistant"],
                                  ["user", "assistant"]]


def test_an_approval_pauses_the_run_and_a_resume_completes_it() -> None:
    script = _approval(base_script(THREAD, None))
    script["runs"].append({"resume": {"approved": True}})
    answer, store, timeline, env = _run(script)
    suspended, resumed = answer["runs"]
    assert suspended["outcome"] == "suspended"
    assert suspended["pending_tool_calls"] == [
        {"id": "call-notify", "name": TOOL, "args": {"order": "A-1"}}]
    assert resumed == {"outcome": "completed", "stage": None, "reply": ANSWER, "error": None}
    assert _appends(timeline) == [["user", "assistant"], ["tool", "assistant"]]
    # the paused run's record (its deferred requests) travels with its batch
    pending = dict(store.messages(THREAD)[1].metadata)[RECORD_KEY]["deferred_tool_requests"]
    assert [c["tool_call_id"] for c in pending["approvals"]] == ["call-notify"]
    assert env.ledger == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]


def test_a_failed_resume_saves_nothing_so_a_second_resume_runs_the_tool_again() -> None:
    script = _approval(base_script(THREAD, None))
    script["model"]["agent"][1] = {"fail": {"type": "ModelError", "message": "down"}}
    script["model"]["agent"].append({"reply": ANSWER})
    script["runs"] += [{"resume": {"approved": True}}, {"resume": {"approved": True}}]
    answer, store, timeline, env = _run(script)
    assert [r["outcome"] for r in answer["runs"]] == ["suspended", "failed", "completed"]
    assert _appends(timeline) == [["user", "assistant"], ["tool", "assistant"]]
    assert [e["call_id"] for e in env.ledger] == ["call-notify", "call-notify"]
    assert [m.role for m in store.messages(THREAD)] == ["user", "assistant", "tool", "assistant"]


def test_a_denied_approval_is_pydantic_ais_denial_result() -> None:
    script = _approval(base_script(THREAD, None))
    script["runs"].append({"resume": {"approved": False, "reason": "no mail today"}})
    answer, store, _, env = _run(script)
    assert [r["outcome"] for r in answer["runs"]] == ["suspended", "completed"]
    assert store.messages(THREAD)[2].text == "no mail today"
    assert env.ledger == []


def test_a_streamed_run_puts_the_answer_text_on_the_timeline() -> None:
    script = base_script(THREAD, None)
    script["stream"] = True
    answer, _, timeline, _ = _run(script)
    assert answer["runs"][0]["outcome"] == "completed"
    chunks = [e["text"] for e in timeline if e["kind"] == "event" and e["name"] == "chunk"]
    assert chunks == [ANSWER]


@pytest.mark.parametrize(("call", "seen"), [(1, []), (2, [["user"]])])
def test_a_cancellation_stops_the_run_before_its_model_call_and_nothing_is_saved(
        call: int, seen: list[list[str]]) -> None:
    script = base_script(THREAD, None)
    script["runs"][0]["cancel_before_model_call"] = call
    answer, store, timeline, env = _run(script)
    assert answer["runs"][0]["outcome"] == "cancelled"
    assert answer["runs"][0]["error"]["type"] == "RunCancelled"
    assert _shown(timeline) == seen
    assert store.messages(THREAD) == []
    assert len(env.ledger) == call - 1


def test_the_run_end_hook_is_after_run_a_failing_one_fails_a_cancelling_one_cancels() -> None:
    script = apply_failure_point(base_script(THREAD, None), "run-end hook")
    answer, store, timeline, _ = _run(script)
    assert answer["runs"][0]["error"] == {"type": "HookError", "message": "run-end hook broke"}
    hooks = [e for e in timeline if e["kind"] == "hook"]
    assert [(h["name"], h["payload"]) for h in hooks] == [("run_end", {"reply": ANSWER})]
    assert store.messages(THREAD) == []
    answer, store, _, _ = _run(apply_failure_point(base_script(THREAD, None), "run-end cancel"))
    assert answer["runs"][0]["outcome"] == "cancelled"
    assert store.messages(THREAD) == []


def test_a_refused_save_is_what_the_caller_sees() -> None:
    answer, store, timeline, _ = _run(base_script(THREAD, None), refuse="first append")
    assert answer["runs"][0]["outcome"] == "failed"
    assert answer["runs"][0]["error"]["type"] == "StoreError"
    assert store.messages(THREAD) == []
    assert [e["name"] for e in timeline if e["kind"] == "store" and "raised" in e] == ["append"]


def test_a_save_branching_off_the_stored_history_is_reported_not_appended() -> None:
    import asyncio

    from pydantic_ai.conversation_store import ConversationEntry, ConversationRecord
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from memconform.adapters.libraries.pydantic_ai_runtime import _build_types, _Run

    script = base_script(THREAD, None)
    store = MemoryStore()
    proxy = RecordingStore(store)
    env = Environment(script, proxy)
    try:
        kit = _build_types()["store"](_Run(env, THREAD, script))
        first = ConversationEntry(parent_id=None,
                                  message=ModelRequest(parts=[UserPromptPart(content=PROMPT)]))
        record = ConversationRecord(conversation_id=THREAD, head_id=first.id)
        asyncio.run(kit.write_record(record, new_entries=[first], expected_revision=None))
        revision = asyncio.run(kit.read_record(THREAD)).revision
        other = ConversationEntry(parent_id=None, message=ModelRequest(
            parts=[UserPromptPart(content="another question")]))
        with pytest.raises(ConversationRewriteError, match="holds 1 messages"):
            asyncio.run(kit.write_record(ConversationRecord(conversation_id=THREAD,
                                                            head_id=other.id),
                                         new_entries=[other], expected_revision=revision))
    finally:
        proxy.close()
    timeline = [e.to_json() for e in proxy.timeline]
    events = [e for e in timeline if e["kind"] == "event"]
    assert [(e["name"], e["stored"]) for e in events] == [("rewrite", 1)]
    assert [m.text for m in store.messages(THREAD)] == [PROMPT]


def test_the_runtime_is_named_and_declares_what_it_translates() -> None:
    assert resolve_runtime("pydantic-ai") == BUILTIN_RUNTIMES["pydantic-ai"]
    assert subject_for("pydantic-ai").label == "pydantic-ai"
    runtime = pydantic_ai_runtime()
    assert isinstance(runtime, PydanticAIRuntime)
    assert runtime.profiles == frozenset({"save-policy"})
    assert declared_hooks(runtime) == frozenset(
        {"tool_error", "approval", "stream", "run_end", "cancel"})
    assert declared_policies(runtime) == frozenset()
    assert not hasattr(runtime, "provides")


def test_the_fingerprint_is_stable_and_names_the_readmes_nearest_policy() -> None:
    first = fingerprint(subject_for("pydantic-ai"), crashes=False)  # no kills: kept fast
    second = fingerprint(subject_for("pydantic-ai"), crashes=False)
    assert render_json(first) == render_json(second)
    assert first.nearest == "run"
    assert first.distances["run"] == 14
    assert {p.name for p in first.unsupported} == {
        "input guardrail blocks", "input guardrail fails", "model call 1 retried",
        "output guardrail fails", "output guardrail blocks",
    }
