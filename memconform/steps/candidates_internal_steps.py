"""Then steps of the ``candidates`` profile on the answer's internal steps,
checked against the timeline (CA-017 to CA-020;
``features/candidates/internal_steps.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_bdd import parsers, then

from memconform.steps.candidates_world import (
    CANDIDATE,
    INPUT,
    CandidatesRun,
    json_value,
    output_of,
    request_of,
    show,
)
from memconform.steps.common import Mismatch, decides, expect_equal


def internal_steps_of(run: CandidatesRun, rid: str, iid: str, k: int) -> list[dict[str, Any]]:
    steps = run.candidate(rid, iid, k).get("internal_steps")
    if not isinstance(steps, list):
        raise Mismatch(
            f"internal steps of candidate {k} of input {iid!r} of request {rid!r}",
            "a list of step records", repr(steps),
        )
    return steps


@then(parsers.re(r"the internal steps of " + CANDIDATE + " are:"), converters={"k": int})
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
                for step in internal_steps_of(candidates_run, rid, iid, k)]
    expect_equal(
        f"internal steps of candidate {k} of input {iid!r} of request {rid!r}", expected, observed
    )


@then(parsers.re(r'the internal step "(?P<sid>[^"]+)" of ' + CANDIDATE + " is:"),
      converters={"k": int})
@decides("CA-017", "CA-018", "CA-019")
def _step_is(
    candidates_run: CandidatesRun, sid: str, k: int, iid: str, rid: str, docstring: str
) -> None:
    expected = json_value(docstring, "the expected step record")
    found = [s for s in internal_steps_of(candidates_run, rid, iid, k) if s.get("id") == sid]
    observed = found[0] if len(found) == 1 else found
    if expected != observed:
        raise Mismatch(f"internal step {sid!r} of candidate {k}", show(expected), show(observed))


@then(parsers.re(r"every candidate of " + INPUT +
                 r" starts its internal steps with the same summarizer record"))
@decides("CA-017")
def _shared_summary_record(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    """The internal-steps record (CA-017); that the summary was computed once is
    CA-014's and is read from the timeline."""
    answers = candidates_run.candidates(rid, iid)
    firsts: list[Any] = []
    for k in range(len(answers)):
        steps = internal_steps_of(candidates_run, rid, iid, k)
        firsts.append(steps[0] if steps else None)
    if not firsts or not isinstance(firsts[0], dict) or firsts[0].get("component") != "summarizer":
        raise Mismatch("first internal step of candidate 0", "a summarizer record", show(firsts))
    for k, first in enumerate(firsts):
        expect_equal(f"first internal step of candidate {k}", firsts[0], first)


@then(parsers.re(r"every internal step of " + INPUT +
                 r" records what the timeline shows the component received and returned"))
@decides("CA-017", "CA-018", "CA-019", "CA-020")
def _steps_match_timeline(candidates_run: CandidatesRun, iid: str, rid: str) -> None:
    for k, _answer in enumerate(candidates_run.candidates(rid, iid)):
        for step in internal_steps_of(candidates_run, rid, iid, k):
            component = str(step.get("component"))
            shared = component == "summarizer"
            calls = candidates_run.calls(component, rid, iid, None if shared else k)
            if len(calls) != 1:
                raise Mismatch(
                    f"{component} calls behind step {step.get('id')} of candidate {k}",
                    "exactly one", str(len(calls)),
                )
            request = request_of(calls[0])
            expect_equal(
                f"step {step.get('id')} of candidate {k}: prompt, elements, output, origin",
                {
                    "full_prompt": request.get("prompt"),
                    "input_elements": request.get("input_elements"),
                    "output_raw": output_of(calls[0]),
                    "origin": "coaching" if calls[0].get("kind") == "event" else "model",
                },
                {key: step.get(key)
                 for key in ("full_prompt", "input_elements", "output_raw", "origin")},
            )
