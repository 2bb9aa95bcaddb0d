"""Generated save-policy runs: the runtime under test against the store under
test, compared with the reference simulator on the reference store.

A generated script has any number of tool rounds, any texts, any save policy
and at most one failure (a model call that fails, or a tool that throws, which
the run survives). Invariants checked on what the store holds afterwards, each
naming its rules:

- under ``run``, a failed run stores nothing;
- under ``turn``, only whole rounds are stored: never a part of the round that
  failed;
- under ``message``, the input and every round completed before the failure
  survive;
- every stored tool call sits in the same batch as its result;
- every window is exactly the newest N stored messages, in order;
- and the store holds what the reference holds after the reference run.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from memconform.adapters.memory import MemoryStore
from memconform.adapters.proxy import RecordingStore
from memconform.properties.strategies import message_texts
from memconform.simulator.runtime import Runtime, Simulator, observe
from memconform.values import Message, same_value

__all__ = ["GeneratedRun", "RunDivergence", "check_run", "generated_runs"]

_RUN = uuid.uuid4().hex[:8]
_threads = itertools.count(1)
_text = message_texts(allow_nul=False, max_size=80)


@dataclass(frozen=True)
class GeneratedRun:
    """One generated script and what it is expected to do."""

    policy: str
    rounds: int
    failing_model_call: int | None
    throwing_tool_round: int | None
    script: dict[str, Any]


class RunDivergence(AssertionError):
    """A generated run broke an invariant; ``rules`` names the rules it breaks."""

    def __init__(self, rules: tuple[str, ...], what: str, expected: Any, observed: Any) -> None:
        super().__init__(f"{what}\nexpected:\n{expected!r}\nobserved:\n{observed!r}")
        self.rules = rules
        self.what = what
        self.expected = repr(expected)
        self.observed = repr(observed)


@st.composite
def generated_runs(draw: st.DrawFn) -> GeneratedRun:
    """A save-policy script with 0-3 tool rounds, a final answer and at most one failure."""
    policy = draw(st.sampled_from(("message", "turn", "run")))
    rounds = draw(st.integers(0, 3))
    failing = draw(st.none() | st.integers(1, rounds + 1))
    throwing = None if failing is not None else draw(st.none() | st.integers(1, max(rounds, 1)))
    if rounds == 0:
        throwing = None
    steps: list[dict[str, Any]] = []
    tools: dict[str, Any] = {}
    for n in range(1, rounds + 1):
        name = f"tool_{n}"
        steps.append({
            "reply": draw(_text),
            "tool_calls": [{"id": f"call-{n}", "name": name, "args": {"n": n}}],
        })
        outcome: dict[str, Any] = {"result": draw(_text), "effect": f"effect {n}"}
        if throwing == n:
            outcome = {"fail": {"type": "ToolFailure", "message": draw(_text)}}
        tools[name] = outcome
    steps.append({"reply": draw(_text)})
    if failing is not None:
        steps[failing - 1] = {"fail": {"type": "ModelError", "message": "model unavailable"}}
        del steps[failing:]
    script = {
        "schema": "memconform.script/1",
        "profile": "save-policy",
        "save_policy": policy,
        "thread": "",
        "runs": [{"input": draw(_text)}],
        "model": {"agent": steps},
        "tools": tools,
        "hooks": {},
    }
    return GeneratedRun(policy, rounds, failing, throwing, script)


def _fresh(run: GeneratedRun) -> dict[str, Any]:
    thread = f"genrun{_RUN}-{next(_threads)}"
    return {**run.script, "thread": thread}


def _rounds(messages: list[Message]) -> set[int]:
    return {m.round for m in messages if m.round is not None}


def _check(rules: tuple[str, ...], what: str, expected: Any, observed: Any) -> None:
    if not same_value(expected, observed):
        raise RunDivergence(rules, what, expected, observed)


def check_run(run: GeneratedRun, runtime: Runtime, store: RecordingStore) -> None:
    """Execute ``run`` on ``runtime`` against ``store`` and on the reference, and
    raise :class:`RunDivergence` naming the rules of the first broken invariant."""
    script = _fresh(run)
    thread = script["thread"]
    first_entry = len(store.timeline)
    observe(runtime, script, store)
    stored = store.messages(thread)

    reference_store = RecordingStore(MemoryStore())
    try:
        observe(Simulator(), script, reference_store)
        expected = reference_store.messages(thread)
    finally:
        reference_store.close()

    failed = run.failing_model_call is not None
    if run.policy == "run" and failed:
        _check(("SP-011",), "a failed run under run stores nothing", [], stored)
    if run.policy == "turn" and failed:
        completed = set(range(1, run.failing_model_call or 1))
        _check(("SP-009",), "rounds stored under turn (whole rounds only)",
               completed, _rounds(stored))
    if run.policy == "message" and failed:
        roles = [m.role for m in stored]
        _check(("SP-005", "SP-012"), "the input and completed rounds survive under message",
               ["user"] + ["assistant", "tool"] * ((run.failing_model_call or 1) - 1), roles)

    for entry in store.timeline.entries[first_entry:]:
        if entry.kind != "store" or entry.name != "append":
            continue
        batch = entry.data["args"][1]
        calls = {p["id"] for m in batch for p in m.get("parts", [])
                 if isinstance(p, dict) and p.get("type") == "tool_call"}
        results = {p.get("call_id") for m in batch for p in m.get("parts", [])
                   if isinstance(p, dict) and p.get("type") == "tool_result"}
        _check(("SP-006", "SP-025"), "every stored tool call is in the batch of its result",
               set(), calls - results)

    for limit in range(len(stored) + 2):
        window = store.messages(thread, limit)
        _check(("ST-003",), f"the newest {limit} messages", stored[-limit:] if limit else [],
               window)

    def comparable(messages: list[Message]) -> list[tuple[str, str, int | None]]:
        return [(m.role, m.text, m.round) for m in messages]

    rules = {"message": ("SP-005", "SP-006", "SP-007", "SP-012"),
             "turn": ("SP-008", "SP-009"), "run": ("SP-010", "SP-011")}[run.policy]
    _check((*rules, "SP-023"), f"what the store holds after the run under {run.policy}",
           comparable(expected), comparable(stored))
