"""Step definitions of the ``candidates`` profile (document 003).

A scenario builds a script request by request (``candidates request "r1" sends
input "ep-1" …``), scripts the ``commander`` and ``summarizer`` components,
lets the runtime answer every request at once, then checks the answers against
the kit's timeline. Inputs are addressed as ``input "ep-1" of request "r1"``
and candidates by their position (``candidate 0``).

A request the scenario has "answered by a fresh package instance" is the kit's
business, not the script's: the kit answers the requests before it in its own
process and that request (with the ones after it) in a fresh process
(``memconform.simulator.job_resume --script``, started through
:mod:`memconform.adapters.fresh_process`), handing it the memories the earlier
answers returned and the rest of the model's script; the two observations are
joined into one.

What the model was really shown and what it really returned is read from the
timeline (``model`` entries and ``coaching`` events), never from the runtime's
own ``internal_steps``. Document 003 makes the internal steps part of the answer,
so the rules about that record (CA-017 to CA-020) check it against the timeline;
no other rule reads it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from memconform.adapters.proxy import AdapterContractError, RecordingStore
from memconform.simulator.candidates import render_commander_prompt
from memconform.simulator.runtime import Runtime, observe
from memconform.steps.child_runs import run_fresh
from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.values import JSONValue

__all__ = ["CandidatesRun", "CandidatesScript"]

_INPUT = r'input "(?P<iid>[^"]+)" of request "(?P<rid>[^"]+)"'
_CANDIDATE = r"candidate (?P<k>\d+) of " + _INPUT
_SENDS = r'candidates request "(?P<rid>[^"]+)" sends input "(?P<iid>[^"]+)" with '
_FOR = r'instruction "(?P<text>[^"]*)" and (?P<n>\d+) candidates?'


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _json(text: str, what: str) -> JSONValue:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{what}: not JSON: {exc}") from None


def _show(value: JSONValue) -> str:
    return json.dumps(value, indent=1, sort_keys=True)


# -- the script under construction ------------------------------------------------------


@dataclass
class CandidatesScript:
    """A ``candidates`` script being built by the Given steps."""

    package: dict[str, JSONValue] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    model: dict[str, list[dict[str, JSONValue]]] = field(default_factory=dict)
    fresh: set[str] = field(default_factory=set)
    """Requests the kit answers in a fresh process (never part of the script)."""

    def request(self, rid: str) -> dict[str, Any]:
        """The request ``rid``, created (empty) on first mention."""
        for request in self.requests:
            if request["id"] == rid:
                return request
        request = {"id": rid, "inputs": []}
        self.requests.append(request)
        return request

    def add_input(self, rid: str, item: dict[str, Any]) -> None:
        """Add one input to request ``rid``."""
        self.request(rid)["inputs"].append(item)

    def input(self, rid: str, iid: str) -> dict[str, Any]:
        """The input ``iid`` of request ``rid`` (the first with that id)."""
        inputs: list[dict[str, Any]] = self.request(rid)["inputs"]
        for item in inputs:
            if item["input_id"] == iid:
                return item
        raise ValueError(f"the scenario sends no input {iid!r} in request {rid!r}")

    def input_index(self, rid: str, iid: str) -> int:
        """The position of input ``iid`` in request ``rid``."""
        inputs: list[dict[str, Any]] = self.request(rid)["inputs"]
        return inputs.index(self.input(rid, iid))

    def script_calls(self, component: str, steps: Sequence[dict[str, JSONValue]]) -> None:
        """Append scripted steps for ``component`` (consumed in call order)."""
        self.model.setdefault(component, []).extend(steps)

    def to_script(self) -> dict[str, Any]:
        """The script as JSON data."""
        script: dict[str, Any] = {
            "profile": "candidates",
            "requests": copy.deepcopy(self.requests),
            "model": copy.deepcopy(self.model),
        }
        if self.package:
            script["package"] = dict(self.package)
        return script


@dataclass
class CandidatesRun:
    """One answered script: the script, the supplied memories as they were before
    the runtime saw them, and the observation."""

    script: dict[str, Any]
    supplied: dict[str, Any]
    observation: dict[str, JSONValue]

    # answers

    def inputs(self, rid: str) -> list[dict[str, Any]]:
        """The answers to request ``rid``, one per input, as returned."""
        for response in self.observation.get("responses") or []:
            if response.get("request") == rid:
                return list(response.get("inputs") or [])
        raise Mismatch(f"answers to request {rid!r}", "a response", "no response to it")

    def candidates(self, rid: str, iid: str) -> list[dict[str, Any]]:
        """The candidate answers to input ``iid`` of request ``rid``."""
        for answer in self.inputs(rid):
            if answer.get("input_id") == iid:
                return list(answer.get("candidates") or [])
        raise Mismatch(
            f"answer to input {iid!r} of request {rid!r}",
            "an answer for that input",
            f"answers for {[a.get('input_id') for a in self.inputs(rid)]}",
        )

    def candidate(self, rid: str, iid: str, k: int) -> dict[str, Any]:
        """Candidate ``k``'s answer to input ``iid`` of request ``rid``."""
        answers = self.candidates(rid, iid)
        if k >= len(answers):
            raise Mismatch(
                f"candidate {k} of input {iid!r} of request {rid!r}",
                f"at least {k + 1} candidate answers",
                f"{len(answers)} candidate answers",
            )
        return answers[k]

    def memory(self, rid: str, iid: str, k: int) -> dict[str, Any]:
        """The memory candidate ``k`` returned; a Mismatch when it returned none."""
        answer = self.candidate(rid, iid, k)
        memory = answer.get("memory")
        if not isinstance(memory, dict):
            raise Mismatch(
                f"memory of candidate {k} of input {iid!r} of request {rid!r}",
                "a returned memory",
                _show(answer),
            )
        return memory

    # what the kit observed

    def calls(
        self, component: str, rid: str, iid: str, candidate: int | str | None = "any"
    ) -> list[dict[str, Any]]:
        """Timeline model calls (and coached calls) of ``component`` for one input,
        optionally for one ``candidate`` (``None``: the shared call)."""
        found = []
        for entry in self.observation.get("timeline") or []:
            is_model = entry.get("kind") == "model" and entry.get("name") == component
            is_coached = (
                entry.get("kind") == "event"
                and entry.get("name") == "coaching"
                and entry.get("component") == component
            )
            if not (is_model or is_coached):
                continue
            request = _request_of(entry)
            if request.get("request") != rid or request.get("input_id") != iid:
                continue
            if candidate != "any" and request.get("candidate") != candidate:
                continue
            found.append(entry)
        return found

    def commander_call(self, rid: str, iid: str, k: int) -> dict[str, Any]:
        """The one commander call (or coached call) the timeline shows for candidate ``k``."""
        calls = self.calls("commander", rid, iid, k)
        if len(calls) != 1:
            raise Mismatch(
                f"commander calls for candidate {k} of input {iid!r} of request {rid!r}",
                "exactly one",
                f"{len(calls)}",
            )
        return calls[0]

    def commander_prompt(self, rid: str, iid: str, k: int) -> str:
        """The prompt the timeline shows the commander received for candidate ``k``."""
        return str(_request_of(self.commander_call(rid, iid, k)).get("prompt"))


def _request_of(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    request = entry.get("request") if entry.get("kind") == "model" else entry
    return request if isinstance(request, Mapping) else {}


def _output_of(entry: Mapping[str, Any]) -> str | None:
    if entry.get("kind") == "event":
        return str(entry.get("output"))
    response = entry.get("response")
    if isinstance(response, Mapping):
        return str(response.get("reply"))
    return None


@pytest.fixture
def candidates_script() -> CandidatesScript:
    """The script this scenario builds."""
    return CandidatesScript()


# -- Given: the package ---------------------------------------------------------------


@given("a candidates package with the default summary threshold")
def _default_threshold(candidates_script: CandidatesScript) -> None:
    candidates_script.package.pop("summary_threshold", None)


@given(parsers.parse("a candidates package whose summary threshold is {threshold}"))
def _threshold(candidates_script: CandidatesScript, threshold: str) -> None:
    if threshold == "the default":
        candidates_script.package.pop("summary_threshold", None)
    else:
        candidates_script.package["summary_threshold"] = int(threshold)


@given(parsers.parse("the candidates package computes inputs and candidates in {order} order"))
def _order(candidates_script: CandidatesScript, order: str) -> None:
    candidates_script.package["order"] = order


# -- Given: requests and inputs ---------------------------------------------------------


@given(parsers.re(_SENDS + "an empty memory, " + _FOR), converters={"n": int})
def _send_empty(candidates_script: CandidatesScript, rid: str, iid: str, text: str, n: int) -> None:
    candidates_script.add_input(
        rid, {"input_id": iid, "instruction": text, "candidates": n, "memory": {}}
    )


@given(parsers.re(_SENDS + "the memory below, " + _FOR), converters={"n": int})
def _send_memory(
    candidates_script: CandidatesScript, rid: str, iid: str, text: str, n: int, docstring: str
) -> None:
    memory = _json(docstring, "the memory below")
    candidates_script.add_input(
        rid, {"input_id": iid, "instruction": text, "candidates": n, "memory": memory}
    )


@given(parsers.re(_SENDS + r"the memory '(?P<memory>.*)', " + _FOR), converters={"n": int})
def _send_inline_memory(
    candidates_script: CandidatesScript, rid: str, iid: str, memory: str, text: str, n: int
) -> None:
    candidates_script.add_input(
        rid,
        {
            "input_id": iid, "instruction": text, "candidates": n,
            "memory": _json(memory, "the memory"),
        },
    )


@given(
    parsers.re(
        _SENDS + r"an empty memory and an instruction of (?P<size>\d+) characters, "
        r"for (?P<n>\d+) candidates?"
    ),
    converters={"size": int, "n": int},
)
def _send_long_instruction(
    candidates_script: CandidatesScript, rid: str, iid: str, size: int, n: int
) -> None:
    text = ("Plan every leg of the island trip. " * (size // 35 + 1))[:size]
    candidates_script.add_input(
        rid, {"input_id": iid, "instruction": text, "candidates": n, "memory": {}}
    )


@given(
    parsers.re(
        _SENDS + r"a (?P<script>Greek )?history making its commander prompt (?P<size>\d+) "
        r"characters long, " + _FOR
    ),
    converters={"size": int, "n": int},
)
def _send_sized_history(
    candidates_script: CandidatesScript, rid: str, iid: str, size: int, text: str, n: int,
    script: str | None = None,
) -> None:
    """The history holds one exchange padded so that the rendered commander prompt
    (the format of the reference package) has exactly ``size`` characters. A
    ``Greek`` history is written in Greek letters padded with letters and emoji
    (two and four UTF-8 bytes each, an emoji two UTF-16 units), so a package
    measuring bytes or UTF-16 units instead of characters miscounts it."""
    greek = bool(script)

    def memory(pad: int) -> dict[str, JSONValue]:
        ask = "Πες μου για τα πλοία 🚢" if greek else "Tell me about the ferries."
        padding = ("ώ🚢" * pad)[:pad] if greek else "." * pad
        answer = "Φεύγουν κάθε ώρα ⛴" if greek else "They leave every hour."
        return {
            "history": [
                {"role": "user", "content": ask + padding},
                {"role": "assistant", "content": answer},
            ]
        }

    base = len(render_commander_prompt(memory(0), text).text)
    if size < base:
        raise ValueError(f"a prompt of {size} characters cannot hold this history")
    candidates_script.add_input(
        rid,
        {"input_id": iid, "instruction": text, "candidates": n, "memory": memory(size - base)},
    )


@given(
    parsers.re(
        r'candidates request "(?P<rid>[^"]+)" continues candidate (?P<k>\d+) of '
        r'input "(?P<src_iid>[^"]+)" of request "(?P<src_rid>[^"]+)" as input "(?P<iid>[^"]+)" '
        r"with " + _FOR
    ),
    converters={"k": int, "n": int},
)
def _send_continuation(
    candidates_script: CandidatesScript,
    rid: str, k: int, src_iid: str, src_rid: str, iid: str, text: str, n: int,
) -> None:
    source = {
        "request": src_rid,
        "input": candidates_script.input_index(src_rid, src_iid),
        "candidate": k,
    }
    candidates_script.add_input(
        rid, {"input_id": iid, "instruction": text, "candidates": n, "memory_from": source}
    )


@given(parsers.parse('candidates request "{rid}" is answered by a fresh package instance '
                     'in a fresh process'))
def _fresh_instance(candidates_script: CandidatesScript, rid: str) -> None:
    candidates_script.request(rid)
    candidates_script.fresh.add(rid)


@given(parsers.re(r"the " + _INPUT + r' offers the tools "(?P<names>[^"]+)"'))
def _tools(candidates_script: CandidatesScript, iid: str, rid: str, names: str) -> None:
    candidates_script.input(rid, iid)["tools"] = _split(names)


@given(
    parsers.re(r"the commander call of " + _CANDIDATE + r" is coached with '(?P<output>.*)'"),
    converters={"k": int},
)
def _coach_commander(
    candidates_script: CandidatesScript, k: int, iid: str, rid: str, output: str
) -> None:
    item = candidates_script.input(rid, iid)
    item.setdefault("coaching", []).append(
        {"component": "commander", "candidate": k, "output": output}
    )


# -- Given: the components ---------------------------------------------------------------


@given("the commander replies in call order:")
def _commander_table(candidates_script: CandidatesScript, datatable: list[list[str]]) -> None:
    header, *rows = datatable
    steps: list[dict[str, JSONValue]] = []
    for row in rows:
        cells = dict(zip(header, row, strict=True))
        if cells.get("fails"):
            steps.append({"fail": {"type": "CommanderError", "message": cells["fails"]}})
        else:
            steps.append({"reply": cells.get("reply", "")})
    candidates_script.script_calls("commander", steps)


@given(parsers.parse('the commander replies "{replies}" in call order'))
def _commander_replies(candidates_script: CandidatesScript, replies: str) -> None:
    candidates_script.script_calls("commander", [{"reply": r} for r in _split(replies)])


@given(parsers.parse('the summarizer replies "{replies}" in call order'))
def _summarizer_replies(candidates_script: CandidatesScript, replies: str) -> None:
    candidates_script.script_calls("summarizer", [{"reply": r} for r in _split(replies)])


@given(parsers.parse('the summarizer fails with "{message}"'))
def _summarizer_fails(candidates_script: CandidatesScript, message: str) -> None:
    candidates_script.script_calls(
        "summarizer", [{"fail": {"type": "SummarizerError", "message": message}}]
    )


@given("the summarizer replies with a blank summary")
def _summarizer_blank(candidates_script: CandidatesScript) -> None:
    candidates_script.script_calls("summarizer", [{"reply": ""}])


# -- When ----------------------------------------------------------------------------


@when("the candidates package answers the requests", target_fixture="candidates_run")
def _answer(
    request: pytest.FixtureRequest, candidates_script: CandidatesScript, runtime: Runtime,
    store: RecordingStore, store_url: str,
) -> CandidatesRun:
    script = candidates_script.to_script()
    supplied = copy.deepcopy(script)
    parts = _parts(script, candidates_script.fresh)
    options: list[str] = []
    if request.config.getoption("--memconform-mutant"):
        options += ["--mutant", str(request.config.getoption("--memconform-mutant"))]
    if request.config.getoption("--memconform-runtime"):
        options += ["--runtime", str(request.config.getoption("--memconform-runtime"))]
    observation: dict[str, Any] = {}
    for number, part in enumerate(parts):
        if number == 0 and part["requests"]:
            try:
                observation = dict(observe(runtime, part, store))
            except AdapterContractError:
                raise
            except Exception as exc:
                raise Mismatch(
                    "the runtime answering the candidates script",
                    "an observation",
                    f"{type(exc).__name__}: {exc}",
                ) from exc
        elif part["requests"]:
            child = _in_fresh_process(_resumable(part, observation), store_url, options)
            observation = _merged(observation, child)
    return CandidatesRun(script, supplied, observation)


def _parts(script: Mapping[str, Any], fresh: set[str]) -> list[dict[str, Any]]:
    """``script`` cut before each request in ``fresh``: the first part runs in the
    kit's process, each later one in a fresh process of its own."""
    parts: list[dict[str, Any]] = [{**script, "requests": []}]
    for item in script["requests"]:
        if item["id"] in fresh:
            parts.append({**script, "requests": []})
        parts[-1]["requests"].append(item)
    return parts


def _resumable(part: Mapping[str, Any], so_far: Mapping[str, Any]) -> dict[str, Any]:
    """The script a fresh process answers: a ``memory_from`` naming a request answered
    before becomes the memory that candidate returned, and each component's model
    script starts after the calls already made."""
    answers = {r.get("request"): r.get("inputs") or [] for r in so_far.get("responses") or []}
    requests = copy.deepcopy(part["requests"])
    for item in (i for r in requests for i in r["inputs"]):
        source = item.get("memory_from")
        if not isinstance(source, Mapping) or source.get("request") not in answers:
            continue
        inputs = answers[source["request"]]
        k, n = int(source.get("candidate", 0)), int(source.get("input", 0))
        given = inputs[n].get("candidates") or [] if n < len(inputs) else []
        memory = given[k].get("memory") if k < len(given) else None
        if not isinstance(memory, Mapping):
            raise Mismatch(
                f"memory of candidate {k} of input {n} of request {source['request']!r}",
                "a returned memory to hand the fresh process", _show(given[k] if k < len(
                    given) else None),
            )
        del item["memory_from"]
        item["memory"] = copy.deepcopy(dict(memory))
    made: dict[str, int] = {}
    for entry in so_far.get("timeline") or []:
        if entry.get("kind") == "model":
            made[entry["name"]] = made.get(entry["name"], 0) + 1
    model = {c: list(steps)[made.get(c, 0):] for c, steps in (part.get("model") or {}).items()}
    return {**part, "requests": requests, "model": model}


def _in_fresh_process(
    script: Mapping[str, Any], store_url: str, options: Sequence[str]
) -> dict[str, Any]:
    """Answer ``script`` in a fresh process (:func:`memconform.steps.child_runs.run_fresh`)
    and return its observation."""
    return run_fresh(store_url, script=script, options=options,
                     what="the fresh process answering the candidates requests")


def _merged(first: Mapping[str, Any], then: Mapping[str, Any]) -> dict[str, Any]:
    """One observation: ``then``'s responses after ``first``'s, and its timeline
    after ``first``'s with its sequence numbers moved past them."""
    timeline = list(first.get("timeline") or [])
    offset = max((int(e.get("seq", 0)) for e in timeline), default=0)
    later = [{**e, "seq": int(e.get("seq", 0)) + offset} for e in then.get("timeline") or []]
    merged = {**first, **then} if first else dict(then)
    merged["responses"] = [*(first.get("responses") or []), *(then.get("responses") or [])]
    merged["timeline"] = [*timeline, *later]
    return merged


# -- Then: answers and their order -------------------------------------------------------


@then(parsers.re(_INPUT + r" gets (?P<n>\d+) candidate answers?"), converters={"n": int})
@decides("CA-001")
def _count(candidates_run: CandidatesRun, iid: str, rid: str, n: int) -> None:
    expect_equal(
        f"number of candidate answers to input {iid!r} of request {rid!r}",
        n,
        len(candidates_run.candidates(rid, iid)),
    )


@then(parsers.re(r'the answers to candidates request "(?P<rid>[^"]+)" are for the inputs '
                 r'"(?P<ids>[^"]+)"'))
@decides("CA-021", "CA-022")
def _input_order(candidates_run: CandidatesRun, rid: str, ids: str) -> None:
    expect_equal(
        f"inputs answered by request {rid!r}, in order",
        _split(ids),
        [answer.get("input_id") for answer in candidates_run.inputs(rid)],
    )


@then(parsers.re(r"the decisions of " + _INPUT + r' say "(?P<says>[^"]*)"'))
@decides("CA-001", "CA-021", "CA-022")
def _decisions(candidates_run: CandidatesRun, iid: str, rid: str, says: str) -> None:
    observed = [
        (a.get("decision") or {}).get("say") if a.get("status") == "ok" else f"<{a.get('status')}>"
        for a in candidates_run.candidates(rid, iid)
    ]
    expect_equal(f"decisions of input {iid!r} of request {rid!r}, in order", _split(says), observed)


@then(parsers.re(r"the candidate answers of " + _INPUT + " are:"))
@decides("CA-001", "CA-008", "CA-010", "CA-011", "CA-016", "CA-021")
def _answers_table(
    candidates_run: CandidatesRun, iid: str, rid: str, datatable: list[list[str]]
) -> None:
    header, *rows = datatable
    expected = [dict(zip(header, row, strict=True)) for row in rows]
    observed = []
    for answer in candidates_run.candidates(rid, iid):
        shown = {
            "status": str(answer.get("status")),
            "say": str((answer.get("decision") or {}).get("say") or ""),
            "error": str((answer.get("error") or {}).get("kind") or ""),
        }
        observed.append({key: shown.get(key, "") for key in header})
    expect_equal(f"candidate answers of input {iid!r} of request {rid!r}", expected, observed)


@then(parsers.re(r"each candidate answer of " + _INPUT +
                 r" carries the commander output the timeline shows for that candidate"))
@decides("CA-001", "CA-021")
def _answers_match_timeline(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    """Read from what the caller got (the answer's status and the exchange its
    memory ends with), never from the answer's own ``internal_steps``."""
    for k, answer in enumerate(candidates_run.candidates(rid, iid)):
        output = _output_of(candidates_run.commander_call(rid, iid, k))
        expect_equal(
            f"commander output in answer {k} of input {iid!r} of request {rid!r}",
            ("error", None) if output is None else ("ok", output),
            (str(answer.get("status")), _said_last(answer)),
        )


def _said_last(answer: Mapping[str, Any]) -> str | None:
    """The last assistant exchange of a candidate's returned memory, if any."""
    memory = answer.get("memory")
    history = memory.get("history") if isinstance(memory, Mapping) else None
    said = [m.get("content") for m in history or []
            if isinstance(m, Mapping) and m.get("role") == "assistant"]
    return str(said[-1]) if said else None


# -- Then: memories ------------------------------------------------------------------------


@then(parsers.re(_CANDIDATE + " returns the memory:"), converters={"k": int})
@decides("CA-002", "CA-007", "CA-009", "CA-013", "CA-022")
def _memory_is(
    candidates_run: CandidatesRun, k: int, iid: str, rid: str, docstring: str
) -> None:
    expected = _json(docstring, "the expected memory")
    observed = candidates_run.memory(rid, iid, k)
    if expected != observed:
        raise Mismatch(
            f"memory returned by candidate {k} of input {iid!r} of request {rid!r}",
            _show(expected), _show(observed),
        )


@then(parsers.re(r"the memory of " + _CANDIDATE + r' has the summary "(?P<summary>[^"]*)"'),
      converters={"k": int})
@decides("CA-014", "CA-016")
def _memory_summary(
    candidates_run: CandidatesRun, k: int, iid: str, rid: str, summary: str
) -> None:
    expect_equal(
        f"summary in the memory of candidate {k} of input {iid!r} of request {rid!r}",
        summary, candidates_run.memory(rid, iid, k).get("summary"),
    )


@then(parsers.re(r"no candidate memory of " + _INPUT + r" holds another candidate's exchange"))
@decides("CA-003", "CA-021", "CA-022")
def _no_sibling_exchange(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    answers = candidates_run.candidates(rid, iid)
    outputs = {}
    for k, _answer in enumerate(answers):
        calls = candidates_run.calls("commander", rid, iid, k)
        output = _output_of(calls[-1]) if calls else None
        if output is not None:
            outputs[k] = output
    for k, own in outputs.items():
        history = candidates_run.memory(rid, iid, k).get("history") or []
        said = [m.get("content") for m in history if m.get("role") == "assistant"]
        for other, output in outputs.items():
            if other != k and output in said and output != own:
                raise Mismatch(
                    f"memory of candidate {k} of input {iid!r} of request {rid!r}",
                    f"no exchange of candidate {other}",
                    _show(history),
                )
        expect_equal(
            f"exchanges of candidate {k} in its own memory", 1, said.count(own)
        )


@then(parsers.re(r"changing the memory of " + _CANDIDATE +
                 r" leaves every other candidate's memory unchanged"), converters={"k": int})
@decides("CA-003")
def _mutation_isolated(candidates_run: CandidatesRun, k: int, iid: str, rid: str) -> None:
    """Changes candidate ``k``'s memory in the observation itself, as a caller
    would; later steps of the scenario see the change."""
    answers = candidates_run.candidates(rid, iid)
    others = {j: copy.deepcopy(a.get("memory")) for j, a in enumerate(answers) if j != k}
    memory = candidates_run.memory(rid, iid, k)
    history = memory.get("history")
    if isinstance(history, list):
        history.append({"role": "user", "content": "changed by the caller"})
        for message in history:
            if isinstance(message, dict):
                message["content"] = str(message.get("content")) + " (changed)"
    memory["changed_by_caller"] = True
    for j, before in others.items():
        expect_equal(
            f"memory of candidate {j} after the caller changed candidate {k}'s",
            before, answers[j].get("memory"),
        )


@then("the memories supplied in the candidates script are unchanged")
@decides("CA-003")
def _supplied_unchanged(candidates_run: CandidatesRun) -> None:
    expect_equal(
        "the script's input memories after the runtime answered",
        [[i.get("memory") for i in r["inputs"]] for r in candidates_run.supplied["requests"]],
        [[i.get("memory") for i in r["inputs"]] for r in candidates_run.script["requests"]],
    )


@then(parsers.re(r"candidate answers of " + _INPUT +
                 r" that are errors carry no decision and no memory"))
@decides("CA-008", "CA-015", "CA-016")
def _errors_bare(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    for k, answer in enumerate(candidates_run.candidates(rid, iid)):
        if answer.get("status") == "ok":
            continue
        present = sorted(key for key in ("decision", "memory") if answer.get(key) is not None)
        expect_equal(f"decision or memory in failed candidate {k}", [], present)


@then(parsers.re(r'every candidate answer of ' + _INPUT +
                 r' is an? "(?P<kind>[^"]+)" error'))
@decides("CA-008", "CA-015")
def _all_errors(candidates_run: CandidatesRun, iid: str, rid: str, kind: str) -> None:
    answers = candidates_run.candidates(rid, iid)
    if not answers:
        raise Mismatch(f"answers to input {iid!r} of request {rid!r}", "error answers", "none")
    expect_equal(
        f"status and error kind of each candidate of input {iid!r} of request {rid!r}",
        [("error", kind)] * len(answers),
        [(a.get("status"), (a.get("error") or {}).get("kind")) for a in answers],
    )


@then(parsers.re(r'every error of ' + _INPUT + r' names the memory key "(?P<key>[^"]+)"'))
@decides("CA-008")
def _errors_name_key(candidates_run: CandidatesRun, iid: str, rid: str, key: str) -> None:
    for k, answer in enumerate(candidates_run.candidates(rid, iid)):
        error = answer.get("error") or {}
        named = error.get("key") == key or f"memory.{key}" in str(error.get("message"))
        if not named:
            raise Mismatch(f"error of candidate {k}", f"an error naming {key!r}", _show(error))


# -- Then: prompts and component calls ---------------------------------------------------------


@then(parsers.re(r"the commander prompt for " + _CANDIDATE + " is:"), converters={"k": int})
@decides("CA-002", "CA-003", "CA-004", "CA-005", "CA-006", "CA-012", "CA-013", "CA-022")
def _prompt_is(
    candidates_run: CandidatesRun, k: int, iid: str, rid: str, docstring: str
) -> None:
    expect_equal(
        f"commander prompt for candidate {k} of input {iid!r} of request {rid!r}",
        docstring, candidates_run.commander_prompt(rid, iid, k),
    )


@then(parsers.re(r"the commander prompt for " + _CANDIDATE + r" is (?P<size>\d+) characters long"),
      converters={"k": int, "size": int})
@decides("CA-010", "CA-011")
def _prompt_length(candidates_run: CandidatesRun, k: int, iid: str, rid: str, size: int) -> None:
    expect_equal(
        f"length of the commander prompt for candidate {k} of input {iid!r} of request {rid!r}",
        size, len(candidates_run.commander_prompt(rid, iid, k)),
    )


@then(parsers.re(r"the commander prompts for " + _INPUT + r' and for input "(?P<iid2>[^"]+)" '
                 r'of request "(?P<rid2>[^"]+)" are the same'))
@decides("CA-002", "CA-005")
def _prompts_same(
    candidates_run: CandidatesRun, iid: str, rid: str, iid2: str, rid2: str
) -> None:
    expect_equal(
        f"commander prompt of input {iid2!r} of request {rid2!r} (vs {iid!r} of {rid!r})",
        candidates_run.commander_prompt(rid, iid, 0),
        candidates_run.commander_prompt(rid2, iid2, 0),
    )


@then(parsers.re(r"the memories of " + _INPUT + r' and of input "(?P<iid2>[^"]+)" '
                 r'of request "(?P<rid2>[^"]+)" are the same'))
@decides("CA-002", "CA-005")
def _memories_same(
    candidates_run: CandidatesRun, iid: str, rid: str, iid2: str, rid2: str
) -> None:
    expect_equal(
        f"memory of input {iid2!r} of request {rid2!r} (vs {iid!r} of {rid!r})",
        candidates_run.memory(rid, iid, 0),
        candidates_run.memory(rid2, iid2, 0),
    )


@then(parsers.re(r"no commander prompt for " + _INPUT + r' contains "(?P<text>[^"]+)"'))
@decides("CA-003", "CA-004")
def _prompt_lacks(candidates_run: CandidatesRun, iid: str, rid: str, text: str) -> None:
    for entry in candidates_run.calls("commander", rid, iid):
        prompt = str(_request_of(entry).get("prompt"))
        if text in prompt:
            raise Mismatch(
                f"commander prompt for input {iid!r} of request {rid!r}",
                f"no trace of {text!r}", prompt,
            )


@then(parsers.re(r"the (?P<component>summarizer|commander) is called (?P<n>\d+) times? for "
                 + _INPUT), converters={"n": int})
@decides("CA-010", "CA-012", "CA-014")
def _called(
    candidates_run: CandidatesRun, component: str, n: int, iid: str, rid: str
) -> None:
    expect_equal(
        f"{component} calls for input {iid!r} of request {rid!r}",
        n, len(candidates_run.calls(component, rid, iid)),
    )


@then(parsers.re(r"the (?P<component>summarizer|commander) is not called for " + _INPUT))
@decides("CA-008", "CA-011", "CA-015", "CA-019")
def _not_called(candidates_run: CandidatesRun, component: str, iid: str, rid: str) -> None:
    _called(candidates_run, component, 0, iid, rid)


@then(parsers.re(r"the summarizer for " + _INPUT + r" is never shown \"(?P<text>[^\"]+)\""))
@decides("CA-012")
def _summarizer_lacks(candidates_run: CandidatesRun, iid: str, rid: str, text: str) -> None:
    for entry in candidates_run.calls("summarizer", rid, iid):
        shown = json.dumps(_request_of(entry), ensure_ascii=False)
        if text in shown:
            raise Mismatch(
                f"what the summarizer was shown for input {iid!r} of request {rid!r}",
                f"no trace of {text!r}", shown,
            )


@then(parsers.re(r"the summarizer for " + _INPUT +
                 r" is shown the supplied history and the previous summary "
                 r"\"(?P<summary>[^\"]*)\""))
@decides("CA-012")
def _summarizer_shown(candidates_run: CandidatesRun, iid: str, rid: str, summary: str) -> None:
    calls = candidates_run.calls("summarizer", rid, iid)
    if len(calls) != 1:
        raise Mismatch(f"summarizer calls for input {iid!r}", "exactly one", str(len(calls)))
    supplied = _supplied_input(candidates_run, rid, iid)
    elements = _request_of(calls[0]).get("input_elements") or {}
    expect_equal(
        "what the summarizer was shown (previous summary, history)",
        {"previous_summary": summary, "messages": (supplied.get("memory") or {}).get("history")},
        {key: elements.get(key) for key in ("previous_summary", "messages")},
    )


def _supplied_input(run: CandidatesRun, rid: str, iid: str) -> dict[str, Any]:
    for request in run.supplied["requests"]:
        if request["id"] != rid:
            continue
        for item in request["inputs"]:
            if item["input_id"] == iid:
                return dict(item)
    raise ValueError(f"the scenario sends no input {iid!r} in request {rid!r}")


# -- Then: internal steps --------------------------------------------------------------------


def _steps(run: CandidatesRun, rid: str, iid: str, k: int) -> list[dict[str, Any]]:
    steps = run.candidate(rid, iid, k).get("internal_steps")
    if not isinstance(steps, list):
        raise Mismatch(
            f"internal steps of candidate {k} of input {iid!r} of request {rid!r}",
            "a list of step records", repr(steps),
        )
    return steps


@then(parsers.re(r"the internal steps of " + _CANDIDATE + " are:"), converters={"k": int})
@decides("CA-017", "CA-018", "CA-019", "CA-020")
def _steps_table(
    candidates_run: CandidatesRun, k: int, iid: str, rid: str, datatable: list[list[str]]
) -> None:
    header, *rows = datatable
    expected = [dict(zip(header, row, strict=True)) for row in rows]

    def cell(step: Mapping[str, Any], key: str) -> str:
        if key == "failed":
            return "yes" if step.get("error") else "no"
        value = step.get(key)
        return "<null>" if value is None else str(value)

    observed = [{key: cell(step, key) for key in header}
                for step in _steps(candidates_run, rid, iid, k)]
    expect_equal(
        f"internal steps of candidate {k} of input {iid!r} of request {rid!r}", expected, observed
    )


@then(parsers.re(r'the internal step "(?P<sid>[^"]+)" of ' + _CANDIDATE + " is:"),
      converters={"k": int})
@decides("CA-017", "CA-018", "CA-019")
def _step_is(
    candidates_run: CandidatesRun, sid: str, k: int, iid: str, rid: str, docstring: str
) -> None:
    expected = _json(docstring, "the expected step record")
    found = [s for s in _steps(candidates_run, rid, iid, k) if s.get("id") == sid]
    observed = found[0] if len(found) == 1 else found
    if expected != observed:
        raise Mismatch(f"internal step {sid!r} of candidate {k}", _show(expected), _show(observed))


@then(parsers.re(r"every candidate of " + _INPUT +
                 r" starts its internal steps with the same summarizer record"))
@decides("CA-017")
def _shared_summary_record(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    """The internal-steps record (CA-017); that the summary was computed once is
    CA-014's and is read from the timeline."""
    answers = candidates_run.candidates(rid, iid)
    firsts: list[Any] = []
    for k in range(len(answers)):
        steps = _steps(candidates_run, rid, iid, k)
        firsts.append(steps[0] if steps else None)
    if not firsts or not isinstance(firsts[0], dict) or firsts[0].get("component") != "summarizer":
        raise Mismatch("first internal step of candidate 0", "a summarizer record", _show(firsts))
    for k, first in enumerate(firsts):
        expect_equal(f"first internal step of candidate {k}", firsts[0], first)


@then(parsers.re(r"every internal step of " + _INPUT +
                 r" records what the timeline shows the component received and returned"))
@decides("CA-017", "CA-018", "CA-019", "CA-020")
def _steps_match_timeline(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    for k, _answer in enumerate(candidates_run.candidates(rid, iid)):
        for step in _steps(candidates_run, rid, iid, k):
            component = str(step.get("component"))
            shared = component == "summarizer"
            calls = candidates_run.calls(component, rid, iid, None if shared else k)
            if len(calls) != 1:
                raise Mismatch(
                    f"{component} calls behind step {step.get('id')} of candidate {k}",
                    "exactly one", str(len(calls)),
                )
            request = _request_of(calls[0])
            expect_equal(
                f"step {step.get('id')} of candidate {k}: prompt, elements, output, origin",
                {
                    "full_prompt": request.get("prompt"),
                    "input_elements": request.get("input_elements"),
                    "output_raw": _output_of(calls[0]),
                    "origin": "coaching" if calls[0].get("kind") == "event" else "model",
                },
                {key: step.get(key)
                 for key in ("full_prompt", "input_elements", "output_raw", "origin")},
            )
