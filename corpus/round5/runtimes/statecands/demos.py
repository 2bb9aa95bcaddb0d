"""Live demonstrations: each variant against the base on one script, in a fake environment.

``python -m corpus.round5.runtimes.statecands.demos`` runs all ten and prints
one line per variant (OK when the divergence showed, FAILED otherwise). The
environment is built here: the in-memory store of ``memconform.adapters.memory``
behind a small recording wrapper, a scripted model, scripted tools and hooks,
an injected clock and ids. Kills are simulated by a store that stops the
process (raises a ``BaseException`` the runtime cannot catch) right after it
acknowledged a chosen record write; the resume then runs on a fresh runtime
instance with a fresh environment over the same store.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import json
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import ScriptedFailure, ScriptError

PACKAGE = "corpus.round5.runtimes.statecands"


# -- the fake environment -----------------------------------------------------------------


class Killed(BaseException):
    """The process died: nothing in the runtime catches it."""


class Clock:
    def __init__(self, start: str = "2026-01-01T00:00:00Z") -> None:
        self._now = datetime.fromisoformat(start.replace("Z", "+00:00")).astimezone(UTC)

    def now(self) -> str:
        return self._now.strftime("%Y-%m-%dT%H:%M:%SZ")

    def now_datetime(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> str:
        self._now += timedelta(seconds=seconds)
        return self.now()


class Ids:
    def __init__(self) -> None:
        self._n: dict[str, int] = {}

    def next(self, prefix: str) -> str:
        self._n[prefix] = self._n.get(prefix, 0) + 1
        return f"{prefix}-{self._n[prefix]}"


class Store:
    """The memory store with ``has`` and a log of calls; optionally killed after
    the ``kill_after_write``-th acknowledged ``write_state``."""

    def __init__(self, inner: MemoryStore | None = None, kill_after_write: int | None = None):
        self.inner = inner or MemoryStore()
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.kill_after_write = kill_after_write
        self.writes = 0

    def has(self, capability: str) -> bool:
        return capability in self.inner.capabilities

    @property
    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.inner, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args))
            result = method(*args, **kwargs)
            if name == "write_state":
                self.writes += 1
                if self.kill_after_write is not None and self.writes == self.kill_after_write:
                    raise Killed(f"SIGKILL after record write {self.writes}")
            return result

        return call


class Env:
    """What the runtime uses of the kit's Environment, driven by the script's
    ``model``, ``tools`` and ``hooks`` sections."""

    def __init__(self, script: Mapping[str, Any], store: Store,
                 on_tool: Callable[[str], None] | None = None) -> None:
        self.script = script
        self.store = store
        self.clock = Clock(str(script.get("clock", "2026-01-01T00:00:00Z")))
        self.ids = Ids()
        self.timeline: list[dict[str, Any]] = []
        self.effects: list[str] = []
        self.on_tool = on_tool
        self._counts: dict[str, int] = {}

    def _next(self, section: str, name: str) -> Mapping[str, Any] | None:
        key = f"{section}:{name}"
        n = self._counts.get(key, 0)
        self._counts[key] = n + 1
        raw = (self.script.get(section) or {}).get(name)
        if raw is None:
            return None
        items = raw if isinstance(raw, list) else [raw]
        if section == "model":
            if n >= len(items):
                raise ScriptError(f"model.{name}: call {n + 1} was not scripted")
            return items[n]
        return items[min(n, len(items) - 1)]

    def model(self, component: str, request: Any) -> dict[str, Any]:
        step = self._next("model", component) or {}
        self.timeline.append({"kind": "model", "name": component,
                              "request": copy.deepcopy(request)})
        if "fail" in step:
            raise ScriptedFailure(step["fail"])
        return {"reply": step.get("reply", ""), "tool_calls": [], "payload": None, "usage": {}}

    def tool(self, name: str, args: Any, call_id: str | None = None) -> Any:
        outcome = self._next("tools", name) or {}
        if outcome.get("effect") is not None:
            self.effects.append(str(outcome["effect"]))
        self.timeline.append({"kind": "tool", "name": name, "args": copy.deepcopy(args)})
        if self.on_tool is not None:
            self.on_tool(name)
        if "fail" in outcome:
            raise ScriptedFailure(outcome["fail"])
        return copy.deepcopy(outcome.get("result", "ok"))

    def hook(self, name: str, payload: Any = None) -> dict[str, Any]:
        outcome = self._next("hooks", name) or {"action": "allow"}
        self.timeline.append({"kind": "hook", "name": name})
        if "fail" in outcome:
            raise ScriptedFailure(outcome["fail"])
        return {"action": outcome.get("action", "allow"), "text": outcome.get("text")}

    def emit(self, name: str, **data: Any) -> None:
        self.timeline.append({"kind": "event", "name": name, **copy.deepcopy(data)})

    def requests(self, component: str) -> list[Any]:
        return [e["request"] for e in self.timeline
                if e["kind"] == "model" and e["name"] == component]


def runtime(variant: str | None) -> Any:
    module = importlib.import_module(f"{PACKAGE}.{variant or 'base'}")
    return module.make()


def run(variant: str | None, script: Mapping[str, Any], store: Store | None = None,
        on_tool: Callable[[str], None] | None = None) -> tuple[dict[str, Any], Env]:
    env = Env(script, store or Store(), on_tool)
    return runtime(variant).execute(copy.deepcopy(script), env), env


# -- candidates scripts ------------------------------------------------------------------


def _long_history(topic: str, n: int = 2) -> list[dict[str, str]]:
    out = []
    for i in range(n):
        out.append({"role": "user", "content": f"tell me about {topic}, part {i}"})
        out.append({"role": "assistant", "content": f"{topic} fact number {i} " + "x" * 40})
    return out


def _summarizing(instruction: str = "What next?", candidates: int = 1) -> dict[str, Any]:
    return {
        "profile": "candidates", "package": {"summary_threshold": 100},
        "requests": [{"id": "r1", "inputs": [{
            "input_id": "ep-1", "instruction": instruction, "candidates": candidates,
            "memory": {"history": _long_history("apples"), "summary": None, "memory_list": []},
        }]}],
        "model": {"summarizer": [{"reply": "SUMMARY-OF-APPLES"}],
                  "commander": [{"reply": f"answer {k}"} for k in range(candidates)]},
    }


def _first(out: dict[str, Any], request: int = 0, index: int = 0) -> list[dict[str, Any]]:
    return out["responses"][request]["inputs"][index]["candidates"]


def demo_v01() -> tuple[Any, Any]:
    script = {
        "profile": "candidates", "package": {"summary_threshold": 100},
        "requests": [
            {"id": "r1", "inputs": [{"input_id": "ep-1", "instruction": "Go on.",
                                     "memory": {"history": _long_history("apples")}}]},
            {"id": "r2", "inputs": [{"input_id": "ep-1", "instruction": "Go on.",
                                     "memory": {"history": _long_history("pears")}}]},
        ],
        "model": {"summarizer": [{"reply": "SUMMARY-OF-APPLES"}, {"reply": "SUMMARY-OF-PEARS"}],
                  "commander": [{"reply": "ok"}, {"reply": "ok"}]},
    }

    def shown(variant: str | None) -> Any:
        out, env = run(variant, script)
        return {"r2 commander prompt": env.requests("commander")[1]["prompt"].split("\n")[0],
                "r2 memory summary": _first(out, 1)[0]["memory"]["summary"]}

    return shown(None), shown("v01_summary_cache")


def demo_v02() -> tuple[Any, Any]:
    script = {
        "profile": "candidates",
        "requests": [{"id": "r1", "inputs": [{
            "input_id": "ep-1", "instruction": "Pick one.", "candidates": 3,
            "memory": {"history": [{"role": "user", "content": "hi"},
                                   {"role": "assistant", "content": "hello"}]}}]}],
        "model": {"commander": [{"fail": {"type": "Timeout", "message": "slow"}},
                                {"reply": "b"}, {"reply": "c"}]},
    }

    def shown(variant: str | None) -> Any:
        out, _ = run(variant, script)
        return [[m["role"] for m in c["memory"]["history"]] if "memory" in c else c["status"]
                for c in _first(out)]

    return shown(None), shown("v02_failed_candidate_residue")


def demo_v03() -> tuple[Any, Any]:
    script = _summarizing()

    def shown(variant: str | None) -> Any:
        out, env = run(variant, script)
        sent = env.requests("commander")[0]["prompt"]
        recorded = _first(out)[0]["internal_steps"][-1]["full_prompt"]
        return {"recorded == sent": recorded == sent, "recorded length": len(recorded),
                "sent length": len(sent)}

    return shown(None), shown("v03_measured_prompt_recorded")


def demo_v04() -> tuple[Any, Any]:
    script = _summarizing(instruction="SECRET-CURRENT-INSTRUCTION")

    def shown(variant: str | None) -> Any:
        _, env = run(variant, script)
        prompt = env.requests("summarizer")[0]["prompt"]
        return {"instruction in summarizer prompt": "SECRET-CURRENT-INSTRUCTION" in prompt}

    return shown(None), shown("v04_summarizer_sees_instruction")


def demo_v05() -> tuple[Any, Any]:
    script = {
        "profile": "candidates", "package": {"order": "reverse"},
        "requests": [{"id": "r1", "inputs": [
            {"input_id": "ep-1", "instruction": "One?", "candidates": 2},
            {"input_id": "ep-2", "instruction": "Two?", "candidates": 1}]}],
        "model": {"commander": [{"reply": "first call"}, {"reply": "second call"},
                                {"reply": "third call"}]},
    }

    def shown(variant: str | None) -> Any:
        out, env = run(variant, script)
        by_call = {(r["input"], r["candidate"]): n for n, r in
                   enumerate(env.requests("commander"))}
        replies = ["first call", "second call", "third call"]
        answered = []
        for i, entry in enumerate(out["responses"][0]["inputs"]):
            for k, cand in enumerate(entry["candidates"]):
                call = by_call.get((i, k))  # the call that named this input and candidate
                answered.append(call is not None and cand["decision"]["say"] == replies[call])
        return {"each answer is its own commander call's": answered}

    return shown(None), shown("v05_reverse_order_answers")


# -- persisted-state scripts --------------------------------------------------------------


def _job(steps: list[dict[str, Any]], job_id: str = "j1") -> dict[str, Any]:
    return {"id": job_id, "goal": "ship it", "steps": steps}


def _record(store: Store, job_id: str = "j1") -> Any:
    entry = store.inner.read_state(f"ns/job/{job_id}", "record")
    return None if entry is None else entry.value


def demo_v06() -> tuple[Any, Any]:
    script = {
        "profile": "persisted-state", "namespace": "ns",
        "actions": [{"do": "job", "job": _job([
            {"name": "build", "tool": "build"},
            {"name": "deploy", "tool": "deploy", "marks": {"deployed": True}}])}],
        "tools": {"build": {"result": "ok", "effect": "built"},
                  "deploy": {"fail": {"type": "DeployError", "message": "refused"}}},
        "model": {"agent": [{"reply": "go"}, {"reply": "go"}]},
    }

    def shown(variant: str | None) -> Any:
        store = Store()
        out, _ = run(variant, script, store)
        return {"outcome": out["outcomes"][0]["outcome"], "values": _record(store)["values"]}

    return shown(None), shown("v06_marks_before_tool")


_THREE_STEPS = {
    "profile": "persisted-state", "namespace": "ns",
    "tools": {"a": {"result": "ok", "effect": "A"}, "b": {"result": "ok", "effect": "B"},
              "c": {"result": "ok", "effect": "C"}},
    "model": {"agent": [{"reply": "go"}] * 3},
}


def _kill_and_resume(variant: str | None) -> dict[str, Any]:
    """Run a 3-step job, kill it right after step 2's record write, resume elsewhere."""
    job = _job([{"name": "a", "tool": "a"}, {"name": "b", "tool": "b"},
                {"name": "c", "tool": "c"}])
    store = Store(kill_after_write=3)  # 1: the new record, 2: step a done, 3: step b done
    first = {**_THREE_STEPS, "actions": [{"do": "job", "job": job}]}
    env = Env(first, store)
    with contextlib.suppress(Killed):
        runtime(variant).execute(copy.deepcopy(first), env)
    store.kill_after_write = None
    second = {**_THREE_STEPS, "actions": [{"do": "resume", "job": "j1"}]}
    resume_from = len(store.calls)
    _, env2 = run(variant, second, store)  # a fresh instance, a fresh environment
    log_reads = [c for c in store.calls[resume_from:]
                 if c[0] == "messages" and str(c[1][0]).endswith("/log")]
    return {"ledger": env.effects + env2.effects, "log reads on resume": len(log_reads)}


def demo_v07() -> tuple[Any, Any]:
    return _kill_and_resume(None), _kill_and_resume("v07_resume_from_log")


def demo_v08() -> tuple[Any, Any]:
    return _kill_and_resume(None), _kill_and_resume("v08_resume_redoes_last_step")


def demo_v09() -> tuple[Any, Any]:
    def fact(subject: str, statement: str) -> dict[str, Any]:
        return {"do": "remember", "fact": {"subject": subject, "statement": statement,
                                           "source": "chat", "evidence": "said so"}}

    script = {
        "profile": "persisted-state", "namespace": "ns", "knowledge": {"cap": 2},
        "actions": [fact("tea", "likes green tea"), {"do": "advance", "seconds": 60},
                    fact("city", "lives in Lyon"), {"do": "advance", "seconds": 60},
                    fact("city", "lives in Lyon (confirmed)")],
    }

    def shown(variant: str | None) -> Any:
        store = Store()
        run(variant, script, store)
        return {"facts kept": [f.subject for f in store.inner.facts("ns/kb/user")],
                "forget calls": [c[1][1] for c in store.calls if c[0] == "forget"]}

    return shown(None), shown("v09_evicts_on_supersede")


def demo_v10() -> tuple[Any, Any]:
    script = {
        "profile": "persisted-state", "namespace": "ns",
        "actions": [{"do": "job", "job": _job([
            {"name": "find", "tool": "find", "record": {"host": "$result.host"}},
            {"name": "use", "tool": "use", "args": {"host": "$host"}}])}],
        "tools": {"find": {"result": {"host": "db-7"}, "effect": "found"},
                  "use": {"result": "ok", "effect": "used"}},
        "model": {"agent": [{"reply": "go"}, {"reply": "go"}]},
    }

    def shown(variant: str | None) -> Any:
        store = Store()

        def other_writer(tool: str) -> None:  # a person edits the record while `find` runs
            if tool == "find":
                entry = store.inner.read_state("ns/job/j1", "record")
                value = copy.deepcopy(entry.value)
                value["values"]["approved_by"] = "ops"
                store.inner.write_state("ns/job/j1", "record", value, entry.version)

        run(variant, script, store, on_tool=other_writer)
        return {"values": _record(store)["values"]}

    return shown(None), shown("v10_conflict_retry_stale")


DEMOS: dict[str, Callable[[], tuple[Any, Any]]] = {
    "v01_summary_cache": demo_v01,
    "v02_failed_candidate_residue": demo_v02,
    "v03_measured_prompt_recorded": demo_v03,
    "v04_summarizer_sees_instruction": demo_v04,
    "v05_reverse_order_answers": demo_v05,
    "v06_marks_before_tool": demo_v06,
    "v07_resume_from_log": demo_v07,
    "v08_resume_redoes_last_step": demo_v08,
    "v09_evicts_on_supersede": demo_v09,
    "v10_conflict_retry_stale": demo_v10,
}


def main() -> int:
    failed = 0
    for name, demo in DEMOS.items():
        try:
            base, variant = demo()
            assert base != variant, "no divergence"
            print(f"OK      {name}: base {json.dumps(base)} | variant {json.dumps(variant)}")
        except Exception as exc:  # report every demo, whatever went wrong
            failed += 1
            print(f"FAILED  {name}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
