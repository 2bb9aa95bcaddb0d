"""The reference runtime of document 001 (``memconform.simulator.strict_write``) on its
own: the mode x failure point x continueOnFailure matrix, rollback edge cases, the
model's view, the eddi-snapshot variant, malformed scripts, schemas and determinism."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import ScriptError
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import observe
from memconform.simulator.runtime import Simulator
from memconform.simulator.strict_write import (
    END_USER_NOTICE,
    META,
    fold_memory,
    model_view,
)
from memconform.values import Message

SCHEMAS = Path(__file__).resolve().parent.parent / "spec" / "schemas"
MODES = ("off", "digest", "exclude_all", "keep_all")
FAILURE_POINTS = ("parser", "weather", "ai.labs.llm")
ERROR = {"type": "java.net.ConnectException", "message": "Connection refused by https://w.example"}


def _script(
    mode: str = "digest", fail: str | None = "weather", cont: bool = False, turns: int = 1,
    variant: str | None = None,
) -> dict[str, Any]:
    """A pipeline whose ``fail`` task fails on its first call (``parser`` is a tool here)."""
    script: dict[str, Any] = {
        "schema": "memconform.script/1",
        "profile": "strict-write",
        "thread": "t",
        "pipeline": [
            {"id": "parser", "kind": "tool", "writes": [
                {"op": "set", "data": "intent", "value": "weather"},
                {"op": "append", "output": "notes", "item": "parsed"},
                {"op": "append", "output": "draft", "item": "first draft"},
                {"op": "action", "action": "greet"},
            ]},
            {"id": "behavior", "kind": "behavior"},
            {"id": "weather", "kind": "tool", "writes": [
                {"op": "set", "data": "city", "value": "Paris"},
                {"op": "change", "data": "intent", "value": "forecast"},
                {"op": "append", "output": "notes", "item": "looking up"},
                {"op": "change", "output": "notes", "index": 0, "item": "parsed and edited"},
                {"op": "append", "output": "forecast", "item": "pending"},
                {"op": "remove", "output": "draft"},
                {"op": "action", "action": "lookup"},
            ]},
            {"id": "ai.labs.llm", "kind": "llm",
             "writes": [{"op": "append", "output": "notes", "item": "thinking"}]},
            {"id": "output", "kind": "output"},
        ],
        "behaviorRules": [{"when": "task_failed_weather", "actions": ["fallback_response"]}],
        "outputSet": [
            {"action": "fallback_response", "text": "Weather is unavailable."},
            {"action": "task_failed_weather", "text": "Sorry, no weather now."},
        ],
        "turns": [{"input": f"question {n}", "streaming": True} for n in range(1, turns + 1)],
        "model": {"ai.labs.llm": [{"reply": f"answer {n}"} for n in range(1, turns + 1)]},
        "tools": {"parser": [{"result": "parsed"}], "weather": [{"result": "sunny"}]},
    }
    if mode != "off":
        script["memoryPolicy"] = {"strictWriteDiscipline": {
            "enabled": True, "onFailure": mode, "continueOnFailure": cont}}
    if fail == "ai.labs.llm":
        script["model"]["ai.labs.llm"].insert(0, {"fail": ERROR})
    elif fail is not None:
        script["tools"][fail].insert(0, {"fail": ERROR})
    if variant is not None:
        script["variant"] = variant
    return script


_OPEN: list[RecordingStore] = []


@pytest.fixture(autouse=True)
def _close_proxies() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _run(script: dict[str, Any], store: Any = None) -> tuple[dict[str, Any], RecordingStore]:
    """Observe ``script``; the proxy stays open for reads until the test ends."""
    proxy = RecordingStore(store if store is not None else MemoryStore(), timeout=5)
    _OPEN.append(proxy)
    return observe(Simulator(), script, proxy), proxy


def _stored(proxy: RecordingStore) -> list[Message]:
    return proxy.messages("t", include_uncommitted=True)


def _by_task(proxy: RecordingStore, task: str, step: int = 1) -> list[Message]:
    return [m for m in _stored(proxy)
            if m.metadata[META]["task"] == task and m.metadata[META]["step"] == step]


def _view(proxy: RecordingStore) -> dict[str, Any]:
    view = model_view(proxy.messages("t"))
    return {s["step"]: s for s in view["steps"]}  # type: ignore[union-attr, index]


# -- the matrix ------------------------------------------------------------------------------


@pytest.mark.parametrize("cont", [False, True], ids=["stop", "continue"])
@pytest.mark.parametrize("point", FAILURE_POINTS)
@pytest.mark.parametrize("mode", MODES)
def test_failure_matrix(mode: str, point: str, cont: bool) -> None:
    observation, proxy = _run(_script(mode, point, cont))
    turn = observation["turns"][0]
    hides = mode in ("digest", "exclude_all")
    continues = cont and mode != "off"
    written = _by_task(proxy, point)
    assert written, "the failed task's raw error is always stored"
    assert all(m.committed != hides for m in written)
    # earlier tasks keep what they wrote
    order = [t["id"] for t in _script()["pipeline"]]
    for earlier in order[: order.index(point)]:
        assert all(m.committed for m in _by_task(proxy, earlier))
    # later tasks run only when continuing
    statuses = {t["task"]: t["status"] for t in turn["tasks"]}
    later = order[order.index(point) + 1 :]
    assert all(statuses[t] == ("done" if continues else "not-run") for t in later)
    assert turn["state"] == ("READY" if continues else "ERROR")
    if not continues:
        assert turn["reply"] == ""
        assert turn["endUserNotice"] == END_USER_NOTICE
    # the action, the digest and the caller
    actions = _view_actions(proxy)
    assert (f"task_failed_{point}" in actions) == (mode != "off")
    digests = _view(proxy)[1]["output"].get("taskErrors", [])
    assert len(digests) == (1 if mode == "digest" else 0)
    assert len(turn["taskErrors"]) == (0 if mode == "exclude_all" else 1)
    events = [e for e in observation["timeline"] if e["name"] == "task_failed"]
    assert len(events) == len(turn["taskErrors"])
    raw_visible = "ConnectException" in json.dumps(_view(proxy))
    assert raw_visible == (not hides)


def _view_actions(proxy: RecordingStore) -> list[str]:
    step = fold_memory(proxy.messages("t"))[1]
    return [str(a) for a in step.output_items("actions")]


# -- rollback edges ---------------------------------------------------------------------------


def test_digest_rollback_restores_the_earlier_state() -> None:
    _, proxy = _run(_script("digest", "weather"))
    step = _view(proxy)[1]
    assert step["data"] == {"intent": "weather", "parser:result": "parsed"}
    assert step["output"]["notes"] == ["parsed"]
    assert step["output"]["draft"] == ["first draft"]
    assert "forecast" not in step["output"]
    assert _view_actions(proxy) == ["greet", "task_failed_weather"]


def test_keep_all_keeps_the_failed_state() -> None:
    _, proxy = _run(_script("keep_all", "weather"))
    step = _view(proxy)[1]
    assert step["data"]["intent"] == "forecast"
    assert step["data"]["city"] == "Paris"
    assert "Connection refused" in str(step["data"]["weather:error"])
    assert step["output"]["notes"] == ["parsed and edited", "looking up"]
    assert "draft" not in step["output"]
    assert _view_actions(proxy) == ["greet", "lookup", "task_failed_weather"]


def test_snapshot_rolls_back_by_key_only() -> None:
    _, proxy = _run(_script("digest", "weather", variant="eddi-snapshot"))
    step = _view(proxy)[1]
    assert step["data"]["intent"] == "forecast"  # in-place change not detected
    assert "city" not in step["data"]  # new key uncommitted
    assert step["output"]["notes"] == ["parsed and edited", "looking up"]
    assert "forecast" not in step["output"]  # a key the task created
    assert "draft" not in step["output"]  # removal not restored


def test_snapshot_keep_all_applies_nothing() -> None:
    observation, proxy = _run(_script("keep_all", "weather", variant="eddi-snapshot"))
    assert "task_failed_weather" not in _view_actions(proxy)
    assert observation["turns"][0]["taskErrors"] == []


def test_snapshot_without_strict_write_tells_the_caller_nothing() -> None:
    observation, _ = _run(_script("off", "weather", variant="eddi-snapshot"))
    assert observation["turns"][0]["taskErrors"] == []


def test_snapshot_unknown_mode_falls_back_to_digest() -> None:
    script = _script("digest", "weather", variant="eddi-snapshot")
    script["memoryPolicy"]["strictWriteDiscipline"]["onFailure"] = "bogus"
    observation, _ = _run(script)
    entry = observation["turns"][0]["taskErrors"][0]
    assert entry["text"].startswith("Task 'eddi://weather' failed: Connection refused by [url]")
    assert entry["taskType"] == "tool"


def test_snapshot_ignores_continue_on_failure() -> None:
    observation, _ = _run(_script("digest", "weather", cont=True, variant="eddi-snapshot"))
    assert observation["turns"][0]["state"] == "ERROR"


# -- same turn and next turn -----------------------------------------------------------------


def test_continue_renders_fallback_and_later_model_sees_digest() -> None:
    observation, _ = _run(_script("digest", "weather", cont=True))
    turn = observation["turns"][0]
    assert turn["reply"] == "answer 1\nSorry, no weather now."
    request = next(e for e in observation["timeline"] if e["kind"] == "model")["request"]
    assert "Task 'eddi://weather' failed" in json.dumps(request)
    assert "looking up" not in json.dumps(request)


def test_next_turn_behaviour_rules_see_the_failure() -> None:
    observation, _ = _run(_script("digest", "weather", turns=2))
    second = observation["turns"][1]
    assert "fallback_response" in second["actions"]
    assert second["reply"] == "answer 1\nWeather is unavailable."


def test_graceful_shutdown_is_never_continued_past() -> None:
    script = _script("digest", None, cont=True)
    script["tools"]["weather"].insert(0, {"fail": {"type": "GracefulShutdown", "message": "bye"}})
    observation, _ = _run(script)
    statuses = {t["task"]: t["status"] for t in observation["turns"][0]["tasks"]}
    assert statuses["ai.labs.llm"] == "not-run"
    assert observation["turns"][0]["state"] == "ERROR"


def test_two_failures_keep_both_digests() -> None:
    script = _script("digest", "weather", cont=True)
    script["model"]["ai.labs.llm"].insert(0, {"fail": {"message": "overloaded"}})
    observation, proxy = _run(script)
    assert len(_view(proxy)[1]["output"]["taskErrors"]) == 2
    assert [e["taskId"] for e in observation["turns"][0]["taskErrors"]] == [
        "weather", "ai.labs.llm"]


# -- the model's view ---------------------------------------------------------------------------


def _message(mid: str, kind: str, key: str, op: str, value: Any = None, *,
             committed: bool = True, target: str | None = None, step: int = 1) -> Message:
    meta: dict[str, Any] = {"step": step, "task": "x", "kind": kind, "key": key, "op": op}
    if target:
        meta["target"] = target
    return Message(id=mid, role="system", text=str(value), committed=committed,
                   parts=() if op == "remove" else (value,), metadata={META: meta})


def test_model_view_skips_uncommitted_messages() -> None:
    messages = [
        Message(id="i", role="user", text="hi", metadata={META: {
            "step": 1, "task": None, "kind": "input", "key": "input", "op": "set"}}),
        _message("a", "data", "k", "set", "old"),
        _message("b", "data", "k", "set", "new", committed=False),
        _message("c", "output", "notes", "append", "one"),
        _message("d", "output", "notes", "change", "ONE", target="c", committed=False),
        _message("e", "output", "notes", "remove", target="c", committed=False),
        _message("f", "output", "actions", "append", "greet"),
        _message("g", "output", "taskErrors", "append", {"type": "errorDigest"}),
    ]
    assert model_view(messages) == {"steps": [{
        "step": 1, "input": "hi", "data": {"k": "old"},
        "output": {"notes": ["one"], "taskErrors": [{"type": "errorDigest"}]},
    }]}


def test_model_view_applies_changes_and_removals() -> None:
    messages = [
        _message("c", "output", "notes", "append", "one"),
        _message("d", "output", "notes", "append", "two"),
        _message("e", "output", "notes", "change", "ONE", target="c"),
        _message("f", "output", "notes", "remove", target="d"),
        _message("g", "data", "k", "set", 1),
        _message("h", "data", "k", "remove"),
        _message("i", "output", "gone", "append", 1, step=2),
        _message("j", "output", "gone", "remove", step=2),
    ]
    steps = model_view(messages)["steps"]
    assert steps == [
        {"step": 1, "input": None, "data": {}, "output": {"notes": ["ONE"]}},
        {"step": 2, "input": None, "data": {}, "output": {}},
    ]


def test_model_view_ignores_foreign_messages() -> None:
    assert model_view([Message(id="x", role="user", text="not ours")]) == {"steps": []}


# -- configuration and malformed scripts --------------------------------------------------------


@pytest.mark.parametrize("mode", ["bogus", "Digest", None, 3])
def test_unknown_mode_is_rejected_before_any_store_call(mode: Any) -> None:
    script = _script("digest")
    script["memoryPolicy"]["strictWriteDiscipline"]["onFailure"] = mode
    proxy = RecordingStore(MemoryStore(), timeout=5)
    _OPEN.append(proxy)
    with pytest.raises(ScriptError, match="onFailure"):
        observe(Simulator(), script, proxy)
    assert proxy.timeline.of("store") == []


def test_disabled_policy_ignores_its_mode() -> None:
    baseline, _ = _run(_script("off", "weather"))
    for mode in ("digest", "exclude_all", "keep_all"):
        script = _script(mode, "weather", cont=True)
        script["memoryPolicy"]["strictWriteDiscipline"]["enabled"] = False
        observation, _ = _run(script)
        assert observation["turns"] == baseline["turns"]


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("thread",), "", "thread"),
        (("pipeline",), [], "pipeline"),
        (("pipeline", 0, "id"), "eddi://parser", "pipeline[0].id"),
        (("pipeline", 1, "id"), "parser", "pipeline[1].id"),
        (("pipeline", 0, "kind"), "magic", "pipeline[0].kind"),
        (("pipeline", 0, "writes", 0, "op"), "upsert", "pipeline[0].writes[0].op"),
        (("pipeline", 0, "writes", 1), {"op": "append", "output": "x"},
         "pipeline[0].writes[1].item"),
        (("pipeline", 0, "writes", 0), {"op": "append", "data": "x", "item": 1},
         "pipeline[0].writes[0].op"),
        (("pipeline", 2, "writes", 3, "index"), -1, "pipeline[2].writes[3].index"),
        (("turns",), [], "turns"),
        (("turns", 0, "streaming"), "yes", "turns[0].streaming"),
        (("behaviorRules", 0, "actions"), "x", "behaviorRules[0].actions"),
        (("outputSet", 0, "text"), "", "outputSet[0].text"),
        (("memoryPolicy", "strictWriteDiscipline", "enabled"), "true",
         "memoryPolicy.strictWriteDiscipline.enabled"),
        (("memoryPolicy", "strictWriteDiscipline", "continueOnFailure"), 1,
         "memoryPolicy.strictWriteDiscipline.continueOnFailure"),
        (("variant",), "eddi-latest", "variant"),
    ],
)
def test_malformed_scripts_name_the_field(path: tuple[Any, ...], value: Any, field: str) -> None:
    script = _script("digest")
    target: Any = script
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ScriptError, match=field.replace("[", r"\[").replace("]", r"\]")):
        _run(script)


def test_change_of_a_missing_output_item_writes_nothing() -> None:
    script = _script("digest", None)
    script["pipeline"][2]["writes"][3]["index"] = 9
    _, proxy = _run(script)
    changes = [m for m in _stored(proxy) if m.metadata[META]["op"] == "change"]
    assert [m.metadata[META]["kind"] for m in changes] == ["data"]


def test_strict_write_needs_commit_flags() -> None:
    class Plain:
        capabilities: frozenset[str] = frozenset()

        def append(self, thread_id: str, batch: Any) -> None: ...

        def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
            return []

    with pytest.raises(ScriptError, match="commit-flags"):
        _run(_script("digest"), Plain())


# -- schemas and determinism ----------------------------------------------------------------


def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("mode", MODES)
def test_scripts_and_observations_match_the_schemas(mode: str) -> None:
    script = _script(mode, "weather", turns=2)
    jsonschema.validate(script, _schema("script-strict-write.schema.json"))
    observation, _ = _run(script)
    jsonschema.validate(observation, _schema("observation-strict-write.schema.json"))


def test_runs_are_deterministic() -> None:
    script = _script("digest", "weather", cont=True, turns=2)
    first, a = _run(copy.deepcopy(script))
    second, b = _run(copy.deepcopy(script))
    assert first == second
    assert [m.to_json() for m in _stored(a)] == [m.to_json() for m in _stored(b)]
