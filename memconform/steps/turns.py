"""Step definitions of the ``turns`` profile (document 002, "History and records").

A scenario builds a script with :class:`~memconform.steps.turns_script.TurnsScript`
(Given), runs it once on the runtime under test (When) and then reads what the
kit observed: the store's messages, records and state through the recording
proxy, and the model calls and events on the timeline (Then). Nothing is read
from the runtime's own account of what it did.

A restart is real: the turns after it run in a fresh process on the same
(durable) store (:func:`memconform.steps.child_runs.run_fresh`); the kit copies
that process's timeline, as its own proxy there recorded it, onto the
scenario's timeline, so every check reads one timeline.

Every phrase names the ``turns`` vocabulary (turn, turns thread, turn record,
tier, block) so it never collides with another profile's steps.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from memconform.adapters.proxy import RecordingStore
from memconform.simulator.environment import DEFAULT_START
from memconform.simulator.runtime import Runtime, observe
from memconform.steps.child_runs import run_fresh, runtime_options
from memconform.steps.common import (
    Mismatch,
    decides,
    expect_equal,
    require_capability,
    transcript_table,
)
from memconform.steps.turns_script import TurnsScript, lifetime_script
from memconform.timeline import Entry
from memconform.values import JSONValue, Message, Role, TurnRecord

__all__ = ["TurnsRun"]

_PARTIAL = "partial "


def _quoted(text: str) -> str:
    return text


_quoted.pattern = r'[^"]*'  # type: ignore[attr-defined]


def _step(pattern: str) -> parsers.parse:
    """A ``parse`` step pattern in which ``{name:Text}`` matches text without quotes,
    so a quoted value never swallows the words after it."""
    return parsers.parse(pattern, extra_types={"Text": _quoted})


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _json(text: str) -> JSONValue:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"not a JSON value in the scenario: {text!r}") from None


@dataclass
class TurnsRun:
    """One run of a turns script: the observation, or the error the runtime raised."""

    script: dict[str, JSONValue]
    store: RecordingStore
    observation: dict[str, JSONValue] | None = None
    error: ValueError | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def thread(self) -> str:
        """The thread the script ran on."""
        return str(self.script["thread"])

    def observed(self) -> dict[str, JSONValue]:
        """The observation; a run the runtime rejected fails the check here."""
        if self.observation is None:
            raise Mismatch("the turns runtime ran the script", "an observation",
                           f"the runtime raised {self.error!r}")
        return self.observation

    def entries(self, kind: str, name: str | None = None) -> list[Entry]:
        """Timeline entries of one kind (and name)."""
        return self.store.timeline.of(kind, name)

    def settled(self) -> list[dict[str, JSONValue]]:
        """The ``turn.settled`` events, in order."""
        self.observed()
        return [e.data for e in self.entries("event", "turn.settled")]

    def model_calls(self, turn_id: str) -> list[dict[str, Any]]:
        """The requests the model received for ``turn_id``, in order."""
        self.observed()
        calls = []
        for entry in self.entries("model"):
            request = entry.data.get("request")
            if isinstance(request, Mapping) and request.get("turn_id") == turn_id:
                calls.append(dict(request))
        return calls

    def first_call(self, turn_id: str) -> dict[str, Any]:
        """What the model saw at the first call of ``turn_id``."""
        calls = self.model_calls(turn_id)
        if not calls:
            raise Mismatch(f"the model was called for turn {turn_id}", "at least one call",
                           "no model call for that turn")
        return calls[0]

    def records(self) -> list[TurnRecord]:
        """The thread's turn records as the store returns them."""
        self.observed()
        require_capability(self.store.capabilities, "turn-records")
        return self.store.records(self.thread)

    def record(self, turn_id: str) -> TurnRecord:
        """The one stored record of ``turn_id``."""
        found = [r for r in self.records() if r.turn_id == turn_id]
        if len(found) != 1:
            raise Mismatch(f"one turn record for {turn_id}", "1 record",
                           f"{len(found)} records: {[r.to_json() for r in found]}")
        return found[0]

    def messages(self) -> list[Message]:
        """The thread's stored messages."""
        self.observed()
        return self.store.messages(self.thread)


# -- Given: the script ------------------------------------------------------------------


@given("a turns script on a fresh thread", target_fixture="turns_script")
def turns_script(namespace: str) -> TurnsScript:
    """A new script on a thread no other scenario uses."""
    return TurnsScript(thread=f"{namespace}-turns")


@given(_step("the turns history window is {size:d}"))
def history_window(turns_script: TurnsScript, size: int) -> None:
    """Configure ``history_window``."""
    turns_script.config["history_window"] = size


@given("the turns history window is left at its default")
def history_window_default(turns_script: TurnsScript) -> None:
    """Leave ``history_window`` unset."""
    turns_script.config.pop("history_window", None)


@given(_step("turn ids come from the {generator} generator"))
def turn_id_generator(turns_script: TurnsScript, generator: str) -> None:
    """``counter`` (the default) or ``uuid``."""
    turns_script.config["turn_ids"] = generator


@given(_step("the turns context budget is {size:d} characters"))
def context_budget(turns_script: TurnsScript, size: int) -> None:
    """Configure the fit check's budget."""
    turns_script.config["context_budget"] = size


@given(_step('the turns model chain has the tiers "{tiers:Text}"'))
def model_chain(turns_script: TurnsScript, tiers: str) -> None:
    """The default tier chain of every agent."""
    turns_script.config["tiers"] = list(_names(tiers))


@given(_step('the turns state declares the block "{block:Text}" of type "{kind:Text}"'))
def declare_block(turns_script: TurnsScript, block: str, kind: str) -> None:
    """Declare a state block."""
    turns_script.declare_block(block, kind)


@given(_step('the turns agent "{agent:Text}" reads the blocks "{blocks:Text}"'))
def agent_reads(turns_script: TurnsScript, agent: str, blocks: str) -> None:
    """Declare an agent and the blocks it reads (``nothing`` for none)."""
    turns_script.add_agent(agent, reads=[] if blocks == "nothing" else _names(blocks))


@given(_step("a {kind} turn opened with its {opening} that settles {outcome}"))
def turn_by_kind(turns_script: TurnsScript, kind: str, opening: str, outcome: str) -> None:
    """A root turn, or a child spawned by a completed root opened with an envelope."""
    if kind == "root":
        turns_script.turn(opening=opening, text="turn request", outcome=outcome)
    elif kind == "child":
        turns_script.turn(
            text="parent request",
            children=[{"opening": opening, "text": "child request", "outcome": outcome}],
        )
    else:
        raise ValueError(f"turn kind must be root or child, got {kind!r}")


@given(_step('a root turn opened with an envelope "{text:Text}" that settles {outcome}'))
def root_with_envelope(turns_script: TurnsScript, text: str, outcome: str) -> None:
    """A root turn opened with an envelope."""
    turns_script.turn(text=text, outcome=outcome)


@given(_step('a root turn opened with the brief "{text:Text}" that settles {outcome}'))
def root_with_brief(turns_script: TurnsScript, text: str, outcome: str) -> None:
    """A root turn opened with a brief only."""
    turns_script.turn(opening="brief", text=text, outcome=outcome)


@given(_step(
    'a root turn opened with an envelope "{text:Text}" as the agent "{agent:Text}" '
    "that settles {outcome}"
))
def root_as_agent(turns_script: TurnsScript, text: str, agent: str, outcome: str) -> None:
    """A root turn run by a declared agent."""
    turns_script.turn(text=text, outcome=outcome, agent=agent)


@given(_step(
    'a root turn opened with an envelope "{text:Text}" carrying a structured part '
    "that settles completed with a payload"
))
def root_with_parts(turns_script: TurnsScript, text: str) -> None:
    """A completed root whose user and assistant messages both have parts."""
    turns_script.turn(
        text=text,
        parts=[{"type": "image", "ref": "turns-attachment-1"}],
        payload={"type": "chart", "points": [1, 2, 3]},
    )


@given(_step(
    'a root turn opened with an envelope "{text:Text}" that calls the tool "{tool:Text}" '
    "and settles {outcome}"
))
def root_with_tool(turns_script: TurnsScript, text: str, tool: str, outcome: str) -> None:
    """A root whose first step runs a tool with a side effect."""
    turns_script.tools[tool] = {"result": {"found": text}, "effect": f"{tool} ran for {text}"}
    call = {"id": f"{tool}-call", "name": tool, "args": {"q": text}}
    turns_script.turn(text=text, outcome=outcome, calls=[call])


@given(_step(
    'a root turn opened with an envelope "{text:Text}" that updates the block "{block:Text}" to '
    "{value} and settles {outcome}"
))
def root_with_update(
    turns_script: TurnsScript, text: str, block: str, value: str, outcome: str
) -> None:
    """A root whose first step updates a block (the current version is used)."""
    call = {"id": f"update-{block}", "name": "update_block",
            "args": {"block": block, "value": _json(value)}}
    turns_script.turn(text=text, outcome=outcome, calls=[call])


@given(_step(
    'a root turn opened with an envelope "{text:Text}" that updates the block "{block:Text}" to '
    "{value} expecting version {version:d} and settles {outcome}"
))
def root_with_stale_update(
    turns_script: TurnsScript, text: str, block: str, value: str, version: int, outcome: str
) -> None:
    """A root whose block update names an explicit expected version."""
    call = {"id": f"update-{block}", "name": "update_block",
            "args": {"block": block, "value": _json(value), "expected_version": version}}
    turns_script.turn(text=text, outcome=outcome, calls=[call])


@given(_step(
    'a root turn opened with an envelope "{text:Text}" whose first tier fails and that settles '
    "{outcome}"
))
def root_with_fallback(turns_script: TurnsScript, text: str, outcome: str) -> None:
    """A root whose first call fails on the first tier and falls back."""
    turns_script.turn(text=text, outcome=outcome, failing_tiers=1)


@given(_step(
    'a root turn continuing from "{earlier:Text}" opened with an envelope "{text:Text}" '
    "that settles {outcome}"
))
def root_continuing(turns_script: TurnsScript, earlier: str, text: str, outcome: str) -> None:
    """A root with ``continues_from`` naming an earlier turn id."""
    turns_script.turn(text=text, outcome=outcome, continues_from=earlier)


@given(_step(
    'a root turn opened with an envelope "{text:Text}" that spawns a child turn settling '
    "{child_outcome} and settles {outcome}"
))
def root_with_child(
    turns_script: TurnsScript, text: str, child_outcome: str, outcome: str
) -> None:
    """A root that spawns one child opened with a brief."""
    turns_script.turn(
        text=text, outcome=outcome,
        children=[{"opening": "brief", "text": f"child of {text}", "outcome": child_outcome}],
    )


@given(_step('the turns clock starts at "{moment:Text}"'))
def clock_starts(turns_script: TurnsScript, moment: str) -> None:
    """The injected clock's start time."""
    turns_script.clock = moment


@given("the turns runtime restarts")
def runtime_restarts(turns_script: TurnsScript) -> None:
    """A new runtime lifetime on the same store."""
    turns_script.restart()


# -- Given: the store directly (store-subject rules) -----------------------------------------


@given(_step(
    'the turns store keeps the child record "{child:Text}" of "{parent:Text}" '
    "with the usage {usage}"
), target_fixture="turns_kept_record")
def store_child_record(
    store: RecordingStore, turns_script: TurnsScript, child: str, parent: str, usage: str
) -> TurnRecord:
    """Append one child record straight to the store."""
    require_capability(store.capabilities, "turn-records")
    record = TurnRecord(
        turn_id=child, thread_id=turns_script.thread, outcome="completed",
        parent_turn_id=parent, grant={"max_steps": 3}, steps_used=2, tier="helper",
        fallbacks=({"tier": "primary", "step": 1, "error": {"message": "busy"}},),
        usage=_json(usage), timing={"started_at": "2026-01-01T00:00:01Z",
                                    "settled_at": "2026-01-01T00:00:03Z"},
        metadata={"kind": "child", "note": "ünïcode ✓"},
    )
    store.append_record(record)
    return record


@given(_step('the turns store keeps the records "{ids:Text}" for the turns thread'))
def store_records_here(store: RecordingStore, turns_script: TurnsScript, ids: str) -> None:
    """Append root records for the scenario's thread."""
    require_capability(store.capabilities, "turn-records")
    for turn_id in _names(ids):
        store.append_record(TurnRecord(turn_id, turns_script.thread, "completed"))


@given(_step('the turns store keeps the records "{ids:Text}" for another thread'))
def store_records_elsewhere(store: RecordingStore, turns_script: TurnsScript, ids: str) -> None:
    """Append records for a second thread of the same scenario."""
    require_capability(store.capabilities, "turn-records")
    for turn_id in _names(ids):
        store.append_record(TurnRecord(turn_id, turns_script.thread + "-other", "completed"))


@given(_step("the turns thread already stores {count:d} messages"))
def store_messages(store: RecordingStore, turns_script: TurnsScript, count: int) -> None:
    """Append ``count`` alternating user and assistant messages, one batch each."""
    for n in range(1, count + 1):
        role: Role = "user" if n % 2 else "assistant"
        store.append(turns_script.thread, [Message(f"m{n}", role, f"message {n}")])


_OTHER_WRITER = "other-writer-"
"""Id prefix of the messages another writer puts into the turns thread."""


def _other_messages(turns_script: TurnsScript, count: int) -> list[Message]:
    """``count`` messages another writer appends next: alternating roles, non-ASCII
    text, ids that continue after the ones it already stored."""
    start = turns_script.other_writer_count
    turns_script.other_writer_count += count
    made = []
    for n in range(start + 1, start + count + 1):
        role: Role = "user" if n % 2 else "assistant"
        made.append(Message(f"{_OTHER_WRITER}{n}", role, f"écrit ailleurs nº {n}"))
    return made


@given(_step("another writer has stored {count:d} messages in the turns thread"))
def other_writer_before(store: RecordingStore, turns_script: TurnsScript, count: int) -> None:
    """Before the runtime starts, another writer fills the thread (one batch)."""
    store.append(turns_script.thread, _other_messages(turns_script, count))


@given(_step("another writer stores {count:d} messages in the turns thread after each answer"))
def other_writer_between(turns_script: TurnsScript, count: int) -> None:
    """While the script runs, right after the store took each assistant message."""
    turns_script.writes_after_each_answer = count


@contextlib.contextmanager
def _other_writer(store: RecordingStore, turns_script: TurnsScript) -> Iterator[None]:
    """Append ``writes_after_each_answer`` messages of another writer to the thread each
    time the store acknowledged an append of an assistant message there: between one
    turn and the next, as a second process sharing the store would. The kit watches its own
    timeline, so nothing the runtime reports decides when."""
    thread, count = turns_script.thread, turns_script.writes_after_each_answer
    if count <= 0:
        yield
        return
    busy = [False]

    def after(entry: Entry) -> None:
        if busy[0] or entry.kind != "store" or entry.name != "append" or "result" not in entry.data:
            return
        args = entry.data.get("args") or []
        if len(args) < 2 or args[0] != thread or not isinstance(args[1], list | tuple):
            return
        if not any(isinstance(m, Mapping) and m.get("role") == "assistant" for m in args[1]):
            return
        busy[0] = True
        try:
            store.append(thread, _other_messages(turns_script, count))
        finally:
            busy[0] = False

    store.timeline.watchers.append(after)
    try:
        yield
    finally:
        store.timeline.watchers.remove(after)


# -- When ------------------------------------------------------------------------------


@when("the turns script runs", target_fixture="turns_run")
def script_runs(
    request: pytest.FixtureRequest, runtime: Runtime, store: RecordingStore, store_url: str,
    turns_script: TurnsScript,
) -> TurnsRun:
    """Run the script once; a configuration the runtime rejects is kept, not raised.
    After each restart the turns run in a fresh process (:func:`_later_lifetime`)."""
    script = turns_script.to_json()
    run = TurnsRun(script=script, store=store)
    lifetimes = turns_script.lifetimes()
    if len(lifetimes) > 1:
        require_capability(store.capabilities, "durable")
    first = lifetime_script(script, *lifetimes[0], {}) if lifetimes else script
    start = len(store.timeline)
    with _other_writer(store, turns_script):
        try:
            run.observation = observe(runtime, first, store)
        except ValueError as exc:
            run.error = exc
            return run
    for number, (begin, end) in enumerate(lifetimes[1:], start=2):
        used = _calls_made(store, start)
        part = lifetime_script(script, begin, end, used)
        run.observation = _later_lifetime(
            request, store, store_url, part, number, run.observed())
    return run


def _calls_made(store: RecordingStore, start: int) -> dict[str, dict[str, int]]:
    """Model and tool calls on the timeline since entry ``start``, per name."""
    used: dict[str, dict[str, int]] = {"model": {}, "tool": {}}
    for entry in list(store.timeline)[start:]:
        if entry.kind in used:
            used[entry.kind][entry.name] = used[entry.kind].get(entry.name, 0) + 1
    return used


def _later_lifetime(
    request: pytest.FixtureRequest, store: RecordingStore, store_url: str,
    part: dict[str, JSONValue], number: int, so_far: dict[str, JSONValue],
) -> dict[str, JSONValue]:
    """Run ``part`` (the turns after a restart) in a fresh process on the store
    under test, copy its timeline onto the scenario's and return the observation
    of every lifetime so far (lists concatenated)."""
    child = run_fresh(
        store_url, ["--lifetime", str(number)], script=part,
        options=runtime_options(request.config.getoption("--memconform-mutant"),
                                request.config.getoption("--memconform-runtime")),
        what="the fresh process running the turns after a restart",
    )
    for entry in child.get("timeline") or []:
        data = {k: v for k, v in entry.items() if k not in ("seq", "kind", "name")}
        store.timeline.add(str(entry["kind"]), str(entry["name"]), **data)
    merged: dict[str, JSONValue] = dict(so_far)
    for key, value in child.items():
        before = so_far.get(key)
        merged[key] = [*before, *value] if isinstance(before, list) and isinstance(
            value, list) else value
    merged["timeline"] = store.timeline.to_json()
    return merged


@when("the turns store is read", target_fixture="turns_run")
def store_is_read(store: RecordingStore, turns_script: TurnsScript) -> TurnsRun:
    """No runtime: the scenario checks the store alone."""
    return TurnsRun(script=turns_script.to_json(), store=store, observation={})


# -- Then: messages ---------------------------------------------------------------------


def _roles(messages: list[Message]) -> str:
    return ", ".join(m.role for m in messages) or "nothing"


@then(_step('the turns thread holds messages with the roles "{roles:Text}"'))
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


@then(_step('the assistant message of "{turn_id:Text}" carries the final reply and its '
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


@then(_step('the turn "{turn_id:Text}" settled {outcome}'))
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


@then(_step('the turns events hold the partial output of "{turn_id:Text}"'))
@decides("TU-006")
def partial_in_events(turns_run: TurnsRun, turn_id: str) -> None:
    """Some output event of the unfinished turn carries its partial text."""
    turns_run.observed()
    texts = [
        str(e.data.get("text", "")) for e in turns_run.entries("event")
        if e.data.get("turn_id") == turn_id and e.name != "turn.settled"
    ]
    if not any(t.startswith(_PARTIAL) for t in texts):
        raise Mismatch(f"the partial output of {turn_id} among the emitted events",
                       f"an event text starting {_PARTIAL!r}", repr(texts))


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


def _history(call: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(h.get("role")), str(h.get("text"))) for h in call.get("history", [])]


@then(_step('the first model call of "{turn_id:Text}" saw the history:'))
@decides("TU-002", "TU-013", "TU-016", "TU-017", "TU-020", "TU-021")
def saw_history(turns_run: TurnsRun, turn_id: str, datatable: list[list[str]]) -> None:
    """The history part of the context, role and text, oldest first."""
    expected = [tuple(row) for row in datatable[1:]]
    expect_equal(f"the history the model saw at the first call of {turn_id}", expected,
                 _history(turns_run.first_call(turn_id)))


@then(_step('the first model call of "{turn_id:Text}" saw no history'))
@decides("TU-018")
def saw_no_history(turns_run: TurnsRun, turn_id: str) -> None:
    """The history part is empty."""
    expect_equal(f"the history at the first call of {turn_id}", [],
                 _history(turns_run.first_call(turn_id)))


@then(_step('the first model call of "{turn_id:Text}" saw {count:d} history messages'))
@decides("TU-016", "TU-018", "TU-021")
def saw_history_count(turns_run: TurnsRun, turn_id: str, count: int) -> None:
    """The history part has ``count`` entries."""
    history = _history(turns_run.first_call(turn_id))
    if len(history) != count:
        raise Mismatch(f"history messages at the first call of {turn_id}", str(count),
                       f"{len(history)}: {history}")


@then(_step('the first model call of "{turn_id:Text}" saw the newest {count:d} stored '
                    "messages up to its own"))
@decides("TU-016", "TU-017", "TU-021")
def saw_newest_stored(turns_run: TurnsRun, turn_id: str, count: int) -> None:
    """The history is the newest ``count`` messages the store holds up to and including
    the turn's own user message, whoever wrote them: read back from the store after the
    run, so another writer's messages count and the runtime's own memory does not."""
    stored = turns_run.messages()
    own = [i for i, m in enumerate(stored) if m.role == "user" and m.turn_id == turn_id]
    if len(own) != 1:
        raise Mismatch(f"one stored user message of {turn_id}", "1",
                       f"{len(own)}\n{transcript_table(stored)}", rules=("TU-001",))
    window = stored[: own[0] + 1][-count:] if count else []
    expect_equal(f"the history the model saw at the first call of {turn_id}",
                 [(m.role, m.text) for m in window], _history(turns_run.first_call(turn_id)))


@then(_step('the history entries the model saw for "{turn_id:Text}" carry only role '
                    "and text"))
@decides("TU-020")
def history_role_text(turns_run: TurnsRun, turn_id: str) -> None:
    """No structured part is replayed."""
    extra = [
        h for call in turns_run.model_calls(turn_id) for h in call.get("history", [])
        if set(h) != {"role", "text"}
    ]
    if extra or not turns_run.model_calls(turn_id):
        raise Mismatch("history entries with role and text only", "{role, text}",
                       json.dumps(extra))


@then(_step('the first model call of "{turn_id:Text}" saw the brief "{text:Text}"'))
@decides("TU-018", "TU-021")
def saw_brief(turns_run: TurnsRun, turn_id: str, text: str) -> None:
    """The brief part of the context."""
    expect_equal(f"the brief of {turn_id}", text, turns_run.first_call(turn_id).get("brief"))


@then(_step('the first model call of "{turn_id:Text}" saw an empty transcript'))
@decides("TU-022", "TU-025")
def saw_empty_transcript(turns_run: TurnsRun, turn_id: str) -> None:
    """The current-turn transcript starts empty."""
    expect_equal(f"the transcript at the first call of {turn_id}", [],
                 turns_run.first_call(turn_id).get("transcript"))


@then(_step('the first model call of "{turn_id:Text}" went to the tier "{tier:Text}"'))
@decides("TU-023", "TU-025")
def first_tier(turns_run: TurnsRun, turn_id: str, tier: str) -> None:
    """The component of the first model call of the turn."""
    turns_run.observed()
    for entry in turns_run.entries("model"):
        request = entry.data.get("request")
        if isinstance(request, Mapping) and request.get("turn_id") == turn_id:
            expect_equal(f"the tier of the first call of {turn_id}", tier, entry.name)
            return
    raise Mismatch(f"a model call for {turn_id}", tier, "no call")


@then(_step('the first model call of "{turn_id:Text}" saw the state blocks "{blocks:Text}"'))
@decides("TU-024")
def saw_blocks(turns_run: TurnsRun, turn_id: str, blocks: str) -> None:
    """The state part names exactly these blocks (``nothing`` for none)."""
    seen = [str(s.get("block")) for s in turns_run.first_call(turn_id).get("state", [])]
    expect_equal(f"the state blocks the model saw for {turn_id}",
                 [] if blocks == "nothing" else _names(blocks), seen)


# -- Then: records ------------------------------------------------------------------------


@then("every settled turn has exactly one turn record")
@decides("TU-010", "TU-014")
def one_record_each(turns_run: TurnsRun) -> None:
    """Records and settle events match one to one (turn id and outcome)."""
    settled = sorted((str(e["turn_id"]), str(e["outcome"])) for e in turns_run.settled())
    stored = sorted((r.turn_id, r.outcome) for r in turns_run.records())
    if not settled:
        raise Mismatch("settled turns", "at least one", "none")
    expect_equal("turn records (id, outcome) against settled turns", settled, stored)


def _field(record: TurnRecord, path: str) -> JSONValue:
    value: Any = record.to_json()
    for part in path.split("."):
        if isinstance(value, list) and part.isdigit():
            value = value[int(part)] if int(part) < len(value) else "<missing>"
        elif isinstance(value, Mapping):
            value = value.get(part, "<missing>")
        else:
            return "<missing>"
    return value


@then(_step('the turn record of "{turn_id:Text}" shows:'))
@decides("TU-011", "TU-012", "TU-014", "TU-025", "TU-026")
def record_shows(turns_run: TurnsRun, turn_id: str, datatable: list[list[str]]) -> None:
    """Each ``field | value`` row: a dotted field path and its JSON value."""
    record = turns_run.record(turn_id)
    expected = {row[0]: _json(row[1]) for row in datatable[1:]}
    observed = {path: _field(record, path) for path in expected}
    expect_equal(f"fields of the turn record of {turn_id}", expected, observed)


@then(_step('the turn record of "{turn_id:Text}" lists fallbacks from the tiers "{tiers:Text}"'))
@decides("TU-011")
def record_fallbacks(turns_run: TurnsRun, turn_id: str, tiers: str) -> None:
    """The fallback history names the failing tiers in order (``nothing`` for none)."""
    fallbacks = turns_run.record(turn_id).fallbacks
    observed = [f.get("tier") if isinstance(f, Mapping) else f for f in fallbacks]
    expect_equal(f"the tiers {turn_id} fell back from", [] if tiers == "nothing" else
                 _names(tiers), observed)


@then(_step('the turn record of "{turn_id:Text}" has timing from the injected clock'))
@decides("TU-011")
def record_timing(turns_run: TurnsRun, turn_id: str) -> None:
    """``started_at`` and ``settled_at`` are the injected clock's times: in order, and
    within an hour of the scripted start (a wall clock would be far off)."""
    timing = dict(turns_run.record(turn_id).timing)
    start = _moment(str(turns_run.script.get("clock", DEFAULT_START)))
    started = _moment(timing.get("started_at"))
    settled = _moment(timing.get("settled_at"))
    if started is None or settled is None or start is None or not (
        start <= started <= settled <= start + timedelta(hours=1)
    ):
        raise Mismatch(f"the timing of {turn_id} from the injected clock",
                       f"started_at <= settled_at, both within an hour after {start}",
                       json.dumps(timing))


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@then(_step('the turn record of "{turn_id:Text}" totals the usage of its own model calls'))
@decides("TU-012")
def record_own_usage(turns_run: TurnsRun, turn_id: str) -> None:
    """Sum the usage of the turn's own answered model calls and compare."""
    totals: dict[str, int] = {}
    for entry in turns_run.entries("model"):
        request = entry.data.get("request")
        if isinstance(request, Mapping) and request.get("turn_id") == turn_id and (
            "response" in entry.data
        ):
            for key, value in dict(entry.data["response"].get("usage") or {}).items():
                totals[key] = totals.get(key, 0) + int(value)
    expect_equal(f"the usage on the record of {turn_id}", totals,
                 dict(turns_run.record(turn_id).usage))


@then(_step('the turn records of the turns thread have the ids "{ids:Text}"'))
@decides("TU-027")
def record_ids(turns_run: TurnsRun, ids: str) -> None:
    """The stored records' ids, in append order."""
    expect_equal("turn record ids in append order", _names(ids),
                 [r.turn_id for r in turns_run.records()])


@then("every turn id of the turns thread is a distinct UUID")
@decides("TU-028")
def distinct_uuids(turns_run: TurnsRun) -> None:
    """Ids from the injected generator: UUIDs, never repeated."""
    ids = [r.turn_id for r in turns_run.records()]
    bad = []
    for turn_id in ids:
        try:
            uuid.UUID(turn_id)
        except ValueError:
            bad.append(turn_id)
    if bad or len(set(ids)) != len(ids) or not ids:
        raise Mismatch("distinct UUID turn ids", "unique UUIDs", repr(ids))


# -- Then: state and side effects ------------------------------------------------------------


@then(_step('the turns block "{block:Text}" holds {value} at version {version:d}'))
@decides("TU-008", "TU-009")
def block_holds(turns_run: TurnsRun, block: str, value: str, version: int) -> None:
    """The stored state entry of the block in the thread's scope."""
    turns_run.observed()
    require_capability(turns_run.store.capabilities, "state")
    entry = turns_run.store.read_state(turns_run.thread, block)
    observed = None if entry is None else (entry.value, entry.version)
    expect_equal(f"the state block {block}", (_json(value), version), observed)


@then(_step('the turns block "{block:Text}" was never written'))
@decides("TU-008")
def block_unwritten(turns_run: TurnsRun, block: str) -> None:
    """No state entry exists for the block."""
    turns_run.observed()
    require_capability(turns_run.store.capabilities, "state")
    entry = turns_run.store.read_state(turns_run.thread, block)
    expect_equal(f"the state block {block}", None, None if entry is None else entry.to_json())


@then(_step('the turns ledger holds the effect "{effect:Text}"'))
@decides("TU-009")
def ledger_effect(turns_run: TurnsRun, effect: str) -> None:
    """The side effect was not rolled back."""
    ledger = turns_run.observed().get("ledger") or []
    effects = [e.get("effect") for e in ledger if isinstance(e, Mapping)]
    if effect not in effects:
        raise Mismatch("the side effect on the ledger", effect, repr(effects))


# -- Then: configuration ---------------------------------------------------------------------


@then(_step('the turns runtime rejects its configuration naming "{setting:Text}"'))
@decides("TU-019")
def config_rejected(turns_run: TurnsRun, setting: str) -> None:
    """The runtime raised a ``ValueError`` that names the setting."""
    if turns_run.error is None or setting not in str(turns_run.error):
        raise Mismatch("the configuration is rejected", f"a ValueError naming {setting}",
                       repr(turns_run.error) if turns_run.error else "the script ran")


@then("nothing reached the turns store or the model")
@decides("TU-019")
def nothing_happened(turns_run: TurnsRun) -> None:
    """No store write and no model call happened."""
    touched = [
        e.to_json() for e in turns_run.store.timeline
        if e.kind == "model" or (e.kind == "store" and e.name not in (
            "messages", "records", "read_state", "errors", "facts", "get_fact"))
    ]
    expect_equal("store writes and model calls", [], touched)


# -- Then: the store alone ---------------------------------------------------------------------


@then("the turns store returns the kept record unchanged")
@decides("TU-029")
def record_unchanged(turns_run: TurnsRun, turns_kept_record: TurnRecord) -> None:
    """The record reads back field for field."""
    found = [r for r in turns_run.store.records(turns_run.thread)
             if r.turn_id == turns_kept_record.turn_id]
    expect_equal("the kept turn record", [turns_kept_record.to_json()],
                 [r.to_json() for r in found])


@then(_step('the turns store returns the records "{ids:Text}" for the turns thread'))
@decides("TU-030")
def records_for_thread(turns_run: TurnsRun, ids: str) -> None:
    """Only this thread's records, in append order."""
    require_capability(turns_run.store.capabilities, "turn-records")
    records = turns_run.store.records(turns_run.thread)
    expect_equal("records of the thread (id, thread)",
                 [(i, turns_run.thread) for i in _names(ids)],
                 [(r.turn_id, r.thread_id) for r in records])


@then("the turns store returns the records of both threads when no thread is named")
@decides("TU-030")
def records_for_all(turns_run: TurnsRun) -> None:
    """Unfiltered reading includes both of the scenario's threads."""
    require_capability(turns_run.store.capabilities, "turn-records")
    mine = {turns_run.thread, turns_run.thread + "-other"}
    threads = sorted({r.thread_id for r in turns_run.store.records() if r.thread_id in mine})
    expect_equal("threads among all records", sorted(mine), threads)


@then(_step(
    "reading the turns thread with a limit of {limit:d} returns messages {first:d} to {last:d}"
))
@decides("TU-031")
def window_from_store(turns_run: TurnsRun, limit: int, first: int, last: int) -> None:
    """The newest ``limit`` messages, oldest first."""
    observed = [m.id for m in turns_run.store.messages(turns_run.thread, limit)]
    expect_equal(f"messages(limit={limit})", [f"m{n}" for n in range(first, last + 1)],
                 observed)

