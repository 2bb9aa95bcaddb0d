"""Step definitions of the ``candidates`` profile (document 003): the package,
the requests and the components (Given) and the answer (When).

A scenario builds a script request by request (``candidates request "r1" sends
input "ep-1" …``), scripts the ``commander`` and ``summarizer`` components,
lets the runtime answer every request at once, then checks the answers against
the kit's timeline. Inputs are addressed as ``input "ep-1" of request "r1"``
and candidates by their position (``candidate 0``). The Then steps live in the
family modules ``candidates_answers``, ``candidates_memories``,
``candidates_prompts`` and ``candidates_internal_steps``; the script and the
run in ``candidates_world``.

A request the scenario has "answered by a fresh package instance" is the kit's
business, not the script's: the kit answers the requests before it in its own
process and that request (with the ones after it) in a fresh process
(``memconform.steps.job_resume --script``, started through
:mod:`memconform.harness.fresh_process`), handing it the memories the earlier
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
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from pytest_bdd import given, parsers, when

from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.harness.runtime import Runtime, observe
from memconform.simulator.candidates import render_commander_prompt
from memconform.steps.candidates_world import (
    CANDIDATE,
    FOR,
    INPUT,
    SENDS,
    CandidatesRun,
    CandidatesScript,
    json_value,
    show,
    split_list,
)
from memconform.steps.child_runs import run_fresh
from memconform.steps.common import Mismatch
from memconform.values import JSONValue

__all__ = ["CandidatesRun", "CandidatesScript"]


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


@given(parsers.re(SENDS + "an empty memory, " + FOR), converters={"n": int})
def _send_empty(candidates_script: CandidatesScript, rid: str, iid: str, text: str, n: int) -> None:
    candidates_script.add_input(
        rid, {"input_id": iid, "instruction": text, "candidates": n, "memory": {}}
    )


@given(parsers.re(SENDS + "the memory below, " + FOR), converters={"n": int})
def _send_memory(
    candidates_script: CandidatesScript, rid: str, iid: str, text: str, n: int, docstring: str
) -> None:
    memory = json_value(docstring, "the memory below")
    candidates_script.add_input(
        rid, {"input_id": iid, "instruction": text, "candidates": n, "memory": memory}
    )


@given(parsers.re(SENDS + r"the memory '(?P<memory>.*)', " + FOR), converters={"n": int})
def _send_inline_memory(
    candidates_script: CandidatesScript, rid: str, iid: str, memory: str, text: str, n: int
) -> None:
    candidates_script.add_input(
        rid,
        {
            "input_id": iid, "instruction": text, "candidates": n,
            "memory": json_value(memory, "the memory"),
        },
    )


@given(
    parsers.re(
        SENDS + r"an empty memory and an instruction of (?P<size>\d+) characters, "
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
        SENDS + r"a (?P<script>Greek )?history making its commander prompt (?P<size>\d+) "
        r"characters long, " + FOR
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
        r"with " + FOR
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


@given(parsers.re(r"the " + INPUT + r' offers the tools "(?P<names>[^"]+)"'))
def _tools(candidates_script: CandidatesScript, iid: str, rid: str, names: str) -> None:
    candidates_script.input(rid, iid)["tools"] = split_list(names)


@given(
    parsers.re(r"the commander call of " + CANDIDATE + r" is coached with '(?P<output>.*)'"),
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
    candidates_script.script_calls("commander", [{"reply": r} for r in split_list(replies)])


@given(parsers.parse('the summarizer replies "{replies}" in call order'))
def _summarizer_replies(candidates_script: CandidatesScript, replies: str) -> None:
    candidates_script.script_calls("summarizer", [{"reply": r} for r in split_list(replies)])


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
                "a returned memory to hand the fresh process", show(given[k] if k < len(
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
