"""Generated ``candidates`` scripts: the package under test compared with the
reference package on what the rules of document 003 fix.

:func:`candidate_scripts` draws one to three requests, each of one or two
inputs. An input id may come back in a later request (with another memory, an
empty one, or the memory a candidate returned: ``memory_from``); a memory may be
absent, ``null``, ``{}``, carry a history, a summary, notes and keys the package
does not use, or be incompatible. The summary threshold is drawn around the
prompts' lengths (and left at its default now and then), the compute order is
either order, an input asks for one to three candidates, may offer tools and
attributes and may coach a call; the summarizer may reply, reply blank or fail,
and any commander call may fail. Every choice shrinks towards one request of one
input and one candidate with an empty memory.

:func:`check_candidates` runs the script on the runtime and on the reference
simulator and compares, in this order, each comparison naming the rules it
decides (the first broken one is charged):

- the summarizer calls: for which request and input (CA-010, CA-011, CA-014,
  CA-015) and what each was shown (CA-012), both also CA-004's (a summary taken
  from anywhere but the supplied memory shows first as a call skipped or fed
  from elsewhere);
- the commander calls: for which request, input and candidate (CA-001, CA-008,
  CA-015), and the prompt each was given (CA-004, CA-006, CA-010, CA-011, CA-013,
  CA-022);
- the answers: one per input and candidate in the request's order (CA-001,
  CA-021; the same answers in another order: CA-021 alone), each ``ok`` or an
  error of the reference's kind, component and key (CA-001, CA-008, CA-015,
  CA-016), with its decision (CA-001) and its whole memory (the history and
  notes: CA-002, CA-003, CA-013, CA-016, CA-022; the summary: CA-002, CA-004,
  CA-013, CA-014; the keys the package does not use: CA-007);
- each answer's internal steps: the components, origins, outputs and failures in
  execution order (CA-014, CA-017, CA-019, CA-020), their ids (CA-018), and each
  step's prompt and input elements as the kit's model saw that call (CA-018).

Everything is read from what the kit observed: the fake model's requests on the
timeline and the answers the runtime returned; compute order is the package's
own, so calls are compared as the sequence the configured order fixes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import example, given, reject, settings
from hypothesis import strategies as st

from memconform.adapters.memory import MemoryStore
from memconform.harness.environment import ScriptError
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import SCRIPT_SCHEMA, Runtime, observe
from memconform.properties.runs import RunDivergence
from memconform.properties.settings import fixed_draws
from memconform.simulator.candidates import (
    IncompatibleMemory,
    load_memory,
    render_commander_prompt,
)
from memconform.simulator.runtime import Simulator
from memconform.values import same_value

__all__ = ["EXPLICIT", "RULES", "candidate_scripts", "candidates_property", "check_candidates"]

RULES: tuple[str, ...] = tuple(f"CA-{n:03d}" for n in range(1, 23) if n not in (5, 9))
"""Every rule a comparison of :func:`check_candidates` may name (CA-005 needs a
fresh process and CA-009 is a MAY: neither is compared here)."""

_WORDS = ("Nafplio", "ferry", "Hydra", "quiet", "Καλημέρα", "café", "😀", "8pm", "{}", "a,b")
_text = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join)
_IDS = ("ep-1", "ep-2", "ep-3")


@st.composite
def _history(draw: st.DrawFn) -> list[dict[str, str]]:
    size = draw(st.integers(0, 4))
    return [{"role": ("user", "assistant")[n % 2], "content": draw(_text)} for n in range(size)]


@st.composite
def _memory(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(("absent", "full", "full", "full", "null", "empty", "bad")))
    if kind == "absent":
        return ...
    if kind == "null":
        return None
    if kind == "empty":
        return {}
    if kind == "bad":
        return draw(st.sampled_from(({"history": "no list"}, {"summary": 7},
                                     {"memory_list": {"a": 1}}, [1, 2])))
    memory: dict[str, Any] = {}
    memory["history"] = draw(_history())
    if draw(st.booleans()):
        memory["summary"] = draw(st.one_of(st.none(), _text))
    if draw(st.booleans()):
        memory["memory_list"] = draw(st.lists(_text, max_size=2))
    if draw(st.booleans()):
        memory["profile"] = {"traveller": draw(_text)}
    return memory


@st.composite
def _input(draw: st.DrawFn, input_id: str, earlier: list[list[int]],
           earlier_ids: list[str]) -> dict[str, Any]:
    candidates = draw(st.integers(1, 3))
    item: dict[str, Any] = {"input_id": input_id, "instruction": draw(_text),
                            "candidates": candidates}
    continued: bool = draw(st.booleans())
    if earlier and continued:
        r = draw(st.integers(0, len(earlier) - 1))
        i = draw(st.integers(0, len(earlier[r]) - 1))
        c = draw(st.integers(0, earlier[r][i] - 1))
        item["memory_from"] = {"request": earlier_ids[r], "input": i, "candidate": c}
    else:
        memory = draw(_memory())
        if memory is not ...:
            item["memory"] = memory
    if draw(st.booleans()):
        item["tools"] = draw(st.lists(st.sampled_from(("ferry_times", "book")), min_size=1,
                                      max_size=2, unique=True))
    if draw(st.integers(0, 3)) == 0:
        item["attributes"] = {"lang": draw(st.sampled_from(("el", "en")))}
    if draw(st.integers(0, 3)) == 0:
        which = draw(st.sampled_from(("summarizer", "commander")))
        coached: dict[str, Any] = {"component": which, "output": draw(_text)}
        if which == "commander":
            coached["candidate"] = draw(st.integers(0, candidates - 1))
        item["coaching"] = [coached]
    return item


def _reply(draw: st.DrawFn, component: str, n: int) -> dict[str, Any]:
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return {"fail": {"type": f"{component.title()}Error", "message": f"{component} down"}}
    if component == "summarizer" and choice == 1:
        return {"reply": draw(st.sampled_from(("", "  ")))}
    if component == "commander" and choice == 1:
        return {"reply": json.dumps({"say": f"c{n}", "action": {"book": n}})}
    return {"reply": f"{component[0]}{n} {draw(_text)}"}


@st.composite
def candidate_scripts(draw: st.DrawFn) -> dict[str, Any]:
    """A ``candidates`` script (schema, profile, package, requests, model)."""
    requests: list[dict[str, Any]] = []
    shapes: list[list[int]] = []
    ids: list[str] = []
    for r in range(draw(st.integers(1, 3))):
        chosen = draw(st.lists(st.sampled_from(_IDS), min_size=1, max_size=2, unique=True))
        inputs = [draw(_input(input_id, shapes, ids)) for input_id in chosen]
        requests.append({"id": f"r{r + 1}", "inputs": inputs})
        shapes.append([item["candidates"] for item in inputs])
        ids.append(f"r{r + 1}")
    calls = sum(sum(shape) for shape in shapes)
    script: dict[str, Any] = {
        "schema": SCRIPT_SCHEMA, "profile": "candidates", "requests": requests,
        "model": {
            "summarizer": [_reply(draw, "summarizer", n) for n in range(1, len(ids) * 2 + 1)],
            "commander": [_reply(draw, "commander", n) for n in range(1, calls + 1)],
        },
    }
    package: dict[str, Any] = {}
    threshold = draw(st.integers(0, 4))
    if threshold in (1, 2):  # at the first input's prompt length, one either side or on it
        package["summary_threshold"] = max(0, _prompt_length(requests[0]["inputs"][0])
                                           + draw(st.sampled_from((0, -1, 1))))
    elif threshold:
        package["summary_threshold"] = draw(st.integers(0, 160))
    if draw(st.booleans()):
        package["order"] = draw(st.sampled_from(("request", "reverse")))
    if package:
        script["package"] = package
    return script


def _prompt_length(item: Mapping[str, Any]) -> int:
    """The length of an input's first commander prompt as the reference renders
    it (0 when its memory is not one the reference reads)."""
    try:
        memory = load_memory(item.get("memory"))
    except IncompatibleMemory:
        return 0
    return len(render_commander_prompt(memory, item["instruction"], item.get("tools", ()),
                                       item.get("attributes")).text)


def _reused(first: list[dict[str, str]], second: list[dict[str, str]]) -> dict[str, Any]:
    """One input id in two requests, each with an over-long history of its own."""
    return {
        "schema": SCRIPT_SCHEMA, "profile": "candidates", "package": {"summary_threshold": 20},
        "requests": [
            {"id": "r1", "inputs": [{"input_id": "ep-1", "instruction": "Book it.",
                                     "memory": {"history": first}}]},
            {"id": "r2", "inputs": [{"input_id": "ep-1", "instruction": "Book it.",
                                     "memory": {"history": second}}]},
        ],
        "model": {"summarizer": [{"reply": "s1 hotel"}, {"reply": "s2 table"}],
                  "commander": [{"reply": "c1 booked"}, {"reply": "c2 booked"}]},
    }


def _at_threshold(delta: int) -> dict[str, Any]:
    """One input with history whose prompt is ``delta`` characters over the threshold."""
    item = {"input_id": "ep-1", "instruction": "Book it.",
            "memory": {"history": [{"role": "user", "content": "Find a ferry."}]}}
    return {
        "schema": SCRIPT_SCHEMA, "profile": "candidates",
        "package": {"summary_threshold": _prompt_length(item) - delta},
        "requests": [{"id": "r1", "inputs": [item]}],
        "model": {"summarizer": [{"reply": "s1 ferry"}], "commander": [{"reply": "c1 ok"}]},
    }


def _two_inputs_reversed() -> dict[str, Any]:
    """Two inputs of two candidates, computed back to front; one memory incompatible."""
    return {
        "schema": SCRIPT_SCHEMA, "profile": "candidates", "package": {"order": "reverse"},
        "requests": [{"id": "r1", "inputs": [
            {"input_id": "ep-1", "instruction": "Book it.", "candidates": 2},
            {"input_id": "ep-2", "instruction": "Book it.", "candidates": 2},
            {"input_id": "ep-3", "instruction": "Book it.", "memory": {"history": "none"}},
        ]}],
        "model": {"commander": [{"reply": f"c{n} ok"} for n in range(1, 6)]},
    }


EXPLICIT: tuple[dict[str, Any], ...] = (
    _two_inputs_reversed(),
    _reused([{"role": "user", "content": "Find a hotel in Nafplio."}],
            [{"role": "user", "content": "Find a table for two."}]),
    _at_threshold(0),
    _at_threshold(1),
)
"""Scripts every search tries before it generates any: the second condition of
CA-004 (an input id a later request reuses, summarized from its own history)
CA-010's boundary (a prompt exactly at the threshold and one character over
it), and answers computed back to front beside an incompatible memory (CA-021,
CA-008)."""


# -- the comparison ---------------------------------------------------------------------


def _check(rules: tuple[str, ...], what: str, expected: Any, observed: Any) -> None:
    if not same_value(expected, observed):
        raise RunDivergence(rules, what, expected, observed)


def _calls(observation: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every component call the kit saw, model or coached, in order."""
    found = []
    for entry in observation.get("timeline") or []:
        if entry.get("kind") == "model":
            request = entry.get("request") if isinstance(entry.get("request"), Mapping) else {}
            found.append({"component": entry.get("name"), **request})
        elif entry.get("kind") == "event" and entry.get("name") == "coaching":
            found.append(dict(entry))
    return found


def _where(call: Mapping[str, Any]) -> tuple[Any, ...]:
    return (call.get("request"), call.get("input_id"), call.get("input"))


def _compare_calls(expected: list[dict[str, Any]], observed: list[dict[str, Any]]) -> None:
    def of(calls: list[dict[str, Any]], component: str) -> list[dict[str, Any]]:
        return [c for c in calls if c.get("component") == component]

    ref, seen = of(expected, "summarizer"), of(observed, "summarizer")
    _check(("CA-004", "CA-010", "CA-011", "CA-014", "CA-015"),
           "the summarizer calls (request, input id, input)",
           [_where(c) for c in ref], [_where(c) for c in seen])
    _check(("CA-004", "CA-012"),
           "what each summarizer call was shown (previous summary, history)",
           [(c.get("input_elements") or {}) for c in ref],
           [(c.get("input_elements") or {}) for c in seen])
    ref, seen = of(expected, "commander"), of(observed, "commander")
    _check(("CA-001", "CA-008", "CA-015"),
           "the commander calls (request, input id, input, candidate)",
           [(*_where(c), c.get("candidate")) for c in ref],
           [(*_where(c), c.get("candidate")) for c in seen])
    _check(("CA-004", "CA-006", "CA-010", "CA-011", "CA-013", "CA-022"),
           "the prompt of each commander call", [c.get("prompt") for c in ref],
           [c.get("prompt") for c in seen])


def _answers(observation: Mapping[str, Any]) -> list[tuple[Any, Any, list[Any]]]:
    out = []
    for response in observation.get("responses") or []:
        for item in (response.get("inputs") or []) if isinstance(response, Mapping) else []:
            if isinstance(item, Mapping):
                out.append((response.get("request"), item.get("input_id"),
                            list(item.get("candidates") or [])))
    return out


def _error(entry: Mapping[str, Any]) -> Any:
    error = entry.get("error")
    if not isinstance(error, Mapping):
        return None
    return {key: error.get(key) for key in ("kind", "component", "key")}


def _memory_parts(entry: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    memory = entry.get("memory")
    if not isinstance(memory, Mapping):
        return memory, memory, memory
    other = {k: v for k, v in memory.items() if k not in ("history", "summary", "memory_list")}
    return other, memory.get("summary"), (memory.get("history"), memory.get("memory_list"))


def _compare_answers(expected: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    ref, seen = _answers(expected), _answers(observed)
    shape = [(r, i, len(c)) for r, i, c in ref]
    _check(("CA-001", "CA-021"), "the answers: request, input id and number of candidates, "
           "in the request's order", shape, [(r, i, len(c)) for r, i, c in seen])
    for rid in dict.fromkeys(r for r, _, _ in ref):  # the same answers in another order
        want_all = [e for r, _, c in ref if r == rid for e in c]
        got_all = [e for r, _, c in seen if r == rid for e in c]
        if sorted(map(_key, want_all)) == sorted(map(_key, got_all)):
            _check(("CA-021",), f"the answers of request {rid!r}, in input and candidate "
                   "order", [c for r, _, c in ref if r == rid],
                   [c for r, _, c in seen if r == rid])
    for (rid, iid, want), (_, _, got) in zip(ref, seen, strict=True):
        where = f"input {iid!r} of request {rid!r}"
        for k, (a, given_b) in enumerate(zip(want, got, strict=True)):
            b = given_b if isinstance(given_b, Mapping) else {"status": repr(given_b)}
            at = f"candidate {k} of {where}"
            _check(("CA-001", "CA-008", "CA-015", "CA-016"), f"the status and error of {at}",
                   (a.get("status"), _error(a)), (b.get("status"), _error(b)))
            _check(("CA-001",), f"the decision of {at}", a.get("decision"), b.get("decision"))
            (o1, s1, h1), (o2, s2, h2) = _memory_parts(a), _memory_parts(b)
            _check(("CA-002", "CA-003", "CA-013", "CA-016", "CA-022"),
                   f"the history and notes in the memory of {at}", h1, h2)
            _check(("CA-002", "CA-004", "CA-013", "CA-014"), f"the summary in the memory of {at}",
                   s1, s2)
            _check(("CA-007",), f"the memory keys the package does not use, {at}", o1, o2)


def _key(entry: Any) -> str:
    return json.dumps(entry, sort_keys=True, default=str)


def _compare_steps(expected: Mapping[str, Any], observed: Mapping[str, Any],
                   seen_calls: list[dict[str, Any]]) -> None:
    def shape(step: Mapping[str, Any]) -> tuple[Any, ...]:
        return (step.get("component"), step.get("origin"), step.get("output_raw"),
                "error" in step)

    for (rid, iid, want), (_, _, got) in zip(_answers(expected), _answers(observed),
                                             strict=True):
        for k, (a, b) in enumerate(zip(want, got, strict=True)):
            at = f"candidate {k} of input {iid!r} of request {rid!r}"
            given_steps = b.get("internal_steps") if isinstance(b, Mapping) else None
            mine = [s for s in (given_steps if isinstance(given_steps, list) else [])
                    if isinstance(s, Mapping)]
            theirs = list(a.get("internal_steps") or [])
            _check(("CA-014", "CA-017", "CA-019", "CA-020"),
                   f"the internal steps of {at} (component, origin, output, failed)",
                   [shape(s) for s in theirs], [shape(s) for s in mine])
            _check(("CA-018",), f"the step ids and full prompts of {at}",
                   [(s.get("id"), s.get("full_prompt")) for s in theirs],
                   [(s.get("id"), s.get("full_prompt")) for s in mine])
            for step in mine:
                call = next((c for c in seen_calls
                             if (c.get("request"), c.get("input_id")) == (rid, iid)
                             and c.get("component") == step.get("component")
                             and c.get("prompt") == step.get("full_prompt")), None)
                shown = (call or {}).get("input_elements")
                _check(("CA-018",), f"the input elements of step {step.get('id')!r} of {at}, "
                       "as the kit's model was shown them", shown, step.get("input_elements"))


class Unusable(Exception):
    """The reference itself cannot run the script (a ``memory_from`` naming a
    candidate that returned no memory): the draw is rejected."""


def _reference(script: Mapping[str, Any]) -> dict[str, Any]:
    store = RecordingStore(MemoryStore())
    try:
        return dict(observe(Simulator(), script, store))
    except ScriptError as problem:
        raise Unusable(str(problem)) from problem
    finally:
        store.close()


def check_candidates(script: Mapping[str, Any], runtime: Runtime, store: RecordingStore) -> None:
    """Run ``script`` on ``runtime`` and on the reference; raise
    :class:`~memconform.properties.runs.RunDivergence` naming the rules of the first
    comparison that differs (see the module doc), :class:`Unusable` when the
    reference cannot run it."""
    expected = _reference(script)
    first = len(store.timeline)  # the store serves every draw: this script's part only
    try:
        observed = dict(observe(runtime, copy.deepcopy(dict(script)), store))
        observed["timeline"] = list(observed.get("timeline") or [])[first:]
    except ScriptError as problem:
        raise RunDivergence(("CA-001", "CA-010", "CA-011", "CA-014", "CA-015"),
                            "the runtime went off the script", "the scripted calls",
                            str(problem)) from problem
    expected_calls, observed_calls = _calls(expected), _calls(observed)
    _compare_calls(expected_calls, observed_calls)
    _compare_answers(expected, observed)
    _compare_steps(expected, observed, observed_calls)


def candidates_property(
    runtime: Runtime, store: RecordingStore, chosen: settings,
    failed: Callable[[dict[str, Any]], None] | None = None,
) -> Callable[[], None]:
    """The Hypothesis search of :func:`check_candidates` under ``chosen``
    settings; ``failed`` is told every script that diverges (the last one told is
    the shrunk counterexample)."""

    @chosen
    @given(candidate_scripts())
    def each(script: dict[str, Any]) -> None:
        try:
            check_candidates(script, runtime, store)
        except Unusable:
            reject()
        except RunDivergence:
            if failed is not None:
                failed(script)
            raise

    for script in EXPLICIT:
        each = example(script)(each)

    def search() -> None:
        with fixed_draws():
            each()

    return search


def explain(scripts: Sequence[Mapping[str, Any]]) -> str:
    """The last script of ``scripts`` as indented JSON (for a failure message)."""
    return json.dumps(scripts[-1], indent=1, ensure_ascii=False) if scripts else ""
