"""Steps of the ``persisted-state`` profile that call the store directly: its
promises on working state and facts (compare-and-set, exact round trips,
forgetting, scope isolation, durability across processes;
``features/persisted-state/store_promises.feature``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_bdd import parsers, then, when

from memconform.contract import ConflictError
from memconform.simulator.persisted_state import knowledge_scope
from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.steps.persisted_state_world import JobWorld, fresh_process, table_rows
from memconform.values import Fact


def _state_scope(world: JobWorld, name: str = "store") -> str:
    return f"{world.namespace}/state/{name}"


@when(parsers.re(
    r'the state key "(?P<key>[^"]+)" is written as (?P<value>\{.*\}) '
    r"expecting (?P<expected>no version|version \d+)"
))
def state_written(persisted_state: JobWorld, key: str, value: str, expected: str) -> None:
    require_capability(persisted_state.store.capabilities, "state")
    version = None if expected == "no version" else int(expected.split()[1])
    try:
        persisted_state.last_write = persisted_state.store.write_state(
            _state_scope(persisted_state), key, json.loads(value), version
        )
    except ConflictError as exc:
        persisted_state.last_write = exc


@then("the last state write was refused with a conflict")
@decides("PS-026")
def write_conflicted(persisted_state: JobWorld) -> None:
    observed = persisted_state.last_write
    if not isinstance(observed, ConflictError):
        raise Mismatch("the stale write", "ConflictError", repr(observed))


@then(parsers.re(
    r'the state key "(?P<key>[^"]+)" reads (?P<value>\{.*\}) at version (?P<version>\d+)'
))
@decides("PS-026")
def state_reads(persisted_state: JobWorld, key: str, value: str, version: str) -> None:
    entry = persisted_state.store.read_state(_state_scope(persisted_state), key)
    observed = None if entry is None else (entry.value, entry.version)
    expect_equal(f"state key {key!r}", (json.loads(value), int(version)), observed)


def _fact(world: JobWorld, subject: str, statement: str) -> Fact:
    return Fact(
        subject=subject, statement=statement, writer="agent:store-check",
        source="tool:inventory", evidence="inventory listing", written_at=world.clock.now(),
        kind="observation", trust="trusted", origin="concluded",
        recheck_at="2026-04-01T00:00:00Z",
    )


def _kb(world: JobWorld, scope: str | None) -> str:
    return world.kb_scope if scope is None else knowledge_scope(world.namespace, scope)


@when(parsers.re(
    r'the fact "(?P<subject>[^"]+)" is put directly(?: in scope "(?P<scope>[^"]+)")? '
    r'with the statement "(?P<statement>[^"]+)"'
))
def fact_put(persisted_state: JobWorld, subject: str, statement: str, scope: str | None) -> None:
    require_capability(persisted_state.store.capabilities, "knowledge")
    fact = _fact(persisted_state, subject, statement)
    persisted_state.store.put_fact(_kb(persisted_state, scope), fact)
    persisted_state.put_fact = fact


@when("a fact is put directly with the fields:")
def fact_put_fields(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    fields: dict[str, Any] = {r["field"]: r["value"] for r in table_rows(datatable)}
    fields["metadata"] = {"note": "ünïcode ✓", "tags": ["a", "b"]}
    fact = Fact.from_json(fields)
    persisted_state.store.put_fact(persisted_state.kb_scope, fact)
    persisted_state.put_fact = fact


@then(parsers.parse('the fact "{subject}" reads back with exactly those fields'))
@decides("PS-028")
def fact_exact(persisted_state: JobWorld, subject: str) -> None:
    expected = persisted_state.put_fact
    assert expected is not None
    got = persisted_state.store.get_fact(persisted_state.kb_scope, subject)
    expect_equal(f"get_fact({subject!r})", expected.to_json(),
                 None if got is None else got.to_json())
    listed = [f.to_json() for f in persisted_state.store.facts(persisted_state.kb_scope)]
    expect_equal("facts()", [expected.to_json()], listed)


@then(parsers.parse('the store returns only "{statement}" for "{subject}"'))
@decides("PS-027")
def store_only(persisted_state: JobWorld, statement: str, subject: str) -> None:
    got = persisted_state.store.get_fact(persisted_state.kb_scope, subject)
    expect_equal(f"get_fact({subject!r})", statement, None if got is None else got.statement)
    listed = [f.statement for f in persisted_state.store.facts(persisted_state.kb_scope)
              if f.subject == subject]
    expect_equal(f"facts() entries for {subject!r}", [statement], listed)


@when(parsers.re(
    r'the fact "(?P<subject>[^"]+)" is forgotten directly(?: in scope "(?P<scope>[^"]+)")?$'
))
def fact_forgotten(persisted_state: JobWorld, subject: str, scope: str | None) -> None:
    persisted_state.last_forget = persisted_state.store.forget(_kb(persisted_state, scope), subject)


@then(parsers.re(r"forget answered (?P<answer>true|false)"))
@decides("PS-029")
def forget_answer(persisted_state: JobWorld, answer: str) -> None:
    expect_equal("forget's answer", answer == "true", persisted_state.last_forget)


@then(parsers.parse('the store returns no fact for "{subject}"'))
@decides("PS-029")
def store_none(persisted_state: JobWorld, subject: str) -> None:
    got = persisted_state.store.get_fact(persisted_state.kb_scope, subject)
    expect_equal(f"get_fact({subject!r})", None, got)
    listed = [f.subject for f in persisted_state.store.facts(persisted_state.kb_scope)]
    expect_equal("subjects in facts()", [], [s for s in listed if s == subject])


@then(parsers.parse('scope "{scope}" returns only "{statement}" for "{subject}"'))
@decides("PS-030")
def scope_only(persisted_state: JobWorld, scope: str, statement: str, subject: str) -> None:
    kb = _kb(persisted_state, scope)
    got = persisted_state.store.get_fact(kb, subject)
    expect_equal(f"get_fact in scope {scope!r}", statement, None if got is None else got.statement)
    expect_equal(f"facts() of scope {scope!r}", [statement],
                 [f.statement for f in persisted_state.store.facts(kb)])


@then(parsers.parse('scope "{scope}" holds no facts'))
@decides("PS-030")
def scope_empty(persisted_state: JobWorld, scope: str) -> None:
    expect_equal(f"facts() of scope {scope!r}", [],
                 [f.subject for f in persisted_state.store.facts(_kb(persisted_state, scope))])


@then(parsers.parse('working state written in scope "{left}" is not visible in scope "{right}"'))
@decides("PS-030")
def state_isolated(persisted_state: JobWorld, left: str, right: str) -> None:
    if "state" not in persisted_state.store.capabilities:
        return
    store = persisted_state.store
    store.write_state(_state_scope(persisted_state, left), "k", {"side": left}, None)
    expect_equal(f"state key 'k' in scope {right!r}", None,
                 store.read_state(_state_scope(persisted_state, right), "k"))
    try:
        entry = store.write_state(_state_scope(persisted_state, right), "k", {"side": right}, None)
    except ConflictError as exc:
        raise Mismatch(f"a first write in scope {right!r}", "version 1", repr(exc)) from None
    expect_equal(f"the version of the first write in scope {right!r}", 1, entry.version)
    left_entry = store.read_state(_state_scope(persisted_state, left), "k")
    expect_equal(f"state key 'k' in scope {left!r}", ({"side": left}, 1),
                 None if left_entry is None else (left_entry.value, left_entry.version))


@then(parsers.re(
    r'a fresh process opening the store URL reads the state key "(?P<key>[^"]+)" as '
    r"(?P<value>\{.*\}) at version (?P<version>\d+)"
))
@decides("PS-031")
def fresh_reads_state(persisted_state: JobWorld, key: str, value: str, version: str) -> None:
    shown = fresh_process(
        persisted_state, ["--show-state", _state_scope(persisted_state), key]
    )
    expect_equal(f"state key {key!r} read by a fresh process",
                 {"key": key, "value": json.loads(value), "version": int(version)},
                 shown.get("state"))


@then(parsers.parse('a fresh process opening the store URL reads the fact "{subject}" unchanged'))
@decides("PS-031")
def fresh_reads_fact(persisted_state: JobWorld, subject: str) -> None:
    expected = persisted_state.put_fact
    assert expected is not None
    shown = fresh_process(persisted_state, ["--show-facts", persisted_state.kb_scope])
    facts = [f for f in shown.get("facts", []) if f.get("subject") == subject]
    expect_equal(f"the fact {subject!r} read by a fresh process", [expected.to_json()], facts)
