"""The reference runtime of document 002 (``memconform.simulator.turns``) on its own:
outcomes, openings and kinds, windows, records, ids, state, malformed scripts,
the published schemas and determinism."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import IdSource, ScriptError
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import observe
from memconform.simulator.runtime import Simulator
from memconform.simulator.turns import ConfigurationError, context_size
from memconform.steps.turns_script import (
    CHILD_USAGE,
    ROOT_USAGE,
    STEP_OUTCOMES,
    TurnsScript,
    lifetime_script,
)
from memconform.values import JSONValue

SCHEMAS = Path(__file__).resolve().parent.parent / "spec" / "schemas"
UNFINISHED = ("failed", "cut", "stopped", "truncated")


_OPEN: list[RecordingStore] = []


@pytest.fixture(autouse=True)
def _close_proxies() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _run(script: TurnsScript | dict[str, Any], store: Any = None) -> tuple[dict[str, Any],
                                                                           RecordingStore]:
    """Observe ``script`` on the simulator over a fresh (or the given) store; the
    proxy stays open for reading until the test ends."""
    proxy = RecordingStore(store if store is not None else MemoryStore())
    _OPEN.append(proxy)
    data = script.to_json() if isinstance(script, TurnsScript) else script
    return observe(Simulator(), data, proxy), proxy


def _roles(proxy: RecordingStore, thread: str = "t") -> list[str]:
    return [m.role for m in proxy.messages(thread)]


def _expected_roles(kind: str, opening: str, outcome: str) -> list[str]:
    if kind == "child":
        return ["user", "assistant"]  # the completed parent's messages only
    roles = []
    if opening == "envelope" and outcome != "refused":
        roles.append("user")
    if outcome == "completed":
        roles.append("assistant")
    return roles


# -- outcome x opening x kind ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["root", "child"])
@pytest.mark.parametrize("opening", ["envelope", "brief"])
@pytest.mark.parametrize("outcome", STEP_OUTCOMES)
def test_what_a_turn_stores(kind: str, opening: str, outcome: str) -> None:
    script = TurnsScript("t")
    if kind == "root":
        script.turn(opening=opening, text="hi", outcome=outcome)
    else:
        script.turn(text="parent", children=[{"opening": opening, "outcome": outcome}])
    observation, proxy = _run(script)

    assert _roles(proxy) == _expected_roles(kind, opening, outcome)
    turns = {t["turn_id"]: t for t in observation["turns"]}
    subject = turns["T1"] if kind == "root" else turns["T2"]
    assert subject["outcome"] == outcome
    assert subject["kind"] == kind
    assert subject["opening"] == opening
    records = proxy.records("t")
    assert sorted((r.turn_id, r.outcome) for r in records) == sorted(
        (t["turn_id"], t["outcome"]) for t in observation["turns"]
    )
    outputs = [e for e in observation["events"]
               if e["name"] == "turn.output" and e["turn_id"] == subject["turn_id"]]
    if outcome in UNFINISHED:
        assert any(e["text"].startswith("partial") for e in outputs)
    if outcome == "refused":
        assert outputs == []
        record = next(r for r in records if r.turn_id == subject["turn_id"])
        assert record.metadata["refused_at"] == "admission"
        assert record.steps_used == 0


def test_completed_root_stores_final_text_and_payload_parts() -> None:
    script = TurnsScript("t")
    script.turn(text="chart", payload={"kind": "chart"},
                calls=[{"id": "c", "name": "lookup", "args": {}}])
    _, proxy = _run(script)
    user, answer = proxy.messages("t")
    assert (user.role, user.text, user.turn_id) == ("user", "chart", "T1")
    assert answer.text == "answer to chart"
    assert answer.parts == ({"type": "payload", "payload": {"kind": "chart"}},)


def test_user_message_is_appended_before_the_first_model_call() -> None:
    script = TurnsScript("t")
    script.turn(text="hi")
    observation, _ = _run(script)
    kinds = [(e["kind"], e["name"]) for e in observation["timeline"]
             if e["kind"] in ("store", "model")]
    assert kinds.index(("store", "append")) < kinds.index(("model", "primary"))


def test_fit_check_refuses_after_storing_the_user_message() -> None:
    script = TurnsScript("t")
    script.config["context_budget"] = 5
    script.turn(text="far too long for five")
    observation, proxy = _run(script)
    assert _roles(proxy) == ["user"]
    assert not [e for e in observation["timeline"] if e["kind"] == "model"]
    record = proxy.records("t")[0]
    assert (record.outcome, record.metadata["refused_at"]) == ("refused", "fit-check")


def test_context_size_counts_brief_history_and_state() -> None:
    view = {"brief": "abc", "history": [{"role": "user", "text": "de"}],
            "state": [{"block": "b", "value": {"k": 1}}]}
    assert context_size(view) == 3 + 2 + len('{"k":1}')


# -- windows ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("window", "shown"),
    [(0, 0), (1, 1), (None, 6), (6, 6), (7, 7), (50, 9)],
    ids=["zero", "one", "default", "six", "seven", "larger-than-history"],
)
def test_history_window_selects_messages(window: int | None, shown: int) -> None:
    script = TurnsScript("t")
    if window is not None:
        script.config["history_window"] = window
    for n in range(5):
        script.turn(text=f"q{n}")
    observation, _ = _run(script)
    last = next(v for v in observation["views"] if v["turn_id"] == "T5")
    assert len(last["history"]) == shown
    if shown:
        assert last["history"][-1] == {"role": "user", "text": "q4"}  # the current message
        assert last["brief"] == "q4"


def test_window_renders_role_and_text_only() -> None:
    script = TurnsScript("t")
    script.turn(text="a", parts=[{"type": "image"}], payload={"p": 1})
    script.turn(text="b")
    observation, _ = _run(script)
    for view in observation["views"]:
        assert all(set(h) == {"role", "text"} for h in view["history"])


def test_negative_window_is_rejected_before_anything_happens() -> None:
    script = TurnsScript("t")
    script.config["history_window"] = -2
    script.turn(text="a")
    proxy = RecordingStore(MemoryStore())
    _OPEN.append(proxy)
    with pytest.raises(ConfigurationError, match=r"config\.history_window"):
        observe(Simulator(), script.to_json(), proxy)
    assert len(proxy.timeline) == 0


# -- fresh turns, tiers, continuesFrom ------------------------------------------------------


def test_each_turn_starts_with_an_empty_transcript_and_the_first_tier() -> None:
    script = TurnsScript("t")
    script.config["tiers"] = ["a", "b"]
    script.turn(text="x", failing_tiers=1, calls=[{"id": "c", "name": "lookup", "args": {}}])
    script.turn(text="y", continues_from=0)
    observation, proxy = _run(script)
    first_t2 = next(v for v in observation["views"] if v["turn_id"] == "T2")
    assert first_t2["transcript"] == []
    assert first_t2["tier"] == "a"
    t1, t2 = proxy.records("t")
    assert t1.tier == "b"
    assert [f["tier"] for f in t1.fallbacks] == ["a"]  # type: ignore[index]
    assert (t2.continues_from, t2.tier, t2.fallbacks) == ("T1", "a", ())


def test_failed_turn_records_every_tier_it_fell_back_from() -> None:
    script = TurnsScript("t")
    script.config["tiers"] = ["a", "b", "c"]
    script.turn(text="x", outcome="failed")
    _, proxy = _run(script)
    record = proxy.records("t")[0]
    assert record.outcome == "failed"
    assert [f["tier"] for f in record.fallbacks] == ["a", "b", "c"]  # type: ignore[index]
    assert record.tier == "a"  # the last tier that answered (step 1)


# -- records -----------------------------------------------------------------------------


def test_child_usage_stays_on_the_child_record() -> None:
    script = TurnsScript("t")
    script.turn(text="p", children=[{"outcome": "completed"}, {"outcome": "failed"}])
    _, proxy = _run(script)
    records = {r.turn_id: r for r in proxy.records("t")}
    assert dict(records["T1"].usage) == {k: 2 * v for k, v in ROOT_USAGE.items()}
    assert dict(records["T2"].usage) == CHILD_USAGE
    assert records["T2"].parent_turn_id == "T1"
    assert records["T3"].parent_turn_id == "T1"
    assert records["T1"].metadata["children"] == ["T2", "T3"]


def test_record_timing_comes_from_the_injected_clock() -> None:
    script = TurnsScript("t")
    script.config["step_seconds"] = 2.5
    script.turn(text="x", calls=[{"id": "c", "name": "lookup", "args": {}}])
    data = script.to_json()
    data["clock"] = "2030-05-01T12:00:00Z"
    _, proxy = _run(data)
    assert dict(proxy.records("t")[0].timing) == {
        "started_at": "2030-05-01T12:00:00Z", "settled_at": "2030-05-01T12:00:05Z",
    }


def _run_lifetimes(script: TurnsScript) -> RecordingStore:
    """Run each lifetime of ``script`` as the kit does after a restart: a new
    runtime and environment (ids of that lifetime) on the same store; returns a
    proxy reading the store."""
    store, data = MemoryStore(), script.to_json()
    used: dict[str, dict[str, int]] = {"model": {}, "tool": {}}
    for number, (start, end) in enumerate(script.lifetimes(), start=1):
        proxy = RecordingStore(store)
        _OPEN.append(proxy)

        def ready(env: Any, number: int = number) -> None:
            env.ids = IdSource(number)

        observe(Simulator(), lifetime_script(data, start, end, used), proxy, ready)
        for entry in proxy.timeline:
            if entry.kind in used:
                used[entry.kind][entry.name] = used[entry.kind].get(entry.name, 0) + 1
    reader = RecordingStore(store)
    _OPEN.append(reader)
    return reader


def test_counter_ids_collide_after_a_restart() -> None:
    script = TurnsScript("t")
    script.turn(text="a")
    script.restart()
    script.turn(text="b")
    assert script.lifetimes() == [(0, 1), (1, 2)]
    assert "restart" not in json.dumps(script.to_json())
    proxy = _run_lifetimes(script)
    assert [r.turn_id for r in proxy.records("t")] == ["T1", "T1"]


@pytest.mark.parametrize("seed", [0, 7])
def test_uuid_ids_are_deterministic_and_unique(seed: int) -> None:
    def ids() -> list[str]:
        script = TurnsScript("t")
        script.config.update({"turn_ids": "uuid", "seed": seed})
        script.turn(text="a", children=[{}])
        script.restart()
        script.turn(text="b")
        proxy = _run_lifetimes(script)
        return [r.turn_id for r in proxy.records("t")]

    first = ids()
    assert first == ids()
    assert len(set(first)) == 3
    assert all(uuid.UUID(i).version == 5 for i in first)


def test_a_lifetime_script_takes_the_model_steps_left_and_reindexes_continues_from() -> None:
    script = TurnsScript("t")
    script.turn(text="a")
    script.restart()
    script.turn(text="b")
    script.turn(text="c", continues_from=1)
    part = lifetime_script(script.to_json(), 1, 3, {"model": {"primary": 1}})
    assert [t["envelope"]["text"] for t in part["turns"]] == ["b", "c"]
    assert part["turns"][1]["continues_from"] == 0
    assert [s["reply"] for s in part["model"]["primary"]] == ["answer to b", "answer to c"]
    with pytest.raises(ValueError, match="earlier lifetime"):
        lifetime_script({**script.to_json(), "turns": [
            *script.to_json()["turns"][:2], {"brief": "d", "continues_from": 0}]}, 1, 3, {})


def test_runtime_runs_without_optional_capabilities() -> None:
    class CoreOnly:
        def __init__(self) -> None:
            self.inner = MemoryStore()
            self.capabilities: frozenset[str] = frozenset()

        def append(self, thread_id: str, batch: Any) -> None:
            self.inner.append(thread_id, batch)

        def messages(self, thread_id: str, limit: int | None = None) -> Any:
            return self.inner.messages(thread_id, limit)

    script = TurnsScript("t")
    script.declare_block("plan", "string")
    update = {"id": "u", "name": "update_block", "args": {"block": "plan", "value": "x"}}
    script.turn(text="a", calls=[update])
    observation, proxy = _run(script, CoreOnly())
    assert _roles(proxy) == ["user", "assistant"]
    assert len(observation["records"]) == 1
    tool = next(e for e in observation["views"][1]["transcript"] if e["role"] == "tool")
    assert tool["result"]["error"] == "unsupported"


# -- state -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected_version", "stored"),
    [("ok", None, ("ok", 1)), (3, None, None), ("ok", 4, None)],
    ids=["valid", "wrong-type", "stale-version"],
)
def test_block_updates_are_validated(value: JSONValue, expected_version: int | None,
                                     stored: tuple[JSONValue, int] | None) -> None:
    script = TurnsScript("t")
    script.declare_block("plan", "string")
    args: dict[str, JSONValue] = {"block": "plan", "value": value}
    if expected_version is not None:
        args["expected_version"] = expected_version
    script.turn(text="a", calls=[{"id": "u", "name": "update_block", "args": args}])
    _, proxy = _run(script)
    entry = proxy.read_state("t", "plan")
    assert (None if entry is None else (entry.value, entry.version)) == stored


@pytest.mark.parametrize("outcome", UNFINISHED)
def test_state_updates_survive_an_unfinished_turn(outcome: str) -> None:
    script = TurnsScript("t")
    script.declare_block("plan", "string")
    update = {"id": "u", "name": "update_block", "args": {"block": "plan", "value": "kept"}}
    script.turn(text="a", outcome=outcome, calls=[update])
    _, proxy = _run(script)
    entry = proxy.read_state("t", "plan")
    assert entry is not None
    assert (entry.value, entry.version) == ("kept", 1)


def test_state_views_follow_the_agents_reads() -> None:
    script = TurnsScript("t")
    script.declare_block("a", "any")
    script.declare_block("b", "any")
    script.add_agent("reader", reads=["b"])
    script.turn(text="w", calls=[
        {"id": "1", "name": "update_block", "args": {"block": "a", "value": 1}},
        {"id": "2", "name": "update_block", "args": {"block": "b", "value": 2}},
    ])
    script.turn(text="r", agent="reader")
    observation, _ = _run(script)
    view = next(v for v in observation["views"] if v["turn_id"] == "T2")
    assert view["state"] == [{"block": "b", "value": 2}]


# -- malformed scripts ---------------------------------------------------------------------


def _base() -> dict[str, Any]:
    return {"profile": "turns", "thread": "t", "turns": [{"brief": "x"}],
            "model": {"primary": [{"reply": "ok"}]}}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: s.pop("thread"), "thread"),
        (lambda s: s.update(turns={}), "turns"),
        (lambda s: s["turns"].append({"envelope": {"text": "a"}, "brief": "b"}), "turns[1]"),
        (lambda s: s["turns"].append({}), "turns[1]"),
        (lambda s: s["turns"].append({"envelope": {}}), "turns[1].envelope.text"),
        (lambda s: s["turns"].append({"brief": "a", "agent": "ghost"}), "turns[1].agent"),
        (lambda s: s["turns"].append({"brief": "a", "grant": {"max_steps": 0}}),
         "turns[1].grant.max_steps"),
        (lambda s: s["turns"].append({"brief": "a", "continues_from": 5}),
         "turns[1].continues_from"),
        (lambda s: s["turns"].append({"brief": "a", "colour": "red"}), "turns[1].colour"),
        (lambda s: s["turns"].append({"restart": True}), "turns[1]"),
        (lambda s: s["turns"].append(
            {"brief": "a", "children": [{"brief": "b", "children": [{"brief": "c"}]}]}),
         "turns[1].children[0].children"),
        (lambda s: s.update(config={"history_window": "six"}), "config.history_window"),
        (lambda s: s.update(config={"turn_ids": "random"}), "config.turn_ids"),
        (lambda s: s.update(config={"tiers": []}), "config.tiers"),
        (lambda s: s.update(config={"blocks": {"b": {"type": "date"}}}), "config.blocks.b.type"),
        (lambda s: s.update(config={"windw": 3}), "config.windw"),
        (lambda s: s.update(agents={"x": {"reads": ["nope"]}}), "agents.x.reads"),
    ],
)
def test_malformed_scripts_name_the_field(change: Any, field: str) -> None:
    script = _base()
    change(script)
    with pytest.raises(ScriptError) as caught:
        _run(script)
    assert str(caught.value).startswith(field)


def test_an_unscripted_child_spawn_is_a_script_error() -> None:
    script = _base()
    script["model"]["primary"] = [
        {"reply": "", "tool_calls": [{"id": "c", "name": "spawn", "args": {"child": 2}}]}
    ]
    with pytest.raises(ScriptError, match=r"turns\[0\]\.children"):
        _run(script)


# -- schemas and determinism --------------------------------------------------------------------


def _sample() -> TurnsScript:
    script = TurnsScript("t")
    script.config.update({"tiers": ["a", "b"], "context_budget": 500})
    script.declare_block("plan", "string")
    script.add_agent("reader", reads=["plan"])
    script.turn(text="one", failing_tiers=1, calls=[
        {"id": "u", "name": "update_block", "args": {"block": "plan", "value": "p"}}
    ], children=[{"outcome": "failed"}, {"opening": "envelope", "outcome": "truncated"}])
    script.turn(opening="brief", text="two", outcome="stopped", agent="reader")
    script.restart()
    script.turn(text="three", outcome="refused")
    script.turn(text="four", outcome="cut", continues_from=0)
    return script


def test_scripts_and_observations_match_the_published_schemas() -> None:
    script = _sample().to_json()
    jsonschema.validate(script, json.loads((SCHEMAS / "script-turns.schema.json").read_text()))
    observation, _ = _run(script)
    observation = json.loads(json.dumps(observation))
    jsonschema.validate(
        observation, json.loads((SCHEMAS / "observation-turns.schema.json").read_text())
    )


def test_the_same_script_gives_the_same_observation() -> None:
    first, _ = _run(_sample())
    second, _ = _run(_sample())
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
