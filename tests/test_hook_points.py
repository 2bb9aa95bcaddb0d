"""An order through a hook call the runtime does not declare is ``unsupported``
for it, as a script needing that hook is; the runtime that declares the hook
is held to the order."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.simulator.runtime import Simulator
from tests.mutant_harness import run_suite

SCENARIO = "answer_after_the_output_guardrail_and_before_the_runend_hook"


class WithoutOutputGuardrail(Simulator):
    """The reference, declaring every optional hook but the output guardrail."""

    hooks = frozenset({"input_guardrail", "tool_error", "run_end", "cancel", "approval",
                       "stream", "retry"})


def without_output_guardrail() -> Simulator:
    return WithoutOutputGuardrail()


@pytest.mark.slow
@pytest.mark.parametrize(("runtime", "outcome"), [
    ("tests.test_hook_points:without_output_guardrail", "unsupported"),
    (None, "passed"),
])
def test_an_order_through_an_undeclared_hook_is_unsupported(
    runtime: str | None, outcome: str, tmp_path: Path
) -> None:
    chosen = ("--memconform-runtime", runtime) if runtime else ()
    outcomes = run_suite("tests/features/test_save_policy.py", tmp_path, *chosen,
                         "--memconform-subject", "runtime", "-k", SCENARIO)
    assert outcomes, "the scenario was not collected"
    assert {o["outcome"] for o in outcomes} == {outcome}, outcomes
