"""A broken adapter gets the verdict ``error`` naming the method, and the run
goes on with the other scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutant_harness import run_suite

TARGET = "tests/features/test_store.py"


def _run(tmp_path: Path, factory: str, *options: str) -> list[dict]:
    return run_suite(
        TARGET, tmp_path, "--memconform-store", f"tests.bad_store_adapters:{factory}", "--tb=no",
        *options,
    )


def _by_scenario(outcomes: list[dict]) -> dict[str, dict]:
    return {o["nodeid"]: o for o in outcomes}


@pytest.mark.slow
def test_missing_method_is_an_error_naming_it(tmp_path: Path) -> None:
    outcomes = _run(tmp_path, "no_messages")
    assert len(outcomes) >= 50, "every scenario was still run"
    assert {o["outcome"] for o in outcomes} == {"error"}
    assert all(o["message"].startswith("messages:") for o in outcomes)


@pytest.mark.slow
def test_raising_where_success_is_required_is_an_error(tmp_path: Path) -> None:
    outcomes = _run(tmp_path, "raising_append")
    errors = [o for o in outcomes if o["outcome"] == "error"]
    assert errors
    assert all(o["message"].startswith("append:") for o in errors)
    assert any("RuntimeError" in o["message"] for o in errors)
    unknown = [o for o in outcomes if "ST-008" in o["rules"]]
    assert unknown
    assert {o["outcome"] for o in unknown} == {"passed"}, "scenarios not appending still pass"


@pytest.mark.slow
def test_wrong_shape_is_an_error_naming_the_method(tmp_path: Path) -> None:
    outcomes = _run(tmp_path, "wrong_shape")
    errors = [o for o in outcomes if o["outcome"] == "error"]
    assert errors
    assert all(o["message"].startswith("messages:") for o in errors)
    assert any("expected Message" in o["message"] for o in errors)
    assert any(o["outcome"] == "passed" for o in outcomes), "other scenarios still ran"


@pytest.mark.slow
def test_hanging_past_the_timeout_is_an_error(tmp_path: Path) -> None:
    # a few scenarios only: each hang costs the whole timeout
    outcomes = _run(
        tmp_path,
        "hanging_messages",
        "--memconform-timeout",
        "1",
        "--memconform-max-timeouts",
        "0",
        "-k",
        "zero or never_written or error_records_exactly or filters_turn_records",
    )
    errors = [o for o in outcomes if o["outcome"] == "error"]
    assert errors
    assert [o["message"] for o in errors if not o["message"].startswith("messages:")] == []
    assert any("did not return within 1 s" in o["message"] for o in errors)
    passed = [o for o in outcomes if o["outcome"] == "passed"]
    assert passed, "scenarios that never read messages still pass"


def test_a_store_printing_to_stdout_in_a_fresh_process_is_judged_not_a_kit_crash(
    tmp_path: Path,
) -> None:
    from memconform.steps.contract_checks import check_durable

    url = f"tests.bad_store_adapters:chatty_file_store?path={tmp_path / 'chatty.json'}"
    result = check_durable(url, "d", capabilities={"durable"})
    assert result.adapter_error is None, result.evidence
    assert result.passed, result.evidence


@pytest.mark.slow
def test_a_damage_hook_that_damages_nothing_never_earns_a_pass(tmp_path: Path) -> None:
    """ST-037 rests on the damage the kit sees, not on the hook's word: reads that
    all come back whole after a hook the kit cannot check are inconclusive."""
    outcomes = _run(tmp_path, "hollow_damage", "-m", "ST-037")
    assert outcomes
    assert {o["outcome"] for o in outcomes} == {"inconclusive"}, outcomes
    assert all("cannot tell" in o["message"] for o in outcomes)


@pytest.mark.slow
def test_a_damage_hook_whose_reads_fail_loudly_passes(tmp_path: Path) -> None:
    outcomes = _run(tmp_path, "core_only", "-m", "ST-037")
    assert {o["outcome"] for o in outcomes} == {"passed"}, outcomes
