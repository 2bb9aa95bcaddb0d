"""Then steps of the ``candidates`` profile on the prompts the components were
shown and on which components were called
(``features/candidates/memory.feature``, ``summarizer.feature``).
"""

from __future__ import annotations

import json
from typing import Any

from pytest_bdd import parsers, then

from memconform.steps.candidates_world import CANDIDATE, INPUT, CandidatesRun, request_of
from memconform.steps.common import Mismatch, decides, expect_equal


@then(parsers.re(r"the commander prompt for " + CANDIDATE + " is:"), converters={"k": int})
@decides("CA-002", "CA-003", "CA-004", "CA-005", "CA-006", "CA-012", "CA-013", "CA-022")
def _prompt_is(
    candidates_run: CandidatesRun, k: int, iid: str, rid: str, docstring: str
) -> None:
    expect_equal(
        f"commander prompt for candidate {k} of input {iid!r} of request {rid!r}",
        docstring, candidates_run.commander_prompt(rid, iid, k),
    )


@then(parsers.re(r"the commander prompt for " + CANDIDATE + r" is (?P<size>\d+) characters long"),
      converters={"k": int, "size": int})
@decides("CA-010", "CA-011")
def _prompt_length(candidates_run: CandidatesRun, k: int, iid: str, rid: str, size: int) -> None:
    expect_equal(
        f"length of the commander prompt for candidate {k} of input {iid!r} of request {rid!r}",
        size, len(candidates_run.commander_prompt(rid, iid, k)),
    )


@then(parsers.re(r"the commander prompts for " + INPUT + r' and for input "(?P<iid2>[^"]+)" '
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


@then(parsers.re(r"the memories of " + INPUT + r' and of input "(?P<iid2>[^"]+)" '
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


@then(parsers.re(r"no commander prompt for " + INPUT + r' contains "(?P<text>[^"]+)"'))
@decides("CA-003", "CA-004")
def _prompt_lacks(candidates_run: CandidatesRun, iid: str, rid: str, text: str) -> None:
    for entry in candidates_run.calls("commander", rid, iid):
        prompt = str(request_of(entry).get("prompt"))
        if text in prompt:
            raise Mismatch(
                f"commander prompt for input {iid!r} of request {rid!r}",
                f"no trace of {text!r}", prompt,
            )


@then(parsers.re(r"the (?P<component>summarizer|commander) is called (?P<n>\d+) times? for "
                 + INPUT), converters={"n": int})
@decides("CA-010", "CA-012", "CA-014")
def _called(
    candidates_run: CandidatesRun, component: str, n: int, iid: str, rid: str
) -> None:
    expect_equal(
        f"{component} calls for input {iid!r} of request {rid!r}",
        n, len(candidates_run.calls(component, rid, iid)),
    )


@then(parsers.re(r"the (?P<component>summarizer|commander) is not called for " + INPUT))
@decides("CA-008", "CA-011", "CA-015", "CA-019")
def _not_called(candidates_run: CandidatesRun, component: str, iid: str, rid: str) -> None:
    _called(candidates_run, component, 0, iid, rid)


@then(parsers.re(r"the summarizer for " + INPUT + r" is never shown \"(?P<text>[^\"]+)\""))
@decides("CA-012")
def _summarizer_lacks(candidates_run: CandidatesRun, iid: str, rid: str, text: str) -> None:
    for entry in candidates_run.calls("summarizer", rid, iid):
        shown = json.dumps(request_of(entry), ensure_ascii=False)
        if text in shown:
            raise Mismatch(
                f"what the summarizer was shown for input {iid!r} of request {rid!r}",
                f"no trace of {text!r}", shown,
            )


@then(parsers.re(r"the summarizer for " + INPUT +
                 r" is shown the supplied history and the previous summary "
                 r"\"(?P<summary>[^\"]*)\""))
@decides("CA-012")
def _summarizer_shown(candidates_run: CandidatesRun, iid: str, rid: str, summary: str) -> None:
    calls = candidates_run.calls("summarizer", rid, iid)
    if len(calls) != 1:
        raise Mismatch(f"summarizer calls for input {iid!r}", "exactly one", str(len(calls)))
    supplied = supplied_input(candidates_run, rid, iid)
    elements = request_of(calls[0]).get("input_elements") or {}
    expect_equal(
        "what the summarizer was shown (previous summary, history)",
        {"previous_summary": summary, "messages": (supplied.get("memory") or {}).get("history")},
        {key: elements.get(key) for key in ("previous_summary", "messages")},
    )


def supplied_input(run: CandidatesRun, rid: str, iid: str) -> dict[str, Any]:
    for request in run.supplied["requests"]:
        if request["id"] != rid:
            continue
        for item in request["inputs"]:
            if item["input_id"] == iid:
                return dict(item)
    raise ValueError(f"the scenario sends no input {iid!r} in request {rid!r}")
