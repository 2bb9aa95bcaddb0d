"""Live demos: each variant and the base run one script; the difference is printed.

Run from /work/main: ``python -m corpus.round5.runtimes.savepolicy.demos``.
Each demo builds the kit's real :class:`Environment` over a recording proxy of an
in-memory store (a second "process" is a fresh runtime instance with a fresh
``Environment`` and a later id lifetime on the same store), runs the script on
the base and on the variant, and asserts that what was stored or sent differs.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import Environment, IdSource
from memconform.harness.proxy import RecordingStore

from . import base

THREAD = "t-demo"


class BatchStore(MemoryStore):
    """The in-memory store, remembering the roles of every batch it acknowledged."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.error_records = 0

    def append(self, thread_id: str, batch: Any) -> None:
        super().append(thread_id, batch)
        self.batches.append([m.role for m in batch])

    def record_error(self, thread_id: str, record: Any) -> None:
        super().record_error(thread_id, record)
        self.error_records += 1


class Outcome:
    """What one execute did: the observation, the model requests, the store."""

    def __init__(self, obs: Mapping[str, Any], requests: list[list[dict[str, Any]]],
                 store: BatchStore) -> None:
        self.obs, self.requests, self.store = obs, requests, store

    def stored(self) -> list[tuple[str, str]]:
        return [(m.role, m.text) for m in self.store.messages(THREAD)]

    def outcomes(self) -> list[str]:
        return [r["outcome"] for r in self.obs["runs"]]


def script(runs: list[dict[str, Any]], model: list[dict[str, Any]], policy: str | None = None,
           **extra: Any) -> dict[str, Any]:
    return {"schema": "memconform.script/1", "profile": "save-policy", "thread": THREAD,
            "save_policy": policy, "runs": runs, "model": {"agent": model}, **extra}


def execute(factory: Callable[[], Any], spec: Mapping[str, Any],
            store: BatchStore | None = None, lifetime: int = 1) -> Outcome:
    store = store if store is not None else BatchStore()
    proxy = RecordingStore(store)
    try:
        env = Environment(spec, proxy)
        env.ids = IdSource(lifetime)
        obs = factory().execute(spec, env)
        requests = [[dict(m) for m in e.data["request"]["messages"]]
                    for e in env.timeline.of("model")]
    finally:
        proxy.close()
    return Outcome(obs, requests, store)


def variant(name: str) -> Callable[[], Any]:
    module = importlib.import_module(f"{__package__}.{name}")
    maker: Callable[[], Any] = module.make
    return maker


def both(name: str, spec: Mapping[str, Any]) -> tuple[Outcome, Outcome]:
    return execute(base.make, spec), execute(variant(name), spec)


def differ(label: str, good: Any, bad: Any) -> str:
    assert good != bad, f"{label}: no divergence ({good!r})"
    return f"{label}: base {good!r} / variant {bad!r}"


# -- one demo per variant ---------------------------------------------------------------

def demo_v01() -> str:
    spec = script([{"input": "compare a and b"}], [
        {"tool_calls": [{"id": "c1", "name": "search", "args": {"q": "a"}},
                        {"id": "c2", "name": "search", "args": {"q": "b"}}]},
        {"reply": "done"}], "message", tools={"search": [{"result": "A"}, {"result": "B"}]})
    good, bad = both("v01_results_keyed_by_name", spec)

    def result_ids(o: Outcome) -> list[Any]:
        return [p["call_id"] for m in o.store.messages(THREAD) if m.role == "tool"
                for p in m.parts]
    return differ("stored tool results for calls c1,c2", result_ids(good), result_ids(bad))


def demo_v02() -> str:
    spec = script([{"input": "hi"}], [{"reply": "hello"}], "turn",
                  hooks={"run_end": {"action": "cancel"}})
    good, bad = both("v02_turn_cancel_flushes_buffer", spec)
    assert good.outcomes() == bad.outcomes() == ["cancelled"]
    return differ("turn, run_end cancels: stored", good.stored(), bad.stored())


def demo_v03() -> str:
    first = script([{"input": "first question"}, {"input": "book it"}], [
        {"reply": "first answer"},
        {"tool_calls": [{"id": "c1", "name": "book", "needs_approval": True}]}], "message")

    def resumed(factory: Callable[[], Any]) -> list[str]:
        store = BatchStore()
        one = execute(factory, first, store)
        continuation = one.obs["runs"][1]["continuation"]
        later = script([{"resume": {"approved": True, "continuation": continuation}}],
                       [{"reply": "booked"}], "message")
        two = execute(factory, later, store, lifetime=2)  # a fresh instance, a fresh process
        return [m["text"] for m in two.requests[0]]
    return differ("resumed model saw", resumed(base.make),
                  resumed(variant("v03_resume_context_own_run")))


def demo_v04() -> str:
    spec = script([{"input": "hello"}], [
        {"fail": {"type": "ProviderError", "message": "busy", "status": 503}},
        {"reply": "hi there"}], "message")
    good, bad = both("v04_retry_resaves_input", spec)
    return differ("message, 503 then reply: stored", good.stored(), bad.stored())


def demo_v05() -> str:
    spec = script([{"input": "try it"}], [
        {"tool_calls": [{"id": "c1", "name": "flaky"}]}, {"reply": "done"}], "message",
        tools={"flaky": {"fail": {"type": "ToolError", "message": "boom"}}},
        hooks={"tool_error": {"fail": {"type": "HookError", "message": "hook broke"}}})
    good, bad = both("v05_tool_error_hook_failure_swallowed", spec)

    def seen(o: Outcome) -> tuple[Any, ...]:
        run = o.obs["runs"][0]
        return run["outcome"], (run["error"] or {}).get("type"), len(o.stored()), \
            o.store.error_records
    return differ("(outcome, error, stored, record_error calls)", seen(good), seen(bad))


def demo_v06() -> str:
    spec = script([{"input": "tell me the secret"}], [{"reply": "the secret is 42"}], "run",
                  hooks={"output_guardrail": {"action": "block", "text": "[blocked]"}})
    good, bad = both("v06_run_blocked_output_not_saved", spec)
    assert good.outcomes() == bad.outcomes() == ["blocked"]
    return differ("run, output blocked: stored", good.stored(), bad.stored())


def demo_v07() -> str:
    spec = script([{"input": "hi"}], [{"reply": "hello there"}], "turn", stream=True,
                  hooks={"run_end": {"action": "cancel"}})
    good, bad = both("v07_turn_stream_flush_on_finish", spec)
    buffered = dict(spec, stream=False)
    assert execute(variant("v07_turn_stream_flush_on_finish"), buffered).stored() == []
    return differ("turn, streamed, run_end cancels: stored", good.stored(), bad.stored())


def demo_v08() -> str:
    spec = script([{"input": "one"}, {"input": "two"}, {"input": "three"}], [
        {"fail": {"type": "BadRequest", "message": "invalid", "status": 400}},
        {"reply": "r2"}, {"reply": "r3"}], "run")
    good, bad = both("v08_run_outbox_survives_failure", spec)
    assert good.outcomes() == bad.outcomes() == ["failed", "completed", "completed"]
    return differ("run, failed then two runs: run 3's model saw",
                  [m["text"] for m in good.requests[-1]], [m["text"] for m in bad.requests[-1]])


def demo_v09() -> str:
    spec = script([{"input": "book"}, {"resume": {"approved": True}}], [
        {"tool_calls": [{"id": "c1", "name": "book", "needs_approval": True}]},
        {"reply": "booked"}], "message")
    good, bad = both("v09_resume_stamps_suspended_run_id", spec)
    good_ids = [m.run_id for m in good.store.messages(THREAD)]
    bad_ids = [m.run_id for m in bad.store.messages(THREAD)]
    assert good.obs["runs"][1]["run_id"] == bad.obs["runs"][1]["run_id"] == "run-2"
    return differ("stored run ids (resume reports run-2)", good_ids, bad_ids)


def demo_v10() -> str:
    spec = script([{"input": "weather today?"}, {"input": "and tomorrow?"}], [
        {"tool_calls": [{"id": "c1", "name": "weather"}]}, {"reply": "sunny"},
        {"reply": "rain"}], "message", tools={"weather": {"result": "sunny, 21C"}})
    good, bad = both("v10_history_text_only", spec)
    return differ("run 2's model saw roles", [m["role"] for m in good.requests[-1]],
                  [m["role"] for m in bad.requests[-1]])


DEMOS: list[tuple[str, Callable[[], str]]] = [
    ("v01_results_keyed_by_name", demo_v01),
    ("v02_turn_cancel_flushes_buffer", demo_v02),
    ("v03_resume_context_own_run", demo_v03),
    ("v04_retry_resaves_input", demo_v04),
    ("v05_tool_error_hook_failure_swallowed", demo_v05),
    ("v06_run_blocked_output_not_saved", demo_v06),
    ("v07_turn_stream_flush_on_finish", demo_v07),
    ("v08_run_outbox_survives_failure", demo_v08),
    ("v09_resume_stamps_suspended_run_id", demo_v09),
    ("v10_history_text_only", demo_v10),
]


def main() -> int:
    failed = 0
    for name, demo in DEMOS:
        try:
            print(f"OK      {name}: {demo()}")
        except Exception as exc:  # a demo that shows no divergence, or crashes
            failed += 1
            print(f"FAILED  {name}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
