"""Property checks run as part of the conformance suite.

Each check is a pytest test tagged with the rules it covers, so its result
feeds the same per-rule verdicts as the scenarios. A divergence narrows the
verdict to the rules of the operation that diverged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from memconform.contract import Capability
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import SAVE_POLICIES, Runtime, declared_hooks, declared_policies
from memconform.properties.candidate_runs import RULES as CANDIDATE_RULES
from memconform.properties.candidate_runs import candidates_property
from memconform.properties.runs import RULES, run_property
from memconform.properties.settings import SETTINGS, fixed_draws
from memconform.properties.shrink import minimise
from memconform.properties.store_model import (
    SEEN,
    Divergence,
    KeyedModel,
    MessageModel,
    model_for,
)
from memconform.properties.sweep import SECTIONS, sweep
from memconform.steps.common import note_policies, unsupported

F = TypeVar("F", bound=Callable[..., None])

__all__ = [
    "test_generated_candidates_answer_like_the_reference",
    "test_generated_runs_persist_like_the_reference",
    "test_keyed_data_answers_like_the_reference",
    "test_the_legal_space_answers_like_the_reference",
    "test_transcript_answers_like_the_reference",
]

_MESSAGES = [
    f"ST-{n:03d}"
    for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 22, 35)
]
_KEYED = [f"ST-{n:03d}" for n in (7, 23, 24, 25, 26, 27, 28, 29, 30, 31, 35)]
_KEYED_CAPABILITIES = frozenset(
    {Capability.TURN_RECORDS, Capability.STATE, Capability.KNOWLEDGE}
)


def _tagged(rule_ids: list[str]) -> Callable[[F], F]:
    def apply(function: F) -> F:
        for rule_id in rule_ids:
            function = getattr(pytest.mark, rule_id)(function)
        marked: F = pytest.mark.property(function)
        return marked

    return apply


class NotRepeatable(Divergence):
    """A divergence the replay of the same operations did not show again: the
    store's answers depend on something besides the operations (a clock, timing).
    It is charged to the rules of the first divergence seen, as any divergence."""


def _run(model: type[Any], store: RecordingStore, request: pytest.FixtureRequest) -> None:
    thoroughness = request.config.getoption("--memconform-thoroughness") or "fast"
    SEEN.clear()
    try:
        with fixed_draws():
            run_state_machine_as_test(model_for(store, model), settings=SETTINGS[thoroughness])
    except Flaky as flaky:
        if not SEEN:
            raise
        first = SEEN[0]
        raise NotRepeatable(
            first.rules, "the store answered differently when the same operations were "
            f"replayed (not repeatable; {type(flaky).__name__}); the first divergence: "
            f"{first.what}", first.expected, first.observed, first.steps,
        ) from flaky
    except Divergence as found:
        smaller = minimise(store, found)
        if smaller is found:
            raise
        raise smaller from found


@_tagged(_MESSAGES)
def test_transcript_answers_like_the_reference(
    store: RecordingStore, request: pytest.FixtureRequest
) -> None:
    """Generated appends, windows, commit-flag changes and error records give the
    same answers as the reference memory store."""
    _run(MessageModel, store, request)


@pytest.mark.property
@pytest.mark.parametrize("section", [
    pytest.param(name, id=name.replace(" ", "-"),
                 marks=[getattr(pytest.mark, rule) for rule in section.rules])
    for name, section in SECTIONS.items()
])
def test_the_legal_space_answers_like_the_reference(store: RecordingStore, section: str) -> None:
    """Every value of the contract's value catalogues, in the field it belongs to,
    and every step of its count ladders (``memconform/properties/legal_space.py``),
    in one deterministic pass per section, give the answers of the reference
    memory store."""
    needed = SECTIONS[section].needs
    if needed is not None and needed.value not in store.capabilities:
        unsupported(f"the store does not declare {needed.value}")
    try:
        sweep(store, [section])
    except Divergence as found:
        if len(found.steps) > _MINIMISED:
            raise
        smaller = minimise(store, found)
        if smaller is found:
            raise
        raise smaller from found


_MINIMISED = 60
"""A sweep divergence after at most this many operations is minimised (each
pass replays every operation once, within the replay budget of
:mod:`memconform.properties.shrink`); a longer one is exported as it came."""


@_tagged(_KEYED)
def test_keyed_data_answers_like_the_reference(
    store: RecordingStore, request: pytest.FixtureRequest
) -> None:
    """Generated turn records, state writes and facts give the same answers as the
    reference memory store (only for the capabilities the store declares)."""
    if not store.capabilities & _KEYED_CAPABILITIES:
        unsupported(
            "the store declares none of " + ", ".join(sorted(_KEYED_CAPABILITIES))
        )
    _run(KeyedModel, store, request)


_RUNS = list(RULES)


@_tagged(_RUNS)
def test_generated_runs_persist_like_the_reference(
    runtime: Runtime, store: RecordingStore, request: pytest.FixtureRequest
) -> None:
    """Generated save-policy scripts (one to three runs on a thread: inputs and
    resumes, streamed or not, guardrails, approvals, failures, any texts and
    policy) leave the store, the model and the caller with what the reference
    simulator leaves them, and keep every save-policy invariant."""
    if "save-policy" not in runtime.profiles:
        pytest.skip("unsupported: the runtime does not execute the save-policy profile")
    declared = declared_policies(runtime)
    note_policies(request, [p for p in SAVE_POLICIES if declared is None or p in declared])
    thoroughness = request.config.getoption("--memconform-thoroughness") or "fast"

    run_property(runtime, store, SETTINGS[thoroughness], policies=declared,
                 hooks=declared_hooks(runtime))()


@_tagged(list(CANDIDATE_RULES))
def test_generated_candidates_answer_like_the_reference(
    runtime: Runtime, store: RecordingStore, request: pytest.FixtureRequest
) -> None:
    """Generated candidates scripts (one to three requests of one or two inputs,
    input ids coming back, memories of every shape or continued from a returned
    one, thresholds around the prompts' lengths, either compute order, coaching,
    failing and blank components) make the same model calls and get the same
    answers as the reference package (``memconform/properties/candidate_runs.py``)."""
    if "candidates" not in runtime.profiles:
        pytest.skip("unsupported: the runtime does not execute the candidates profile")
    thoroughness = request.config.getoption("--memconform-thoroughness") or "fast"
    candidates_property(runtime, store, SETTINGS[thoroughness])()
