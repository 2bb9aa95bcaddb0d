"""Then steps of the ``save-policy`` profile on how each run ended, what the
caller got, the side effects and the context the model saw
(``features/save-policy/outcomes.feature``, ``failures.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_bdd import parsers, then

from memconform.steps._save_policy_scripts import EFFECT
from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.save_policy_world import (
    error_kind,
    expand,
    model_requests,
    run_of,
    sent_messages,
)

# -- then: outcomes --------------------------------------------------------------------


@then(parsers.parse('the save-policy run ends "{outcome}"'))
@decides("SP-004", "SP-017", "SP-020", "SP-023", "SP-024", "SP-026", "SP-027", "SP-032")
def sp_run_ends(sp_observation: dict[str, Any], outcome: str) -> None:
    """Run 1's outcome, written ``blocked at output`` for blocks."""
    sp_run_number_ends(sp_observation, 1, outcome)


@then(parsers.parse('save-policy run {number:d} ends "{outcome}"'))
@decides("SP-019", "SP-028")
def sp_run_number_ends(sp_observation: dict[str, Any], number: int, outcome: str) -> None:
    """The outcome of the n-th run."""
    run = run_of(sp_observation, number)
    observed = run["outcome"] + (f" at {run['stage']}" if run.get("stage") else "")
    expect_equal(f"outcome of save-policy run {number}", outcome, observed)


@then(parsers.parse('the caller of the save-policy run gets the error "{kind}"'))
@decides("SP-016", "SP-017", "SP-020", "SP-024")
def sp_caller_error(sp_observation: dict[str, Any], kind: str) -> None:
    """The error type the caller of run 1 received (``cancellation``: any named
    error of a run the caller was told was cancelled)."""
    run = run_of(sp_observation, 1)
    expect_equal("error the caller got", kind, error_kind(run, run.get("error") or {}))


@then("the caller of the save-policy run gets no error")
@decides("SP-004", "SP-026", "SP-027")
def sp_caller_no_error(sp_observation: dict[str, Any]) -> None:
    """Run 1 reported no error."""
    expect_equal("error the caller got", None, run_of(sp_observation, 1).get("error"))


@then(parsers.parse('the save-policy reply is "{text}"'))
@decides("SP-007", "SP-026")
def sp_reply(sp_observation: dict[str, Any], text: str) -> None:
    """The answer the caller of run 1 got."""
    expect_equal("reply of save-policy run 1", text, run_of(sp_observation, 1).get("reply"))


@then(parsers.parse("the save-policy model was called {count:d} times"))
@decides("SP-004", "SP-005", "SP-020", "SP-021", "SP-023", "SP-024")
def sp_model_calls(sp_observation: dict[str, Any], count: int) -> None:
    """Model calls seen on the timeline (retries included)."""
    calls = [e for e in sp_observation["timeline"] if e["kind"] == "model"]
    expect_equal("model calls", count, len(calls))


@then("the save-policy configuration is rejected naming the save_policy setting")
@decides("SP-002")
def sp_rejected(sp_observation: dict[str, Any]) -> None:
    """The runtime refused the configuration, naming the setting."""
    problem = sp_observation.get("construction_error")
    if not isinstance(problem, Mapping) or "save_policy" not in str(problem.get("message", "")) + \
            str(problem.get("field", "")):
        raise Mismatch("configuration with an unknown save policy",
                       "refused at construction, naming save_policy", repr(problem))


@then("the save-policy runtime neither called the model nor the store")
@decides("SP-002")
def sp_nothing_ran(sp_observation: dict[str, Any]) -> None:
    """Nothing ran: no model call and no store call."""
    touched = [f"{e['kind']}:{e['name']}" for e in sp_observation["timeline"]
               if e["kind"] in ("model", "store", "tool")]
    expect_equal("model, tool and store calls", [], touched)


# -- then: side effects and context ----------------------------------------------------------


@then("under every save policy the tools ran as the model asked and no undo tool was called")
@decides("SP-022")
def sp_no_compensation(sp_variants: dict[str, dict[str, Any]]) -> None:
    """From the timeline, under each policy: the tools run are the calls the model
    asked for (same names, same arguments, same order), and no ``undo_`` tool ran."""
    for policy, observation in sp_variants.items():
        asked = [
            (c.get("name"), c.get("args", {})) for e in observation["timeline"]
            if e["kind"] == "model" and isinstance(e.get("response"), Mapping)
            for c in e["response"].get("tool_calls") or [] if not c.get("needs_approval")
        ]
        ran = [(e["name"], e.get("args")) for e in observation["timeline"] if e["kind"] == "tool"]
        expect_equal(f"compensating tools called under {policy}", [],
                     [name for name, _ in ran if name.startswith("undo_")])
        expect_equal(f"tools run under {policy}, against the calls the model asked for",
                     asked, ran)


@then("the save-policy tools ran with the arguments the model gave their calls")
@decides("SP-022", "SP-028")
def sp_tool_arguments(sp_observation: dict[str, Any]) -> None:
    """From the kit's timeline: every tool run carries the name and arguments of
    the model's tool call it answers (a resumed run finds the approved call's
    arguments in the store only, so a runtime that stored the call without
    them runs the tool without them)."""
    asked = {
        str(c.get("id")): (c.get("name"), c.get("args", {}))
        for e in sp_observation["timeline"]
        if e["kind"] == "model" and isinstance(e.get("response"), Mapping)
        for c in e["response"].get("tool_calls") or [] if isinstance(c, Mapping)
    }
    runs = [e for e in sp_observation["timeline"] if e["kind"] == "tool"]
    if not runs:
        raise Mismatch("tool runs", "at least one", "none")
    expect_equal("tool runs (name and arguments) against the model's calls they answer",
                 [asked.get(str(e.get("call_id")), ("a call the model made", None))
                  for e in runs],
                 [(e["name"], e.get("args")) for e in runs])


@then("the save-policy ledger still holds the tool's effect")
@decides("SP-022")
def sp_ledger(sp_observation: dict[str, Any]) -> None:
    """The tool's side effect stays recorded, whatever happened to the run."""
    effects = [entry.get("effect") for entry in sp_observation["ledger"]]
    expect_equal("side-effect ledger", [EFFECT], effects)


@then(parsers.parse("the save-policy model saw at the first call of run {number:d}:"))
@decides("SP-011", "SP-012", "SP-018", "SP-031")
def sp_context(sp_observation: dict[str, Any], number: int, datatable: list[list[str]]) -> None:
    """What the kit's model was sent at a run's first call, as role | text rows."""
    run_of(sp_observation, number)
    requests = model_requests(sp_observation, number)
    if not requests:
        raise Mismatch(f"model calls of run {number}", "at least one", "none")
    observed = sent_messages(requests[0])
    expected = [(r, expand(t)) for r, t in (tuple(row) for row in datatable[1:])]
    expect_equal(f"what the model saw at the first call of run {number}", expected, observed)


@then(parsers.parse(
    "the resumed save-policy run {number:d} continued from the suspended run, its model seeing:"
))
@decides("SP-028", "SP-031")
def sp_resumed_context(
    sp_observation: dict[str, Any], number: int, datatable: list[list[str]]
) -> None:
    """The resumed run (on a fresh runtime instance, given only the caller's
    continuation) showed the kit's model, at its first call, the suspended run's
    context and then the approval response and the tool result (role | text rows,
    from the model requests on the timeline). Where the rows hold an earlier run
    of the thread, it also decides that the history was shown (SP-031)."""
    requests = model_requests(sp_observation, number)
    if not requests:
        raise Mismatch(f"model calls of the resumed run {number}", "at least one",
                       f"none (outcome {run_of(sp_observation, number).get('outcome')!r}, error "
                       f"{run_of(sp_observation, number).get('error')!r})")
    expected = [(r, expand(t)) for r, t in (tuple(row) for row in datatable[1:])]
    expect_equal(f"what the model saw at the first call of the resumed run {number}",
                 expected, sent_messages(requests[0]))
