"""Step definitions of the ``store`` profile about copies
(``features/store/copies.feature``, ST-007): every method returning stored data
hands the caller a copy, and every method taking the caller's data keeps a copy.

The caller "changes" a value by :func:`~memconform.steps.common.scribble`:
every mutable container inside it, however deep (a message's metadata and
parts, an error record's error, a turn record's usage, a state value, a fact's
metadata, the returned list itself), gets an entry added. What is stored, read
again afterwards, must not show it.
"""

from __future__ import annotations

import copy

from pytest_bdd import parsers, when

from memconform.harness.proxy import RecordingStore
from memconform.steps.store import StoreScene, full_message, must_succeed
from memconform.steps.store_records import (
    error_record,
    job_scope,
    knowledge_scope,
    state_value,
    turn_records,
    untrusted_fact,
)
from memconform.values import JSONValue, scribble

__all__: list[str] = []

# -- what the caller handed over --


@when(
    parsers.parse(
        'store thread "{name}" is appended a message with every field set,'
        " which the caller then changes"
    )
)
def _append_then_change(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    batch = [full_message()]
    kept = copy.deepcopy(batch)
    must_succeed("append", lambda: store.append(store_scene.thread(name), batch))
    store_scene.appended.setdefault(name, []).extend(kept)
    scribble(batch)


@when(
    parsers.parse(
        'an error record for run "{run}" is recorded in store thread "{name}",'
        " which the caller then changes"
    )
)
def _record_then_change(
    store: RecordingStore, store_scene: StoreScene, run: str, name: str
) -> None:
    record = error_record(run)
    kept = copy.deepcopy(record)
    must_succeed("record_error", lambda: store.record_error(store_scene.thread(name), record))
    store_scene.errors.setdefault(name, []).append(kept)
    scribble(record)


@when(
    parsers.parse(
        'the turn records of a root turn with two child turns are appended for store thread'
        ' "{name}", which the caller then changes'
    )
)
def _records_then_change(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    records = turn_records(store_scene.thread(name), len(store_scene.records))
    store_scene.records.extend(copy.deepcopy(records))
    for record in records:
        must_succeed("append_record", lambda r=record: store.append_record(r))  # type: ignore[misc]
    scribble(records)


@when(
    parsers.parse(
        'state key "{key}" of store job "{job}" is written expecting no version,'
        " which the caller then changes"
    )
)
def _state_then_change(store: RecordingStore, store_scene: StoreScene, key: str, job: str) -> None:
    value: JSONValue = state_value(1)
    store_scene.state_values[(job, key)] = copy.deepcopy(value)
    scope = job_scope(store_scene, job)
    entry = must_succeed("write_state", lambda: store.write_state(scope, key, value, None))
    scribble(value)
    scribble(entry)


@when(
    parsers.parse(
        'an untrusted copied fact about "{subject}" is stored in store scope "{scope}",'
        " which the caller then changes"
    )
)
def _fact_then_change(
    store: RecordingStore, store_scene: StoreScene, subject: str, scope: str
) -> None:
    fact = untrusted_fact(subject)
    store_scene.facts[(scope, subject)] = copy.deepcopy(fact)
    named = knowledge_scope(store_scene, scope)
    must_succeed("put_fact", lambda: store.put_fact(named, fact))
    scribble(fact)


# -- what the store handed back --


@when(parsers.parse('the caller changes the error records read from store thread "{name}"'))
def _change_errors(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    scribble(must_succeed("errors", lambda: store.errors(store_scene.thread(name))))


@when(parsers.parse('the caller changes the turn records read for store thread "{name}"'))
def _change_records(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    scribble(must_succeed("records", lambda: store.records(store_scene.thread(name))))
    scribble(must_succeed("records", store.records))


@when(parsers.parse('the caller changes the state read from key "{key}" of store job "{job}"'))
def _change_state(store: RecordingStore, store_scene: StoreScene, key: str, job: str) -> None:
    scope = job_scope(store_scene, job)
    scribble(must_succeed("read_state", lambda: store.read_state(scope, key)))


@when(parsers.parse('the caller changes the facts read from store scope "{scope}"'))
def _change_facts(store: RecordingStore, store_scene: StoreScene, scope: str) -> None:
    named = knowledge_scope(store_scene, scope)
    listed = must_succeed("facts", lambda: store.facts(named))
    for subject in sorted({f.subject for f in listed}):
        scribble(must_succeed("get_fact", lambda s=subject: store.get_fact(named, s)))  # type: ignore[misc]
    scribble(listed)
