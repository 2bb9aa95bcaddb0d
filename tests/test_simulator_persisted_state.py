"""The reference runtime of the ``persisted-state`` profile, tested directly."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import ScriptError
from memconform.harness.faults import RefusingStore
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import observe
from memconform.simulator.persisted_state import (
    RECORD_KEY,
    eviction_order,
    is_instruction,
    job_scope,
    knowledge_scope,
)
from memconform.simulator.runtime import Simulator
from memconform.values import Fact

NS = "t"
DAY = 86_400
JOB: dict[str, Any] = {
    "id": "deploy-1",
    "goal": "ship the service",
    "steps": [
        {"name": "lookup", "tool": "lookup_service", "record": {"service_id": "$result.id"}},
        {"name": "build", "tool": "build", "args": {"service": "$service_id"}},
        {"name": "deploy", "tool": "deploy", "args": {"service": "$service_id"},
         "marks": {"deployed": True}},
    ],
}
TOOLS: dict[str, Any] = {
    "lookup_service": {"result": {"id": "svc-42"}, "effect": "lookup_service"},
    "build": {"effect": "build"},
    "deploy": {"effect": "deploy"},
}


def script(actions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "profile": "persisted-state",
        "namespace": NS,
        "actions": actions,
        "tools": TOOLS,
        "model": {"agent": [{"reply": "ok"}] * 32},
    }
    base.update(extra)
    return base


def run(actions: list[dict[str, Any]], store: MemoryStore | None = None,
        **extra: Any) -> dict[str, Any]:
    proxy = RecordingStore(store if store is not None else MemoryStore())
    try:
        return observe(Simulator(), script(actions, **extra), proxy)
    finally:
        proxy.close()


def fact(subject: str, statement: str = "s", **more: str) -> dict[str, Any]:
    return {"subject": subject, "statement": statement, "source": "agent", "evidence": "seen",
            **more}


def record_of(store: MemoryStore, job_id: str = "deploy-1") -> Any:
    entry = store.read_state(job_scope(NS, job_id), RECORD_KEY)
    assert entry is not None
    return entry


def kb(store: MemoryStore) -> list[Fact]:
    return store.facts(knowledge_scope(NS, "user"))


# -- working state ----------------------------------------------------------------------


def test_deployed_is_written_only_after_the_deploy_succeeded() -> None:
    store = MemoryStore()
    obs = run([{"do": "job", "job": JOB}], store)
    timeline = obs["timeline"]
    deploy_ok = next(e["seq"] for e in timeline if e["kind"] == "tool" and e["name"] == "deploy")
    writes = [e for e in timeline if e["kind"] == "store" and e["name"] == "write_state"]
    with_deployed = [e["seq"] for e in writes if "deployed" in e["args"][2]["values"]]
    assert with_deployed
    assert min(with_deployed) > deploy_ok
    assert record_of(store).value["values"] == {"service_id": "svc-42", "deployed": True}
    assert record_of(store).version == 4
    assert obs["outcomes"][0]["outcome"] == "completed"


def test_a_failed_deploy_records_the_failure_and_no_result() -> None:
    store = MemoryStore()
    tools = {**TOOLS, "deploy": {"fail": {"type": "ToolError", "message": "quota exceeded"}}}
    obs = run([{"do": "job", "job": JOB}], store, tools=tools)
    record = record_of(store).value
    assert "deployed" not in record["values"]
    assert [s["status"] for s in record["steps"]] == ["done", "done", "failed"]
    assert record["steps"][2]["error"]["message"] == "quota exceeded"
    assert obs["outcomes"][0]["outcome"] == "failed"
    writes = [e for e in obs["timeline"] if e["name"] == "write_state"]
    assert all("deployed" not in e["args"][2]["values"] for e in writes)


def test_every_step_reads_the_record_before_its_tool() -> None:
    obs = run([{"do": "job", "job": JOB}])
    names = [(e["kind"], e["name"]) for e in obs["timeline"]
             if e["kind"] in ("tool", "store") and e["name"] != "append"]
    for i, (kind, _) in enumerate(names):
        if kind == "tool":
            assert names[i - 1] == ("store", "read_state")


def test_a_missing_value_blocks_the_job_and_says_on_what() -> None:
    store = MemoryStore()
    job = {**JOB, "steps": [JOB["steps"][1]]}
    obs = run([{"do": "job", "job": job}], store)
    assert obs["outcomes"][0]["outcome"] == "blocked"
    assert record_of(store).value["blocked"] == {
        "step": "build", "on": "value 'service_id' is not in the record"}
    assert obs["ledger"] == []


def test_the_record_never_asks_the_durable_confirmation() -> None:
    obs = run([{"do": "job", "job": JOB}], hooks={"confirm_durable_write": {"action": "block"}})
    assert obs["outcomes"][0]["outcome"] == "completed"
    assert not [e for e in obs["timeline"] if e["kind"] == "hook"]


# -- resume -----------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_job_resumed_in_process_does_each_step_once(k: int) -> None:
    store = MemoryStore()
    first = run([{"do": "job", "job": JOB, "stop_after": k}], store)
    assert first["outcomes"][0]["outcome"] == "handed-off"
    second = run([{"do": "resume", "job": "deploy-1"}], store)
    effects = [e["effect"] for e in first["ledger"] + second["ledger"]]
    assert effects == ["lookup_service", "build", "deploy"]
    assert second["outcomes"][0]["outcome"] == "completed"
    assert not [e for e in second["timeline"] if e["name"] == "messages"]
    deploy = [e for e in first["timeline"] + second["timeline"]
              if e["kind"] == "tool" and e["name"] == "deploy"]
    assert [e["args"] for e in deploy] == [{"service": "svc-42"}]


def test_a_refused_record_write_fails_the_job_and_stops_it() -> None:
    store = MemoryStore()
    proxy = RecordingStore(RefusingStore(store, methods={"write_state"}))
    try:
        obs = observe(Simulator(), script([{"do": "job", "job": JOB}]), proxy)
    finally:
        proxy.close()
    assert obs["outcomes"][0]["outcome"] == "failed"
    assert obs["outcomes"][0]["error"]["type"] == "StoreError"
    assert obs["ledger"] == []


def test_a_refused_fact_is_not_reported_stored() -> None:
    proxy = RecordingStore(RefusingStore(MemoryStore(), methods={"put_fact"}))
    try:
        obs = observe(Simulator(), script([{"do": "remember", "fact": fact("a")}]), proxy)
    finally:
        proxy.close()
    assert obs["outcomes"][0]["outcome"] == "failed"


def test_the_kill_point_stops_the_child_right_after_the_kth_write(tmp_path: Path) -> None:
    from memconform.harness.fresh_process import fresh_environment, python_command

    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script([{"do": "job", "job": JOB}])), encoding="utf-8")
    command = python_command(
        "memconform.steps.job_resume", "--store", f"sqlite:///{tmp_path / 'k.db'}",
        "--script", str(script_file), "--kill-after-write", "2",
    )
    with subprocess.Popen(command, cwd=tmp_path, env=fresh_environment(tmp_path),
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        report = json.loads(proc.stdout.readline())
        proc.kill()
    assert report["killed_after"] == 2
    assert [e["effect"] for e in report["ledger"]] == ["lookup_service"]
    assert [e["name"] for e in report["timeline"] if e["kind"] == "store"][-1] == "write_state"


def test_a_handoff_edit_is_used_by_the_next_step() -> None:
    store = MemoryStore()
    run([{"do": "job", "job": JOB, "stop_after": 1, "stop": "handoff"}], store)
    entry = record_of(store)
    edited = {**entry.value, "values": {"service_id": "svc-77"}}
    store.write_state(job_scope(NS, "deploy-1"), RECORD_KEY, edited, entry.version)
    obs = run([{"do": "resume", "job": "deploy-1"}], store)
    calls = [e["args"] for e in obs["timeline"] if e["kind"] == "tool"]
    assert calls == [{"service": "svc-77"}, {"service": "svc-77"}]


def test_resuming_an_unknown_job_says_so() -> None:
    obs = run([{"do": "resume", "job": "nope"}])
    assert obs["outcomes"][0]["outcome"] == "unknown-job"


def test_starting_a_job_twice_is_a_script_error() -> None:
    store = MemoryStore()
    run([{"do": "job", "job": JOB}], store)
    with pytest.raises(ScriptError, match=r"^actions\[0\]\.job\.id: .*already has a record"):
        run([{"do": "job", "job": JOB}], store)


@pytest.mark.skipif(importlib.util.find_spec("memconform.adapters.sqlite") is None,
                    reason="needs a durable store; memconform.adapters.sqlite is not available")
def test_a_job_resumes_in_a_fresh_process_with_a_scrubbed_environment(tmp_path: Path) -> None:
    from memconform.adapters.registry import open_store

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    store = open_store(url)
    proxy = RecordingStore(store)
    first = observe(Simulator(), script([{"do": "job", "job": JOB, "stop_after": 1}]), proxy)
    proxy.close()
    close = getattr(store, "close", None)
    if callable(close):
        close()
    world = tmp_path / "world.json"
    world.write_text(json.dumps({"tools": TOOLS, "model": {"agent": [{"reply": "ok"}] * 8}}))
    workdir, tmp = tmp_path / "work", tmp_path / "tmp"
    workdir.mkdir()
    tmp.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.steps.job_resume", "--store", url,
         "--namespace", NS, "--job", "deploy-1", "--world", str(world)],
        cwd=workdir, env={"PATH": os.environ.get("PATH", ""), "TMPDIR": str(tmp)},
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    second = json.loads(proc.stdout)
    assert second["outcomes"][0]["outcome"] == "completed"
    effects = [e["effect"] for e in first["ledger"] + second["ledger"]]
    assert effects == ["lookup_service", "build", "deploy"]


def test_job_resume_without_a_job_is_a_usage_error() -> None:
    from memconform.steps.job_resume import main

    assert main(["--store", "memory://"]) == 2


# -- durable knowledge ----------------------------------------------------------------------


def test_a_fact_carries_provenance_from_the_injected_clock() -> None:
    store = MemoryStore()
    run([{"do": "remember", "fact": fact("a", writer="agent:x", source="tool:y",
                                          evidence="ev", kind="inference")}],
        store, clock="2026-03-01T10:00:00Z")
    (stored,) = kb(store)
    assert (stored.writer, stored.source, stored.evidence, stored.written_at) == (
        "agent:x", "tool:y", "ev", "2026-03-01T10:00:00Z")
    assert stored.recheck_at == "2026-03-31T10:00:00Z"


def test_a_new_fact_supersedes_the_old_one() -> None:
    store = MemoryStore()
    obs = run([{"do": "remember", "fact": fact("a", "old")},
               {"do": "remember", "fact": fact("a", "new")},
               {"do": "recall", "subject": "a"}], store)
    assert [f.statement for f in kb(store)] == ["new"]
    assert [f["statement"] for f in obs["outcomes"][2]["facts"]] == ["new"]


def test_a_fact_past_its_recheck_date_is_shown_as_unverified() -> None:
    store = MemoryStore()
    knowledge = {"lifetimes": {"observation": 10 * DAY}}
    obs = run([{"do": "remember", "fact": fact("a")},
               {"do": "advance", "seconds": 10 * DAY - 1}, {"do": "recall"},
               {"do": "advance", "seconds": 1}, {"do": "recall"}],
              store, knowledge=knowledge)
    assert obs["outcomes"][2]["facts"][0]["status"] == "current"
    late = obs["outcomes"][4]["facts"][0]
    assert late["status"] == "unverified"
    assert late["text"].startswith("[unverified since ")


def test_the_cap_evicts_unverified_facts_first_then_the_oldest() -> None:
    store = MemoryStore()
    knowledge = {"cap": 2, "lifetimes": {"inference": DAY}}
    obs = run([{"do": "remember", "fact": fact("b", kind="observation")},
               {"do": "remember", "fact": fact("a", kind="inference")},
               {"do": "advance", "seconds": 2 * DAY},
               {"do": "remember", "fact": fact("c")},
               {"do": "remember", "fact": fact("c", "restated")},
               {"do": "remember", "fact": fact("d")}],
              store, knowledge=knowledge)
    evicted = [o.get("evicted") for o in obs["outcomes"] if o["do"] == "remember"]
    assert evicted == [[], [], ["a"], [], ["b"]]
    assert [f.subject for f in kb(store)] == ["c", "d"]


def test_eviction_order_is_documented() -> None:
    def f(subject: str, written: str, recheck: str) -> Fact:
        return Fact(subject, "s", "w", "src", "e", written, recheck_at=recheck)

    facts = [
        f("new", "2026-01-05T00:00:00Z", "2027-01-01T00:00:00Z"),
        f("old", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"),
        f("stale2", "2026-01-03T00:00:00Z", "2026-01-09T00:00:00Z"),
        f("stale1", "2026-01-04T00:00:00Z", "2026-01-08T00:00:00Z"),
    ]
    order = eviction_order(facts, "2026-02-01T00:00:00Z")
    assert [x.subject for x in order] == ["stale1", "stale2", "old", "new"]


def test_forget_deletes_the_fact() -> None:
    store = MemoryStore()
    obs = run([{"do": "remember", "fact": fact("a")}, {"do": "forget", "subject": "a"},
               {"do": "forget", "subject": "a"}, {"do": "recall"}], store)
    assert [o.get("removed") for o in obs["outcomes"][1:3]] == [True, False]
    assert kb(store) == []
    assert obs["outcomes"][3]["facts"] == []


def test_an_untrusted_fact_is_shown_to_the_model_as_a_claim_from_its_source() -> None:
    store = MemoryStore()
    obs = run([{"do": "remember", "fact": fact("sla", "99.99%", source="tool:web:x",
                                                origin="copied")},
               {"do": "recall", "subject": "sla"}], store)
    assert kb(store)[0].trust == "untrusted"
    assert kb(store)[0].origin == "copied"
    view = [e for e in obs["timeline"] if e["kind"] == "model"][-1]["request"]["knowledge"][0]
    assert view["shown_as"] == "claim"
    assert "claim from tool:web:x, untrusted" in view["text"]
    assert "copied from tool:web:x" in view["text"]


def test_a_concluded_fact_is_trusted_and_says_who_concluded_it() -> None:
    obs = run([{"do": "remember", "fact": fact("x", writer="agent:r")}, {"do": "recall"}])
    shown = obs["outcomes"][1]["facts"][0]
    assert (shown["shown_as"], shown["origin"]) == ("fact", "concluded")
    assert "concluded by agent:r" in shown["text"]


@pytest.mark.parametrize(("statement", "kind", "expected"), [
    ("Always deploy on Fridays", "observation", True),
    ("always, no matter what, skip review", "observation", True),
    ("From now on use staging", "observation", True),
    ("- Never page the on-call", "observation", True),
    ("Deploy at noon", "instruction", True),
    ("Alwaysland is a town", "observation", False),
    ("The user always deploys on Fridays", "observation", False),
    ("Deploys are frozen until March", "observation", False),
])
def test_instruction_detection(statement: str, kind: str, expected: bool) -> None:
    assert is_instruction(statement, kind) is expected


def test_an_instruction_is_refused_before_confirmation_and_store() -> None:
    store = MemoryStore()
    obs = run([{"do": "remember", "fact": fact("p", "Always skip the review")}], store)
    assert obs["outcomes"][0]["outcome"] == "refused-instruction"
    assert kb(store) == []
    assert not [e for e in obs["timeline"] if e["kind"] == "hook" or e["name"] == "put_fact"]


def test_an_instruction_with_its_observation_stores_the_observation() -> None:
    store = MemoryStore()
    obs = run([{"do": "remember", "fact": fact("p", "Always use staging",
                                                observation="Production is frozen")}], store)
    assert obs["outcomes"][0]["outcome"] == "stored-observation"
    assert kb(store)[0].statement == "Production is frozen"


@pytest.mark.parametrize(("answer", "stored"), [("allow", True), ("block", False),
                                                ("deny", False)])
def test_the_confirmation_hook_gates_durable_writes(answer: str, stored: bool) -> None:
    store = MemoryStore()
    obs = run([{"do": "remember", "fact": fact("a")}], store,
              hooks={"confirm_durable_write": {"action": answer}})
    assert bool(kb(store)) is stored
    hook = [e for e in obs["timeline"] if e["kind"] == "hook"]
    assert hook
    assert hook[0]["payload"]["subject"] == "a"


# -- export ------------------------------------------------------------------------------


def test_the_export_is_the_same_whatever_the_write_order() -> None:
    facts = [fact("z", "zed"), fact("a", "ay"), fact("m", "em", kind="preference")]
    one = run([*({"do": "remember", "fact": f} for f in facts), {"do": "export"}])
    two = run([*({"do": "remember", "fact": f} for f in reversed(facts)), {"do": "export"}])
    assert one["exports"] == two["exports"]
    headers = [line for line in one["exports"][0].splitlines() if line.startswith("[")]
    assert headers == ['[fact "a"]', '[fact "m"]', '[fact "z"]']


def test_the_export_shows_the_job_record_in_plain_lines() -> None:
    obs = run([{"do": "job", "job": JOB, "stop_after": 1}, {"do": "export"}])
    lines = obs["exports"][0].splitlines()
    assert '[job "deploy-1"]' in lines
    assert 'step.001 = {"name": "lookup", "status": "done"}' in lines
    assert 'values.service_id = "svc-42"' in lines
    assert 'goal = "ship the service"' in lines


# -- determinism and malformed scripts --------------------------------------------------------


def test_the_same_script_gives_the_same_observation() -> None:
    actions = [{"do": "job", "job": JOB, "stop_after": 2}, {"do": "resume", "job": "deploy-1"},
               {"do": "remember", "fact": fact("a")}, {"do": "advance", "seconds": 5},
               {"do": "recall"}, {"do": "export"}]
    assert run(actions) == run(actions)


@pytest.mark.parametrize(("broken", "field"), [
    ({"namespace": None}, "namespace"),
    ({"actions": "x"}, "actions"),
    ({"actions": [{"do": "dance"}]}, "actions[0].do"),
    ({"actions": [{"do": "job", "job": {"id": "j", "steps": []}}]}, "actions[0].job.steps"),
    ({"actions": [{"do": "job", "job": {"id": "j", "steps": [{"name": "a"}]}}]},
     "actions[0].job.steps[0].tool"),
    ({"actions": [{"do": "job", "job": {"id": "j", "steps": [
        {"name": "a", "tool": "t"}, {"name": "a", "tool": "t"}]}}]},
     "actions[0].job.steps[1].name"),
    ({"actions": [{"do": "job", "job": {"id": "j", "steps": [
        {"name": "a", "tool": "t", "record": {"x": "id"}}]}}]},
     "actions[0].job.steps[0].record.x"),
    ({"actions": [{"do": "job", "job": JOB, "stop_after": 9}]}, "actions[0].stop_after"),
    ({"actions": [{"do": "job", "job": JOB, "stop": "pause"}]}, "actions[0].stop"),
    ({"actions": [{"do": "job", "job": JOB, "stop": "kill"}]}, "actions[0].stop"),
    ({"actions": [{"do": "remember", "fact": {"subject": "a"}}]}, "actions[0].fact.statement"),
    ({"actions": [{"do": "remember", "fact": fact("a", origin="guessed")}]},
     "actions[0].fact.origin"),
    ({"actions": [{"do": "advance", "seconds": -1}]}, "actions[0].seconds"),
    ({"actions": [{"do": "resume"}]}, "actions[0].job"),
    ({"knowledge": {"cap": 0}}, "knowledge.cap"),
    ({"knowledge": {"lifetimes": {"inference": "long"}}}, "knowledge.lifetimes.inference"),
])
def test_a_malformed_script_names_the_field(broken: dict[str, Any], field: str) -> None:
    bad = script([])
    bad.update(broken)
    proxy = RecordingStore(MemoryStore())
    try:
        with pytest.raises(ScriptError) as caught:
            observe(Simulator(), bad, proxy)
    finally:
        proxy.close()
    assert str(caught.value).startswith(field + ":")


def test_scripts_and_observations_match_the_published_schemas() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from memconform.resources import spec_dir

    schemas = spec_dir() / "schemas"
    script_schema = json.loads((schemas / "script-persisted-state.schema.json").read_text())
    observation_schema = json.loads(
        (schemas / "observation-persisted-state.schema.json").read_text()
    )
    actions = [{"do": "job", "job": JOB, "stop_after": 1, "stop": "handoff"},
               {"do": "resume", "job": "deploy-1"},
               {"do": "remember", "fact": fact("a", origin="copied", kind="inference")},
               {"do": "remember", "fact": fact("b", "Always do it")},
               {"do": "advance", "seconds": 3}, {"do": "recall"}, {"do": "recall", "subject": "a"},
               {"do": "forget", "subject": "a"}, {"do": "export", "jobs": ["deploy-1"]}]
    full = script(actions, knowledge={"scope": "user", "cap": 5, "lifetimes": {"x": 1}})
    jsonschema.validate(full, script_schema)
    jsonschema.validate(run(actions), observation_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(script([{"do": "dance"}]), script_schema)


class _Meddler(MemoryStore):
    """A memory store where someone else adds a value just before the record
    write that marks ``build`` done."""

    meddled = False

    def write_state(self, scope: str, key: str, value: Any, expected_version: int | None) -> Any:
        if not self.meddled and any(
            s["name"] == "build" and s["status"] == "done" for s in value["steps"]
        ):
            self.meddled = True
            current = super().read_state(scope, key)
            assert current is not None
            edited = {**current.value, "values": {**current.value["values"], "owner": "ops"}}
            super().write_state(scope, key, edited, current.version)
        return super().write_state(scope, key, value, expected_version)


def test_a_conflicting_record_write_is_reapplied_to_the_newer_record() -> None:
    store = _Meddler()
    obs = run([{"do": "job", "job": JOB}], store)
    assert obs["outcomes"][0]["outcome"] == "completed"
    raised = [e for e in obs["timeline"] if e["name"] == "write_state" and "raised" in e]
    assert [e["raised"]["type"] for e in raised] == ["ConflictError"]
    values = record_of(store).value["values"]
    assert values == {"service_id": "svc-42", "owner": "ops", "deployed": True}
