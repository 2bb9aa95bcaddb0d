"""The reference package of the candidates profile (document 003), tested directly."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import jsonschema
import pytest

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import ScriptError
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import observe
from memconform.resources import spec_dir
from memconform.simulator.candidates import (
    DEFAULT_SUMMARY_THRESHOLD,
    load_memory,
    parse_decision,
    render_commander_prompt,
)
from memconform.simulator.runtime import Simulator

HELLO = '{"say":"Hello!","action":{}}'


def run(script: dict[str, Any]) -> dict[str, Any]:
    """Execute ``script`` on a fresh simulator and store; return the observation."""
    store = RecordingStore(MemoryStore())
    try:
        return observe(Simulator(), {"profile": "candidates", **script}, store)
    finally:
        store.close()


def request(
    rid: str, instruction: str = "Say hello.", n: int = 1, memory: Any = None, **extra: Any
) -> dict[str, Any]:
    item: dict[str, Any] = {"input_id": extra.pop("input_id", "ep-1"), "instruction": instruction,
                            "candidates": n, **extra}
    if "memory_from" not in item:
        item["memory"] = memory
    return {"id": rid, "inputs": [item]}


def replies(*texts: str) -> list[dict[str, Any]]:
    return [{"reply": t} for t in texts]


def answers(obs: dict[str, Any], r: int = 0, i: int = 0) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = obs["responses"][r]["inputs"][i]["candidates"]
    return result


def model_calls(obs: dict[str, Any], component: str) -> list[dict[str, Any]]:
    return [e for e in obs["timeline"] if e["kind"] == "model" and e["name"] == component]


def sized_memory(length: int, instruction: str) -> dict[str, Any]:
    """A one-exchange history whose commander prompt has exactly ``length`` characters."""
    def memory(pad: int) -> dict[str, Any]:
        return {"history": [{"role": "user", "content": "x" * pad},
                            {"role": "assistant", "content": "ok"}]}

    base = len(render_commander_prompt(memory(0), instruction).text)
    return memory(length - base)


# -- prompts, memory and decisions ------------------------------------------------------


def test_the_commander_prompt_of_the_documents_example() -> None:
    prompt = render_commander_prompt({}, "Say hello.")
    assert prompt.text == "user: Say hello.\nassistant:"
    assert prompt.elements == {"messages": [{"role": "user", "content": "Say hello."}]}


def test_the_commander_prompt_with_tools_attributes_and_summary() -> None:
    memory = {"summary": "Earlier talk.", "history": [{"role": "user", "content": "hi"}]}
    prompt = render_commander_prompt(memory, "Go.", ["search", "book"], {"lang": "en", "a": 1})
    assert prompt.text == (
        'tools: search, book\nattributes: {"a":1,"lang":"en"}\nsummary: Earlier talk.\n'
        "user: hi\nuser: Go.\nassistant:"
    )
    assert prompt.elements == {
        "tools": ["search", "book"],
        "attributes": {"lang": "en", "a": 1},
        "summary": "Earlier talk.",
        "messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "Go."}],
    }


def test_load_memory_normalises_and_copies() -> None:
    raw = {"history": [{"role": "user", "content": "hi"}], "extra": {"a": [1]}}
    memory = load_memory(raw)
    assert memory == {**raw, "summary": None, "memory_list": []}
    memory["extra"]["a"].append(2)
    assert raw["extra"] == {"a": [1]}
    assert load_memory(None) == {"history": [], "summary": None, "memory_list": []}


def test_parse_decision() -> None:
    assert parse_decision(HELLO) == {"say": "Hello!", "action": {}}
    assert parse_decision("plain words") == {"say": "plain words", "action": {}}
    assert parse_decision("[1, 2]") == {"say": "[1, 2]", "action": {}}


# -- the summary threshold ---------------------------------------------------------------


@pytest.mark.parametrize(("length", "summarized"), [(4999, False), (5000, False), (5001, True)])
def test_default_threshold_is_strict(length: int, summarized: bool) -> None:
    assert DEFAULT_SUMMARY_THRESHOLD == 5000
    obs = run({
        "requests": [request("r1", "Plan.", memory=sized_memory(length, "Plan."))],
        "model": {"summarizer": replies("S"), "commander": replies("Done.")},
    })
    assert len(model_calls(obs, "summarizer")) == int(summarized)
    (answer,) = answers(obs)
    assert answer["status"] == "ok"
    if summarized:
        assert answer["memory"]["summary"] == "S"
        prompt = model_calls(obs, "commander")[0]["request"]["prompt"]
        assert prompt == "summary: S\nuser: Plan.\nassistant:"
    else:
        assert len(model_calls(obs, "commander")[0]["request"]["prompt"]) == length


def test_empty_history_over_the_threshold_is_not_summarized() -> None:
    instruction = "y" * 6000
    obs = run({
        "requests": [request("r1", instruction, memory={"summary": "old"})],
        "model": {"summarizer": replies("never"), "commander": replies("Fine.")},
    })
    assert model_calls(obs, "summarizer") == []
    (answer,) = answers(obs)
    assert answer["status"] == "ok"
    assert answer["memory"]["summary"] == "old"
    assert len(model_calls(obs, "commander")[0]["request"]["prompt"]) > DEFAULT_SUMMARY_THRESHOLD


def test_summarizer_never_sees_the_instruction_and_history_is_cleared() -> None:
    memory = {"summary": "Earlier.", "history": [{"role": "user", "content": "a" * 50},
                                                 {"role": "assistant", "content": "b"}]}
    obs = run({
        "package": {"summary_threshold": 40},
        "requests": [request("r1", "SECRET-INSTRUCTION", memory=memory)],
        "model": {"summarizer": replies("New."), "commander": replies("Ok.")},
    })
    (call,) = model_calls(obs, "summarizer")
    assert "SECRET-INSTRUCTION" not in json.dumps(call["request"])
    assert call["request"]["input_elements"] == {
        "previous_summary": "Earlier.", "messages": memory["history"],
    }
    (answer,) = answers(obs)
    assert answer["memory"]["summary"] == "New."
    assert answer["memory"]["history"] == [
        {"role": "user", "content": "SECRET-INSTRUCTION"}, {"role": "assistant", "content": "Ok."},
    ]


@pytest.mark.parametrize("step", [{"fail": {"type": "Down", "message": "no model"}},
                                  {"reply": ""}, {"reply": "  \n "}])
def test_failed_summary_fails_every_candidate_without_the_commander(step: dict[str, Any]) -> None:
    obs = run({
        "package": {"summary_threshold": 10},
        "requests": [request("r1", "Go.", n=3, memory=sized_memory(50, "Go."))],
        "model": {"summarizer": [step], "commander": replies("a", "b", "c")},
    })
    assert model_calls(obs, "commander") == []
    got = answers(obs)
    assert len(got) == 3
    for answer in got:
        assert answer["status"] == "error"
        assert answer["error"]["kind"] == "summary-failed"
        assert "memory" not in answer
        assert "decision" not in answer
        (record,) = answer["internal_steps"]
        assert record["id"] == "step-0"
        assert record["component"] == "summarizer"
        assert record["error"]["message"]
    assert got[0]["internal_steps"] == got[2]["internal_steps"]


def test_commander_failure_fails_that_candidate_alone() -> None:
    obs = run({
        "package": {"summary_threshold": 10},
        "requests": [request("r1", "Go.", n=3, memory=sized_memory(50, "Go."))],
        "model": {
            "summarizer": replies("Sum."),
            "commander": [{"reply": "a"}, {"fail": {"type": "Down", "message": "lost"}},
                          {"reply": "c"}],
        },
    })
    assert len(model_calls(obs, "summarizer")) == 1
    ok0, failed, ok2 = answers(obs)
    assert [ok0["status"], failed["status"], ok2["status"]] == ["ok", "error", "ok"]
    assert failed["error"] == {"kind": "commander-failed", "component": "commander",
                               "type": "Down", "message": "lost"}
    assert [s["component"] for s in failed["internal_steps"]] == ["summarizer", "commander"]
    assert [s["id"] for s in failed["internal_steps"]] == ["step-0", "step-1"]
    assert failed["internal_steps"][1]["output_raw"] is None
    assert failed["internal_steps"][1]["full_prompt"] == "summary: Sum.\nuser: Go.\nassistant:"
    assert ok0["memory"]["summary"] == ok2["memory"]["summary"] == "Sum."
    assert ok0["internal_steps"][0] == failed["internal_steps"][0] == ok2["internal_steps"][0]


# -- candidates, isolation and ordering -------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("order", ["request", "reverse"])
def test_one_answer_per_candidate_in_candidate_order(n: int, order: str) -> None:
    texts = [f"d{k}" for k in range(n)]
    obs = run({
        "package": {"order": order},
        "requests": [request("r1", n=n)],
        "model": {"commander": replies(*texts)},
    })
    got = answers(obs)
    assert len(got) == n
    by_candidate = {c["request"]["candidate"]: c["response"]["reply"]
                    for c in model_calls(obs, "commander")}
    assert [a["decision"]["say"] for a in got] == [by_candidate[k] for k in range(n)]
    expected = texts if order == "request" else texts[::-1]
    assert [a["decision"]["say"] for a in got] == expected


def test_inputs_of_a_request_are_answered_in_input_order() -> None:
    items = [{"input_id": name, "instruction": "Hi.", "memory": {}} for name in ("a", "b", "c")]
    obs = run({
        "package": {"order": "reverse"},
        "requests": [{"id": "r1", "inputs": items}],
        "model": {"commander": replies("to-c", "to-b", "to-a")},
    })
    inputs = obs["responses"][0]["inputs"]
    assert [i["input_id"] for i in inputs] == ["a", "b", "c"]
    assert [i["candidates"][0]["decision"]["say"] for i in inputs] == ["to-a", "to-b", "to-c"]


def test_candidate_memories_are_independent() -> None:
    supplied = {"history": [{"role": "user", "content": "hi"}], "persona": {"tags": ["x"]}}
    script = {
        "requests": [request("r1", "Go.", n=2, memory=supplied)],
        "model": {"commander": replies("A", "B")},
    }
    before = copy.deepcopy(script)
    obs = run(script)
    first, second = answers(obs)
    assert first["memory"]["history"][-1]["content"] == "A"
    assert second["memory"]["history"][-1]["content"] == "B"
    assert "A" not in json.dumps(second["memory"])
    second_before = copy.deepcopy(second["memory"])
    first["memory"]["history"].append({"role": "user", "content": "mutated"})
    first["memory"]["persona"]["tags"].append("mutated")
    assert second["memory"] == second_before
    assert script == before


def test_reused_input_ids_take_history_from_the_supplied_memory_only() -> None:
    obs = run({
        "requests": [
            request("r1", "One.", memory={"history": [{"role": "user", "content": "topic A"}]}),
            request("r2", "Two.", memory={"history": [{"role": "user", "content": "topic B"}]}),
            request("r3", "Three.", memory={}),
        ],
        "model": {"commander": replies("a", "b", "c")},
    })
    prompts = [c["request"]["prompt"] for c in model_calls(obs, "commander")]
    assert prompts == [
        "user: topic A\nuser: One.\nassistant:",
        "user: topic B\nuser: Two.\nassistant:",
        "user: Three.\nassistant:",
    ]


def test_branches_continue_from_their_own_memory() -> None:
    obs = run({
        "requests": [
            request("r1", "Pick.", n=2, memory={}),
            request("r2", "Why?", memory_from={"request": "r1", "candidate": 1}),
            request("r3", "Why?", memory_from={"request": "r1", "candidate": 0}),
        ],
        "model": {"commander": replies("Blue", "Green", "g", "b")},
    })
    prompts = [c["request"]["prompt"] for c in model_calls(obs, "commander")]
    assert prompts[2] == "user: Pick.\nassistant: Green\nuser: Why?\nassistant:"
    assert prompts[3] == "user: Pick.\nassistant: Blue\nuser: Why?\nassistant:"
    assert answers(obs, 0)[1]["memory"]["history"][-1]["content"] == "Green"


def test_a_new_execution_resumes_from_the_returned_memory_alone() -> None:
    long_memory = sized_memory(120, "Say hello.")
    first = run({
        "package": {"summary_threshold": 100},
        "requests": [request("r1", memory=long_memory),
                     request("r2", "Next?", memory_from={"request": "r1", "candidate": 0}),
                     request("r3", "Next?", memory_from={"request": "r1", "candidate": 0})],
        "model": {"summarizer": replies("Sum."), "commander": replies(HELLO, "n", "n")},
    })
    same, fresh = model_calls(first, "commander")[1:]
    assert same["request"]["prompt"] == fresh["request"]["prompt"]
    assert answers(first, 1) == answers(first, 2)
    returned = answers(first, 0)[0]["memory"]
    # A separate execution (new environment, new package) given only that memory.
    second = run({
        "package": {"summary_threshold": 100},
        "requests": [request("x", "Next?", memory=returned)],
        "model": {"commander": replies("n")},
    })
    assert model_calls(second, "commander")[0]["request"]["prompt"] == same["request"]["prompt"]
    assert answers(second)[0]["memory"] == answers(first, 1)[0]["memory"]


# -- memory schema ------------------------------------------------------------------------


def test_unknown_keys_are_preserved_in_every_candidate() -> None:
    extra = {"persona": {"name": "Ada"}, "plan": [1, 2]}
    obs = run({
        "requests": [request("r1", n=2, memory={**extra, "memory_list": ["note"]})],
        "model": {"commander": replies("a", "b")},
    })
    for answer in answers(obs):
        assert answer["memory"]["persona"] == extra["persona"]
        assert answer["memory"]["plan"] == extra["plan"]
        assert answer["memory"]["memory_list"] == ["note"]


@pytest.mark.parametrize(("memory", "key"), [
    ({"history": "text"}, "history"),
    ([1, 2], "memory"),
    ("just text", "memory"),
    ({"history": [{"role": "user", "content": 3}]}, "history[0]"),
    ({"summary": ["x"]}, "summary"),
    ({"memory_list": "x"}, "memory_list"),
])
def test_incompatible_memory_is_reported_for_that_input(memory: Any, key: str) -> None:
    obs = run({
        "requests": [{"id": "r1", "inputs": [
            {"input_id": "bad", "instruction": "Go.", "candidates": 2, "memory": memory},
            {"input_id": "good", "instruction": "Go.", "memory": {}},
        ]}],
        "model": {"commander": replies("fine")},
    })
    bad, good = obs["responses"][0]["inputs"]
    assert [a["error"]["kind"] for a in bad["candidates"]] == ["incompatible-memory"] * 2
    assert {a["error"]["key"] for a in bad["candidates"]} == {key}
    assert all("memory" not in a for a in bad["candidates"])
    assert good["candidates"][0]["decision"]["say"] == "fine"
    assert [c["request"]["input_id"] for c in model_calls(obs, "commander")] == ["good"]


# -- internal steps -------------------------------------------------------------------------


def test_golden_internal_step() -> None:
    obs = run({"requests": [request("r1")], "model": {"commander": replies(HELLO)}})
    assert answers(obs)[0]["internal_steps"] == [{
        "id": "step-0",
        "component": "commander",
        "origin": "model",
        "full_prompt": "user: Say hello.\nassistant:",
        "input_elements": {"messages": [{"role": "user", "content": "Say hello."}]},
        "output_raw": HELLO,
    }]


def test_coached_calls_reach_no_model_and_are_marked() -> None:
    obs = run({
        "package": {"summary_threshold": 10},
        "requests": [request("r1", "Go.", n=2, memory=sized_memory(40, "Go."), coaching=[
            {"component": "summarizer", "output": "Coached sum."},
            {"component": "commander", "candidate": 0, "output": "coached"},
        ])],
        "model": {"commander": replies("sampled")},
    })
    first, second = answers(obs)
    assert [s["origin"] for s in first["internal_steps"]] == ["coaching", "coaching"]
    assert [s["origin"] for s in second["internal_steps"]] == ["coaching", "model"]
    assert first["memory"]["summary"] == "Coached sum."
    assert model_calls(obs, "summarizer") == []
    assert len(model_calls(obs, "commander")) == 1
    events = [e for e in obs["timeline"] if e["kind"] == "event" and e["name"] == "coaching"]
    assert [(e["component"], e["candidate"]) for e in events] == [("summarizer", None),
                                                                    ("commander", 0)]


# -- determinism, schemas, malformed scripts ------------------------------------------------------


def _sample_script() -> dict[str, Any]:
    return {
        "package": {"summary_threshold": 30, "order": "reverse"},
        "requests": [request("r1", "Go.", n=3, memory=sized_memory(60, "Go."), tools=["t"],
                             attributes={"lang": "en"}),
                     request("r2", "More.", memory_from={"request": "r1", "candidate": 2})],
        "model": {"summarizer": replies("S1", "S2"),
                  "commander": [{"reply": "a"}, {"fail": {"message": "x"}}, {"reply": HELLO},
                                {"reply": "d"}]},
    }


def test_execution_is_deterministic() -> None:
    assert run(_sample_script()) == run(_sample_script())


def test_scripts_and_observations_match_the_published_schemas() -> None:
    schemas = spec_dir() / "schemas"
    script_schema = json.loads((schemas / "script-candidates.schema.json").read_text("utf-8"))
    obs_schema = json.loads((schemas / "observation-candidates.schema.json").read_text("utf-8"))
    script = {"profile": "candidates", **_sample_script()}
    jsonschema.validate(script, script_schema)
    jsonschema.validate(run(_sample_script()), obs_schema)


@pytest.mark.parametrize(("patch", "field"), [
    ({"requests": []}, "requests"),
    ({"requests": [{"id": "r1", "inputs": [{"instruction": "x"}]}]},
     "requests[0].inputs[0].input_id"),
    ({"requests": [{"id": "r1", "inputs": [{"input_id": "a"}]}]},
     "requests[0].inputs[0].instruction"),
    ({"requests": [request("r1", n=0)]}, "requests[0].inputs[0].candidates"),
    ({"requests": [request("r1"), request("r1")]}, "requests[1].id"),
    ({"requests": [request("r1", memory_from={"request": "r9", "candidate": 0})]},
     "requests[0].inputs[0].memory_from.request"),
    ({"requests": [request("r1"), request("r2", memory_from={"request": "r1", "candidate": 4})]},
     "requests[1].inputs[0].memory_from.candidate"),
    ({"requests": [{"id": "r1", "inputs": [{"input_id": "a", "instruction": "x", "memory": {},
                                            "memory_from": {"request": "r0", "candidate": 0}}]}]},
     "requests[0].inputs[0].memory_from"),
    ({"package": {"summary_threshold": -1}}, "package.summary_threshold"),
    ({"package": {"order": "random"}}, "package.order"),
    ({"package": {"budget": 3}}, "package.budget"),
    ({"requests": [request("r1", coaching=[{"component": "planner", "output": "x"}])]},
     "requests[0].inputs[0].coaching[0].component"),
    ({"requests": [{"id": "r1", "inputs": [{"input_id": "a", "instruction": "x", "colour": 1}]}]},
     "requests[0].inputs[0].colour"),
])
def test_malformed_scripts_name_the_field(patch: dict[str, Any], field: str) -> None:
    script = {"requests": [request("r1")], "model": {"commander": replies("a", "b")}, **patch}
    with pytest.raises(ScriptError, match=rf"^{re.escape(field)}\b"):
        run(script)


def test_continuing_a_failed_candidate_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="returned no memory"):
        run({
            "requests": [request("r1"),
                         request("r2", memory_from={"request": "r1", "candidate": 0})],
            "model": {"commander": [{"fail": {"message": "down"}}]},
        })



def test_the_script_asks_for_no_fresh_instance() -> None:
    """A fresh instance is the kit's business (a fresh process), not the script's."""
    with pytest.raises(ScriptError, match=r"requests\[0\]\.fresh_instance: unknown field"):
        run({"requests": [{**request("r1"), "fresh_instance": True}],
             "model": {"commander": replies(HELLO)}})
