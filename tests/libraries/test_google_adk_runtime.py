"""The Google ADK runtime adapter: ADK's ``Runner`` with an ``LlmAgent`` on the
kit's fake model, tools and store, checked against what the store and the model
recorded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

pytest.importorskip("google.adk.runners", reason="needs the google-adk extra")

from memconform.adapters.libraries.google_adk_runtime import (
    EVENT_KEY,
    GoogleADKRuntime,
    google_adk_runtime,
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
)
from memconform.values import Message

THREAD = "t1"


def _run(script: dict[str, Any], runtime: Any = None, seed: list[Message] | None = None
         ) -> tuple[Mapping[str, Any], MemoryStore, list[dict[str, Any]], Environment]:
    store = MemoryStore()
    if seed:
        store.append(THREAD, seed)
    proxy = RecordingStore(store)
    env = Environment(script, proxy)
    try:
        answer = (runtime or google_adk_runtime()).execute(script, env)
    finally:
        proxy.close()
    return answer, store, [e.to_json() for e in proxy.timeline], env


def _appends(timeline: list[dict[str, Any]]) -> list[list[str]]:
    return [[m["role"] for m in e["args"][1]] for e in timeline
            if e["kind"] == "store" and e["name"] == "append" and "raised" not in e]


def _shown(timeline: list[dict[str, Any]]) -> list[list[str]]:
    return [[m["role"] for m in e["request"]["messages"]] for e in timeline
            if e["kind"] == "model"]


def _error_event_stored(store: MemoryStore) -> bool:
    """The check a runtime hiding ADK's error events fails."""
    last = store.messages(THREAD)[-1]
    return bool(last.parts) and last.parts[0]["type"] == "error"


def test_a_tool_round_stores_each_event_as_one_batch() -> None:
    answer, store, timeline, env = _run(base_script(THREAD, None))
    assert answer["runs"] == [
        {"outcome": "completed", "stage": None, "reply": ANSWER, "error": None}
    ]
    assert _appends(timeline) == [["user"], ["assistant"], ["tool"], ["assistant"]]
    stored = store.messages(THREAD)
    assert stored[0].text == PROMPT
    call, result = stored[1], stored[2]
    assert call.parts[0] == {"type": "tool_call", "id": "call-notify", "name": TOOL,
                             "args": {"order": "A-1"}}
    assert result.parts[0]["call_id"] == "call-notify"
    assert result.text == "notified"
    assert dict(result.metadata)[EVENT_KEY]["author"] == "memconform"
    assert len({m.id for m in stored}) == 4
    assert env.ledger == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]
    assert _shown(timeline) == [["user"], ["user", "assistant", "tool"]]
    assert "model_calls" not in answer["runs"][0]
    assert "new_messages" not in answer["runs"][0]


def test_adks_ids_and_clock_are_the_kits_so_what_is_stored_repeats() -> None:
    script = base_script(THREAD, None)
    script["clock"] = "2026-03-01T12:00:00Z"
    first, second = _run(script)[1], _run(script)[1]
    kept = [dict(m.metadata)[EVENT_KEY] for m in first.messages(THREAD)]
    assert kept == [dict(m.metadata)[EVENT_KEY] for m in second.messages(THREAD)]
    assert kept[0]["id"].startswith("adk-")
    assert kept[0]["invocation_id"] == kept[-1]["invocation_id"]
    assert {e["timestamp"] for e in kept} == {1772366400.0}


def test_a_model_error_fails_the_run_and_adk_stores_an_error_event() -> None:
    script = base_script(THREAD, None)
    script.update(apply_failure_point(script, "later model call"))
    answer, store, timeline, _ = _run(script)
    run = answer["runs"][0]
    assert run["outcome"] == "failed"
    assert run["error"] == {"type": "ModelError", "message": "model call 2 failed"}
    assert _appends(timeline) == [["user"], ["assistant"], ["tool"], ["assistant"]]
    last = store.messages(THREAD)[-1]
    assert (last.text, last.parts[0]["type"]) == ("", "error")
    assert "model call 2 failed" in str(last.parts[0]["message"])
    assert _error_event_stored(store)
    assert not [e for e in timeline if e["kind"] == "store" and e["name"] == "record_error"]


def test_a_runtime_hiding_the_error_event_is_caught() -> None:
    """A mutant that drops ADK's error events on the way to the store (a fix the
    adapter must never make) fails the check the test above passes."""

    class Hiding(GoogleADKRuntime):
        def __init__(self) -> None:
            super().__init__()
            service = self._types["session"]

            class Dropping(service):  # type: ignore[misc,valid-type]
                async def append_event(self, session: Any, event: Any) -> Any:
                    if event.error_code is not None:
                        return event
                    return await super().append_event(session, event)

            self._types = {**self._types, "session": Dropping}

    script = base_script(THREAD, None)
    script.update(apply_failure_point(script, "later model call"))
    answer, store, _, _ = _run(script, Hiding())
    assert answer["runs"][0]["outcome"] == "failed"
    assert not _error_event_stored(store)


@pytest.mark.parametrize(("point", "outcome", "error", "last"), [
    ("tool", "completed", None, "assistant"),
    ("tool-error hook terminate", "failed", "MailError", "error"),
    ("tool-error hook", "failed", "HookError", "error"),
])
def test_the_tool_error_hook_is_adks_on_tool_error_callback(
        point: str, outcome: str, error: str | None, last: str) -> None:
    script = base_script(THREAD, None)
    script.update(apply_failure_point(script, point))
    answer, store, timeline, _ = _run(script)
    run = answer["runs"][0]
    assert run["outcome"] == outcome
    assert (run["error"] or {}).get("type") == error
    hooks = [e["name"] for e in timeline if e["kind"] == "hook"]
    assert hooks[:2] == ["input_guardrail", "tool_error"]
    stored = store.messages(THREAD)
    kinds = [m.parts[0]["type"] if m.parts else m.role for m in stored]
    assert kinds[-1] == last
    if point == "tool":  # the allowing hook's response is the tool's result
        assert stored[2].parts[0]["result"] == {"error": "mail server said no"}


def test_a_second_run_reads_the_session_back_from_the_kit_store() -> None:
    """The store under test is the one ADK reads: a message another writer put
    in the thread is shown to the model."""
    seed = [Message(id="m0", role="user", text="Earlier question."),
            Message(id="m1", role="assistant", text="Earlier answer.")]
    script = base_script(THREAD, None)
    script["runs"].append({"input": "And order A-2?"})
    script["model"]["agent"].append({"reply": "Tuesday."})
    answer, store, timeline, _ = _run(script, seed=seed)
    assert [r["outcome"] for r in answer["runs"]] == ["completed", "completed"]
    assert _shown(timeline)[0] == ["user", "assistant", "user"]
    assert _shown(timeline)[-1] == ["user", "assistant", "user", "assistant", "tool",
                                    "assistant", "user"]
    assert [m.text for m in store.messages(THREAD)][-2:] == ["And order A-2?", "Tuesday."]


def test_a_refused_append_fails_the_run() -> None:
    from memconform.steps._save_policy_scripts import refusing_store, store_refusals

    script = base_script(THREAD, None)
    store = MemoryStore()
    proxy = RecordingStore(refusing_store(store, store_refusals("first append", None)))
    env = Environment(script, proxy)
    try:
        answer = google_adk_runtime().execute(script, env)
    finally:
        proxy.close()
    assert answer["runs"][0]["outcome"] == "failed"
    assert store.messages(THREAD) == []
    assert env.model_calls() == 0


def test_a_streamed_run_puts_the_partial_events_on_the_timeline() -> None:
    script = base_script(THREAD, None)
    script["stream"] = True
    answer, _, timeline, _ = _run(script)
    assert answer["runs"][0]["outcome"] == "completed"
    chunks = [e["text"] for e in timeline if e["kind"] == "event" and e["name"] == "chunk"]
    assert chunks == [ANSWER]
    assert _appends(timeline) == [["user"], ["assistant"], ["tool"], ["assistant"]]


def _approval(script: dict[str, Any]) -> dict[str, Any]:
    script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True
    return script


def test_a_call_needing_approval_suspends_the_run_on_adks_tool_confirmation() -> None:
    answer, store, timeline, env = _run(_approval(base_script(THREAD, None)))
    run = answer["runs"][0]
    assert run["outcome"] == "suspended"
    assert run["pending_tool_calls"] == [
        {"id": "call-notify", "name": TOOL, "args": {"order": "A-1"}}]
    assert env.ledger == []
    # the model's call, ADK's confirmation request, the tool's placeholder answer
    assert _appends(timeline) == [["user"], ["assistant"], ["assistant"], ["tool"]]
    assert store.messages(THREAD)[2].parts[0]["name"] == "adk_request_confirmation"


@pytest.mark.parametrize(("approved", "effects", "result"), [
    (True, 1, "notified"),
    (False, 0, '{"error": "This tool call is rejected."}'),
])
def test_a_resume_run_sends_adk_the_confirmation(approved: bool, effects: int,
                                                 result: str) -> None:
    script = _approval(base_script(THREAD, None))
    script["runs"].append({"resume": {"approved": approved}})
    answer, store, timeline, env = _run(script)
    assert [r["outcome"] for r in answer["runs"]] == ["suspended", "completed"]
    assert answer["runs"][1]["reply"] == ANSWER
    assert len(env.ledger) == effects
    stored = store.messages(THREAD)
    assert stored[4].parts[0]["result"] == {"confirmed": approved}
    assert stored[5].text == result
    # the placeholder response of the suspended run and the real one answer one call
    assert [m.parts[0]["call_id"] for m in (stored[3], stored[5])] == ["call-notify"] * 2
    assert _shown(timeline)[-1][-1] == "tool"


@pytest.mark.parametrize(("hook", "stage", "appends"), [
    ("input_guardrail", "input", [["user"], ["assistant"]]),
    ("output_guardrail", "output", [["user"], ["assistant"], ["tool"], ["assistant"]]),
])
def test_a_blocking_guardrail_is_adks_model_callback_answering_instead(
        hook: str, stage: str, appends: list[list[str]]) -> None:
    script = base_script(THREAD, None)
    script["hooks"][hook] = {"action": "block", "text": "not allowed"}
    answer, store, timeline, env = _run(script)
    assert answer["runs"][0] == {"outcome": "blocked", "stage": stage,
                                 "reply": "not allowed", "error": None}
    assert _appends(timeline) == appends
    assert store.messages(THREAD)[-1].text == "not allowed"
    hooks = [e["name"] for e in timeline if e["kind"] == "hook"]
    guards = ["input_guardrail"] if stage == "input" else ["input_guardrail", "output_guardrail"]
    assert hooks == [*guards, "run_end"]  # ADK ends a blocked run as a completed one
    assert env.model_calls() == (0 if stage == "input" else 2)


def test_a_failing_guardrail_fails_the_run_with_adks_error_event() -> None:
    script = base_script(THREAD, None)
    script.update(apply_failure_point(script, "input guardrail"))
    answer, store, _, env = _run(script)
    assert answer["runs"][0]["outcome"] == "failed"
    assert answer["runs"][0]["error"]["type"] == "GuardrailError"
    assert env.model_calls() == 0
    assert _error_event_stored(store)


@pytest.mark.parametrize(("before", "appends", "calls"), [
    (1, [["user"], ["assistant"]], 0),
    (2, [["user"], ["assistant"], ["tool"], ["assistant"]], 1),
])
def test_a_cancellation_is_adks_abort_signal_and_adk_seals_the_run(
        before: int, appends: list[list[str]], calls: int) -> None:
    script = base_script(THREAD, None)
    script["runs"][0]["cancel_before_model_call"] = before
    answer, store, timeline, env = _run(script)
    assert answer["runs"][0] == {
        "outcome": "cancelled", "stage": None, "reply": None,
        "error": {"type": "INVOCATION_ABORTED", "message": "Invocation was aborted by client."}}
    assert env.model_calls() == calls
    assert _appends(timeline) == appends
    assert store.messages(THREAD)[-1].parts[0]["code"] == "INVOCATION_ABORTED"


def test_the_run_end_hook_is_a_plugins_after_run_callback() -> None:
    script = base_script(THREAD, None)
    script.update(apply_failure_point(script, "run-end hook"))
    answer, store, timeline, _ = _run(script)
    run = answer["runs"][0]
    assert run["outcome"] == "failed"
    assert run["error"]["type"] == "RuntimeError"  # ADK wraps a plugin's error
    assert "run-end hook broke" in run["error"]["message"]
    assert _appends(timeline) == [["user"], ["assistant"], ["tool"], ["assistant"]]
    assert store.messages(THREAD)[-1].text == ANSWER
    script = base_script(THREAD, None)
    script.update(apply_failure_point(script, "run-end cancel"))
    answer, _, timeline, _ = _run(script)
    assert answer["runs"][0]["outcome"] == "completed"  # no ADK counterpart to cancel
    assert [e["name"] for e in timeline if e["kind"] == "hook"][-1] == "run_end"


def test_the_runtime_is_named_and_declares_what_it_translates() -> None:
    assert resolve_runtime("google-adk") == BUILTIN_RUNTIMES["google-adk"]
    runtime = google_adk_runtime()
    assert isinstance(runtime, GoogleADKRuntime)
    assert runtime.profiles == frozenset({"save-policy"})
    assert declared_hooks(runtime) == frozenset(
        {"input_guardrail", "output_guardrail", "tool_error", "run_end", "cancel", "approval",
         "stream"})
    assert declared_policies(runtime) == frozenset()
    assert not hasattr(runtime, "provides")
    assert subject_for("google-adk").label == "google-adk"
    with pytest.raises(ValueError, match="profile"):
        runtime.execute({"profile": "turn-records"}, None)


def test_the_fingerprint_is_stable_and_names_the_readmes_nearest_policy() -> None:
    first = fingerprint(subject_for("google-adk"), crashes=False)  # no kills: kept fast
    second = fingerprint(subject_for("google-adk"), crashes=False)
    assert render_json(first) == render_json(second)
    assert first.nearest == "anvia-main/message"
    assert {p.name for p in first.unsupported} == {"model call 1 retried"}
