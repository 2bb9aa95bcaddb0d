"""A rule of a capability the store does not declare is never ``pass``, whatever
other check named it, and gets the same verdict in every run; a rule resting on
what the adapter supplies itself is ``adapter-provided``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memconform.catalogue import load_catalogue
from memconform.contract import Capability
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.reports import build_results, exit_code
from memconform.reports.results import Results
from tests.bad_store_adapters import misspelt_provides
from tests.mutant_harness import run_suite

_TARGETS = ("memconform/steps/suite.py", "memconform/steps/generated_checks.py")


def _judge(tmp_path: Path, store: str, marks: str, **header: Any) -> Results:
    outcomes: list[dict[str, Any]] = []
    for n, target in enumerate(_TARGETS):
        outcomes += run_suite(
            target, tmp_path / str(n), "--memconform-store", store, "-m", marks,
            "-k", "not generated_runs",  # the runtime's property: not about these rules
        )
    head = {
        "subject": "store", "store": store, "capabilities": [], "kit_version": "test",
        **header,
    }
    return build_results(outcomes, load_catalogue(), head)


def _verdicts(results: Results, *ids: str) -> dict[str, str]:
    return {r.id: r.verdict for r in results.rules if r.id in ids}


@pytest.mark.slow
def test_rules_of_undeclared_capabilities_are_unsupported_whether_core_passes_or_not(
    tmp_path: Path,
) -> None:
    marks = "ST-003 or ST-017 or ST-021"
    good = _judge(tmp_path / "good", "tests.bad_store_adapters:bare_core", marks)
    bad = _judge(tmp_path / "bad", "tests.bad_store_adapters:bare_core_wrong_window", marks)
    assert _verdicts(good, "ST-003") == {"ST-003": "pass"}
    assert _verdicts(bad, "ST-003") == {"ST-003": "fail"}
    for results in (good, bad):
        assert _verdicts(results, "ST-017", "ST-021") == {
            "ST-017": "unsupported", "ST-021": "unsupported",
        }
        rules = {r.id: r for r in results.rules}
        # the property check named both rules; it does not decide them
        assert all("properties" not in s.nodeid for s in rules["ST-017"].scenarios)
        classes = {c.name: c.status for c in results.classes}
        assert classes["commit-flags"] == classes["errors"] == "not-claimed"
    same = [(r.verdict, r.reason) for r in good.rules if r.id in ("ST-017", "ST-021")]
    assert same == [(r.verdict, r.reason) for r in bad.rules if r.id in ("ST-017", "ST-021")]


@pytest.mark.slow
def test_a_window_the_adapter_takes_itself_is_adapter_provided_never_pass(
    tmp_path: Path,
) -> None:
    results = _judge(
        tmp_path, "tests.bad_store_adapters:window_by_adapter", "ST-003 or ST-004 or ST-005 "
        "or ST-006",
    )
    assert _verdicts(results, "ST-003", "ST-004", "ST-005", "ST-006") == {
        "ST-003": "adapter-provided", "ST-004": "adapter-provided",
        "ST-005": "adapter-provided", "ST-006": "pass",
    }
    assert results.header["store"]["provides"] == ["window"]
    rule = next(r for r in results.rules if r.id == "ST-003")
    assert "rests on window, which the adapter provides itself" in rule.reason
    assert exit_code(results) == 1


def test_an_unknown_provision_is_an_adapter_error_naming_the_known_ones() -> None:
    with pytest.raises(AdapterContractError) as caught:
        RecordingStore(misspelt_provides())
    message = str(caught.value)
    assert message.startswith("provides: ")
    assert "'windows'" in message
    assert "window, timestamps, ids, run-ids, rounds, turn-ids" in message


@pytest.mark.slow
def test_an_unknown_provision_fails_every_scenario_as_an_adapter_error(tmp_path: Path) -> None:
    outcomes = run_suite(
        "memconform/steps/suite.py", tmp_path, "--memconform-store",
        "tests.bad_store_adapters:misspelt_provides", "-m", "ST-003",
    )
    assert outcomes
    assert {o["outcome"] for o in outcomes} == {"error"}
    assert "'windows'" in outcomes[0]["message"]


@pytest.mark.slow
def test_a_promise_measured_though_not_claimed_is_informational(tmp_path: Path) -> None:
    """memory:// does not claim ``durable``: asked to measure it anyway, the kit
    finds a fresh process reads nothing, and says so without counting it."""
    head = {"subject": "store", "store": "memory://", "kit_version": "test",
            "capabilities": ["commit-flags", "errors", "turn-records", "state", "knowledge",
                             "atomic-batch"]}
    plain = run_suite("memconform/steps/suite.py", tmp_path / "plain",
                      "--memconform-store", "memory://", "-m", "ST-032")
    measured = run_suite("memconform/steps/suite.py", tmp_path / "measured", "--memconform-store",
                         "memory://", "-m", "ST-032", "--memconform-measure-unclaimed")
    assert {o["outcome"] for o in plain} == {"unsupported"}
    assert {o["outcome"] for o in measured} == {"failed"}
    assert all(o["needs"] == ["durable"] for o in measured)
    before = build_results(plain, load_catalogue(), head)
    after = build_results(measured, load_catalogue(), head)
    assert _verdicts(before, "ST-032") == {"ST-032": "unsupported"}
    rule = next(r for r in after.rules if r.id == "ST-032")
    assert (rule.verdict, rule.measured) == ("informational", "fail")
    assert after.totals["fail"] == 0
    assert next(c for c in after.classes if c.name == "durable").status == "not-claimed"


@pytest.mark.slow
def test_run_ids_and_rounds_a_runtime_adapter_stamps_itself_are_adapter_provided(
    tmp_path: Path,
) -> None:
    outcomes = run_suite(
        "memconform/steps/suite.py", tmp_path / "stamping", "-m", "SP-030",
        "--memconform-runtime", "tests.runtime_adapters:stamping_runtime",
    )
    assert outcomes
    assert all(o["provided"]["runtime"] == ["rounds", "run-ids"] for o in outcomes)
    head = {"subject": "runtime", "runtime": "tests.runtime_adapters:stamping_runtime",
            "capabilities": [c.value for c in Capability], "kit_version": "test"}
    results = build_results(outcomes, load_catalogue(), head)
    assert _verdicts(results, "SP-030") == {"SP-030": "adapter-provided"}
    assert results.header["runtime"]["provides"] == ["rounds", "run-ids"]
    misspelt = run_suite(
        "memconform/steps/suite.py", tmp_path / "misspelt", "-m", "SP-030",
        "--memconform-runtime", "tests.runtime_adapters:misspelt_runtime",
    )
    assert {o["outcome"] for o in misspelt} == {"error"}
    assert "'round'" in misspelt[0]["message"]


@pytest.mark.parametrize("capability", [Capability.COMMIT_FLAGS, "commit-flags"])
def test_an_undeclared_capability_is_named_by_its_name_not_its_enum_repr(
    capability: str,
) -> None:
    from memconform.steps.common import require_capability

    with pytest.raises(pytest.skip.Exception) as skipped:
        require_capability(frozenset(), capability)
    assert str(skipped.value.msg).endswith("the capability 'commit-flags'")
    assert "<Capability" not in str(skipped.value.msg)


def test_an_undeclared_capability_reads_by_name_in_the_verdict_reason() -> None:
    from dataclasses import replace

    from memconform.reports.verdict import _unclaimed

    rule = next(r for r in load_catalogue().rules if r.id == "ST-017")
    for capability in (Capability.COMMIT_FLAGS, "commit-flags"):
        verdict, reason, _, _ = _unclaimed(replace(rule, capability=capability), [])
        assert verdict == "unsupported"
        assert "the capability 'commit-flags'" in reason
        assert "<Capability" not in reason


def test_a_store_declares_once_a_session_so_a_stopped_guard_leaves_its_claims_known() -> None:
    """After the session's hang guard stopped calling a hung store, every later
    scenario still knows what the store declares (it was read before the hang),
    so a rule of an undeclared capability stays ``unsupported`` rather than
    turning into an error measured against a promise never made."""
    from memconform.adapters.memory import MemoryStore
    from memconform.harness.faults import HangingStore
    from memconform.harness.proxy import AdapterTimeoutError, HangGuard

    guard = HangGuard(limit=1)
    hung = HangingStore(MemoryStore(), methods=("messages",))
    first = RecordingStore(hung, timeout=0.05, hangs=guard)
    with pytest.raises(AdapterTimeoutError):
        first.messages("t")
    assert guard.stopped is not None
    later = RecordingStore(hung, timeout=0.05, hangs=guard)
    assert later.capabilities == first.capabilities
    first.close()
    later.close()
