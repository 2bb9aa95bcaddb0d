"""Then steps of the ``save-policy`` profile on error records
(``features/save-policy/error-records.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_bdd import parsers, then

from memconform.contract import Capability
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.steps.save_policy_world import (
    appended_batches,
    error_kind,
    error_records,
    read_thread,
    run_entries,
    run_of,
    thread_of,
)
from memconform.values import ErrorRecord, Message


@then(parsers.parse('record_error was called once for the save-policy run with "{roles}"'))
@decides("SP-013", "SP-014", "SP-016")
def sp_record_error_once(sp_observation: dict[str, Any], roles: str) -> None:
    """Exactly one record_error call, holding every new message of the run and its error.

    The record is compared with what the kit produced and observed, never with the
    runtime's account of its run: the messages of every append the run attempted
    (refused ones included) come first, in order; the user message carries the
    input the kit gave; the assistant messages carry its fake model's replies."""
    _record_error_once(sp_observation, roles, 1)


@then(parsers.parse(
    'record_error was called once, for save-policy run {number:d}, with "{roles}"'
))
@decides("SP-013", "SP-014", "SP-016")
def sp_record_error_once_for_run(sp_observation: dict[str, Any], number: int, roles: str) -> None:
    """As the step above, for run ``number`` of the script (a resumed run, for
    instance): its record holds the messages that run attempted to append."""
    _record_error_once(sp_observation, roles, number)


def _record_error_once(sp_observation: dict[str, Any], roles: str, number: int) -> None:
    calls = error_records(sp_observation)
    expect_equal("record_error calls", 1, len(calls), rules=("SP-013",))
    record = ErrorRecord.from_json(calls[0]["args"][1])
    run = run_of(sp_observation, number)
    expect_equal("roles of the messages given to record_error",
                 "" if roles == "none" else roles,
                 ",".join(m.role for m in record.messages), rules=("SP-014",))
    entries = run_entries(sp_observation, number)
    before = entries[:next((i for i, e in enumerate(entries) if e["seq"] == calls[0]["seq"]),
                           len(entries))]
    thread = thread_of(sp_observation)
    attempted = [
        (str(m.get("id")), str(m.get("role"))) for e in before
        if e["kind"] == "store" and e["name"] == "append" and e["args"][0] == thread
        for m in e["args"][1]
    ]
    given = [(m.id, m.role) for m in record.messages]
    expect_equal("messages given to record_error, against every append the run attempted",
                 attempted, given[:len(attempted)], rules=("SP-014",))
    inputs = list(sp_observation.get("inputs") or []) + [None] * number
    expect_equal("texts of the user messages given to record_error",
                 [inputs[number - 1]] if "user" in [m.role for m in record.messages] else [],
                 [m.text for m in record.messages if m.role == "user"], rules=("SP-014",))
    replies = [
        e["response"].get("reply") or "" for e in before
        if e["kind"] == "model" and isinstance(e.get("response"), Mapping)
        and e["response"].get("tool_calls")
    ]
    said = [m.text for m in record.messages if m.role == "assistant"
            and any(isinstance(p, Mapping) and p.get("type") == "tool_call" for p in m.parts)]
    expect_equal("texts of the tool-calling assistant messages given to record_error, "
                 "against the model's replies", replies[:len(said)], said, rules=("SP-014",))
    expect_equal("run id of the error record", run["run_id"], record.run_id, rules=("SP-014",))


@then(parsers.parse('the save-policy error record holds the error "{kind}"'))
@decides("SP-014")
def sp_record_error_kind(sp_observation: dict[str, Any], kind: str) -> None:
    """The error given to record_error is the run's error: of the kind named
    (``cancellation`` for a cancelled run) and of the type its caller got."""
    calls = error_records(sp_observation)
    if not calls:
        raise Mismatch("record_error", f"one call with error {kind}", "no call")
    run, given = run_of(sp_observation, 1), calls[0]["args"][1].get("error") or {}
    expect_equal("error given to record_error", kind, error_kind(run, given))
    told = run.get("error")
    if isinstance(told, Mapping) and told.get("type"):
        expect_equal("type of the error given to record_error, against the caller's",
                     told.get("type"), given.get("type") if isinstance(given, Mapping) else None)


@then("the save-policy store received no record_error call")
@decides("SP-015", "SP-017")
def sp_no_record_error(sp_observation: dict[str, Any]) -> None:
    """record_error was never called."""
    expect_equal("record_error calls", 0, len(error_records(sp_observation)))


@then("the save-policy messages hold no error record")
@decides("SP-018")
def sp_messages_without_errors(sp_observation: dict[str, Any], store: RecordingStore) -> None:
    """The stored transcript is exactly what was appended: no error record in it."""
    thread = thread_of(sp_observation)
    require_capability(store.capabilities, Capability.ERRORS.value)
    accepted = [e for e in error_records(sp_observation) if "raised" not in e]
    if not accepted:
        raise Mismatch("record_error", "one accepted call for the failed run", "none")
    if not store.errors(thread):
        raise AdapterContractError("errors", "record_error succeeded but errors() is empty")
    appended = [Message.from_json(m).id for b in appended_batches(sp_observation, thread)
                for m in b]
    expect_equal("stored message ids", appended, [m.id for m in read_thread(store, thread)])
