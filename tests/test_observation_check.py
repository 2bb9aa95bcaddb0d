"""A runtime's answer is checked for shape before any rule reads it: an answer
missing a field, of the wrong kind, or not JSON at all is the adapter's error
naming ``execute``, never a crash of the kit in a step nor a rule's failure."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters.memory import MemoryStore
from memconform.harness.answers import check_observation
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.harness.runtime import observe
from memconform.simulator.runtime import Simulator
from memconform.steps._save_policy_scripts import base_script


class _Answers:
    """A runtime answering every script with ``answer``."""

    profiles = frozenset({"save-policy"})

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def execute(self, script: Any, env: Any) -> Any:
        return self.answer


def _cyclic() -> dict[str, Any]:
    loop: dict[str, Any] = {"construction_error": None, "runs": []}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize(("answer", "complaint"), [
    ({"runs": [{}]}, "does not match observation-save-policy.schema.json"),
    ({"construction_error": None, "runs": [{"run_id": 42, "outcome": "weird"}]},
     "does not match observation-save-policy.schema.json at runs/0"),
    ({"construction_error": None, "runs": [{"reply": object()}]}, "is not JSON"),
    ({"construction_error": None, "runs": [], "n": float("nan")}, "is not JSON"),
    (_cyclic(), "nested deeper than 200 levels"),
], ids=["missing-fields", "wrong-kinds", "an-object", "nan", "a-cycle"])
def test_a_malformed_answer_is_the_adapters_error(answer: Any, complaint: str) -> None:
    proxy = RecordingStore(MemoryStore())
    try:
        with pytest.raises(AdapterContractError, match="execute") as raised:
            observe(_Answers(answer), base_script("t", "turn"), proxy)
        assert complaint in str(raised.value)
    finally:
        proxy.close()


def test_the_reference_answers_in_shape() -> None:
    proxy = RecordingStore(MemoryStore())
    try:
        check_observation(observe(Simulator(), base_script("t", "turn"), proxy))
    finally:
        proxy.close()


class _Exits:
    profiles = frozenset({"save-policy"})

    def execute(self, script: Any, env: Any) -> Any:
        raise SystemExit(0)


def test_a_runtime_ending_the_process_is_the_adapters_error() -> None:
    proxy = RecordingStore(MemoryStore())
    try:
        with pytest.raises(AdapterContractError, match=r"execute.*SystemExit\(0\)"):
            observe(_Exits(), base_script("t", "turn"), proxy)
    finally:
        proxy.close()


def test_a_runtime_that_does_not_answer_in_time_is_the_adapters_error() -> None:
    """Past the bound the kit stops waiting (the call is abandoned in its thread);
    after one hang every later execute is refused at once."""
    import threading

    from memconform.harness import answers
    from memconform.harness.answers import limit_execute
    from memconform.harness.proxy import AdapterTimeoutError

    before = answers._LIMIT.seconds

    release = threading.Event()

    class Hangs:
        profiles = frozenset({"save-policy"})

        def execute(self, script: Any, env: Any) -> Any:
            release.wait(30)
            return {}

    proxy = RecordingStore(MemoryStore())
    limit_execute(0.2)
    try:
        with pytest.raises(AdapterTimeoutError, match=r"execute: did not return within 0\.2 s"):
            observe(Hangs(), base_script("t", "turn"), proxy)
        with pytest.raises(AdapterTimeoutError, match="not called: an earlier execute"):
            observe(Hangs(), base_script("t", "turn"), proxy)
        check_observation(observe(Simulator(), base_script("u", "turn"), proxy))  # exempt
    finally:
        release.set()
        limit_execute(before)
        proxy.close()
