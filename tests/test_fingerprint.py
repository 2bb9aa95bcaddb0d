"""``memconform fingerprint``: the save-policy failure matrix names the policy a
runtime implements, and every save-policy mutant differs from the policy it breaks."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from memconform.cli import main
from memconform.fingerprint import (
    COMPONENTS,
    POINTS,
    Point,
    _execute,
    crash_points,
    fingerprint,
    hooks_needed,
    references,
    render_json,
    render_text,
    subject_for,
)
from memconform.harness.environment import Environment
from memconform.harness.runtime import ProfileNotDeclared
from memconform.mutants import all_mutants
from memconform.simulator.runtime import Simulator
from memconform.values import JSONValue

ROOT = Path(__file__).resolve().parent.parent

OUTSIDE_THE_PROJECTION = {
    "sp-zero-based-rounds": "rounds are values the runtime stamps (SP-030), never compared",
    "sp-resume-from-process-memory": "the fingerprint resumes in the process that suspended "
                                     "the run (SP-028's resume in a fresh process)",
    "sp-rounds-across-runs": "rounds are values the runtime stamps (SP-030), never compared",
    "sp-run-rounds-per-message": "rounds are values the runtime stamps (SP-030), never "
                                 "compared",
    "sp-run-error-hook-replaces-error": "no point's run_error hook fails (SP-016)",
    "sp-streamed-refusal-retried": "no point refuses an append while the run streams "
                                   "(SP-029)",
    "sp-tool-calls-without-arguments": "the fingerprint resumes in the process that "
                                       "suspended the run (SP-028, as above)",
    "sp-history-from-own-memory": "each point runs on one runtime instance, which holds "
                                  "what it appended (SP-031's fresh-instance scenario)",
    "sp-ids-per-instance": "each point runs on one runtime instance, and ids are never "
                           "compared (SP-021's fresh-instance scenario)",
    "sp-last-tool-result-only": "no point's model calls two tools at once (SP-025)",
    "sp-tool-results-by-name": "no point's model calls one tool twice at once (SP-025)",
    "sp-tool-results-in-completion-order": "no point's model calls two tools at once "
                                           "(SP-025)",
    "sp-single-pending-continuation": "no point's run suspends with two calls awaiting "
                                      "approval (SP-028)",
    "sp-turn-buffer-survives-cancel": "no point runs again on the thread after a cancelled "
                                      "run (the second-run scenarios of SP-008 and SP-032)",
    "sp-resume-sees-own-run-only": "the suspended run is the thread's first, so no earlier "
                                   "run is missing from what it resumes with (SP-031)",
    "sp-turn-stream-saved-at-finish": "no streamed point's run-end hook cancels or fails "
                                      "(SP-029's ending-early rows)",
    "sp-run-outbox-keeps-failed-runs": "no point runs again on the thread after a failed run "
                                       "(SP-011's second-run scenario)",
}
"""Save-policy mutants whose only change the fingerprint does not compare, and why."""

SAVE_POLICY_MUTANTS = sorted(
    name for name, m in all_mutants().items()
    if m.profile == "save-policy" and name not in OUTSIDE_THE_PROJECTION
)


@pytest.mark.slow  # the crash points are real kills of child processes
@pytest.mark.parametrize("policy", ["message", "turn", "run"])
def test_the_reference_under_each_policy_is_nearest_to_it_with_no_difference(
    policy: str,
) -> None:
    result = fingerprint(subject_for("simulator", policy))
    assert result.nearest == policy
    assert result.distances[policy] == 0
    assert result.differences() == []
    others = [d for name, d in result.distances.items() if name != policy]
    assert min(others) > 0, "another reference is as near: the matrix cannot tell them apart"


def test_with_no_policy_configured_the_reference_is_message() -> None:
    result = fingerprint(subject_for("simulator"), crashes=False)
    assert (result.nearest, result.distances["message"]) == ("message", 0)


def test_the_anvia_main_variant_is_nearest_to_itself() -> None:
    result = fingerprint(subject_for("anvia-main", "message"), crashes=False)
    assert result.nearest == "anvia-main/message"
    assert result.distances["anvia-main/message"] == 0
    assert result.distances["message"] > 0


@pytest.mark.parametrize("name", SAVE_POLICY_MUTANTS)
def test_every_save_policy_mutant_differs_from_the_policy_it_breaks(name: str) -> None:
    """A mutant breaks the default (no policy configured, compared with message)
    or one configured policy: some configuration shows a point that differs.
    Every mutant shows at a point run in this process; the crash points (real
    kills) are checked on the mutants that hold their writes below."""
    for policy in (None, "message", "turn", "run"):
        result = fingerprint(subject_for("simulator", policy, name), crashes=False)
        if result.differences(policy or "message"):
            return
    pytest.fail(f"{name}: no point differs from the policy it breaks")


@pytest.mark.slow  # real kills of child processes
@pytest.mark.parametrize(("name", "policy"), [("sp-message-flushes-at-stop", "message"),
                                              ("sp-turn-flushes-at-stop", "turn")])
def test_a_runtime_holding_its_writes_until_it_stops_differs_at_a_crash_point(
    name: str, policy: str,
) -> None:
    """Killed right after its first write, such a runtime has already run the
    whole conversation (its tools and model calls) the policy would have stored
    before: a real kill shows it, a runtime asked to stop could flush first."""
    result = fingerprint(subject_for("simulator", policy, name))
    crashed = [d for d in result.differences(policy) if d.point.startswith("crash after")]
    assert crashed, f"{name}: no crash point differs from {policy}"


@pytest.mark.parametrize("name", sorted(OUTSIDE_THE_PROJECTION))
def test_mutants_outside_the_projection_are_listed_because_they_show_nothing(
    name: str,
) -> None:
    for policy in ("message", "turn", "run"):
        result = fingerprint(subject_for("simulator", policy, name), crashes=False)
        assert result.differences(policy) == [], f"{name} now shows: drop it from the list"


def test_a_runtime_named_module_factory_is_fingerprinted_like_the_reference() -> None:
    result = fingerprint(subject_for("tests.anvia_like_runtime:anvia_like_runtime", "turn"),
                         crashes=False)
    assert (result.nearest, result.distances["turn"]) == ("turn", 0)


def test_the_matrix_covers_every_failure_point_of_document_000() -> None:
    names = {p.name for p in POINTS}
    for needed in ("model call 1 fails", "model call 2 fails", "tool throws",
                   "tool-error hook terminates", "input guardrail blocks",
                   "output guardrail blocks", "run-end hook fails", "run-end hook cancels",
                   "cancel before model call 2", "suspended", "resumed",
                   "first append refused", "last append refused", "record_error refused"):
        assert needed in names
    assert len(names) == len(POINTS)
    assert [p.name for p in crash_points(2)] == ["crash after append 1", "crash after append 2"]


@pytest.mark.slow  # real kills of child processes
def test_a_crash_keeps_the_acknowledged_writes_and_nothing_after() -> None:
    """One crash point per append of the run where nothing fails, each a SIGKILL
    of the child process right after that append; the store read afterwards."""
    result = fingerprint(subject_for("simulator", "message"))
    crashes = [p.name for p in result.points if p.crash_after is not None]
    assert crashes == [p.name for p in crash_points(3)]
    crashed = result.observed["crash after append 2"]
    assert crashed.appends == "[user] [assistant,tool]"
    assert crashed.stored == "user,assistant,tool"
    assert crashed.outcome == "crashed"


class _ClaimsEverythingStoresNothing:
    """A runtime that tells its caller it completed and stored everything but never
    calls the store: the fingerprint reads the store, not the claim."""

    profiles = frozenset({"save-policy"})

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        runs: list[JSONValue] = [
            {"run_id": f"run-{i}", "outcome": "completed", "reply": "done", "error": None,
             "new_messages": [{"role": "user"}, {"role": "assistant"}]}
            for i, _ in enumerate(script["runs"])
        ]
        return {"runs": runs}


def claims_everything() -> _ClaimsEverythingStoresNothing:
    return _ClaimsEverythingStoresNothing()


def test_what_a_runtime_says_about_itself_is_never_compared() -> None:
    result = fingerprint(subject_for("tests.test_fingerprint:claims_everything", "message"),
                         crashes=False)
    none = result.observed["none"]
    assert (none.appends, none.stored, none.reply) == ("none", "none", "not stored")
    assert result.distances["message"] > 0


def test_the_json_is_canonical_and_the_same_every_time() -> None:
    first = render_json(fingerprint(subject_for("simulator", "run"), crashes=False))
    second = render_json(fingerprint(subject_for("simulator", "run"), crashes=False))
    assert first == second
    data = json.loads(first)
    assert first == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=True) + "\n"
    assert data["nearest"] == "run"
    assert data["differences"] == []
    assert [p["name"] for p in data["points"]] == [p.name for p in POINTS]
    assert set(data["points"][0]["stored"]) == set(COMPONENTS)
    assert set(data["references"]) == {r.label for r in references()}


def test_the_text_lists_every_point_and_each_difference() -> None:
    text = render_text(fingerprint(subject_for("simulator", "turn", "sp-turn-per-message"),
                                   crashes=False))
    assert "nearest policy:" in text
    for point in POINTS:
        assert point.name in text
    assert "points differing from" in text


@pytest.mark.slow  # the command's crash points are real kills
def test_cli_fingerprint_writes_json_and_exits_by_the_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "fp.json"
    assert main(["fingerprint", "--policy", "turn", "--out", str(out)]) == 0
    assert "nearest policy: turn, 0 of" in capsys.readouterr().out
    assert json.loads(out.read_text())["nearest"] == "turn"
    assert main(["fingerprint", "--policy", "turn", "--mutant", "sp-turn-per-message"]) == 1
    capsys.readouterr()
    assert main(["fingerprint", "--format", "json", "--runtime", "anvia-main"]) == 0
    assert json.loads(capsys.readouterr().out)["nearest"] == "anvia-main/message"


@pytest.mark.parametrize("argv", [
    ["fingerprint", "--runtime", "nothing-like-this"],
    ["fingerprint", "--runtime", "no_such_module_here:make"],
    ["fingerprint", "--policy", "session"],
    ["fingerprint", "--mutant", "st-lost-update"],
    ["fingerprint", "--runtime", "anvia-main", "--mutant", "sp-default-turn"],
])
def test_cli_fingerprint_usage_errors_exit_5(
    argv: list[str], capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(argv) == 5
    assert "usage error" in capsys.readouterr().err


def test_cli_fingerprint_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["fingerprint", "--help"])
    assert stop.value.code == 0
    assert "distance to a policy" in capsys.readouterr().out


def test_the_report_carries_the_fingerprint_and_reads_it_back(tmp_path: Path) -> None:
    """``memconform run --fingerprint`` adds it to results.json (valid against the
    schema) and to report.html; re-rendering the kept results gives the same page."""
    import dataclasses

    from memconform.reports import build_results, load_results, write_reports
    from tests.reports.factory import catalogue, header, store_outcomes

    data = fingerprint(subject_for("simulator", None, "sp-message-defers-input"),
                       crashes=False).to_json()
    results = dataclasses.replace(
        build_results(store_outcomes(), catalogue(), header(), None), fingerprint=data
    )
    write_reports(results, tmp_path / "a")
    kept = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))
    assert kept["fingerprint"]["nearest"] == data["nearest"]
    jsonschema = pytest.importorskip("jsonschema")
    schema = ROOT / "spec" / "schemas" / "results.schema.json"
    jsonschema.validate(kept, json.loads(schema.read_text(encoding="utf-8")))
    write_reports(load_results(tmp_path / "a" / "results.json"), tmp_path / "b")
    page = (tmp_path / "a" / "report.html").read_bytes()
    assert page == (tmp_path / "b" / "report.html").read_bytes()
    assert b'<section id="fingerprint">' in page
    assert b"model call 1 fails" in page


def test_a_results_file_with_a_malformed_fingerprint_is_refused(tmp_path: Path) -> None:
    from memconform.reports import build_results, load_results, write_reports
    from tests.reports.factory import catalogue, header, store_outcomes

    write_reports(build_results(store_outcomes(), catalogue(), header(), None), tmp_path)
    path = tmp_path / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["fingerprint"] = {"nearest": "message"}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="fingerprint"):
        load_results(path)


def test_run_refuses_a_fingerprint_of_a_store(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--store", "memory://", "--fingerprint"]) == 5
    assert "--fingerprint" in capsys.readouterr().err


class _WithoutApprovalsOrStreaming:
    """The reference simulator, declaring every optional hook but approvals and streaming."""

    hooks = frozenset({"input_guardrail", "output_guardrail", "tool_error", "run_end",
                       "cancel", "retry"})

    def __init__(self) -> None:
        from memconform.simulator.runtime import Simulator

        self._simulator = Simulator()
        self.profiles = self._simulator.profiles

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        if script.get("stream") or any("resume" in r for r in script["runs"]) or any(
            c.get("needs_approval") for step in script["model"]["agent"]
            for c in step.get("tool_calls") or ()
        ):
            raise AssertionError("a point needing an undeclared hook was run")
        return self._simulator.execute(script, env)


def without_approvals() -> _WithoutApprovalsOrStreaming:
    return _WithoutApprovalsOrStreaming()


class _NoSavePolicy:
    profiles = frozenset({"turns"})

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        raise AssertionError("never called")


def no_save_policy() -> _NoSavePolicy:
    return _NoSavePolicy()


def test_points_needing_a_hook_the_runtime_lacks_are_unsupported_not_counted() -> None:
    result = fingerprint(subject_for("tests.test_fingerprint:without_approvals", "turn"),
                         crashes=False)
    unsupported = {p.name for p in result.unsupported}
    assert unsupported == {"suspended", "resumed", "resumed, model call fails",
                           "resumed, tool-error hook terminates", "streamed"}
    assert (result.nearest, result.distances["turn"]) == ("turn", 0)
    assert len(result.points) == len(POINTS) - len(unsupported)
    data = json.loads(render_json(result))
    assert {u["name"] for u in data["unsupported"]} == unsupported
    assert "unsupported (the runtime has no approval): suspended" in render_text(result)


class _Declares:
    """A runtime declaring ``profiles`` as given (no attribute when ``None``) that
    must never be run."""

    def __init__(self, profiles: Any) -> None:
        if profiles is not None:
            self.profiles = profiles

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        raise AssertionError("never called")


def declares_unknown_profile() -> _Declares:
    return _Declares(["save-policy", "telepathy"])


def declares_a_string() -> _Declares:
    return _Declares("save-policy")


def declares_nothing() -> _Declares:
    return _Declares(None)


def test_the_fingerprint_never_runs_a_runtime_not_declaring_the_profile() -> None:
    """The gate of ``memconform run`` (require_profile): unsupported, never run."""
    with pytest.raises(ProfileNotDeclared, match="does not declare the save-policy profile "
                                                 r"\(its profiles: turns\)"):
        fingerprint(subject_for("tests.test_fingerprint:no_save_policy"), crashes=False)


@pytest.mark.parametrize("name", ["declares_unknown_profile", "declares_a_string",
                                  "declares_nothing"])
def test_a_profiles_declaration_the_kit_cannot_read_is_refused_before_any_run(
    name: str,
) -> None:
    with pytest.raises(ValueError, match="profiles"):
        fingerprint(subject_for(f"tests.test_fingerprint:{name}"), crashes=False)


def test_fingerprint_and_run_share_one_profile_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """``memconform fingerprint`` asks the function ``memconform run`` asks."""
    import memconform.fingerprint as module
    import memconform.harness.runtime as runtimes

    asked: list[str] = []

    def gate(runtime: object, profile: str) -> None:
        asked.append(profile)
        raise ProfileNotDeclared(profile, frozenset())

    monkeypatch.setattr(runtimes, "require_profile", gate)
    monkeypatch.setattr(module, "require_profile", gate)
    with pytest.raises(ProfileNotDeclared):
        fingerprint(subject_for("simulator"), crashes=False)
    with pytest.raises(ProfileNotDeclared):
        runtimes.observe(Simulator(), POINTS[0].script(None), _recording())
    assert asked == ["save-policy", "save-policy"]


def _recording() -> Any:
    from memconform.adapters.memory import MemoryStore
    from memconform.harness.proxy import RecordingStore

    return RecordingStore(MemoryStore())


def test_cli_fingerprint_of_a_runtime_without_the_profile_is_unsupported_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fingerprint", "--runtime", "tests.test_fingerprint:no_save_policy"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert ("unsupported: the runtime does not declare the save-policy profile "
            "(its profiles: turns); nothing was run") in captured.err


@pytest.mark.parametrize(("name", "said"), [
    ("declares_unknown_profile", "unknown profiles telepathy"),
    ("declares_a_string", "profiles is str"),
    ("declares_nothing", "declares no profiles"),
])
def test_cli_fingerprint_of_an_unreadable_declaration_exits_3(
    name: str, said: str, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fingerprint", "--runtime", f"tests.test_fingerprint:{name}"]) == 3
    assert said in capsys.readouterr().err


class _WritesAfterDeath:
    """The reference, but it survives anything and appends a note when it ends."""

    def __init__(self) -> None:
        from memconform.simulator.runtime import Simulator

        self._simulator = Simulator()
        self.profiles = self._simulator.profiles

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        from memconform.values import Message

        try:
            return self._simulator.execute(script, env)
        except BaseException:
            with contextlib.suppress(BaseException):
                env.store.append(script["thread"], [Message(id="late", role="system", text="x")])
            return {"runs": []}


def writes_after_death() -> _WritesAfterDeath:
    return _WritesAfterDeath()


class _KeepsBookkeeping:
    """The reference under its policy, writing a working-state entry of its own
    before it starts and after it ends when the store has working state (as a
    framework's checkpoint bookkeeping): writes that are not appends and leave
    the thread as it was."""

    def __init__(self) -> None:
        self._simulator = Simulator()
        self.profiles = self._simulator.profiles

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        if "state" not in env.store.capabilities:
            return self._simulator.execute(script, env)
        first = env.store.write_state("bookkeeping", "run", {"at": "start"}, None)
        answer = self._simulator.execute(script, env)
        env.store.write_state("bookkeeping", "run", {"at": "end"}, first.version)
        return answer


def keeps_bookkeeping() -> _KeepsBookkeeping:
    return _KeepsBookkeeping()


@pytest.mark.slow  # real kills of child processes
def test_crash_points_are_the_appends_so_bookkeeping_writes_change_nothing() -> None:
    """Killed after each append, a runtime with writes of its own between them is
    compared with the reference at the same places: no point differs. Killed
    after every write, its first kill (after the bookkeeping, before any
    append) would keep nothing where the reference's keeps the input."""
    result = fingerprint(subject_for("tests.test_fingerprint:keeps_bookkeeping", "message"))
    crashes = [p.name for p in result.points if p.crash_after is not None]
    assert crashes == [p.name for p in crash_points(3)]
    assert (result.nearest, result.distances["message"]) == ("message", 0)


@pytest.mark.slow  # a real kill of a child process
def test_nothing_is_stored_after_the_kill() -> None:
    """The child is SIGKILLed: the runtime's ``except BaseException`` never runs."""
    subject = subject_for("tests.test_fingerprint:writes_after_death", "message")
    point = crash_points(1)[0]
    crashed = _execute(subject, point, 0)[0]
    assert crashed.stored == "user"
    assert crashed.appends == "[user]"
    assert crashed.outcome == "crashed"


@pytest.mark.parametrize("point", POINTS, ids=[p.name for p in POINTS])
def test_a_script_needs_exactly_the_hooks_of_its_failure_point(point: Point) -> None:
    assert hooks_needed(point.script("turn")) == frozenset(point.needs)


class _GuardrailsOnly(Simulator):
    hooks = frozenset({"input_guardrail", "output_guardrail"})


def test_a_scenario_needing_a_hook_the_runtime_lacks_is_unsupported() -> None:
    from memconform.adapters.memory import MemoryStore
    from memconform.harness.proxy import RecordingStore
    from memconform.steps.common import UNSUPPORTED_PREFIX
    from memconform.steps.save_policy import _execute

    streamed = next(p for p in POINTS if p.name == "streamed").script("turn")
    proxy = RecordingStore(MemoryStore())
    try:
        with pytest.raises(pytest.skip.Exception, match=f"^{UNSUPPORTED_PREFIX}.*stream"):
            _execute(_GuardrailsOnly(), streamed, proxy)
        assert proxy.timeline.to_json() == []  # nothing was run
        blocked = next(p for p in POINTS if p.name == "input guardrail blocks").script("turn")
        observation = _execute(_GuardrailsOnly(), blocked, proxy)
        assert observation["runs"][0]["outcome"] == "blocked"
        observation = _execute(Simulator(), streamed, proxy)  # declares nothing: runs all
        assert observation["runs"][0]["outcome"] == "completed"
    finally:
        proxy.close()


def test_outcome_events_without_run_ids_are_each_runs_in_order() -> None:
    """A framework stamps no run ids: the n-th outcome event it reports without
    one is its n-th run's, so two runs told as answered compare equal, and an
    event disagreeing with its run's answer is still shown."""
    from memconform.fingerprint import _outcomes

    def told(outcome: str, error: str | None = None) -> dict[str, Any]:
        return {"kind": "event", "name": "outcome", "outcome": outcome, "stage": None,
                "error": None if error is None else {"type": error}}

    answer = {"runs": [{"outcome": "completed"}, {"outcome": "failed", "error": {"type": "X"}}]}
    same = _outcomes(answer, [told("completed"), told("failed", "X")], False, None)
    assert same[0] == "completed; failed: X"
    swapped = _outcomes(answer, [told("failed", "X"), told("completed")], False, None)
    assert swapped[0] == ("completed (reported: failed: X); "
                          "failed: X (reported: completed)")


def test_the_child_builds_the_runtime_by_the_name_the_command_was_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kill harness's child resolves ``--runtime`` as the command does: a
    framework name of the registry, a simulator variant or ``module:factory``."""
    from memconform.adapters import registry
    from memconform.steps import job_resume

    monkeypatch.setitem(registry.BUILTIN_RUNTIMES, "a-framework:mode",
                        "tests.test_fingerprint:writes_after_death")
    assert isinstance(job_resume._runtime("a-framework:mode", None), _WritesAfterDeath)
    variant = job_resume._runtime("anvia-main", None)
    assert isinstance(variant, Simulator)
    assert variant.variant == "anvia-main"
    assert isinstance(job_resume._runtime("tests.test_fingerprint:without_approvals", None),
                      _WithoutApprovalsOrStreaming)
    assert subject_for("simulator", "turn", "sp-turn-per-message").child == (
        "--mutant", "sp-turn-per-message")
    assert subject_for("anvia-main").child == ("--runtime", "anvia-main")
    assert subject_for("simulator").child == ()
