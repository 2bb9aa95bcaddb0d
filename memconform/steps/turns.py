"""Step definitions of the ``turns`` profile (document 002, "History and records"):
the Given steps that build the script and the When steps that run it.

A scenario builds a script with :class:`~memconform.steps.turns_script.TurnsScript`
(Given), runs it once on the runtime under test (When) and then reads what the
kit observed: the store's messages, records and state through the recording
proxy, and the model calls and events on the timeline (Then). Nothing is read
from the runtime's own account of what it did. The Then steps live in the
family modules ``turns_messages`` (stored messages, outcomes and events),
``turns_history`` (what the model saw, configuration), ``turns_records`` (turn
records, and the store alone) and ``turns_blocks`` (state blocks and side
effects); :class:`~memconform.steps.turns_world.TurnsRun` in ``turns_world``.

A restart is real: the turns after it run in a fresh process on the same
(durable) store (:func:`memconform.steps.child_runs.run_fresh`); the kit copies
that process's timeline, as its own proxy there recorded it, onto the
scenario's timeline, so every check reads one timeline.

Every phrase names the ``turns`` vocabulary (turn, turns thread, turn record,
tier, block) so it never collides with another profile's steps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

import pytest
from pytest_bdd import given, when

from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import Runtime, observe
from memconform.steps.child_runs import run_fresh, runtime_options
from memconform.steps.common import require_capability
from memconform.steps.turns_script import TurnsScript, lifetime_script
from memconform.steps.turns_world import TurnsRun, json_value, name_list, phrase
from memconform.timeline import Entry
from memconform.values import JSONValue, Message, Role

__all__ = ["TurnsRun"]


# -- Given: the script ------------------------------------------------------------------


@given("a turns script on a fresh thread", target_fixture="turns_script")
def turns_script(namespace: str) -> TurnsScript:
    """A new script on a thread no other scenario uses."""
    return TurnsScript(thread=f"{namespace}-turns")


@given(phrase("the turns history window is {size:d}"))
def history_window(turns_script: TurnsScript, size: int) -> None:
    """Configure ``history_window``."""
    turns_script.config["history_window"] = size


@given("the turns history window is left at its default")
def history_window_default(turns_script: TurnsScript) -> None:
    """Leave ``history_window`` unset."""
    turns_script.config.pop("history_window", None)


@given(phrase("turn ids come from the {generator} generator"))
def turn_id_generator(turns_script: TurnsScript, generator: str) -> None:
    """``counter`` (the default) or ``uuid``."""
    turns_script.config["turn_ids"] = generator


@given(phrase("the turns context budget is {size:d} characters"))
def context_budget(turns_script: TurnsScript, size: int) -> None:
    """Configure the fit check's budget."""
    turns_script.config["context_budget"] = size


@given(phrase('the turns model chain has the tiers "{tiers:Text}"'))
def model_chain(turns_script: TurnsScript, tiers: str) -> None:
    """The default tier chain of every agent."""
    turns_script.config["tiers"] = list(name_list(tiers))


@given(phrase('the turns state declares the block "{block:Text}" of type "{kind:Text}"'))
def declare_block(turns_script: TurnsScript, block: str, kind: str) -> None:
    """Declare a state block."""
    turns_script.declare_block(block, kind)


@given(phrase('the turns agent "{agent:Text}" reads the blocks "{blocks:Text}"'))
def agent_reads(turns_script: TurnsScript, agent: str, blocks: str) -> None:
    """Declare an agent and the blocks it reads (``nothing`` for none)."""
    turns_script.add_agent(agent, reads=[] if blocks == "nothing" else name_list(blocks))


@given(phrase("a {kind} turn opened with its {opening} that settles {outcome}"))
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


@given(phrase('a root turn opened with an envelope "{text:Text}" that settles {outcome}'))
def root_with_envelope(turns_script: TurnsScript, text: str, outcome: str) -> None:
    """A root turn opened with an envelope."""
    turns_script.turn(text=text, outcome=outcome)


@given(phrase('a root turn opened with the brief "{text:Text}" that settles {outcome}'))
def root_with_brief(turns_script: TurnsScript, text: str, outcome: str) -> None:
    """A root turn opened with a brief only."""
    turns_script.turn(opening="brief", text=text, outcome=outcome)


@given(phrase(
    'a root turn opened with an envelope "{text:Text}" as the agent "{agent:Text}" '
    "that settles {outcome}"
))
def root_as_agent(turns_script: TurnsScript, text: str, agent: str, outcome: str) -> None:
    """A root turn run by a declared agent."""
    turns_script.turn(text=text, outcome=outcome, agent=agent)


@given(phrase(
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


@given(phrase(
    'a root turn opened with an envelope "{text:Text}" that calls the tool "{tool:Text}" '
    "and settles {outcome}"
))
def root_with_tool(turns_script: TurnsScript, text: str, tool: str, outcome: str) -> None:
    """A root whose first step runs a tool with a side effect."""
    turns_script.tools[tool] = {"result": {"found": text}, "effect": f"{tool} ran for {text}"}
    call = {"id": f"{tool}-call", "name": tool, "args": {"q": text}}
    turns_script.turn(text=text, outcome=outcome, calls=[call])


@given(phrase(
    'a root turn opened with an envelope "{text:Text}" that updates the block "{block:Text}" to '
    "{value} and settles {outcome}"
))
def root_with_update(
    turns_script: TurnsScript, text: str, block: str, value: str, outcome: str
) -> None:
    """A root whose first step updates a block (the current version is used)."""
    call = {"id": f"update-{block}", "name": "update_block",
            "args": {"block": block, "value": json_value(value)}}
    turns_script.turn(text=text, outcome=outcome, calls=[call])


@given(phrase(
    'a root turn opened with an envelope "{text:Text}" that updates the block "{block:Text}" to '
    "{value} expecting version {version:d} and settles {outcome}"
))
def root_with_stale_update(
    turns_script: TurnsScript, text: str, block: str, value: str, version: int, outcome: str
) -> None:
    """A root whose block update names an explicit expected version."""
    call = {"id": f"update-{block}", "name": "update_block",
            "args": {"block": block, "value": json_value(value), "expected_version": version}}
    turns_script.turn(text=text, outcome=outcome, calls=[call])


@given(phrase(
    'a root turn opened with an envelope "{text:Text}" whose first tier fails and that settles '
    "{outcome}"
))
def root_with_fallback(turns_script: TurnsScript, text: str, outcome: str) -> None:
    """A root whose first call fails on the first tier and falls back."""
    turns_script.turn(text=text, outcome=outcome, failing_tiers=1)


@given(phrase(
    'a root turn continuing from "{earlier:Text}" opened with an envelope "{text:Text}" '
    "that settles {outcome}"
))
def root_continuing(turns_script: TurnsScript, earlier: str, text: str, outcome: str) -> None:
    """A root with ``continues_from`` naming an earlier turn id."""
    turns_script.turn(text=text, outcome=outcome, continues_from=earlier)


@given(phrase(
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


@given(phrase('the turns clock starts at "{moment:Text}"'))
def clock_starts(turns_script: TurnsScript, moment: str) -> None:
    """The injected clock's start time."""
    turns_script.clock = moment


@given("the turns runtime restarts")
def runtime_restarts(turns_script: TurnsScript) -> None:
    """A new runtime lifetime on the same store."""
    turns_script.restart()


@given(phrase("the turns thread already stores {count:d} messages"))
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


@given(phrase("another writer has stored {count:d} messages in the turns thread"))
def other_writer_before(store: RecordingStore, turns_script: TurnsScript, count: int) -> None:
    """Before the runtime starts, another writer fills the thread (one batch)."""
    store.append(turns_script.thread, _other_messages(turns_script, count))


@given(phrase("another writer stores {count:d} messages in the turns thread after each answer"))
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
