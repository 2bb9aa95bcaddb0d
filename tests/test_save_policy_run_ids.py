"""SP-030's check on runtimes that name no run ids (real frameworks have none)."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.steps.common import Mismatch
from memconform.steps.save_policy_appends import sp_run_ids_and_rounds


def _observation(runs: list[dict[str, Any]], message: dict[str, Any]) -> dict[str, Any]:
    append = {"kind": "store", "name": "append", "args": ["t1", [message]]}
    return {"thread_under_test": "t1", "runs": runs, "timeline": [append]}


def test_runs_without_run_ids_fail_sp030_instead_of_crashing_the_kit() -> None:
    message = {"id": "msg-1", "role": "user", "parts": []}
    with pytest.raises(Mismatch, match="run_id None"):
        sp_run_ids_and_rounds(_observation([{"outcome": "completed"}], message))


def test_a_stamped_message_of_a_named_run_passes() -> None:
    message = {"id": "msg-1", "role": "user", "parts": [], "run_id": "run-1", "round": 1}
    sp_run_ids_and_rounds(_observation([{"run_id": "run-1", "outcome": "completed"}], message))
