"""How the kit cuts a save-policy script at its resumes and hands the caller's
continuation to the later part (memconform.steps.save_policy_resumes)."""

from __future__ import annotations

from memconform.adapters.memory import MemoryStore
from memconform.harness.proxy import RecordingStore
from memconform.simulator.runtime import Simulator
from memconform.steps._save_policy_scripts import base_script
from memconform.steps.save_policy_resumes import (
    continuation_of,
    execute_with_resumes,
    in_process,
    later_part,
    resume_points,
)


def _approval_script() -> dict:
    script = base_script("t", "turn")
    script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True
    script["runs"].append({"resume": {"approved": True}})
    return script


def test_only_resumes_without_a_continuation_are_cut() -> None:
    script = _approval_script()
    assert resume_points(script) == [1]
    script["runs"][1]["resume"]["continuation"] = {"run_id": "r"}
    assert resume_points(script) == []
    assert resume_points(base_script("t", "turn")) == []


def test_the_callers_continuation_is_handed_back_unchanged() -> None:
    given = {"suspended_run": "r-7", "awaiting": ["c"]}
    assert continuation_of({"run_id": "r-7", "continuation": given}) == given
    assert continuation_of({"run_id": "r-7", "pending_tool_calls": [{"id": "c", "name": "n"}]}) \
        == {"run_id": "r-7", "tool_call_ids": ["c"]}


def test_the_later_part_goes_on_after_the_calls_already_made() -> None:
    script = _approval_script()
    script["tools"]["notify"] = [{"result": "one"}, {"result": "two"}]
    script["hooks"]["run_end"] = [{"action": "allow"}, {"action": "cancel"}]
    entries = [{"kind": "model", "name": "agent"}, {"kind": "hook", "name": "run_end"},
               {"kind": "tool", "name": "notify"}]
    part = later_part(script, 1, 2, {"run_id": "r"}, entries)
    assert part["runs"] == [{"resume": {"approved": True, "continuation": {"run_id": "r"}}}]
    assert part["model"]["agent"] == script["model"]["agent"][1:]
    assert part["tools"]["notify"] == [{"result": "two"}]
    assert part["hooks"]["run_end"] == [{"action": "cancel"}]
    assert script["runs"][1] == {"resume": {"approved": True}}


def test_a_script_resumed_in_a_second_execute_call_is_one_observation() -> None:
    proxy = RecordingStore(MemoryStore())
    runtime = Simulator()
    try:
        observation = execute_with_resumes(runtime, _approval_script(), proxy,
                                           in_process(Simulator, proxy))
        assert [r["outcome"] for r in observation["runs"]] == ["suspended", "completed"]
        assert observation["timeline"] == proxy.timeline.to_json()
        assert len({m.id for m in proxy.messages("t")}) == len(proxy.messages("t")) == 5
    finally:
        proxy.close()
