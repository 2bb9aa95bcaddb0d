"""Live demonstrations of the ten ``asyncpolicy`` variants against the base.

Run ``python -m corpus.round6.runtimes.asyncpolicy.demos``. Each demo executes
the same script on the base and on one variant (an in-memory store behind the
kit's recording proxy) and prints what differs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from memconform.adapters.memory import MemoryStore
from memconform.contract import StoreError
from memconform.harness.environment import Environment, IdSource
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import observe
from memconform.values import Message

PACKAGE = "corpus.round6.runtimes.asyncpolicy"


class RefusingStore(MemoryStore):
    """A memory store refusing its ``refuse``-th append (counted from 1)."""

    def __init__(self, refuse: int) -> None:
        super().__init__()
        self.refuse, self.count = refuse, 0

    def append(self, thread_id: str, batch: Any) -> None:
        self.count += 1
        if self.count == self.refuse:
            raise StoreError(f"append {self.count} refused")
        super().append(thread_id, batch)


def factory(name: str) -> Callable[[], Any]:
    return importlib.import_module(f"{PACKAGE}.{name}").make  # type: ignore[no-any-return]


def execute(make: Callable[[], Any], script: Mapping[str, Any], store: Any = None,
            lifetime: int = 1) -> tuple[dict[str, Any], Any]:
    store = store if store is not None else MemoryStore()

    def ready(env: Environment) -> None:
        env.ids = IdSource(lifetime)

    obs = observe(make(), {"schema": "memconform.script/1", "profile": "save-policy", **script},
                  RecordingStore(store), env_ready=ready)
    return obs, store


def calls(obs: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    return [e for e in obs["timeline"] if e["kind"] == "store" and e["name"] == name]


def batches(obs: Mapping[str, Any]) -> list[list[str]]:
    """Each append as ``role@round:text`` items (refused ones marked)."""
    out = []
    for e in calls(obs, "append"):
        batch = [f"{m['role']}@{m['round']}:{m['text']!r}" for m in e["args"][1]]
        out.append(batch + (["(refused)"] if "error" in e or "raised" in e else []))
    return out


def outcomes(obs: Mapping[str, Any]) -> list[str]:
    return [r["outcome"] + (f" {r['error']['type']}" if r.get("error") else "")
            for r in obs["runs"]]


def stored(store: Any, thread: str = "t") -> list[Message]:
    return list(store.messages(thread))


def header(title: str) -> None:
    print(f"\n=== {title}")


def both(title: str, variant: str, script: Mapping[str, Any],
         show: Callable[[dict[str, Any], Any], object], store: Callable[[], Any] | None = None,
         ) -> None:
    header(title)
    for label, name in (("base   ", "base"), ("variant", variant)):
        obs, st = execute(factory(name), script, store() if store else None)
        print(f"  {label}: {show(obs, st)}")


# -- the demos ------------------------------------------------------------------------


def demo_v01() -> None:
    script = {"thread": "t", "runs": [{"input": "look it up"}],
              "model": {"agent": [{"reply": "", "tool_calls": [{"id": "c1", "name": "lookup"}]},
                                  {"reply": "found"}]}}
    both("v01 fan-out stops at the refused append: the error record lacks the tool message",
         "v01_fanout_stops", script,
         lambda obs, _st: {"outcome": outcomes(obs),
                           "record roles": [[m["role"] for m in e["args"][1]["messages"]]
                                            for e in calls(obs, "record_error")]},
         store=lambda: RefusingStore(2))


def demo_v02() -> None:
    script = {"thread": "t", "runs": [{"input": "two tools"}],
              "model": {"agent": [{"reply": "", "tool_calls": [{"id": "c1", "name": "flaky"},
                                                              {"id": "c2", "name": "solid"}]},
                                  {"reply": "done"}]},
              "tools": {"flaky": {"fail": {"message": "timeout"}}, "solid": {"result": "42"}}}

    def show(_obs: dict[str, Any], st: Any) -> object:
        tool = next(m for m in stored(st) if m.role == "tool")
        return {"result call ids": [p["call_id"] for p in tool.parts], "text": tool.text}

    both("v02 concurrent tools: results stored in completion order", "v02_concurrent_tools",
         script, show)


def demo_v03() -> None:
    script = {"thread": "t", "save_policy": "turn", "runs": [{"input": "hello"}],
              "model": {"agent": [{"reply": "hi there"}]},
              "hooks": {"run_end": {"action": "cancel"}}}
    both("v03 turn flushes the answer before the run-end hook cancels the run",
         "v03_turn_answer_early", script,
         lambda obs, st: {"outcome": outcomes(obs), "stored": [m.role for m in stored(st)]})


def demo_v04() -> None:
    script = {"thread": "t", "stream": True, "runs": [{"input": "list two"}],
              "model": {"agent": [{"reply": "1. apples\n2. pears"}]}}
    both("v04 a streamed answer is stored as its joined deltas", "v04_stream_accumulator",
         script, lambda obs, st: {"reply": obs["runs"][0]["reply"],
                                  "stored answer": stored(st)[-1].text})


def demo_v05() -> None:
    script = {"thread": "t", "save_policy": "turn",
              "runs": [{"input": "never mind", "cancel_before_model_call": 1},
                       {"input": "real question"}],
              "model": {"agent": [{"reply": "answer"}]}}
    both("v05 a cancelled run's held-back input leaks into the next run's batch",
         "v05_cancel_keeps_buffer", script,
         lambda obs, _st: {"outcome": outcomes(obs), "batches": batches(obs)})


def demo_v06() -> None:
    script = {"thread": "t", "runs": [{"input": "hello"}],
              "model": {"agent": [{"fail": {"type": "RateLimited", "message": "slow down",
                                            "status": 429}},
                                  {"reply": "hi"}]}}
    both("v06 a retried first model call appends the input twice", "v06_retry_whole_round",
         script, lambda obs, _st: {"outcome": outcomes(obs), "batches": batches(obs)})


def demo_v07() -> None:
    header("v07 positional message ids collide when a later process continues the thread")
    for label, name in (("base   ", "base"), ("variant", "v07_positional_ids")):
        make = factory(name)
        first, store = execute(make, {"thread": "t", "runs": [{"input": "one"}],
                                      "model": {"agent": [{"reply": "first"}]}})
        later, store = execute(make, {"thread": "t", "runs": [{"input": "two"}],
                                      "model": {"agent": [{"reply": "second"}]}},
                               store, lifetime=2)
        print(f"  {label}: process 1 {outcomes(first)}, process 2 {outcomes(later)}, "
              f"stored ids {[m.id for m in stored(store)]}")


def demo_v08() -> None:
    script = {"thread": "t", "runs": [{"input": "pay both"}, {"resume": {"approved": True}}],
              "model": {"agent": [{"reply": "", "tool_calls": [
                  {"id": "p1", "name": "pay", "needs_approval": True},
                  {"id": "p2", "name": "pay", "needs_approval": True}]},
                  {"reply": "paid"}]}}

    def show(obs: dict[str, Any], st: Any) -> object:
        answered = [p["call_id"] for m in stored(st) for p in m.parts
                    if p.get("type") == "tool_result"]
        return {"outcome": outcomes(obs), "continuation": obs["runs"][0]["continuation"],
                "calls with a stored result": answered}

    both("v08 a resume answers only the first of two pending approvals", "v08_single_pending",
         script, show)


def demo_v09() -> None:
    script = {"thread": "t", "save_policy": "run",
              "runs": [{"input": "first"}, {"input": "second"}],
              "model": {"agent": [{"reply": "one"}, {"reply": "two"}]}}

    def show(obs: dict[str, Any], _st: Any) -> object:
        order = [f"{e['name']}" + (f"({e.get('outcome')})" if e["name"] == "outcome" else "")
                 for e in obs["timeline"]
                 if (e["kind"] == "store" and e["name"] == "append")
                 or (e["kind"] == "event" and e["name"] == "outcome")]
        second = [e for e in obs["timeline"] if e["kind"] == "model"][1]
        return {"order": order,
                "run 2's model saw": [m["text"] for m in second["request"]["messages"]]}

    both("v09 the final flush runs in the background, after the outcome", "v09_background_settle",
         script, show)


def demo_v10() -> None:
    script = {"thread": "t", "save_policy": "run", "runs": [{"input": "weather?"}],
              "model": {"agent": [{"reply": "", "tool_calls": [{"id": "w", "name": "weather"}]},
                                  {"reply": "sunny"}]}}
    both("v10 run policy keeps each message's own round", "v10_run_keeps_rounds", script,
         lambda _obs, st: {"stored rounds": [f"{m.role}@{m.round}" for m in stored(st)]})


def main() -> None:
    for demo in (demo_v01, demo_v02, demo_v03, demo_v04, demo_v05, demo_v06, demo_v07,
                 demo_v08, demo_v09, demo_v10):
        demo()


if __name__ == "__main__":
    main()
