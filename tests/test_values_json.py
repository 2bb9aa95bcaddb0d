"""The JSON forms of the value types: what a store sends back over JSON (a
stdio store, a child process) is decoded as sent, never mended."""

from __future__ import annotations

from memconform.values import Fact


def _fact(**fields: str) -> Fact:
    return Fact(subject="s", statement="x", writer="w", source="src", evidence="e",
                written_at="2026-01-01T00:00:00Z", **fields)


def test_a_fact_field_sent_empty_comes_back_empty_and_an_absent_one_takes_its_default() -> None:
    emptied = _fact(kind="", trust="", origin="")
    assert Fact.from_json(emptied.to_json()) == emptied
    sent = _fact(kind="preference", trust="untrusted", origin="copied").to_json()
    for field in ("kind", "trust", "origin"):
        del sent[field]
    decoded = Fact.from_json(sent)
    assert (decoded.kind, decoded.trust, decoded.origin) == ("observation", "trusted", "concluded")
