"""The generated save-policy runs against every save-policy mutant: which ones the
property catches (naming a rule the mutant breaks, with a small counterexample),
and why the others are out of its reach.

Each mutant is searched in-process with the ``fast`` settings, as the suite
runs the property: the explicit scripts first, then generated ones, shrunk.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from memconform.adapters.memory import MemoryStore
from memconform.harness.proxy import RecordingStore
from memconform.mutants import Mutant
from memconform.mutants import save_policy as save_policy_mutants
from memconform.properties.run_scripts import (
    EXPLICIT,
    GeneratedRun,
    acting_hooks,
    generated_runs,
)
from memconform.properties.runs import RunDivergence, run_property
from memconform.properties.settings import SETTINGS
from memconform.simulator.runtime import Simulator
from tests.bad_store_adapters import core_only

MUTANTS = {m.name: m for m in save_policy_mutants.MUTANTS}

NOT_CAUGHT: dict[str, str] = {
    "sp-failed-append-swallowed": "needs a store that refuses an append; the generated "
                                  "scripts never make the store refuse (the failure-point "
                                  "scenarios do)",
    "sp-run-error-hook-replaces-error": "needs a run_error hook that fails; the generated "
                                        "scripts never script that hook (the failure-point "
                                        "scenarios do)",
    "sp-run-guardrail-fails-open": "needs a guardrail that fails; the generated guardrails "
                                   "allow, replace or block (the failure-point scenarios "
                                   "make one fail)",
    "sp-guardrail-failure-recorded-twice": "needs a guardrail that fails (as above)",
    "sp-guardrail-failure-record-empty": "needs a guardrail that fails (as above)",
    "sp-streamed-refusal-retried": "needs a store that refuses an append while the run "
                                   "streams (the streamed failure-point scenarios do)",
    "sp-resume-from-process-memory": "needs a resume in another process; the generated "
                                     "scripts run whole in one process (the resumed-run "
                                     "scenarios resume in a fresh one)",
    "sp-tool-calls-without-arguments": "needs a resume that reads the pending call from the "
                                       "store, in another process (as above)",
    "sp-history-from-own-memory": "needs a later run on a fresh runtime instance; the "
                                  "generated scripts run whole on one (the fresh-instance "
                                  "scenario of SP-031 starts one)",
    "sp-ids-per-instance": "needs a later run on a fresh runtime instance (as above)",
    "sp-last-tool-result-only": "needs several tool calls in one round; the generated "
                                "rounds call one tool (the two-calls scenarios of SP-025 "
                                "make two)",
    "sp-resume-sees-own-run-only": "needs a resume in another process after an earlier run "
                                   "(as above; the resumed-run scenario of SP-028 with an "
                                   "earlier run does it)",
    "sp-turn-stream-saved-at-finish": "needs a streamed run under turn whose run-end hook "
                                      "cancels; the fast budget's scripts do not combine the "
                                      "three (the streamed SP-029 outline does)",
    "sp-tool-results-by-name": "needs one tool called twice in one round (as above; the "
                               "same-tool scenario of SP-025 makes the two calls)",
    "sp-tool-results-in-completion-order": "needs several tool calls in one round, an "
                                           "earlier one throwing (as above; SP-025's "
                                           "scenario whose first tool throws makes them)",
    "sp-single-pending-continuation": "needs several calls awaiting approval in one round "
                                      "(as above; SP-028's scenario answering both makes "
                                      "two)",
    "sp-turn-buffer-survives-cancel": "needs a run under turn cancelled before its first "
                                      "model call and another run after it; the fast "
                                      "budget's scripts do not combine them (the second-run "
                                      "scenario of SP-008 does)",
}
"""Save-policy mutants the generated runs do not catch, and why."""

CORE_ONLY = {"sp-record-error-ignores-capability"}
"""Mutants searched against a store that declares no ``errors`` capability: the
broken behaviour shows only there."""

ONE_RUN = {
    "sp-default-turn", "sp-run-stores-failed-run", "sp-turn-flushes-unfinished-round",
    "sp-record-error-without-input", "sp-zero-based-rounds", "sp-tool-error-hook-ignored",
    "sp-tool-error-terminate-fails-run", "sp-run-end-cancel-ignored", "sp-tool-failure-fails-run",
    "sp-record-error-ignores-capability",
}
"""Mutants one run is enough to catch: their counterexample must have one run."""

CAUGHT = sorted(set(MUTANTS) - set(NOT_CAUGHT))


def _search(mutant: Mutant) -> tuple[RunDivergence, GeneratedRun] | None:
    inner = core_only() if mutant.name in CORE_ONLY else MemoryStore()
    if mutant.kind == "store":
        store, runtime = RecordingStore(mutant.build(inner)), Simulator()
    else:
        store, runtime = RecordingStore(inner), mutant.build()
    failing: list[GeneratedRun] = []
    try:
        run_property(runtime, store, SETTINGS["fast"], failing.append)()
    except RunDivergence as found:
        return found, failing[-1]
    finally:
        store.close()
    return None


def test_every_save_policy_mutant_is_listed() -> None:
    assert set(NOT_CAUGHT) <= set(MUTANTS)
    assert set(CAUGHT) >= ONE_RUN
    assert set(MUTANTS) >= CORE_ONLY


def test_the_reference_passes_against_a_store_without_errors() -> None:
    store = RecordingStore(core_only())
    try:
        run_property(Simulator(), store, SETTINGS["fast"])()
    finally:
        store.close()


def test_the_explicit_scripts_meet_every_second_condition() -> None:
    plans = [p for run in EXPLICIT for p in run.runs]
    assert {p.end for p in plans} >= {"completed", "input-blocked", "output-blocked", "failed",
                                      "cancelled", "suspended"}
    assert {p.kind for p in plans} == {"input", "resume"}
    assert any(p.stream for p in plans)
    assert {p.approved for p in plans} >= {True, False}
    assert {run.policy for run in EXPLICIT} == {"message", "turn", "run"}


def test_generated_scripts_keep_to_the_schema() -> None:
    from hypothesis import given

    from memconform.simulator.save_policy_script import parse_script

    @SETTINGS["fast"]
    @given(generated_runs())
    def each(run: GeneratedRun) -> None:
        parsed = parse_script({**run.script, "thread": "t"})
        assert len(parsed.runs) == len(run.runs)

    each()


@pytest.mark.parametrize("name", CAUGHT)
def test_the_generated_runs_catch_the_mutant(name: str) -> None:
    mutant = MUTANTS[name]
    found = _search(mutant)
    assert found is not None, f"the generated runs did not catch {name}"
    divergence, run = found
    if mutant.kind == "runtime":
        assert set(divergence.rules) & mutant.kills, (divergence.rules, mutant.kills)
    assert len(run.runs) <= (1 if name in ONE_RUN else 2), run.script


@pytest.mark.parametrize("name", sorted(NOT_CAUGHT))
def test_the_listed_gaps_are_still_gaps(name: str) -> None:
    assert _search(MUTANTS[name]) is None, f"{name} is caught now: move it to the caught list"


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(generated_runs(("message", None), frozenset({"tool_error", "approval"})))
def test_generated_scripts_act_only_through_the_declared_hooks(run: GeneratedRun) -> None:
    """A runtime declaring only a tool-error hook and approvals is never given a
    script that streams, retries, blocks, replaces an answer or cancels at run
    end: such a hook is left at allow, what a runtime without it does anyway."""
    assert acting_hooks(run.script) <= {"tool_error", "approval"}


def test_every_hook_is_generated_when_none_is_declared() -> None:
    """Without a declaration (the simulator) nothing is taken away: the small
    scripts tried first still act through every optional hook between them."""
    acting = frozenset().union(*(acting_hooks(run.script) for run in EXPLICIT))
    assert {"stream", "approval", "tool_error", "output_guardrail", "input_guardrail",
            "run_end"} <= acting
