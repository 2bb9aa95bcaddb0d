"""The generated candidates scripts against every candidates mutant: which ones
the comparison catches (naming a rule the mutant breaks), and why the others are
out of its reach. Each mutant is searched in-process with the ``fast`` settings,
as the suite runs the property."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from memconform.adapters.memory import MemoryStore
from memconform.harness.proxy import RecordingStore
from memconform.mutants import candidates as candidates_mutants
from memconform.properties.candidate_runs import (
    EXPLICIT,
    RULES,
    candidate_scripts,
    candidates_property,
)
from memconform.properties.runs import RunDivergence
from memconform.properties.settings import SETTINGS
from memconform.simulator.candidates import parse_script
from memconform.simulator.runtime import Simulator

MUTANTS = {m.name: m for m in candidates_mutants.MUTANTS}

ALSO_BREAKS: dict[str, tuple[str, str]] = {
    "candidates-summary-in-process": (
        "CA-004", "summaries kept per input id in the package instance are CA-004's cache "
                  "keyed by input id; its own rule, CA-005, needs a fresh process"),
    "candidates-summary-in-module": (
        "CA-004", "the same cache in a module global (as above)"),
    "candidates-global-conversation": (
        "CA-004", "a conversation list shared by the package is CA-004's server-global "
                  "list; the comparison meets it where an earlier request's history "
                  "reaches a later summarizer prompt"),
}
"""Mutants the comparison charges to another rule they break as well, and why."""


def _search(name: str) -> tuple[RunDivergence, dict[str, Any]] | None:
    store = RecordingStore(MemoryStore())
    failing: list[dict[str, Any]] = []
    try:
        candidates_property(MUTANTS[name].build(), store, SETTINGS["fast"], failing.append)()
    except RunDivergence as found:
        return found, failing[-1]
    finally:
        store.close()
    return None


def test_the_reference_answers_like_itself() -> None:
    store = RecordingStore(MemoryStore())
    try:
        candidates_property(Simulator(), store, SETTINGS["fast"])()
    finally:
        store.close()


def test_every_rule_a_comparison_names_is_a_candidates_rule() -> None:
    assert all(rule.startswith("CA-") for rule in RULES)
    assert "CA-005" not in RULES  # a fresh process: the scenarios' own


def test_generated_and_explicit_scripts_keep_to_the_schema() -> None:
    for script in EXPLICIT:
        parse_script(script)

    @SETTINGS["fast"]
    @given(candidate_scripts())
    def each(script: dict[str, Any]) -> None:
        _config, requests = parse_script(script)
        assert 1 <= len(requests) <= 3

    each()


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_generated_scripts_catch_the_mutant(name: str) -> None:
    found = _search(name)
    assert found is not None, f"the generated candidates scripts did not catch {name}"
    divergence, _script = found
    charged = set(divergence.rules)
    rules = set(MUTANTS[name].kills) | ({ALSO_BREAKS[name][0]} if name in ALSO_BREAKS else set())
    assert charged & rules, (name, divergence.rules, divergence.what)
