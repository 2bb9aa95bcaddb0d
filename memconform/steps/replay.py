"""Steps of exported counterexamples: replay recorded operations on the store
under test and on the reference store, and compare every answer."""

from __future__ import annotations

import json

from pytest_bdd import given, then, when

from memconform.harness.proxy import RecordingStore
from memconform.properties.store_model import Divergence, StoreModel, model_for
from memconform.properties.sweep import Sweep
from memconform.steps.common import Mismatch


@given("a replay of recorded store operations", target_fixture="replay_model")
def replay_model(store: RecordingStore) -> StoreModel:
    """A fresh comparison of the store under test with the reference (it
    replays the operations of the generated checks and of the sweep)."""
    model: StoreModel = model_for(store, Sweep)()
    return model


@when(
    "the recorded operations are replayed on the store and the reference:",
    target_fixture="replay_divergence",
)
def replay_operations(replay_model: StoreModel, docstring: str) -> Divergence | None:
    """Apply each operation to both stores; keep the first divergence."""
    for step in json.loads(docstring):
        try:
            replay_model.replay(step)
        except Divergence as divergence:
            return divergence
    return None


@then("the store answered every replayed operation like the reference")
def replay_agrees(replay_divergence: Divergence | None) -> None:
    """No operation diverged."""
    if replay_divergence is not None:
        raise Mismatch(
            replay_divergence.what, replay_divergence.expected, replay_divergence.observed
        )
