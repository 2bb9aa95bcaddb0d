"""Then steps of the ``turns`` profile on the turns thread's stored messages,
the turns' outcomes, their events and model calls
(``features/turns/stored_messages.feature``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pytest_bdd import then

from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.turns_world import PARTIAL, TurnsRun, phrase
from memconform.values import Message

# -- Then: messages ---------------------------------------------------------------------


def _roles(messages: list[Message]) -> str:
    return ", ".join(m.role for m in messages) or "nothing"


@then(phrase('the turns thread holds messages with the roles "{roles:Text}"'))
@decides("TU-001", "TU-002", "TU-003", "TU-004", "TU-005", "TU-006", "TU-007", "TU-013", "TU-032")
def thread_roles(turns_run: TurnsRun, roles: str) -> None:
    """The stored roles, in order (``nothing`` for none)."""
    messages = turns_run.messages()
    if _roles(messages) != roles:
        raise Mismatch("the roles of the stored messages", roles, _roles(messages))


@then("the turns thread holds the messages:")
@decides("TU-001", "TU-004", "TU-005", "TU-013", "TU-023")
def thread_messages(turns_run: TurnsRun, datatable: list[list[str]]) -> None:
    """Role and text of every stored message, in order."""
    expected = [tuple(row) for row in datatable[1:]]
    observed = [(m.role, m.text) for m in turns_run.messages()]
    expect_equal("the stored messages (role, text)", expected, observed)


@then("the turns thread holds no messages")
@decides("TU-003")
def thread_empty(turns_run: TurnsRun) -> None:
    """Nothing was stored in the thread."""
    expect_equal("the stored messages", [], turns_run.messages())


@then("the user message of the turns thread was stored before the first model call")
@decides("TU-001")
def user_before_model(turns_run: TurnsRun) -> None:
    """On the timeline, the append of the user message precedes every model call."""
    turns_run.observed()
    appends = [
        e for e in turns_run.entries("store", "append")
        if any(m.get("role") == "user" for m in e.data["args"][1])
    ]
    models = turns_run.entries("model")
    if not appends or not models or appends[0].seq > models[0].seq:
        raise Mismatch(
            "the user message is appended before the first model call",
            "append(user) then model call",
            f"append at {[e.seq for e in appends]}, model calls at {[e.seq for e in models]}",
        )


@then(phrase('the assistant message of "{turn_id:Text}" carries the final reply and its '
                    "payload part"))
@decides("TU-004")
def assistant_payload(turns_run: TurnsRun, turn_id: str) -> None:
    """The stored answer holds the completed reply and its payload as a part."""
    answers = [m for m in turns_run.messages() if m.role == "assistant" and m.turn_id == turn_id]
    if len(answers) != 1:
        raise Mismatch(f"one assistant message of {turn_id}", "1", str(len(answers)))
    replies = [
        e.data["response"] for e in turns_run.entries("model")
        if isinstance(e.data.get("request"), Mapping)
        and e.data["request"].get("turn_id") == turn_id and "response" in e.data
    ]
    final = replies[-1]
    expect_equal("the assistant message's text", final["reply"], answers[0].text)
    payloads = [p for p in answers[0].parts if isinstance(p, Mapping) and final["payload"] in (
        p.get("payload"), p)]
    if not payloads:
        raise Mismatch("the assistant message carries the payload part",
                       json.dumps(final["payload"]), json.dumps(list(answers[0].parts)))


@then("the turns thread holds only the user and assistant messages of root turns")
@decides("TU-032")
def only_conversation(turns_run: TurnsRun) -> None:
    """No record, state block or child output became a conversation message."""
    roots = {str(e["turn_id"]) for e in turns_run.settled() if e.get("parent_turn_id") is None}
    strays = [
        m for m in turns_run.messages()
        if m.role not in ("user", "assistant") or m.turn_id not in roots
    ]
    if strays:
        raise Mismatch("only root user and assistant messages in the thread",
                       "no other message", "\n".join(json.dumps(m.to_json()) for m in strays))


# -- Then: outcomes, events and model calls -------------------------------------------------


@then(phrase('the turn "{turn_id:Text}" settled {outcome}'))
@decides("TU-003", "TU-014")
def turn_settled(turns_run: TurnsRun, turn_id: str, outcome: str) -> None:
    """The settle event of ``turn_id`` names ``outcome``."""
    found = [str(e["outcome"]) for e in turns_run.settled() if e.get("turn_id") == turn_id]
    expect_equal(f"the outcome of {turn_id}", [outcome], found)


@then("no model was called for the turns script")
@decides("TU-003", "TU-014")
def no_model_call(turns_run: TurnsRun) -> None:
    """The model saw nothing."""
    turns_run.observed()
    expect_equal("model calls", [], [e.to_json() for e in turns_run.entries("model")])


@then(phrase('the turns events hold the partial output of "{turn_id:Text}"'))
@decides("TU-006")
def partial_in_events(turns_run: TurnsRun, turn_id: str) -> None:
    """Some output event of the unfinished turn carries its partial text."""
    turns_run.observed()
    texts = [
        str(e.data.get("text", "")) for e in turns_run.entries("event")
        if e.data.get("turn_id") == turn_id and e.name != "turn.settled"
    ]
    if not any(t.startswith(PARTIAL) for t in texts):
        raise Mismatch(f"the partial output of {turn_id} among the emitted events",
                       f"an event text starting {PARTIAL!r}", repr(texts))


@then("every turn of the turns script emitted an open and a settle event in order")
@decides("TU-015")
def open_and_settle_events(turns_run: TurnsRun) -> None:
    """Each turn id opens before it settles, and settles exactly once."""
    turns_run.observed()
    events = [e for e in turns_run.entries("event") if e.name in ("turn.opened", "turn.settled")]
    opened: list[str] = []
    problems = []
    for e in events:
        tid = str(e.data.get("turn_id"))
        if e.name == "turn.opened":
            opened.append(tid)
        elif tid not in opened:
            problems.append(f"{tid} settled without opening")
        elif e.data.get("outcome") is None:
            problems.append(f"{tid} settled without an outcome")
        else:
            opened.remove(tid)
    if opened:
        problems.append(f"never settled: {opened}")
    if not events or problems:
        raise Mismatch("an open and a settle event per turn", "none missing",
                       "; ".join(problems) or "no events")


@then("the turns event export holds every emitted event, in order")
@decides("TU-033")
def event_export(turns_run: TurnsRun) -> None:
    """The export the runtime handed over equals the events the kit saw emitted."""
    exported = turns_run.observed().get("export")
    if not isinstance(exported, list):
        raise Mismatch("the runtime's event export", "a list of events", repr(exported))
    emitted = [{"name": e.name, **e.data} for e in turns_run.entries("event")]
    expect_equal("the exported events against the events emitted on the timeline",
                 json.loads(json.dumps(emitted)), json.loads(json.dumps(exported)))
