"""Then steps of the ``save-policy`` profile on the order of what happened, read
from the recording proxy's timeline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_bdd import parsers, then

from memconform.steps.common import Mismatch, decides, expect_equal, unsupported
from memconform.steps.save_policy_world import has_tool_call, thread_of


def find_label(observation: Mapping[str, Any], label: str) -> int | None:
    thread = thread_of(observation)
    entries = observation["timeline"]

    def first(pred: Callable[[dict[str, Any]], bool], last: bool = False) -> int | None:
        hits = [i for i, e in enumerate(entries) if pred(e)]
        if not hits:
            return None
        return hits[-1] if last else hits[0]

    def append_ok(e: dict[str, Any]) -> bool:
        return e["kind"] == "store" and e["name"] == "append" and "raised" not in e \
            and e["args"][0] == thread

    def final_answer(e: dict[str, Any]) -> bool:
        return append_ok(e) and any(
            m["role"] == "assistant" and not has_tool_call(m) for m in e["args"][1]
        )

    finders: dict[str, Callable[[], int | None]] = {
        "input appended": lambda: first(
            lambda e: append_ok(e) and any(m["role"] == "user" for m in e["args"][1])),
        "first model call": lambda: first(lambda e: e["kind"] == "model"),
        "last model call": lambda: first(lambda e: e["kind"] == "model", last=True),
        "tool run": lambda: first(lambda e: e["kind"] == "tool"),
        "approval appended": lambda: first(
            lambda e: append_ok(e) and any(
                p.get("type") == "tool_approval"
                for m in e["args"][1] for p in m.get("parts") or () if isinstance(p, dict)
            )),
        "tool call appended": lambda: first(
            lambda e: append_ok(e) and any(has_tool_call(m) for m in e["args"][1])),
        "output guardrail": lambda: first(
            lambda e: e["kind"] == "hook" and e["name"] == "output_guardrail"),
        "answer appended": lambda: first(final_answer),
        "run-end hook": lambda: first(lambda e: e["kind"] == "hook" and e["name"] == "run_end"),
        "last append": lambda: first(append_ok, last=True),
        "append raised": lambda: first(
            lambda e: e["kind"] == "store" and e["name"] == "append" and "raised" in e),
        "error hook": lambda: first(lambda e: e["kind"] == "hook" and e["name"] == "run_error"),
        "record_error": lambda: first(
            lambda e: e["kind"] == "store" and e["name"] == "record_error"),
        "outcome reported": lambda: first(
            lambda e: e["kind"] == "event" and e["name"] == "outcome"),
    }
    if label not in finders:
        raise ValueError(f"unknown timeline point {label!r}; known: {', '.join(finders)}")
    return finders[label]()


_HOOK_POINTS = {"output guardrail": "output_guardrail", "run-end hook": "run_end"}
"""Points of the timeline that are calls of an optional hook (see
:data:`~memconform.harness.runtime.OPTIONAL_HOOKS`): an order through one a
runtime does not declare is ``unsupported`` for it, as a script needing it is."""


@then(parsers.parse('the save-policy timeline order is "{sequence}"'))
@decides("SP-005", "SP-006", "SP-007", "SP-013", "SP-019", "SP-020", "SP-028")
def sp_timeline_order(sp_observation: dict[str, Any], sequence: str) -> None:
    """Each named point happened, in the order given (``a > b > c``)."""
    labels = [s.strip() for s in sequence.split(">")]
    declared = sp_observation.get("declared_hooks")
    if declared is not None:
        lacking = sorted({_HOOK_POINTS[label] for label in labels if label in _HOOK_POINTS}
                         - set(declared))
        if lacking:
            unsupported(f"the order runs through {', '.join(lacking)}, which the runtime does "
                        f"not declare (its hooks: {', '.join(declared) or 'none'})")
    found = {label: find_label(sp_observation, label) for label in labels}
    positions = [found[label] for label in labels]
    ordered = all(p is not None for p in positions) and positions == sorted(
        p for p in positions if p is not None
    ) and len(set(positions)) == len(positions)
    if not ordered:
        observed = sorted(
            (label for label in labels if found[label] is not None),
            key=lambda label: found[label] or 0,
        )
        missing = [label for label in labels if found[label] is None]
        raise Mismatch(
            "order on the timeline", " > ".join(labels),
            " > ".join(observed) + (f" (never happened: {', '.join(missing)})" if missing else ""),
        )


@then(parsers.parse('the save-policy timeline never shows "{label}"'))
@decides("SP-005", "SP-006", "SP-007", "SP-019", "SP-020")
def sp_timeline_never(sp_observation: dict[str, Any], label: str) -> None:
    """The named point did not happen."""
    expect_equal(f"'{label}' on the timeline", None, find_label(sp_observation, label))
