"""Then steps of the ``save-policy`` profile on what was appended to the thread:
the batches, the stored messages, their ids, pending tool calls and run ids
(``features/save-policy/policies.feature``, ``outcomes.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_bdd import parsers, then

from memconform.approvals import compared_text, denied_calls
from memconform.harness.proxy import RecordingStore
from memconform.steps._save_policy_scripts import ANSWER
from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.save_policy_world import (
    appended_batches,
    appended_messages,
    expand,
    read_thread,
    roles_of,
    run_of,
    store_calls,
    thread_of,
)


@then(parsers.parse('the save-policy appends are "{batches}"'))
@decides(
    "SP-001", "SP-004", "SP-005", "SP-006", "SP-007", "SP-008", "SP-009", "SP-010", "SP-011",
    "SP-012", "SP-020", "SP-021", "SP-023", "SP-024", "SP-025", "SP-027", "SP-028", "SP-032",
)
def sp_appends(sp_observation: dict[str, Any], batches: str) -> None:
    """The roles of each batch the store accepted, in append order."""
    observed = roles_of(appended_batches(sp_observation, thread_of(sp_observation)))
    expect_equal("batches appended (roles per batch)", batches, observed)


@then("the save-policy thread holds:")
@decides("SP-005", "SP-006", "SP-007", "SP-008", "SP-010", "SP-023", "SP-024", "SP-026", "SP-028")
def sp_thread_holds(
    sp_observation: dict[str, Any], store: RecordingStore, datatable: list[list[str]]
) -> None:
    """The stored transcript, read back through the store, as role | text rows; an
    approval answer and a denied call's result are read by their parts
    (``<approval approved>``, :mod:`memconform.approvals`)."""
    stored = read_thread(store, thread_of(sp_observation))
    expected = [tuple(row) for row in datatable[1:]]
    denied = denied_calls(stored)
    observed = [(m.role, expand(compared_text(m, denied))) for m in stored]
    expect_equal("stored transcript", [(r, expand(t)) for r, t in expected], observed)


@then("no save-policy message is stored twice")
@decides("SP-021")
def sp_no_duplicates(sp_observation: dict[str, Any], store: RecordingStore) -> None:
    """Every appended message id and every stored message appears once."""
    ids = [m["id"] for m in appended_messages(sp_observation)]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    expect_equal("appended message ids that repeat", [], repeated)
    stored = read_thread(store, thread_of(sp_observation))
    texts = [(m.role, m.text) for m in stored]
    expect_equal("stored messages that repeat", [], [t for t in texts if texts.count(t) > 1])


@then("no save-policy append repeats a message id already in the thread")
@decides("SP-021")
def sp_ids_new_in_thread(sp_observation: dict[str, Any]) -> None:
    """Every append the runtime attempted (refused ones too, from the timeline)
    carries only ids the thread did not already hold: a runtime numbering its
    messages from a counter of its own instance repeats the ids an earlier
    instance stored."""
    held: set[str] = set()
    repeated: list[str] = []
    for entry in store_calls(sp_observation, "append", thread_of(sp_observation)):
        ids = [str(m.get("id")) for m in entry["args"][1] if isinstance(m, Mapping)]
        repeated += [i for i in ids if i in held]
        if "raised" not in entry:
            held.update(ids)
    expect_equal("appended message ids already in the thread", [], repeated)


@then("every stored save-policy tool call has its result in the same batch")
@decides("SP-006", "SP-025")
def sp_no_orphans(sp_observation: dict[str, Any]) -> None:
    """No batch carries an assistant tool call without the tool message answering it."""
    orphans = []
    for batch in appended_batches(sp_observation, thread_of(sp_observation)):
        answered = {
            p.get("call_id") for m in batch if m["role"] == "tool" for p in m["parts"]
            if isinstance(p, Mapping)
        }
        for m in batch:
            for p in m["parts"]:
                if isinstance(p, Mapping) and p.get("type") == "tool_call" \
                        and p.get("id") not in answered:
                    orphans.append(p.get("id"))
    expect_equal("tool calls stored without their result", [], orphans)


@then("every stored save-policy tool message holds its results in the order of the calls")
@decides("SP-025")
def sp_results_in_call_order(sp_observation: dict[str, Any]) -> None:
    """Each tool message's results follow the order of the tool calls stored
    before it (whatever order the tools finished in); approval answers aside."""
    stored = appended_messages(sp_observation)
    calls: list[str] = []
    wrong = []
    for m in stored:
        parts = [p for p in m["parts"] if isinstance(p, Mapping)]
        if m["role"] == "assistant":
            calls = [str(p.get("id")) for p in parts if p.get("type") == "tool_call"]
        elif m["role"] == "tool":
            results = [str(p.get("call_id")) for p in parts if p.get("type") == "tool_result"]
            expected = [c for c in calls if c in results]
            if results != expected:
                wrong.append(f"{m['id']}: {', '.join(results)} (calls: {', '.join(expected)})")
    if not any(m["role"] == "tool" for m in stored):
        raise Mismatch("the stored tool messages", "at least one", "none")
    expect_equal("tool messages whose results are out of call order", [], wrong)


@then("every stored save-policy tool call has an approval answer and a result")
@decides("SP-028")
def sp_every_call_answered(sp_observation: dict[str, Any]) -> None:
    """Read from what the store was handed: each stored tool call is answered by
    an approval part and a result part naming its id."""
    stored = appended_messages(sp_observation)
    parts = [p for m in stored for p in m["parts"] if isinstance(p, Mapping)]
    calls = [str(p.get("id")) for p in parts if p.get("type") == "tool_call"]
    approved = {str(p.get("call_id")) for p in parts if p.get("type") == "tool_approval"}
    results = {str(p.get("call_id")) for p in parts if p.get("type") == "tool_result"}
    if not calls:
        raise Mismatch("the stored tool calls", "at least one", "none")
    expect_equal("stored tool calls without an approval answer",
                 [], [c for c in calls if c not in approved])
    expect_equal("stored tool calls without a result", [], [c for c in calls if c not in results])


@then("the save-policy pending tool call is stored without a result")
@decides("SP-027")
def sp_pending_stored(sp_observation: dict[str, Any]) -> None:
    """The suspended run's tool call is stored, and no result for it."""
    pending = {c["id"] for c in run_of(sp_observation, 1).get("pending_tool_calls", [])}
    stored = appended_messages(sp_observation)
    calls = {p.get("id") for m in stored for p in m["parts"]
             if isinstance(p, Mapping) and p.get("type") == "tool_call"}
    results = {p.get("call_id") for m in stored for p in m["parts"]
               if isinstance(p, Mapping) and p.get("type") == "tool_result"}
    if not pending or not pending <= calls or pending & results:
        raise Mismatch("pending tool call", f"stored call(s) {sorted(pending)} without result",
                       f"calls stored {sorted(map(str, calls))}, "
                       f"results {sorted(map(str, results))}")


@then("every stored save-policy message carries its run id and a round counted from 1")
@decides("SP-030")
def sp_run_ids_and_rounds(sp_observation: dict[str, Any]) -> None:
    """run_id names the run that made the message; round is its round within the run.
    A runtime whose runs name no run id (a framework that has none) fails it."""
    runs = {r.get("run_id") for r in sp_observation["runs"] if isinstance(r, Mapping)} - {None}
    problems = []
    for batch in appended_batches(sp_observation, thread_of(sp_observation)):
        for m in batch:
            if m.get("run_id") not in runs:
                problems.append(f"{m['id']}: run_id {m.get('run_id')!r}")
            if not isinstance(m.get("round"), int) or m["round"] < 1:
                problems.append(f"{m['id']}: round {m.get('round')!r}")
    expect_equal("messages with a bad run id or round", [], problems)


@then(parsers.parse('the stored save-policy rounds are "{rounds}"'))
@decides("SP-030")
def sp_rounds(sp_observation: dict[str, Any], rounds: str) -> None:
    """The round of each appended message, in append order."""
    observed = ",".join(
        str(m.get("round")) for m in appended_messages(sp_observation)
    )
    expect_equal("rounds of the appended messages", rounds, observed)


@then(parsers.parse('the stored save-policy messages belong to the runs "{runs}"'))
@decides("SP-030")
def sp_run_ids_per_run(sp_observation: dict[str, Any], runs: str) -> None:
    """``runs`` numbers the run (1-based, script order) that made each appended
    message, in append order: messages of one run carry one run id, that run's
    own (the id the caller was given for it), and no two runs share an id."""
    labels = [int(n) for n in runs.split(",")]
    stored = appended_messages(sp_observation)
    expect_equal("number of appended messages", len(labels), len(stored))
    reported = {n: run_of(sp_observation, n).get("run_id") for n in sorted(set(labels))}
    expect_equal("distinct run ids of the runs", len(reported), len(set(reported.values())))
    expected = [reported[n] for n in labels]
    expect_equal("run id of each appended message", expected, [m.get("run_id") for m in stored])


@then("the stored save-policy answer is not the model's own text")
@decides("SP-007", "SP-026")
def sp_answer_not_raw(sp_observation: dict[str, Any]) -> None:
    """The model's raw answer never reached the store."""
    stored = [m["text"] for m in appended_messages(sp_observation)]
    if ANSWER in stored:
        raise Mismatch("stored answer", "the guardrail's text only", "the model's raw answer")
