"""The LangGraph runtime adapter: the prebuilt ReAct agent on the kit's fake model,
tools and store, checked against what the store and the model recorded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

pytest.importorskip("langgraph.prebuilt", reason="needs the langgraph extra")

from memconform.adapters.libraries.langgraph_runtime import (
    CHECKPOINT_KEY,
    MESSAGE_KEY,
    LangGraphRuntime,
    checkpoint_scope,
    langgraph_exit_runtime,
    langgraph_runtime,
    langgraph_sync_runtime,
)
from memconform.adapters.memory import MemoryStore
from memconform.adapters.registry import BUILTIN_RUNTIMES, resolve_runtime
from memconform.fingerprint import (
    _execute,
    crash_points,
    declared_hooks,
    fingerprint,
    render_json,
    subject_for,
)
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


def _run(script: dict[str, Any], runtime: LangGraphRuntime | None = None
         ) -> tuple[Mapping[str, Any], MemoryStore, list[dict[str, Any]], Environment]:
    store = MemoryStore()
    proxy = RecordingStore(store)
    env = Environment(script, proxy)
    try:
        answer = (runtime or langgraph_sync_runtime()).execute(script, env)
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


def test_a_plain_run_stores_each_checkpoints_new_messages_as_one_batch() -> None:
    answer, store, timeline, env = _run(base_script(THREAD, None))
    assert answer["runs"] == [
        {"outcome": "completed", "stage": None, "reply": ANSWER, "error": None}
    ]
    # one checkpoint per step: the input, the agent's call, the tools' result, the answer
    assert _appends(timeline) == [["user"], ["assistant"], ["tool"], ["assistant"]]
    stored = store.messages(THREAD)
    assert stored[0].text == PROMPT
    assert stored[1].parts[0]["type"] == "tool_call"
    assert stored[1].parts[0]["id"] == "call-notify"
    assert stored[1].parts[0]["args"] == {"order": "A-1"}
    assert stored[2].parts[0] == {"type": "tool_result", "call_id": "call-notify",
                                  "name": TOOL, "result": "notified"}
    assert dict(stored[2].metadata)[MESSAGE_KEY]["type"] == "tool"
    assert len({m.id for m in stored}) == 4
    assert env.ledger == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]
    assert _shown(timeline) == [["user"], ["user", "assistant", "tool"]]
    assert "model_calls" not in answer["runs"][0]
    assert "new_messages" not in answer["runs"][0]


def test_exit_durability_saves_the_whole_run_once_and_default_is_per_step() -> None:
    _, _, timeline, _ = _run(base_script(THREAD, None), langgraph_exit_runtime())
    assert _appends(timeline) == [["user", "assistant", "tool", "assistant"]]
    _, _, timeline, _ = _run(base_script(THREAD, None), langgraph_runtime())
    assert _appends(timeline) == [["user"], ["assistant"], ["tool"], ["assistant"]]


def test_a_model_failure_fails_the_run_with_what_the_checkpoints_saved() -> None:
    script = apply_failure_point(base_script(THREAD, None), "later model call")
    answer, store, timeline, _ = _run(script)
    run = answer["runs"][0]
    assert run["outcome"] == "failed"
    assert run["error"] == {"type": "ModelError", "message": "model call 2 failed"}
    assert _appends(timeline) == [["user"], ["assistant"], ["tool"]]
    assert [m.role for m in store.messages(THREAD)] == ["user", "assistant", "tool"]


def test_a_failing_tool_becomes_langgraphs_error_result_unless_the_hook_terminates() -> None:
    answer, store, timeline, env = _run(apply_failure_point(base_script(THREAD, None), "tool"))
    assert answer["runs"][0]["outcome"] == "completed"
    result = store.messages(THREAD)[2]
    assert result.parts[0]["error"].startswith("Error: ")
    assert "mail server said no" in result.text
    assert [e["name"] for e in timeline if e["kind"] == "hook"] == ["tool_error"]
    assert env.ledger == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]

    script = apply_failure_point(base_script(THREAD, None), "tool-error hook terminate")
    answer, store, timeline, _ = _run(script)
    assert answer["runs"][0]["outcome"] == "failed"
    assert answer["runs"][0]["error"]["type"] == "MailError"
    assert _appends(timeline) == [["user"], ["assistant"]]


def test_an_approval_interrupts_the_run_and_a_resume_completes_it() -> None:
    script = _approval(base_script(THREAD, None))
    script["runs"].append({"resume": {"approved": True}})
    answer, store, _, env = _run(script)
    suspended, resumed = answer["runs"]
    assert suspended["outcome"] == "suspended"
    assert suspended["pending_tool_calls"] == [
        {"id": "call-notify", "name": TOOL, "args": {"order": "A-1"}}]
    assert resumed == {"outcome": "completed", "stage": None, "reply": ANSWER, "error": None}
    assert [m.role for m in store.messages(THREAD)] == ["user", "assistant", "tool", "assistant"]
    assert env.ledger == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]


def test_a_denied_approval_is_the_tools_result() -> None:
    script = _approval(base_script(THREAD, None))
    script["runs"].append({"resume": {"approved": False, "reason": "no mail today"}})
    answer, store, _, env = _run(script)
    assert [r["outcome"] for r in answer["runs"]] == ["suspended", "completed"]
    assert store.messages(THREAD)[2].text == "ToolApprovalDenied: no mail today"
    assert env.ledger == []


def test_a_second_run_reads_the_history_back_from_the_kit_store() -> None:
    script = base_script(THREAD, None)
    script["runs"].append({"input": "And order A-2?"})
    script["model"]["agent"].append({"reply": "Tuesday."})
    answer, _, timeline, _ = _run(script)
    assert [r["outcome"] for r in answer["runs"]] == ["completed", "completed"]
    assert _shown(timeline)[-1] == ["user", "assistant", "tool", "assistant", "user"]
    assert _appends(timeline)[-2:] == [["user"], ["assistant"]]


def test_a_streamed_run_puts_langgraphs_message_chunks_on_the_timeline() -> None:
    script = base_script(THREAD, None)
    script["stream"] = True
    answer, _, timeline, _ = _run(script)
    assert answer["runs"][0]["outcome"] == "completed"
    chunks = [e["text"] for e in timeline if e["kind"] == "event" and e["name"] == "chunk"]
    assert chunks == [ANSWER]


def test_the_runtimes_are_named_and_declare_what_they_translate() -> None:
    for name in ("langgraph", "langgraph:async", "langgraph:sync", "langgraph:exit"):
        assert resolve_runtime(name) == BUILTIN_RUNTIMES[name]
        assert subject_for(name).label == name
    runtime = langgraph_runtime()
    assert runtime.durability is None
    assert runtime.profiles == frozenset({"save-policy"})
    assert declared_hooks(runtime) == frozenset({"tool_error", "approval", "stream"})
    # no save-policy setting: a durability mode is no policy a script configures
    for build in (langgraph_runtime, langgraph_sync_runtime, langgraph_exit_runtime):
        assert declared_policies(build()) == frozenset()
    assert not hasattr(runtime, "provides")
    with pytest.raises(ValueError, match="durability"):
        LangGraphRuntime("never")


@pytest.mark.parametrize(("name", "nearest"), [
    ("langgraph", "anvia-main/message"),
    ("langgraph:sync", "anvia-main/message"),
    ("langgraph:exit", "run"),
])
def test_the_fingerprint_is_stable_and_names_the_readmes_nearest_policy(
        name: str, nearest: str) -> None:
    first = fingerprint(subject_for(name), crashes=False)  # crash points: test below
    second = fingerprint(subject_for(name), crashes=False)
    assert render_json(first) == render_json(second)
    assert first.nearest == nearest
    assert {p.name for p in first.unsupported} == {
        "input guardrail blocks", "input guardrail fails", "cancel before model call 1",
        "model call 1 retried", "cancel before model call 2", "output guardrail fails",
        "output guardrail blocks", "run-end hook fails", "run-end hook cancels",
    }


def test_a_checkpoint_rewriting_a_stored_message_is_reported_not_appended() -> None:
    import langchain_core.messages as messages_mod
    from langchain_core.messages import HumanMessage

    from memconform.adapters.libraries.langgraph_runtime import (
        CheckpointRewriteError,
        _build_types,
        _Run,
        kit_message,
    )

    script = base_script(THREAD, None)
    store = MemoryStore()
    proxy = RecordingStore(store)
    env = Environment(script, proxy)
    try:
        saver = _build_types()["saver"](_Run(env, THREAD, script))
        proxy.append(THREAD, [kit_message(HumanMessage(content=PROMPT, id="lc-1"), "msg-1",
                                          messages_mod)])
        changed = {"id": "c1", "channel_values": {
            "messages": [HumanMessage(content="another question", id="lc-1")]}}
        config = {"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}
        with pytest.raises(CheckpointRewriteError, match="stored message 0 of 1"):
            saver.put(config, changed, {}, {})
    finally:
        proxy.close()
    timeline = [e.to_json() for e in proxy.timeline]
    events = [e for e in timeline if e["kind"] == "event"]
    assert [(e["name"], e["index"], e["stored"]) for e in events] == [("rewrite", 0, 1)]
    assert [m.text for m in store.messages(THREAD)] == [PROMPT]


def test_a_real_kill_stops_the_background_checkpoint_write_of_the_async_mode() -> None:
    """Killed in a child process right after the store acknowledged its second
    append (write 6: each checkpoint's append follows the saver's working-state
    writes), the async graph keeps exactly the first two checkpoints' messages:
    the kill stops the background writer (an exception raised inside it would not)."""
    killed = _execute(subject_for("langgraph"), crash_points(2)[1], 0)[0]
    assert (killed.appends, killed.stored, killed.outcome) == (
        "[user] [assistant]", "user,assistant", "crashed")


class _StatelessStore(MemoryStore):
    """A store without working state: LangGraph's bookkeeping stays in one instance."""

    @property
    def capabilities(self) -> frozenset[str]:
        return super().capabilities - {"state"}


def _resumed(script: dict[str, Any], store: MemoryStore) -> dict[str, Any]:
    """``script`` run as the kit runs it: the resume on a fresh saver, in a second
    ``execute`` call, given only the continuation the suspended run's caller got."""
    from memconform.steps.save_policy_resumes import execute_with_resumes, in_process

    proxy = RecordingStore(store)
    runtime = langgraph_sync_runtime()
    try:
        return execute_with_resumes(runtime, script, proxy,
                                    in_process(langgraph_sync_runtime, proxy))
    finally:
        proxy.close()


def test_a_fresh_instance_resumes_the_interrupted_thread_from_the_store() -> None:
    script = _approval(base_script(THREAD, None))
    script["runs"].append({"resume": {"approved": True}})
    store = MemoryStore()
    observation = _resumed(script, store)
    assert [r["outcome"] for r in observation["runs"]] == ["suspended", "completed"]
    assert [m.role for m in store.messages(THREAD)] == ["user", "assistant", "tool", "assistant"]
    assert _appends(observation["timeline"]) == [["user"], ["assistant"], ["tool"], ["assistant"]]
    assert observation["ledger"] == [{"tool": TOOL, "call_id": "call-notify", "effect": EFFECT}]
    kept = store.read_state(checkpoint_scope(THREAD), CHECKPOINT_KEY)
    assert kept is not None
    assert all(b[1] != "messages" for b in kept.value["blobs"])


def test_a_fresh_instance_denying_the_pending_call_does_not_run_it() -> None:
    script = _approval(base_script(THREAD, None))
    script["runs"].append({"resume": {"approved": False, "reason": "no mail today"}})
    store = MemoryStore()
    observation = _resumed(script, store)
    assert [r["outcome"] for r in observation["runs"]] == ["suspended", "completed"]
    assert store.messages(THREAD)[2].text == "ToolApprovalDenied: no mail today"
    assert observation["ledger"] == []


def test_without_working_state_a_fresh_instance_cannot_resume() -> None:
    script = _approval(base_script(THREAD, None))
    script["runs"].append({"resume": {"approved": True}})
    store = _StatelessStore()
    observation = _resumed(script, store)
    assert observation["runs"][0]["outcome"] == "suspended"
    assert observation["runs"][1]["outcome"] != "completed"
    assert [m.role for m in store.messages(THREAD)] == ["user", "assistant"]
