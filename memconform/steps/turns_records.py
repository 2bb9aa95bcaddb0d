"""Steps of the ``turns`` profile on turn records: the records the runtime
stored, and the store alone keeping and returning records
(``features/turns/turn_records.feature``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pytest_bdd import given, then

from memconform.harness.environment import DEFAULT_START
from memconform.harness.proxy import RecordingStore
from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.steps.turns_script import TurnsScript
from memconform.steps.turns_world import TurnsRun, json_value, name_list, phrase
from memconform.values import JSONValue, TurnRecord

# -- Given: the store directly (store-subject rules) -----------------------------------------


@given(phrase(
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
        usage=json_value(usage), timing={"started_at": "2026-01-01T00:00:01Z",
                                    "settled_at": "2026-01-01T00:00:03Z"},
        metadata={"kind": "child", "note": "ünïcode ✓"},
    )
    store.append_record(record)
    return record


@given(phrase('the turns store keeps the records "{ids:Text}" for the turns thread'))
def store_records_here(store: RecordingStore, turns_script: TurnsScript, ids: str) -> None:
    """Append root records for the scenario's thread."""
    require_capability(store.capabilities, "turn-records")
    for turn_id in name_list(ids):
        store.append_record(TurnRecord(turn_id, turns_script.thread, "completed"))


@given(phrase('the turns store keeps the records "{ids:Text}" for another thread'))
def store_records_elsewhere(store: RecordingStore, turns_script: TurnsScript, ids: str) -> None:
    """Append records for a second thread of the same scenario."""
    require_capability(store.capabilities, "turn-records")
    for turn_id in name_list(ids):
        store.append_record(TurnRecord(turn_id, turns_script.thread + "-other", "completed"))


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


@then(phrase('the turn record of "{turn_id:Text}" shows:'))
@decides("TU-011", "TU-012", "TU-014", "TU-025", "TU-026")
def record_shows(turns_run: TurnsRun, turn_id: str, datatable: list[list[str]]) -> None:
    """Each ``field | value`` row: a dotted field path and its JSON value."""
    record = turns_run.record(turn_id)
    expected = {row[0]: json_value(row[1]) for row in datatable[1:]}
    observed = {path: _field(record, path) for path in expected}
    expect_equal(f"fields of the turn record of {turn_id}", expected, observed)


@then(phrase('the turn record of "{turn_id:Text}" lists fallbacks from the tiers "{tiers:Text}"'))
@decides("TU-011")
def record_fallbacks(turns_run: TurnsRun, turn_id: str, tiers: str) -> None:
    """The fallback history names the failing tiers in order (``nothing`` for none)."""
    fallbacks = turns_run.record(turn_id).fallbacks
    observed = [f.get("tier") if isinstance(f, Mapping) else f for f in fallbacks]
    expect_equal(f"the tiers {turn_id} fell back from", [] if tiers == "nothing" else
                 name_list(tiers), observed)


@then(phrase('the turn record of "{turn_id:Text}" has timing from the injected clock'))
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


@then(phrase('the turn record of "{turn_id:Text}" totals the usage of its own model calls'))
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


@then(phrase('the turn records of the turns thread have the ids "{ids:Text}"'))
@decides("TU-027")
def record_ids(turns_run: TurnsRun, ids: str) -> None:
    """The stored records' ids, in append order."""
    expect_equal("turn record ids in append order", name_list(ids),
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


# -- Then: the store alone ---------------------------------------------------------------------


@then("the turns store returns the kept record unchanged")
@decides("TU-029")
def record_unchanged(turns_run: TurnsRun, turns_kept_record: TurnRecord) -> None:
    """The record reads back field for field."""
    found = [r for r in turns_run.store.records(turns_run.thread)
             if r.turn_id == turns_kept_record.turn_id]
    expect_equal("the kept turn record", [turns_kept_record.to_json()],
                 [r.to_json() for r in found])


@then(phrase('the turns store returns the records "{ids:Text}" for the turns thread'))
@decides("TU-030")
def records_for_thread(turns_run: TurnsRun, ids: str) -> None:
    """Only this thread's records, in append order."""
    require_capability(turns_run.store.capabilities, "turn-records")
    records = turns_run.store.records(turns_run.thread)
    expect_equal("records of the thread (id, thread)",
                 [(i, turns_run.thread) for i in name_list(ids)],
                 [(r.turn_id, r.thread_id) for r in records])


@then("the turns store returns the records of both threads when no thread is named")
@decides("TU-030")
def records_for_all(turns_run: TurnsRun) -> None:
    """Unfiltered reading includes both of the scenario's threads."""
    require_capability(turns_run.store.capabilities, "turn-records")
    mine = {turns_run.thread, turns_run.thread + "-other"}
    threads = sorted({r.thread_id for r in turns_run.store.records() if r.thread_id in mine})
    expect_equal("threads among all records", sorted(mine), threads)
