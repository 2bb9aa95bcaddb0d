"""Then steps of the ``candidates`` profile on the memories the answers return,
their isolation from one another and the errors that stand in for them
(``features/candidates/memory.feature``).
"""

from __future__ import annotations

import copy

from pytest_bdd import parsers, then

from memconform.steps.candidates_world import (
    CANDIDATE,
    INPUT,
    CandidatesRun,
    json_value,
    output_of,
    show,
)
from memconform.steps.common import Mismatch, decides, expect_equal


@then(parsers.re(CANDIDATE + " returns the memory:"), converters={"k": int})
@decides("CA-002", "CA-007", "CA-009", "CA-013", "CA-016", "CA-022")
def _memory_is(
    candidates_run: CandidatesRun, k: int, iid: str, rid: str, docstring: str
) -> None:
    expected = json_value(docstring, "the expected memory")
    observed = candidates_run.memory(rid, iid, k)
    if expected != observed:
        raise Mismatch(
            f"memory returned by candidate {k} of input {iid!r} of request {rid!r}",
            show(expected), show(observed),
        )


@then(parsers.re(r"the memory of " + CANDIDATE + r' has the summary "(?P<summary>[^"]*)"'),
      converters={"k": int})
@decides("CA-014", "CA-016")
def _memory_summary(
    candidates_run: CandidatesRun, k: int, iid: str, rid: str, summary: str
) -> None:
    expect_equal(
        f"summary in the memory of candidate {k} of input {iid!r} of request {rid!r}",
        summary, candidates_run.memory(rid, iid, k).get("summary"),
    )


@then(parsers.re(r"no candidate memory of " + INPUT + r" holds another candidate's exchange"))
@decides("CA-003", "CA-021", "CA-022")
def _no_sibling_exchange(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    answers = candidates_run.candidates(rid, iid)
    outputs = {}
    for k, _answer in enumerate(answers):
        calls = candidates_run.calls("commander", rid, iid, k)
        output = output_of(calls[-1]) if calls else None
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
                    show(history),
                )
        expect_equal(
            f"exchanges of candidate {k} in its own memory", 1, said.count(own)
        )


@then(parsers.re(r"changing the memory of " + CANDIDATE +
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


@then(parsers.re(r"candidate answers of " + INPUT +
                 r" that are errors carry no decision and no memory"))
@decides("CA-008", "CA-015", "CA-016")
def _errors_bare(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    for k, answer in enumerate(candidates_run.candidates(rid, iid)):
        if answer.get("status") == "ok":
            continue
        present = sorted(key for key in ("decision", "memory") if answer.get(key) is not None)
        expect_equal(f"decision or memory in failed candidate {k}", [], present)


@then(parsers.re(r'every candidate answer of ' + INPUT +
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


@then(parsers.re(r'every error of ' + INPUT + r' names the memory key "(?P<key>[^"]+)"'))
@decides("CA-008")
def _errors_name_key(candidates_run: CandidatesRun, iid: str, rid: str, key: str) -> None:
    for k, answer in enumerate(candidates_run.candidates(rid, iid)):
        error = answer.get("error") or {}
        named = error.get("key") == key or f"memory.{key}" in str(error.get("message"))
        if not named:
            raise Mismatch(f"error of candidate {k}", f"an error naming {key!r}", show(error))
