"""Then steps of the ``candidates`` profile on the answers and their order
(``features/candidates/responses.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_bdd import parsers, then

from memconform.steps.candidates_world import INPUT, CandidatesRun, output_of, split_list
from memconform.steps.common import decides, expect_equal


@then(parsers.re(INPUT + r" gets (?P<n>\d+) candidate answers?"), converters={"n": int})
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
        split_list(ids),
        [answer.get("input_id") for answer in candidates_run.inputs(rid)],
    )


@then(parsers.re(r"the decisions of " + INPUT + r' say "(?P<says>[^"]*)"'))
@decides("CA-001", "CA-021", "CA-022")
def _decisions(candidates_run: CandidatesRun, iid: str, rid: str, says: str) -> None:
    observed = [
        (a.get("decision") or {}).get("say") if a.get("status") == "ok" else f"<{a.get('status')}>"
        for a in candidates_run.candidates(rid, iid)
    ]
    expect_equal(f"decisions of input {iid!r} of request {rid!r}, in order", split_list(says),
                 observed)


@then(parsers.re(r"the candidate answers of " + INPUT + " are:"))
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


@then(parsers.re(r"each candidate answer of " + INPUT +
                 r" carries the commander output the timeline shows for that candidate"))
@decides("CA-001", "CA-021")
def _answers_match_timeline(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    """Read from what the caller got (the answer's status and the exchange its
    memory ends with), never from the answer's own ``internal_steps``."""
    for k, answer in enumerate(candidates_run.candidates(rid, iid)):
        output = output_of(candidates_run.commander_call(rid, iid, k))
        expect_equal(
            f"commander output in answer {k} of input {iid!r} of request {rid!r}",
            ("error", None) if output is None else ("ok", output),
            (str(answer.get("status")), said_last(answer)),
        )


def said_last(answer: Mapping[str, Any]) -> str | None:
    """The last assistant exchange of a candidate's returned memory, if any."""
    memory = answer.get("memory")
    history = memory.get("history") if isinstance(memory, Mapping) else None
    said = [m.get("content") for m in history or []
            if isinstance(m, Mapping) and m.get("role") == "assistant"]
    return str(said[-1]) if said else None
