"""Steps of the ``persisted-state`` profile on eviction and deletion: the
knowledge base's cap, fact lifetimes, the scenario clock and forgetting
(``features/persisted-state/durable_knowledge.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pytest_bdd import given, parsers, then, when

from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.persisted_state_world import JobWorld, name_list, stored_fact


@given(parsers.parse("the knowledge base holds at most {cap:d} facts"))
def knowledge_cap(persisted_state: JobWorld, cap: int) -> None:
    persisted_state.cap = cap


@given(parsers.parse('the lifetime of "{kind}" facts is {days:d} days'))
def knowledge_lifetime(persisted_state: JobWorld, kind: str, days: int) -> None:
    persisted_state.lifetimes[kind] = days * 86_400


@given(parsers.re(r"(?P<days>\d+) days? ha(?:s|ve) passed on the scenario clock"))
@when(parsers.re(r"(?P<days>\d+) days? pass(?:es)? on the scenario clock"))
def days_pass(persisted_state: JobWorld, days: str) -> None:
    persisted_state.clock.advance(int(days) * 86_400)


@when(parsers.parse('the agent forgets "{subject}"'))
def agent_forgets(persisted_state: JobWorld, subject: str) -> None:
    persisted_state.run([{"do": "forget", "subject": subject}])


def _instant(text: str) -> datetime:
    """An ISO-8601 date as an aware instant (a trailing ``Z`` is UTC)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _evicted_by(world: JobWorld, subject: str) -> list[str] | None:
    """The facts the runtime removed from the store (the accepted ``forget`` calls
    on the timeline) between the previous ``put_fact`` and the one storing
    ``subject``; the runtime's own ``evicted`` list is a claim and is not read.
    ``None`` when ``subject`` was never stored."""
    entries = world.timeline()
    puts = [i for i, e in enumerate(entries) if e["kind"] == "store" and e["name"] == "put_fact"]
    mine = [i for i in puts if _put_subject(entries[i]) == subject]
    if not mine:
        return None
    start = max((i for i in puts if i < mine[-1]), default=-1) + 1
    return [
        str(e["args"][1]) for e in entries[start:mine[-1]]
        if e["kind"] == "store" and e["name"] == "forget" and "raised" not in e
        and len(e.get("args") or []) > 1
    ]


def _put_subject(entry: Mapping[str, Any]) -> str | None:
    args = entry.get("args") or []
    fact = args[1] if len(args) > 1 else None
    return str(fact.get("subject")) if isinstance(fact, Mapping) else None


@then(parsers.parse('the knowledge base holds {count:d} facts, among them "{subjects}"'))
@decides("PS-016")
def kb_count(persisted_state: JobWorld, count: int, subjects: str) -> None:
    held = sorted(f.subject for f in persisted_state.store.facts(persisted_state.kb_scope))
    missing = [s for s in name_list(subjects) if s not in held]
    expect_equal("the number of facts in the knowledge base and the subjects missing",
                 (count, []), (len(held), missing))


@then(parsers.parse(
    'the remember request for "{subject}" evicted one fact, now gone from the store'
))
@decides("PS-016")
def remember_evicted_one(persisted_state: JobWorld, subject: str) -> None:
    evicted = _evicted_by(persisted_state, subject) or []
    held = {f.subject for f in persisted_state.store.facts(persisted_state.kb_scope)}
    expect_equal(f"the facts evicted to remember {subject!r} (count, still stored)",
                 (1, []), (len(evicted), [s for s in evicted if s in held]))


@then(parsers.parse('the remember request for "{subject}" evicted nothing'))
@decides("PS-016")
def remember_evicted_nothing(persisted_state: JobWorld, subject: str) -> None:
    expect_equal(f"the facts evicted to remember {subject!r}", [],
                 _evicted_by(persisted_state, subject) or [])


@then(parsers.parse('the stored fact "{later}" is rechecked later than "{earlier}"'))
@decides("PS-014")
def rechecked_later(persisted_state: JobWorld, later: str, earlier: str) -> None:
    first, second = (stored_fact(persisted_state, s) for s in (later, earlier))
    if second.recheck_at is None or (
        first.recheck_at is not None
        and _instant(first.recheck_at) <= _instant(second.recheck_at)
    ):
        raise Mismatch(f"the recheck date of {later!r} against that of {earlier!r}",
                       f"later than {second.recheck_at}", str(first.recheck_at))
