"""Live demos: each variant against the base on one script, in a fake environment.

Run from /work/main: ``python -m corpus.round5.runtimes.turnswrite.demos``. Each demo
runs the same script on the base and on one variant, each with a fresh environment
(an in-memory store, a scripted model, tools and hooks, deterministic ids, an injected
clock), prints what differs in what was stored or sent, and asserts that it differs.
"""

from __future__ import annotations

import copy
import importlib
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from memconform.adapters.memory import MemoryStore
from memconform.contract import StoreError
from memconform.harness.environment import Clock, IdSource, ScriptedFailure, ScriptError

from . import base

PACKAGE = __package__ or "corpus.round5.runtimes.turnswrite"


class FakeStore:
    """The memory store with ``has()``, optional refusals and another writer."""

    def __init__(self, inner: MemoryStore | None = None) -> None:
        self.inner = inner or MemoryStore()
        self.refuse: set[str] = set()
        self.after_append: Callable[[str, list], None] | None = None

    def has(self, capability: str) -> bool:
        return capability in self.inner.capabilities

    def append(self, thread: str, batch: list) -> None:
        if "append" in self.refuse:
            raise StoreError("append refused")
        self.inner.append(thread, batch)
        if self.after_append is not None:
            self.after_append(thread, batch)

    def set_committed(self, thread: str, ids: list, committed: bool) -> None:
        if "set_committed" in self.refuse:
            raise StoreError("set_committed refused")
        self.inner.set_committed(thread, ids, committed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class FakeEnv:
    """What the runtime uses of the kit's Environment, with the same semantics."""

    def __init__(self, script: Mapping[str, Any], store: FakeStore | None = None,
                 lifetime: int = 1) -> None:
        self.script = script
        self.store = store or FakeStore()
        self.clock = Clock(str(script.get("clock", "2026-01-01T00:00:00Z")))
        self.ids = IdSource(lifetime)
        self.requests: list[tuple[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.ledger: list[dict[str, Any]] = []
        self._calls: dict[tuple[str, str], int] = {}

    def _next(self, section: str, name: str) -> tuple[int, list]:
        raw = self.script.get(section, {}).get(name)
        items = [] if raw is None else raw if isinstance(raw, list) else [raw]
        n = self._calls.get((section, name), 0)
        self._calls[(section, name)] = n + 1
        return n, items

    def model(self, component: str, request: Any) -> dict[str, Any]:
        n, steps = self._next("model", component)
        self.requests.append((component, copy.deepcopy(request)))
        if n >= len(steps):
            raise ScriptError(f"model.{component}: call {n + 1} was not scripted")
        step = steps[n]
        if "fail" in step:
            raise ScriptedFailure(step["fail"])
        return {"reply": step.get("reply", ""), "tool_calls": step.get("tool_calls", []),
                "payload": step.get("payload"), "usage": step.get("usage", {})}

    def tool(self, name: str, args: Any, call_id: str | None = None) -> Any:
        n, outcomes = self._next("tools", name)
        outcome = outcomes[min(n, len(outcomes) - 1)] if outcomes else {}
        if outcome.get("effect") is not None:
            self.ledger.append({"tool": name, "call_id": call_id, "effect": outcome["effect"]})
        if "fail" in outcome:
            raise ScriptedFailure(outcome["fail"])
        return outcome.get("result", "ok")

    def hook(self, name: str, payload: Any = None) -> dict[str, Any]:
        return {"action": "allow", "text": None}

    def emit(self, name: str, **data: Any) -> None:
        self.events.append({"name": name, **data})


def variant(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{name}").make()


def both(name: str, script: Mapping[str, Any], prepare: Callable[[FakeEnv], None] | None = None
         ) -> tuple[tuple[FakeEnv, Any], tuple[FakeEnv, Any]]:
    out = []
    for runtime in (base.make(), variant(name)):
        env = FakeEnv(script)
        if prepare is not None:
            prepare(env)
        out.append((env, runtime.execute(copy.deepcopy(script), env)))
    return out[0], out[1]


def show(label: str, expected: Any, observed: Any) -> None:
    print(f"    {label}\n      base:    {expected}\n      variant: {observed}")
    assert expected != observed, "no divergence"


def history_of(env: FakeEnv, index: int = -1) -> list[str]:
    view = env.requests[index][1]
    return [f"{h['role']}:{h['text']}" for h in view["history"]]


def envelope_turns(*texts: str) -> list[dict[str, Any]]:
    return [{"envelope": {"text": t}} for t in texts]


# -- turns ---------------------------------------------------------------------------------


def demo_v01() -> None:
    """A window of 2 on the second turn: the newest two are [answer 1, question 2]."""
    script = {"profile": "turns", "thread": "t", "config": {"history_window": 2},
              "turns": envelope_turns("q1", "q2"),
              "model": {"primary": [{"reply": "a1"}, {"reply": "a2"}]}}
    (b, _), (v, _) = both("v01_window_user_start", script)
    show("history of turn 2 (window 2)", history_of(b), history_of(v))


def demo_v02() -> None:
    """A window of 0: the second turn must see nothing stored."""
    script = {"profile": "turns", "thread": "t", "config": {"history_window": 0},
              "turns": envelope_turns("q1", "q2"),
              "model": {"primary": [{"reply": "a1"}, {"reply": "a2"}]}}
    (b, _), (v, _) = both("v02_zero_window_all", script)
    show("history of turn 2 (window 0)", history_of(b), history_of(v))


def demo_v03() -> None:
    """Turn 1 falls back from primary to backup; turn 2 must start on primary again."""
    script = {"profile": "turns", "thread": "t", "config": {"tiers": ["primary", "backup"]},
              "turns": envelope_turns("q1", "q2"),
              "model": {"primary": [{"fail": {"type": "Overloaded", "message": "503"}},
                                    {"reply": "a2 from primary"}],
                        "backup": [{"reply": "a1 from backup"}, {"reply": "a2 from backup"}]}}
    (b, _), (v, _) = both("v03_sticky_tier", script)
    first_of_turn2 = [c for c, r in b.requests if r["turn_id"] == "T2"][:1]
    first_of_turn2_v = [c for c, r in v.requests if r["turn_id"] == "T2"][:1]
    show("tier of turn 2's first model call", first_of_turn2, first_of_turn2_v)


def demo_v04() -> None:
    """One turn, a restart (fresh runtime, fresh env, same store), one more turn."""
    ids = []
    for runtime_factory in (base.make, lambda: variant("v04_counter_from_store")):
        store = FakeStore()
        for lifetime, text in ((1, "before restart"), (2, "after restart")):
            script = {"profile": "turns", "thread": "t", "turns": envelope_turns(text),
                      "model": {"primary": [{"reply": "ok"}]}}
            runtime_factory().execute(script, FakeEnv(script, store, lifetime))
        ids.append([r.turn_id for r in store.records("t")])
    show("stored record ids across the restart", ids[0], ids[1])


def demo_v05() -> None:
    """A root spawns one child; each makes one model call costing 5 and 7 tokens."""
    script = {"profile": "turns", "thread": "t", "config": {"tiers": ["primary"]},
              "turns": [{"envelope": {"text": "research"},
                         "children": [{"brief": "look it up"}]}],
              "model": {"primary": [
                  {"reply": "", "tool_calls": [{"id": "c1", "name": "spawn", "args": {"child": 0}}],
                   "usage": {"tokens": 5}},
                  {"reply": "child answer", "usage": {"tokens": 7}},
                  {"reply": "root answer", "usage": {"tokens": 5}}]}}
    (b, _), (v, _) = both("v05_child_usage_rollup", script)
    usage = {r.turn_id: r.usage for r in b.store.records("t")}
    usage_v = {r.turn_id: r.usage for r in v.store.records("t")}
    show("usage on the stored records (T1 root, T2 child)", usage, usage_v)


# -- strict-write ----------------------------------------------------------------------------

DIGEST = {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}
CONTINUE = {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest",
                                      "continueOnFailure": True}}


def committed_step(env: FakeEnv, thread: str = "sw") -> dict:
    return base.model_view(env.store.messages(thread))


def demo_v06() -> None:
    """Turn 1: the fetch tool fails (digest mode). Turn 2: the model's view of step 1."""
    script = {"profile": "strict-write", "thread": "sw", "memoryPolicy": DIGEST,
              "pipeline": [{"id": "fetch", "kind": "tool"}, {"id": "answer", "kind": "llm"}],
              "turns": [{"input": "hi"}, {"input": "again"}],
              "tools": {"fetch": [{"fail": {"type": "java.net.ConnectException",
                                            "message": "HTTP 500 from [url]"}},
                                  {"result": "data"}]},
              "model": {"answer": [{"reply": "fine"}]}}
    (b, _), (v, _) = both("v06_raw_error_committed", script)
    step1 = b.requests[-1][1]["view"]["steps"][0]["data"]
    step1_v = v.requests[-1][1]["view"]["steps"][0]["data"]
    show("data of step 1 in turn 2's model view", step1, step1_v)


def demo_v07() -> None:
    """A long error whose sk- key straddles the 200-character cut."""
    secret = "sk-" + "Zq8Lw3Rt7Yp2Kd9MaBcDeFgHiJ"
    prefix = "Task 'eddi://fetch' failed: "
    message = "upstream rejected the request " + "x" * (186 - len(prefix) - 31) + " " + secret
    script = {"profile": "strict-write", "thread": "sw", "memoryPolicy": DIGEST,
              "pipeline": [{"id": "fetch", "kind": "tool"}], "turns": [{"input": "hi"}],
              "tools": {"fetch": {"fail": {"type": "AuthError", "message": message}}}}
    (_, ob), (_, ov) = both("v07_cut_before_redact", script)
    text = ob["turns"][0]["taskErrors"][0]["text"]
    text_v = ov["turns"][0]["taskErrors"][0]["text"]
    show("digest tail (last 30 characters)", text[-30:], text_v[-30:])
    assert "Zq8Lw3" not in text
    assert "Zq8Lw3" in text_v


def demo_v08() -> None:
    """A streaming turn whose tool fails with a password in its message."""
    script = {"profile": "strict-write", "thread": "sw", "memoryPolicy": DIGEST,
              "pipeline": [{"id": "fetch", "kind": "tool"}],
              "turns": [{"input": "hi", "streaming": True}],
              "tools": {"fetch": {"fail": {"type": "AuthError",
                                           "message": "login with password=hunter2hunter2"}}}}
    (b, _), (v, _) = both("v08_stream_raw_reason", script)
    reason = [e["reason"] for e in b.events if e["name"] == "task_failed"]
    reason_v = [e["reason"] for e in v.events if e["name"] == "task_failed"]
    show("task_failed event reason", reason, reason_v)


def demo_v09() -> None:
    """continueOnFailure; the store refuses set_committed when the fetch task fails."""
    script = {"profile": "strict-write", "thread": "sw", "memoryPolicy": CONTINUE,
              "pipeline": [{"id": "fetch", "kind": "tool"}, {"id": "answer", "kind": "llm"}],
              "turns": [{"input": "hi"}],
              "tools": {"fetch": {"fail": {"type": "Error", "message": "boom"}}},
              "model": {"answer": [{"reply": "answered over the failed output"}]}}

    def refuse(env: FakeEnv) -> None:
        env.store.refuse.add("set_committed")

    (b, ob), (v, ov) = both("v09_swallow_commit_refusal", script, refuse)
    summary = (ob["turns"][0]["state"], [c for c, _ in b.requests])
    summary_v = (ov["turns"][0]["state"], [c for c, _ in v.requests])
    show("(turn state, model calls) after the refused rollback", summary, summary_v)


def demo_v10() -> None:
    """continueOnFailure; two tool tasks fail in the same turn."""
    script = {"profile": "strict-write", "thread": "sw", "memoryPolicy": CONTINUE,
              "pipeline": [{"id": "first", "kind": "tool"}, {"id": "second", "kind": "tool"},
                           {"id": "reply", "writes": [{"op": "append", "output": "output",
                                                       "item": {"type": "text", "text": "ok"}}]}],
              "turns": [{"input": "hi"}],
              "tools": {"first": {"fail": {"type": "Error", "message": "first broke"}},
                        "second": {"fail": {"type": "Error", "message": "second broke"}}}}
    (b, _), (v, _) = both("v10_step_snapshot_rollback", script)

    def visible(env: FakeEnv) -> tuple:
        step = base.fold(env.store.messages("sw"))[1]
        return ([d["taskId"] for d in step.items("taskErrors")], step.items("actions"))

    show("committed (digests, actions) of the turn", visible(b), visible(v))


DEMOS = [demo_v01, demo_v02, demo_v03, demo_v04, demo_v05,
         demo_v06, demo_v07, demo_v08, demo_v09, demo_v10]


def main() -> int:
    failed = 0
    for demo in DEMOS:
        name = demo.__name__.removeprefix("demo_")
        print(f"{name}: {demo.__doc__}")
        try:
            demo()
        except Exception:  # a demo that breaks is reported, the others still run
            traceback.print_exc()
            failed += 1
            print(f"{name}: FAILED")
        else:
            print(f"{name}: OK")
    print(f"{len(DEMOS) - failed}/{len(DEMOS)} variants diverge from the base")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
