"""Live demonstrations of the middleware family: each variant against the base.

Run ``python -m corpus.round6.runtimes.middleware.demos``. Every demo executes the same
script on the base and on one variant, each on a fresh in-memory store behind the
kit's recording proxy, and prints what differs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from memconform.adapters.memory import MemoryStore
from memconform.contract import StoreError
from memconform.harness.environment import Environment
from memconform.harness.proxy import RecordingStore

from . import base

PACKAGE = __package__ or "corpus.round6.runtimes.middleware"


class RefusingStore:
    """A memory store that refuses the first append whose message text contains ``word``."""

    def __init__(self, word: str) -> None:
        self.inner = MemoryStore()
        self.word = word
        self.refused = False

    @property
    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities

    def append(self, thread_id: str, batch: Any) -> None:
        if not self.refused and any(self.word in m.text for m in batch):
            self.refused = True
            raise StoreError("disk full")
        self.inner.append(thread_id, batch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def play(factory: Callable[[], Any], script: dict[str, Any],
         store: Any = None) -> tuple[dict[str, Any], RecordingStore, Environment]:
    proxy = RecordingStore(store if store is not None else MemoryStore())
    env = Environment(script, proxy)
    return dict(factory().execute(script, env)), proxy, env


def variant(name: str) -> Callable[[], Any]:
    return importlib.import_module(f"{PACKAGE}.{name}").make


def compare(name: str, script: dict[str, Any], show: Callable[..., Any],
            store: Callable[[], Any] | None = None) -> None:
    print(f"== {name}")
    for label, factory in (("base   ", base.make), ("variant", variant(name))):
        obs, proxy, env = play(factory, script, store() if store else None)
        print(f"  {label}: {show(obs, proxy, env)}")


def reply(text: str, **extra: Any) -> dict[str, Any]:
    return {"reply": text, **extra}


# -- turns ----------------------------------------------------------------------------------


def demo_v01() -> None:
    script = {"profile": "turns", "thread": "d1", "config": {"history_window": 3},
              "turns": [{"envelope": {"text": f"question {i}"}} for i in range(1, 4)],
              "model": {"primary": [reply(f"answer {i}") for i in range(1, 4)]}}
    compare("v01_window_before_append", script,
            lambda obs, *_: [h["text"] for h in obs["views"][-1]["history"]])


def demo_v02() -> None:
    script = {"profile": "turns", "thread": "d2",
              "turns": [{"envelope": {"text": "first"}}, {"envelope": {"text": "second"}}],
              "model": {"primary": [{"fail": {"type": "Overloaded", "message": "busy"}},
                                    reply("ok")]}}
    compare("v02_turn_id_giveback", script,
            lambda obs, proxy, _: [(r.turn_id, r.outcome) for r in proxy.records("d2")])


def demo_v03() -> None:
    script = {"profile": "turns", "thread": "d3",
              "turns": [{"envelope": {"text": "delegate"}, "children": [{"brief": "sub"}]}],
              "model": {"primary": [
                  reply("", tool_calls=[{"id": "c1", "name": "spawn", "args": {"child": 0}}],
                        usage={"tokens": 10}),
                  reply("child done", usage={"tokens": 100}),
                  reply("all done", usage={"tokens": 5})]}}
    compare("v03_usage_rollup", script,
            lambda obs, proxy, _: [(r.turn_id, dict(r.usage)) for r in proxy.records("d3")])


def demo_v04() -> None:
    script = {"profile": "turns", "thread": "d4",
              "turns": [{"envelope": {"text": "look it up"}, "stop_after_step": 1},
                        {"envelope": {"text": "new question"}}],
              "model": {"primary": [
                  reply("", tool_calls=[{"id": "c1", "name": "search", "args": {"q": "x"}}]),
                  reply("fresh answer")]}}
    compare("v04_scratchpad_transcript", script,
            lambda obs, *_: f"turn 2 first call transcript = {obs['views'][-1]['transcript']}")


def demo_v05() -> None:
    def call(value: int, version: int) -> dict[str, Any]:
        return {"id": f"u{value}", "name": "update_block",
                "args": {"block": "plan", "value": value, "expected_version": version}}
    script = {"profile": "turns", "thread": "d5",
              "config": {"blocks": {"plan": {"type": "integer"}}},
              "turns": [{"envelope": {"text": "plan"}}],
              "model": {"primary": [
                  reply("", tool_calls=[{"id": "u0", "name": "update_block",
                                         "args": {"block": "plan", "value": 1}}]),
                  reply("", tool_calls=[call(2, 1)]),
                  reply("", tool_calls=[call(3, 1)]),  # stale: the block is at version 2
                  reply("done")]}}

    def show(obs: dict[str, Any], proxy: RecordingStore, _: Any) -> str:
        entry = proxy.read_state("d5", "plan")
        return f"stored value {entry.value} at version {entry.version}"
    compare("v05_cas_retry", script, show)


# -- strict-write ---------------------------------------------------------------------------


def strict(mode: str = "digest", cont: bool = False, **extra: Any) -> dict[str, Any]:
    return {"profile": "strict-write", "thread": "sw",
            "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": mode,
                                                       "continueOnFailure": cont}},
            **extra}


def stored(proxy: RecordingStore, key: str) -> list[str]:
    return [m.text for m in proxy.messages("sw")
            if base.entry_of(m) and base.entry_of(m).get("key") == key]


def demo_v06() -> None:
    script = strict(pipeline=[{"id": "http", "kind": "tool"}],
                    turns=[{"input": "pay"}],
                    tools={"http": {"fail": {"type": "HttpError",
                                             "message": "rejected api_key=f00dfeedcafe1234"}}})
    compare("v06_digest_recorded_before_redaction", script,
            lambda obs, proxy, _: f"caller {obs['turns'][0]['taskErrors'][0]['text']!r}; "
                                  f"memory {stored(proxy, 'taskErrors')}")


def demo_v07() -> None:
    script = strict(pipeline=[{"id": "ai.labs.llm", "kind": "llm"}], turns=[{"input": "hi"}],
                    model={"ai.labs.llm": [{"fail": {
                        "type": "HttpError", "message": "HTTP 422",
                        "body": '{"detail": "temperature is not supported by this model"}'}}]})
    compare("v07_body_message_keys", script,
            lambda obs, *_: obs["turns"][0]["taskErrors"][0]["text"])


def demo_v08() -> None:
    script = strict(cont=True,
                    pipeline=[{"id": "geo", "kind": "tool"}, {"id": "weather", "kind": "tool"}],
                    turns=[{"input": "weather?"}],
                    tools={"geo": {"fail": {"message": "geo down"}},
                           "weather": {"fail": {"message": "weather down"}}})
    compare("v08_commit_point_on_success", script,
            lambda obs, proxy, _: f"committed digests {stored(proxy, 'taskErrors')}; "
                                  f"actions {obs['turns'][0]['actions']}")


def demo_v09() -> None:
    script = strict(cont=True,
                    pipeline=[{"id": "note", "writes": [{"op": "set", "data": "memo",
                                                         "value": "remember me"}]},
                              {"id": "ai.labs.llm", "kind": "llm"}],
                    turns=[{"input": "hello"}], model={"ai.labs.llm": [reply("hi there")]})
    compare("v09_store_refusal_as_task_failure", script,
            lambda obs, *_: f"state {obs['turns'][0]['state']}, "
                            f"reply {obs['turns'][0]['reply']!r}",
            store=lambda: RefusingStore("remember me"))


def demo_v10() -> None:
    script = strict(mode="exclude_all", pipeline=[{"id": "http", "kind": "tool"}],
                    turns=[{"input": "go", "streaming": True}],
                    tools={"http": {"fail": {"message": "upstream down"}}})

    def show(obs: dict[str, Any], proxy: RecordingStore, env: Environment) -> str:
        events = [e for e in env.timeline.to_json() if e["name"] == "task_failed"]
        return f"taskErrors {obs['turns'][0]['taskErrors']}; task_failed events {len(events)}"
    compare("v10_exclude_all_streams", script, show)


DEMOS = [demo_v01, demo_v02, demo_v03, demo_v04, demo_v05,
         demo_v06, demo_v07, demo_v08, demo_v09, demo_v10]


def main() -> None:
    for demo in DEMOS:
        demo()


if __name__ == "__main__":
    main()
