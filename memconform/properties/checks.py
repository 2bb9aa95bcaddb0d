"""Property checks run as part of the conformance suite.

Each check is a pytest test tagged with the rules it covers, so its result
feeds the same per-rule verdicts as the scenarios. A divergence narrows the
verdict to the rules of the operation that diverged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis.stateful import run_state_machine_as_test

from memconform.adapters.proxy import RecordingStore
from memconform.properties.settings import SETTINGS
from memconform.properties.store_model import KeyedModel, MessageModel, model_for

F = TypeVar("F", bound=Callable[..., None])

__all__ = [
    "test_keyed_data_answers_like_the_reference",
    "test_transcript_answers_like_the_reference",
]

_MESSAGES = [
    f"ST-{n:03d}" for n in (1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 17, 18, 19, 20, 21, 22)
]
_KEYED = [f"ST-{n:03d}" for n in (23, 24, 25, 26, 28, 29, 30)]


def _tagged(rule_ids: list[str]) -> Callable[[F], F]:
    def apply(function: F) -> F:
        for rule_id in rule_ids:
            function = getattr(pytest.mark, rule_id)(function)
        marked: F = pytest.mark.property(function)
        return marked

    return apply


def _run(model: type[Any], store: RecordingStore, request: pytest.FixtureRequest) -> None:
    thoroughness = request.config.getoption("--memconform-thoroughness")
    run_state_machine_as_test(model_for(store, model), settings=SETTINGS[thoroughness])


@_tagged(_MESSAGES)
def test_transcript_answers_like_the_reference(
    store: RecordingStore, request: pytest.FixtureRequest
) -> None:
    """Generated appends, windows, commit-flag changes and error records give the
    same answers as the reference memory store."""
    _run(MessageModel, store, request)


@_tagged(_KEYED)
def test_keyed_data_answers_like_the_reference(
    store: RecordingStore, request: pytest.FixtureRequest
) -> None:
    """Generated turn records, state writes and facts give the same answers as the
    reference memory store (only for the capabilities the store declares)."""
    _run(KeyedModel, store, request)
