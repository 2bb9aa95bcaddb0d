"""Then steps of the ``turns`` profile on what the model saw at a turn's first
call (history window, brief, transcript, tier) and on the runtime's
configuration (``features/turns/history_window.feature``, ``fresh_turns.feature``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_bdd import then

from memconform.steps.common import Mismatch, decides, expect_equal, transcript_table
from memconform.steps.turns_world import TurnsRun, phrase


def history_of(call: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(h.get("role")), str(h.get("text"))) for h in call.get("history", [])]


@then(phrase('the first model call of "{turn_id:Text}" saw the history:'))
@decides("TU-002", "TU-013", "TU-016", "TU-017", "TU-020", "TU-021")
def saw_history(turns_run: TurnsRun, turn_id: str, datatable: list[list[str]]) -> None:
    """The history part of the context, role and text, oldest first."""
    expected = [tuple(row) for row in datatable[1:]]
    expect_equal(f"the history the model saw at the first call of {turn_id}", expected,
                 history_of(turns_run.first_call(turn_id)))


@then(phrase('the first model call of "{turn_id:Text}" saw no history'))
@decides("TU-018")
def saw_no_history(turns_run: TurnsRun, turn_id: str) -> None:
    """The history part is empty."""
    expect_equal(f"the history at the first call of {turn_id}", [],
                 history_of(turns_run.first_call(turn_id)))


@then(phrase('the first model call of "{turn_id:Text}" saw {count:d} history messages'))
@decides("TU-016", "TU-018", "TU-021")
def saw_history_count(turns_run: TurnsRun, turn_id: str, count: int) -> None:
    """The history part has ``count`` entries."""
    history = history_of(turns_run.first_call(turn_id))
    if len(history) != count:
        raise Mismatch(f"history messages at the first call of {turn_id}", str(count),
                       f"{len(history)}: {history}")


@then(phrase('the first model call of "{turn_id:Text}" saw the newest {count:d} stored '
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
                 [(m.role, m.text) for m in window], history_of(turns_run.first_call(turn_id)))


@then(phrase('the history entries the model saw for "{turn_id:Text}" carry only role '
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


@then(phrase('the first model call of "{turn_id:Text}" saw the brief "{text:Text}"'))
@decides("TU-018", "TU-021")
def saw_brief(turns_run: TurnsRun, turn_id: str, text: str) -> None:
    """The brief part of the context."""
    expect_equal(f"the brief of {turn_id}", text, turns_run.first_call(turn_id).get("brief"))


@then(phrase('the first model call of "{turn_id:Text}" saw an empty transcript'))
@decides("TU-022", "TU-025")
def saw_empty_transcript(turns_run: TurnsRun, turn_id: str) -> None:
    """The current-turn transcript starts empty."""
    expect_equal(f"the transcript at the first call of {turn_id}", [],
                 turns_run.first_call(turn_id).get("transcript"))


@then(phrase('the first model call of "{turn_id:Text}" went to the tier "{tier:Text}"'))
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


# -- Then: configuration ---------------------------------------------------------------------


@then(phrase('the turns runtime rejects its configuration naming "{setting:Text}"'))
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


@then(phrase(
    "reading the turns thread with a limit of {limit:d} returns messages {first:d} to {last:d}"
))
@decides("TU-031")
def window_from_store(turns_run: TurnsRun, limit: int, first: int, last: int) -> None:
    """The newest ``limit`` messages, oldest first."""
    observed = [m.id for m in turns_run.store.messages(turns_run.thread, limit)]
    expect_equal(f"messages(limit={limit})", [f"m{n}" for n in range(first, last + 1)],
                 observed)
