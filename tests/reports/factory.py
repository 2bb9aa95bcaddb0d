"""A small synthetic catalogue and outcome records for the report tests."""

from __future__ import annotations

from typing import Any

from memconform.catalogue import Catalogue, Rule

HOSTILE = "<script>alert(1)</script> ]]> \x00\x01\x0b\x1b[31m \ud800 \u202e &amp; \"'"
"""Stored text a hostile or broken store might hand back: markup, a CDATA end,
control characters, an ANSI escape, a lone surrogate, a bidi override."""


def rule(
    rule_id: str,
    level: str = "MUST",
    subject: str = "store",
    capability: str | None = None,
    untested: str | None = None,
    text: str | None = None,
) -> Rule:
    profile = {
        "ST": "store", "SP": "save-policy", "SW": "strict-write", "TU": "turns",
        "CA": "candidates", "PS": "persisted-state",
    }[rule_id[:2]]
    return Rule(
        id=rule_id,
        level=level,
        profile=profile,
        subject=subject,
        capability=capability,
        source_document="000",
        source_section="1. A section",
        text=text or f"Rule {rule_id} holds.",
        decision=None if rule_id != "ST-001" else "Decided so because the documents are silent.",
        untested=untested,
    )


def catalogue() -> Catalogue:
    rules = (
        rule("SP-001", subject="runtime"),
        rule("SP-002", level="SHOULD", subject="runtime", capability="errors"),
        rule("SP-003", level="MAY", subject="runtime", untested="nothing observable"),
        rule("SW-001", subject="runtime"),
        rule("ST-001"),
        rule("ST-002", capability="errors"),
        rule("ST-003", level="SHOULD"),
        rule("ST-004", capability="durable"),
    )
    return Catalogue(rules, "test-1", "0123456789abcdef")


def outcome(
    rules: list[str], result: str = "passed", name: str | None = None, **extra: Any
) -> dict[str, Any]:
    name = name or f"{result} {' '.join(rules)}"
    record: dict[str, Any] = {
        "nodeid": f"features/x.feature::{name}",
        "scenario": name,
        "feature": "features/x.feature",
        "rules": rules,
        "outcome": result,
        "message": "" if result == "passed" else f"{result} because of something",
        "failing_step": None,
        "expected": None,
        "observed": None,
        "store_calls": [
            {"seq": 1, "kind": "store", "name": "append", "args": ["t1", []], "result": None}
        ],
    }
    record.update(extra)
    return record


def header(**overrides: Any) -> dict[str, Any]:
    """A header as the command line builds it."""
    data: dict[str, Any] = {
        "kit": {"name": "memconform", "version": "0.1.0"},
        "catalogue": {"version": "test-1", "hash": "0123456789abcdef"},
        "subject": "store",
        "runtime": "memconform.simulator:Simulator",
        "store": "postgresql://user:s3cret@db.example/test?sslpassword=x&app=a",
        "capabilities": ["errors"],
        "store_type": "example.Store",
        "store_version": "1.2",
        "mutant": None,
        "seed": 0,
        "python": "3.11.7",
        "os": "Linux 6.1",
        "started": "2026-11-30T02:00:00Z",
        "finished": "2026-11-30T02:01:00Z",
        "selection": None,
        "certify": False,
    }
    data.update(overrides)
    return data


def store_outcomes() -> list[dict[str, Any]]:
    """Every store rule passes (ST-004 needs `durable`, declared absent)."""
    return [
        outcome(["ST-001"]),
        outcome(["ST-001", "ST-003"], name="second"),
        outcome(["ST-002"]),
        outcome(["ST-004"], "unsupported", message="needs capability 'durable'"),
    ]
