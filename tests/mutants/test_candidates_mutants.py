"""Every candidates mutant is rejected by the scenarios of the rules it claims to
break, and the reference simulator passes every candidates scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.mutants import Mutant
from memconform.mutants.candidates import MUTANTS
from tests.mutant_harness import rejected_rules, run_suite

TARGET = "tests/features/test_candidates.py"
STORE = ("--memconform-store", "memory://")


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_candidates_mutant_is_killed(mutant: Mutant, tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, "--memconform-mutant", mutant.name, *STORE)
    rejected = rejected_rules(mutant, outcomes)
    missed = sorted(mutant.kills - rejected)
    assert not missed, f"{mutant.name} ({mutant.doc}) survived the scenarios of {missed}"


@pytest.mark.slow
def test_the_simulator_passes_every_candidates_scenario(tmp_path: Path) -> None:
    outcomes = run_suite(TARGET, tmp_path, *STORE)
    bad = [(o["scenario"], o["outcome"], o["message"][:300]) for o in outcomes
           if o["outcome"] != "passed"]
    assert not bad
    assert len(outcomes) >= 40


def test_every_must_rule_of_the_candidates_profile_is_killed() -> None:
    rules = load_catalogue().select(profiles=["candidates"])
    killed = {rule for m in MUTANTS for rule in m.kills}
    musts = {r.id for r in rules if r.level == "MUST"}
    assert musts - killed == set()
    assert killed <= {r.id for r in rules}


def test_candidates_mutant_names_are_unique_and_documented() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    assert all(m.doc and m.profile == "candidates" and m.kind == "runtime" for m in MUTANTS)


@pytest.mark.parametrize("name", ["candidates-summary-in-process", "candidates-summary-in-module"])
def test_process_state_mutants_pass_when_one_process_answers_everything(name: str) -> None:
    """What rejects them is the kit's fresh process alone: answered in one process,
    the resumed request gets the same prompt and memory as its twin."""
    from memconform.adapters.memory import MemoryStore
    from memconform.harness.proxy import RecordingStore
    from memconform.harness.runtime import observe
    from memconform.mutants import get_mutant

    history = [{"role": "user", "content": "Tell me everything about the ferries between "
                "Piraeus and the Saronic islands."},
               {"role": "assistant", "content": "There are many."}]
    again = {"request": "r1", "input": 0, "candidate": 0}
    script = {
        "profile": "candidates", "package": {"summary_threshold": 100},
        "requests": [
            {"id": "r1", "inputs": [{"input_id": "trip", "instruction": "Say hello.",
                                     "candidates": 1, "memory": {"history": history}}]},
            {"id": "r2", "inputs": [{"input_id": "trip", "instruction": "How are you?",
                                     "candidates": 1, "memory_from": again}]},
            {"id": "r3", "inputs": [{"input_id": "trip", "instruction": "How are you?",
                                     "candidates": 1, "memory_from": again}]},
        ],
        "model": {"summarizer": [{"reply": "Ferries discussed."}],
                  "commander": [{"reply": "Hello!"}, {"reply": "Fine."}, {"reply": "Fine."}]},
    }
    store = RecordingStore(MemoryStore())
    try:
        obs = observe(get_mutant(name).build(), script, store)  # type: ignore[arg-type]
    finally:
        store.close()
    prompts = [e["request"]["prompt"] for e in obs["timeline"]
               if e["kind"] == "model" and e["name"] == "commander"]
    assert prompts[1] == prompts[2]
    assert prompts[1].startswith("summary: Ferries discussed.")
    memories = [r["inputs"][0]["candidates"][0]["memory"] for r in obs["responses"][1:]]
    assert memories[0] == memories[1]
