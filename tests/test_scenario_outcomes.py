"""How the plugin records a scenario's outcome: ``unsupported`` and
``inconclusive`` are told apart from a plain skip by the reason's prefix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memconform.outcome_log import OutcomeLog, read_outcomes

SCENARIOS = '''
import pytest

from memconform.steps.common import inconclusive, unsupported


@getattr(pytest.mark, "ST-001")
def test_claimed_but_not_exercised():
    inconclusive("no kill landed while an append was in flight (0 of 5)")


@getattr(pytest.mark, "ST-002")
def test_not_declared():
    unsupported("the store does not declare the capability 'errors'")


@getattr(pytest.mark, "ST-003")
def test_plain_skip():
    pytest.skip("needs a server")
'''


def test_inconclusive_and_unsupported_are_recorded_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "test_scenarios.py").write_text(SCENARIOS, encoding="utf-8")
    out = tmp_path / "outcomes.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "test_scenarios.py", "-q", "-p", "no:cacheprovider",
         "--memconform-outcomes", str(out)],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    read = read_outcomes(out)
    recorded = {o["rules"][0]: (o["outcome"], o["message"]) for o in read.outcomes}
    assert recorded == {
        "ST-001": ("inconclusive", "no kill landed while an append was in flight (0 of 5)"),
        "ST-002": ("unsupported", "the store does not declare the capability 'errors'"),
        "ST-003": ("skipped", "needs a server"),
    }
    assert read.finished
    assert read.stopped is None


FAILING = '''
import pytest


class Narrowed(AssertionError):
    rules = ("ST-001",)  # the failure is charged to the store rule alone


@getattr(pytest.mark, "ST-001")
@getattr(pytest.mark, "SP-001")
def test_one():
    raise Narrowed("first")


@getattr(pytest.mark, "ST-002")
@getattr(pytest.mark, "SP-002")
def test_two():
    pass
'''


def _session(tmp_path: Path, *options: str) -> tuple[list[str], str | None]:
    (tmp_path / "test_scenarios.py").write_text(FAILING, encoding="utf-8")
    out = tmp_path / "outcomes.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "test_scenarios.py", "-q", "-p", "no:cacheprovider",
         "-p", "no:randomly", "--memconform-outcomes", str(out), *options],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    read = read_outcomes(out)
    assert read.finished
    return [o["rules"][0] for o in read.outcomes], read.stopped


def test_the_session_line_says_why_a_run_stopped_after_a_failure(tmp_path: Path) -> None:
    assert _session(tmp_path, "--maxfail", "1") == (["ST-001"], "stopping after 1 failures")


def test_the_kits_maxfail_counts_only_failures_of_rules_the_run_judges(tmp_path: Path) -> None:
    stops = ("--memconform-maxfail", "1", "--memconform-subject")
    assert _session(tmp_path, *stops, "store") == (
        ["ST-001"], "stopped after 1 failing scenario"
    )
    # a runtime run does not score ST-001: its failure does not stop the run
    assert _session(tmp_path, *stops, "runtime") == (["ST-001", "SP-002"], None)


ONE_SUBJECT = '''
import pytest


@getattr(pytest.mark, "ST-001")
def test_store_only():
    pass


@getattr(pytest.mark, "SP-001")
def test_runtime_only():
    pass


@getattr(pytest.mark, "SP-002")
@getattr(pytest.mark, "ST-002")
def test_both():
    pass


def test_untagged():
    pass
'''


@pytest.mark.parametrize(
    ("subject", "ran"),
    [("store", ["ST-001", "SP-002"]), ("runtime", ["SP-001", "SP-002"]),
     ("both", ["ST-001", "SP-001", "SP-002"])],
)
def test_a_session_of_one_subject_runs_only_the_scenarios_of_its_rules(
    tmp_path: Path, subject: str, ran: list[str]
) -> None:
    (tmp_path / "test_scenarios.py").write_text(ONE_SUBJECT, encoding="utf-8")
    out = tmp_path / "outcomes.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "test_scenarios.py", "-q", "-p", "no:cacheprovider",
         "-p", "no:randomly", "--memconform-outcomes", str(out),
         "--memconform-subject", subject],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert sorted(o["rules"][0] for o in read_outcomes(out).outcomes) == sorted(ran)
    # a test without rule tags (a vendor's own) is never deselected
    assert done.stdout.strip().splitlines()[-1].startswith(f"{len(ran) + 1} passed")


def test_past_the_deadline_no_scenario_starts(tmp_path: Path) -> None:
    # a deadline shorter than pytest takes to start: passed before the first scenario
    assert _session(tmp_path, "--memconform-deadline", "0.000001") == (
        [], "the deadline of 1e-06 s passed"
    )


def test_a_file_cut_short_keeps_the_outcomes_written_before(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.json"
    log = OutcomeLog(path)
    log.add({"nodeid": "b", "rules": ["ST-002"], "outcome": "passed"})
    log.add({"nodeid": "a", "rules": ["ST-001"], "outcome": "failed"})
    with path.open("a", encoding="utf-8") as cut:
        cut.write('{"nodeid": "c", "rul')  # the writer was killed mid-line
    read = read_outcomes(path)
    assert [o["nodeid"] for o in read.outcomes] == ["a", "b"]
    assert not read.finished
    assert read.stopped is None
    assert read_outcomes(tmp_path / "missing.json").outcomes == []
    log.close(0, None)


def test_an_outcome_holding_a_lone_surrogate_is_written_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.json"
    log = OutcomeLog(path)
    log.add({"nodeid": "a", "rules": ["ST-015"], "outcome": "passed", "message": "\udfff"})
    log.close(0, None)
    assert read_outcomes(path).outcomes[0]["message"] == "\udfff"
