"""Live demonstrations: each variant of the graphstate family against its base.

Run as ``python -m corpus.round6.runtimes.graphstate.demos``. Every demo makes the
same calls on the base runtime and on the variant (each on a store of its own)
and prints both answers.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

from memconform.adapters.memory import MemoryStore
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import observe

PACKAGE = "corpus.round6.runtimes.graphstate"


def runtime_of(module: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{module}").make()


def execute(runtime: Any, script: dict[str, Any], store: MemoryStore) -> dict[str, Any]:
    return observe(runtime, script, RecordingStore(store))


def show(label: str, value: Any) -> None:
    print(f"  {label:8} {json.dumps(value, ensure_ascii=False, sort_keys=True)}")


def candidates(requests: list[dict[str, Any]], model: dict[str, Any],
               threshold: int | None = None) -> dict[str, Any]:
    script: dict[str, Any] = {"profile": "candidates", "requests": requests, "model": model}
    if threshold is not None:
        script["package"] = {"summary_threshold": threshold}
    return script


def commander(*replies: str) -> list[dict[str, Any]]:
    return [{"reply": r} for r in replies]


def prompts(observation: dict[str, Any], component: str = "commander") -> list[str]:
    return [entry["request"]["prompt"] for entry in observation["timeline"]
            if entry["kind"] == "model" and entry["name"] == component]


def both(module: str, run: Callable[[Any, MemoryStore], Any]) -> None:
    for label, name in (("base", "base"), ("variant", module)):
        show(label, run(runtime_of(name), MemoryStore()))


# -- candidates -------------------------------------------------------------------------


def demo_v01() -> None:
    print("v01_branch_shares_nested: change candidate 0's memory_list after the answer;"
          " candidate 1's memory_list:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        script = candidates(
            [{"id": "r1", "inputs": [{"input_id": "a", "instruction": "Plan the trip.",
                                      "candidates": 2,
                                      "memory": {"memory_list": ["likes ferries"]}}]}],
            {"commander": commander("Plan A", "Plan B")})
        answers = runtime.execute(script, _env(script, store))
        first, second = answers["responses"][0]["inputs"][0]["candidates"]
        first["memory"]["memory_list"].append("only candidate 0 learned this")
        return second["memory"]["memory_list"]

    both("v01_branch_shares_nested", run)


def demo_v02() -> None:
    print("v02_threshold_in_bytes: a Greek prompt of 78 characters (113 bytes), threshold 80:"
          " summarizer calls")

    def run(runtime: Any, store: MemoryStore) -> Any:
        memory = {"history": [{"role": "user", "content": "Καλημέρα"},
                              {"role": "assistant", "content": "Γεια σας, τι θέλετε;"}]}
        script = candidates(
            [{"id": "r1", "inputs": [{"input_id": "a", "instruction": "Ένα εισιτήριο.",
                                      "memory": memory}]}],
            {"summarizer": [{"reply": "Χαιρετισμοί."}], "commander": commander("Εντάξει.")},
            threshold=80)
        observation = execute(runtime, script, store)
        return {"prompt_chars": len(prompts(observation)[0]),
                "summarizer_calls": len(prompts(observation, "summarizer"))}

    both("v02_threshold_in_bytes", run)


def demo_v03() -> None:
    print("v03_coaching_zero_candidate: coaching for candidate 0 of two; origins:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        script = candidates(
            [{"id": "r1", "inputs": [{"input_id": "a", "instruction": "Greet.", "candidates": 2,
                                      "coaching": [{"component": "commander", "candidate": 0,
                                                    "output": "Hello (coached)"}]}]}],
            {"commander": commander("Hi from the model")})
        observation = execute(runtime, script, store)
        answers = observation["responses"][0]["inputs"][0]["candidates"]
        return [(a["internal_steps"][-1]["origin"], a["decision"]["say"]) for a in answers]

    both("v03_coaching_zero_candidate", run)


def demo_v04() -> None:
    print("v04_decode_memo: two empty-memory inputs of one request; second commander prompt:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        script = candidates(
            [{"id": "r1", "inputs": [{"input_id": "a", "instruction": "Book a ferry."},
                                     {"input_id": "b", "instruction": "Book a hotel."}]}],
            {"commander": commander("Ferry booked.", "Hotel booked.")})
        return prompts(execute(runtime, script, store))[1]

    both("v04_decode_memo", run)


def demo_v05() -> None:
    print("v05_fail_fast_join: candidate 0 of 2 fails its commander call; the answers:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        script = candidates(
            [{"id": "r1", "inputs": [{"input_id": "a", "instruction": "Pick a route.",
                                      "candidates": 2}]}],
            {"commander": [{"fail": {"type": "Timeout", "message": "model timed out"}},
                           {"reply": "Take the coast road."}]})
        answers = execute(runtime, script, store)["responses"][0]["inputs"][0]["candidates"]
        return [a["status"] if a["status"] == "ok" else a["error"]["message"] for a in answers]

    both("v05_fail_fast_join", run)


# -- persisted state ----------------------------------------------------------------------

PLAN = {"id": "deploy-1", "goal": "deploy the service", "steps": [
    {"name": "lookup", "tool": "lookup_service", "record": {"service_id": "$result.id"}},
    {"name": "build", "tool": "build", "args": {"service": "$service_id"}},
    {"name": "deploy", "tool": "deploy", "args": {"service": "$service_id"},
     "marks": {"deployed": True}}]}
TOOLS = {"lookup_service": {"result": {"id": "svc-42"}, "effect": "looked up"},
         "build": {"result": "built", "effect": "built"},
         "deploy": {"result": "deployed", "effect": "deployed"}}


def state_script(actions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"profile": "persisted-state", "namespace": "demo", "actions": actions,
            "tools": TOOLS, "model": {"agent": [{"reply": "ok"}] * 12}, **extra}


def demo_v06() -> None:
    print("v06_values_flushed_next_checkpoint: stop after step 1, resume on a fresh"
          " instance; outcome and record values:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        execute(runtime, state_script([{"do": "job", "job": PLAN, "stop_after": 1}]), store)
        module = type(runtime).__module__.rsplit(".", 1)[-1]
        fresh = runtime_of(module)  # another process: only the store survives
        resumed = execute(fresh, state_script([{"do": "resume", "job": "deploy-1"}]), store)
        record = store.read_state("demo/job/deploy-1", "record")
        return {"outcome": resumed["outcomes"][0]["outcome"],
                "values": None if record is None else record.value["values"]}

    both("v06_values_flushed_next_checkpoint", run)


def demo_v07() -> None:
    print("v07_cached_record_handoff: hand off after step 1, a person sets service_id"
          " to svc-77, the same runtime continues; build's arguments:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        execute(runtime, state_script([{"do": "job", "job": PLAN, "stop_after": 1}]), store)
        entry = store.read_state("demo/job/deploy-1", "record")
        assert entry is not None
        edited = json.loads(json.dumps(entry.value))
        edited["values"]["service_id"] = "svc-77"
        store.write_state("demo/job/deploy-1", "record", edited, entry.version)
        resumed = execute(runtime, state_script([{"do": "resume", "job": "deploy-1"}]), store)
        return [e["args"] for e in resumed["timeline"]
                if e["kind"] == "tool" and e["name"] == "build"]

    both("v07_cached_record_handoff", run)


def fact(subject: str, statement: str, **more: Any) -> dict[str, Any]:
    return {"do": "remember", "fact": {"subject": subject, "statement": statement,
                                       "source": "user", "evidence": "said so", **more}}


def demo_v08() -> None:
    print("v08_confirmation_keeps_written_at: remember, 100 days pass, confirm the same"
          " statement, recall:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        script = state_script([fact("office", "The office is in Leeds."),
                               {"do": "advance", "seconds": 100 * 86_400},
                               fact("office", "The office is in Leeds."),
                               {"do": "recall", "subject": "office"}])
        outcomes = execute(runtime, script, store)["outcomes"]
        return {"written_at": outcomes[2]["fact"]["written_at"],
                "status": outcomes[3]["facts"][0]["status"]}

    both("v08_confirmation_keeps_written_at", run)


def demo_v09() -> None:
    print("v09_trim_after_insert: cap 2 holding m-desk and z-lamp, remember a-chair at the"
          " same instant; recalled subjects:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        script = state_script([fact("m-desk", "The desk is oak."),
                               fact("z-lamp", "The lamp is brass."),
                               fact("a-chair", "The chair is red."),
                               {"do": "recall"}], knowledge={"cap": 2})
        outcomes = execute(runtime, script, store)["outcomes"]
        return [f["subject"] for f in outcomes[3]["facts"]]

    both("v09_trim_after_insert", run)


def demo_v10() -> None:
    print("v10_stale_claim_shown_as_fact: an untrusted copied fact recalled after its"
          " recheck date:")

    def run(runtime: Any, store: MemoryStore) -> Any:
        script = state_script([fact("vendor.sla", "The SLA is 99.99%.", origin="copied",
                                    source="tool:web:vendor.test"),
                               {"do": "advance", "seconds": 91 * 86_400},
                               {"do": "recall", "subject": "vendor.sla"}])
        shown = execute(runtime, script, store)["outcomes"][2]["facts"][0]
        return {"shown_as": shown["shown_as"], "text": shown["text"]}

    both("v10_stale_claim_shown_as_fact", run)


def _env(script: dict[str, Any], store: MemoryStore) -> Any:
    from memconform.harness.environment import Environment

    return Environment(script, RecordingStore(store))


DEMOS = [demo_v01, demo_v02, demo_v03, demo_v04, demo_v05,
         demo_v06, demo_v07, demo_v08, demo_v09, demo_v10]


def main() -> None:
    for demo in DEMOS:
        demo()
        print()


if __name__ == "__main__":
    main()
