"""Steps of the ``persisted-state`` profile on durable knowledge: remembering
and recalling facts, their provenance and what the model is shown
(``features/persisted-state/durable_knowledge.feature``, ``poisoning.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_bdd import parsers, then, when

from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.steps.persisted_state_world import JobWorld, name_list, stored_fact, table_rows


@when("the agent remembers the facts:")
def agent_remembers(persisted_state: JobWorld, datatable: Sequence[Sequence[str]]) -> None:
    require_capability(persisted_state.store.capabilities, "knowledge")
    requests = [_fact_request(row) for row in table_rows(datatable)]
    persisted_state.remembered.extend(requests)
    persisted_state.run([{"do": "remember", "fact": request} for request in requests])


def _fact_request(row: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in row.items() if v}


@when(parsers.parse('the agent recalls "{subject}"'))
def agent_recalls(persisted_state: JobWorld, subject: str) -> None:
    persisted_state.run([{"do": "recall", "subject": subject}])


@when("the agent recalls every fact")
def agent_recalls_all(persisted_state: JobWorld) -> None:
    persisted_state.run([{"do": "recall"}])


@then(parsers.parse('the stored fact "{subject}" has the provenance:'))
@decides("PS-012")
def fact_provenance(
    persisted_state: JobWorld, subject: str, datatable: Sequence[Sequence[str]]
) -> None:
    fact = stored_fact(persisted_state, subject).to_json()
    expected = {r["field"]: r["value"] for r in table_rows(datatable)}
    expect_equal(f"the provenance of {subject!r}", expected, {k: fact.get(k) for k in expected})


@then(parsers.parse('the stored fact "{subject}" says "{statement}"'))
@decides("PS-022")
def fact_says(persisted_state: JobWorld, subject: str, statement: str) -> None:
    expect_equal(f"the statement of {subject!r}", statement,
                 stored_fact(persisted_state, subject).statement)


@then(parsers.parse('the stored fact "{subject}" is labelled "{trust}"'))
@decides("PS-018")
def fact_labelled(persisted_state: JobWorld, subject: str, trust: str) -> None:
    expect_equal(f"the trust label of {subject!r}", trust,
                 stored_fact(persisted_state, subject).trust)


@then(parsers.parse('the stored fact "{subject}" has the origin "{origin}"'))
@decides("PS-019")
def fact_origin(persisted_state: JobWorld, subject: str, origin: str) -> None:
    expect_equal(f"the origin of {subject!r}", origin,
                 stored_fact(persisted_state, subject).origin)


@then(parsers.re(r'the knowledge base holds the subjects "(?P<subjects>[^"]*)"'))
@decides("PS-015", "PS-016", "PS-017", "PS-020", "PS-021")
def kb_subjects(persisted_state: JobWorld, subjects: str) -> None:
    facts = persisted_state.store.facts(persisted_state.kb_scope)
    expect_equal("the subjects in the knowledge base", sorted(name_list(subjects)),
                 sorted(f.subject for f in facts))


def _recalled(world: JobWorld) -> list[dict[str, Any]]:
    return list(world.last_outcome("recall").get("facts") or [])


@then(parsers.parse('the recall shows only "{statement}" for "{subject}"'))
@decides("PS-015")
def recall_only(persisted_state: JobWorld, statement: str, subject: str) -> None:
    shown = [f.get("statement") for f in _recalled(persisted_state) if f.get("subject") == subject]
    expect_equal(f"the statements recalled for {subject!r}", [statement], shown)


@then(parsers.parse('the recall does not show "{subject}"'))
@decides("PS-017")
def recall_lacks(persisted_state: JobWorld, subject: str) -> None:
    shown = [f for f in _recalled(persisted_state) if f.get("subject") == subject]
    expect_equal(f"recalled entries for {subject!r}", [], shown)


def _shown_to_model(world: JobWorld, subject: str) -> dict[str, Any]:
    """The entry for ``subject`` in the newest knowledge view on the timeline."""
    for e in reversed(world.timeline()):
        request = e.get("request")
        if e["kind"] == "model" and isinstance(request, Mapping) and "knowledge" in request:
            for item in request["knowledge"]:
                if isinstance(item, Mapping) and item.get("subject") == subject:
                    return dict(item)
            break
    raise Mismatch(f"what the model was shown for {subject!r}", "an entry", "nothing")


@then(parsers.parse('the recalled fact "{subject}" is shown as "{status}"'))
@decides("PS-013", "PS-014")
def recalled_status(persisted_state: JobWorld, subject: str, status: str) -> None:
    item = _shown_to_model(persisted_state, subject)
    expect_equal(f"the status {subject!r} was shown to the model with", status,
                 item.get("status"))
    if status == "unverified" and "unverified" not in str(item.get("text", "")):
        raise Mismatch(f"the text shown for {subject!r}", "a mention of 'unverified'",
                       str(item.get("text")))


@then(parsers.parse('the model was shown "{subject}" as a claim from "{source}"'))
@decides("PS-018")
def shown_as_claim(persisted_state: JobWorld, subject: str, source: str) -> None:
    item = _shown_to_model(persisted_state, subject)
    observed = (item.get("shown_as"), item.get("trust"), f"claim from {source}" in str(
        item.get("text", "")))
    expect_equal(f"how {subject!r} was shown to the model (shown_as, trust, labelled text)",
                 ("claim", "untrusted", True), observed)


@then(parsers.parse('the model was shown "{subject}" as copied from "{source}"'))
@decides("PS-019")
def shown_as_copied(persisted_state: JobWorld, subject: str, source: str) -> None:
    item = _shown_to_model(persisted_state, subject)
    observed = (item.get("origin"), f"copied from {source}" in str(item.get("text", "")))
    expect_equal(f"how {subject!r} was shown to the model (origin, labelled text)",
                 ("copied", True), observed)


@then(parsers.parse('the remember request for "{subject}" was "{outcome}"'))
@decides("PS-020", "PS-021", "PS-022")
def remember_outcome(persisted_state: JobWorld, subject: str, outcome: str) -> None:
    found = [
        o.get("outcome") for obs in persisted_state.observations for o in obs.get("outcomes", [])
        if o.get("do") == "remember" and o.get("subject") == subject
    ]
    expect_equal(f"the outcome of remembering {subject!r}", outcome, found[-1] if found else None)


@then("the durable-write confirmation was asked before any fact reached the store")
@decides("PS-020")
def confirmation_first(persisted_state: JobWorld) -> None:
    order = [
        "confirm" if e["kind"] == "hook" else "put_fact"
        for e in persisted_state.timeline()
        if (e["kind"] == "hook" and e["name"] == "confirm_durable_write")
        or (e["kind"] == "store" and e["name"] == "put_fact")
    ]
    if not order or order[0] != "confirm" or any(
        order[i] == "put_fact" and order[i - 1] != "confirm" for i in range(1, len(order))
    ):
        raise Mismatch("confirmation before each durable write",
                       "confirm_durable_write before every put_fact", " -> ".join(order) or "none")
