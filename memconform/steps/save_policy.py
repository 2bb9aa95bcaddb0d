"""Step definitions for the ``save-policy`` profile (document 000): the agent
and its failure point (Given) and the execution (When).

State flows through three fixtures: ``sp_case`` (the script being built and
how the store is presented), ``sp_observation`` (what one execution returned,
timeline included) and ``sp_variants`` (observations of the same conversation
under several policies or modes). Batching and ordering checks read the
recording proxy's timeline, never the runtime's own report. The Then steps
live in the family modules ``save_policy_outcomes`` (outcomes, side effects
and context), ``save_policy_appends`` (what was appended), ``save_policy_order``
(the order on the timeline), ``save_policy_errors`` (error records) and
``save_policy_variants`` (behaviour across policies and modes); real kills in
``save_policy_kills``; the shared case and readers in ``save_policy_world``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pytest_bdd import given, parsers, when

from memconform.contract import Capability
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import (
    SAVE_POLICIES,
    Runtime,
    declared_hooks,
    declared_policies,
    hooks_needed,
)
from memconform.steps._save_policy_scripts import apply_failure_point, base_script
from memconform.steps.child_runs import runtime_options
from memconform.steps.common import note_policies, require_capability, unsupported
from memconform.steps.save_policy_resumes import (
    Later,
    cut_points,
    execute_with_resumes,
    in_fresh_process,
    in_process,
)
from memconform.steps.save_policy_world import (
    POLICIES,
    SavePolicyCase,
    StoreWithoutErrors,
    appended_batches,
)

__all__ = ["SavePolicyCase", "StoreWithoutErrors", "appended_batches", "require_policies"]


# -- executing ----------------------------------------------------------------------------


def require_policies(
    request: pytest.FixtureRequest, runtime: Runtime, policies: Sequence[object]
) -> None:
    """Note the save policies the scenario configures; end it ``unsupported``
    when the runtime declares ``policies`` and one of them is not among them.

    Only the three policy names count: no policy configured (the runtime's own
    default) and an unknown name (a configuration the runtime must refuse) run
    on every runtime. A runtime declaring no ``policies`` runs everything."""
    named = [str(p) for p in policies if p in SAVE_POLICIES]
    note_policies(request, named)
    declared = declared_policies(runtime)
    if declared is None:
        return
    missing = sorted(set(named) - declared, key=SAVE_POLICIES.index)
    if missing:
        has = ", ".join(sorted(declared, key=SAVE_POLICIES.index))
        said = f"it declares the save policies {has}" if has else "it declares no save policy"
        unsupported(f"the runtime does not implement the {', '.join(missing)} save policy "
                    f"({said})")


def _execute(
    runtime: Runtime, script: dict[str, Any], proxy: RecordingStore, later: Later | None = None,
    fresh_later: bool = False,
) -> dict[str, Any]:
    declared = declared_hooks(runtime)
    if declared is not None:
        missing = sorted(hooks_needed(script) - declared)
        if missing:
            unsupported(f"the runtime has no {', '.join(missing)} (it declares the hooks "
                        f"{', '.join(sorted(declared)) or 'none'})")
    start = len(proxy.timeline)
    observation = execute_with_resumes(runtime, script, proxy, later, fresh_later)
    observation["thread_under_test"] = script["thread"]
    observation["runtime_from"] = start
    observation["inputs"] = [run.get("input") for run in script.get("runs", [])]
    observation["declared_hooks"] = None if declared is None else sorted(declared)
    return observation


# -- given ---------------------------------------------------------------------------------


@given(
    parsers.parse('a save-policy agent with the "{policy}" save policy'),
    target_fixture="sp_case",
)
def sp_agent_with_policy(namespace: str, policy: str) -> SavePolicyCase:
    """The standard conversation (one tool round, then an answer) under ``policy``."""
    return SavePolicyCase(base_script(f"{namespace}-sp", policy))


@given("a save-policy agent with no save policy configured", target_fixture="sp_case")
def sp_agent_default(namespace: str) -> SavePolicyCase:
    """The standard conversation with no save policy named."""
    return SavePolicyCase(base_script(f"{namespace}-sp", None))


@given(parsers.parse('the save-policy agent follows the variant "{variant}"'))
def sp_variant(sp_case: SavePolicyCase, variant: str) -> None:
    """Ask the runtime for a named divergent behaviour."""
    sp_case.script["variant"] = variant


@given(parsers.parse('the save-policy run meets the failure point "{point}"'))
def sp_failure_point(sp_case: SavePolicyCase, point: str) -> None:
    """Script the run to fail (or be interrupted) at ``point``; a store refusal is
    injected by the kit's store at execution."""
    sp_case.script = apply_failure_point(sp_case.script, point)
    sp_case.point = point


@given(parsers.parse("the first save-policy run is cancelled before model call {call:d}"))
def sp_cancel_first_run(sp_case: SavePolicyCase, call: int) -> None:
    """The caller cancels the script's first run just before its ``call``-th
    model call (the runs after it are not cancelled)."""
    sp_case.script["runs"][0]["cancel_before_model_call"] = call


@given(parsers.parse('the save-policy model answers directly with "{text}"'))
def sp_direct_answer(sp_case: SavePolicyCase, text: str) -> None:
    """The model answers at once, without tools."""
    sp_case.script["model"]["agent"] = [{"reply": text}]


@given(parsers.parse('the save-policy output guardrail {action} the answer with "{text}"'))
def sp_output_guardrail(sp_case: SavePolicyCase, action: str, text: str) -> None:
    """``replaces`` or ``blocks`` the model's answer, putting ``text`` in its place."""
    verbs = {"replaces": "replace", "blocks": "block"}
    if action not in verbs:
        raise ValueError(f"unknown guardrail action {action!r}; use replaces or blocks")
    sp_case.script["hooks"]["output_guardrail"] = {"action": verbs[action], "text": text}


@given("the save-policy input guardrail blocks the input")
def sp_input_blocked(sp_case: SavePolicyCase) -> None:
    """The input guardrail refuses the user input."""
    sp_case.script["hooks"]["input_guardrail"] = {"action": "block", "text": "not allowed"}


@given(parsers.parse("the save-policy model call fails {times:d} times with status {status:d}"))
def sp_retryable_failures(sp_case: SavePolicyCase, times: int, status: int) -> None:
    """The first model call fails ``times`` times with a retryable status first."""
    failure = {"fail": {"type": "ProviderError", "message": "try again", "status": status}}
    sp_case.script["model"]["agent"][:0] = [failure] * times


@given("the save-policy model calls two tools at once in its first round")
def sp_two_calls(sp_case: SavePolicyCase) -> None:
    """The first reply asks for a second tool beside the first (parallel calls):
    both results belong in the round's batch, in call order."""
    first = sp_case.script["model"]["agent"][0]
    first["tool_calls"].append({"id": "call-log", "name": "log_contact",
                                "args": {"order": "A-1", "channel": "e-mail"}})
    sp_case.script["tools"]["log_contact"] = {"result": "logged"}


@given("the save-policy model calls its tool twice at once in its first round")
def sp_same_tool_twice(sp_case: SavePolicyCase) -> None:
    """The first reply calls the same tool a second time, for another order
    (parallel calls of one tool): each call has its own result, told apart by
    the call's id, never by the tool's name."""
    first = sp_case.script["model"]["agent"][0]
    call = first["tool_calls"][0]
    first["tool_calls"].append({"id": f"{call['id']}-again", "name": call["name"],
                                "args": {"order": "B-2"}})


@given("the save-policy tool call needs approval")
def sp_needs_approval(sp_case: SavePolicyCase) -> None:
    """The model's tool call waits for a human approval."""
    sp_case.script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True


@given("every save-policy tool call of the first round needs approval")
def sp_all_need_approval(sp_case: SavePolicyCase) -> None:
    """Each call of the model's first reply waits for a human approval, so the
    run is suspended with all of them pending at once."""
    for call in sp_case.script["model"]["agent"][0]["tool_calls"]:
        call["needs_approval"] = True


@given(parsers.parse('a later save-policy run sends "{text}" and gets the answer "{reply}"'))
def sp_later_run(sp_case: SavePolicyCase, text: str, reply: str) -> None:
    """Another run on the same thread, answered without tools."""
    sp_case.script["runs"].append({"input": text})
    sp_case.script["model"]["agent"].append({"reply": reply})


@given(parsers.parse(
    'an earlier save-policy run on the thread sent "{text}" and got the answer "{reply}"'
))
def sp_earlier_run(sp_case: SavePolicyCase, text: str, reply: str) -> None:
    """A run before the scripted one on the same thread, answered without tools:
    the scripted run becomes run 2, and whatever follows it run 3."""
    sp_case.script["runs"].insert(0, {"input": text})
    sp_case.script["model"]["agent"].insert(0, {"reply": reply})


@given("every later save-policy run runs on a fresh runtime instance")
def sp_fresh_later(sp_case: SavePolicyCase) -> None:
    """Runs after the first start on a new runtime instance, as a new process
    serving the thread would: only the store carries the history over."""
    sp_case.fresh_later = True


@given("a later save-policy run approves the pending tool call")
def sp_resume_approved(sp_case: SavePolicyCase) -> None:
    """The suspended run is resumed with an approval; the model then answers."""
    sp_case.script["runs"].append({"resume": {"approved": True}})


@given("the save-policy run is streamed")
def sp_streamed(sp_case: SavePolicyCase) -> None:
    """Every run of the script streams its answers."""
    sp_case.script["stream"] = True


@given("the save-policy store does not declare the errors capability")
def sp_store_without_errors(sp_case: SavePolicyCase) -> None:
    """Present the store to the runtime with ``errors`` hidden."""
    sp_case.without_errors = True


@given(parsers.parse('the save-policy configuration names the save policy "{policy}"'))
def sp_configured_policy(sp_case: SavePolicyCase, policy: str) -> None:
    """Configure a policy name, valid or not."""
    sp_case.script["save_policy"] = policy


@given("the save-policy store keeps error records")
def sp_needs_errors(store: RecordingStore) -> None:
    """End as unsupported when the store does not declare ``errors``."""
    require_capability(store.capabilities, Capability.ERRORS.value)


# -- when ----------------------------------------------------------------------------------


@when("the save-policy script is executed", target_fixture="sp_observation")
def sp_execute(
    sp_case: SavePolicyCase, runtime: Runtime, runtime_factory: Callable[[], Runtime],
    store: RecordingStore, store_url: str, raw_store: object,
    sp_proxies: Callable[..., RecordingStore], request: pytest.FixtureRequest,
) -> dict[str, Any]:
    """Run the script through the runtime under test, against the store under test
    (``unsupported`` when the runtime does not declare the script's policy). A
    resume of a suspended run, and with ``fresh_later`` every later run, runs on
    a fresh runtime instance (a resume with the caller's continuation; see
    :mod:`memconform.steps.save_policy_resumes`): in a second fresh process when
    the store is durable and the kit injects no refusal, else in a second
    ``execute`` call of this process on a new instance."""
    require_policies(request, runtime, [sp_case.script.get("save_policy")])
    inner = sp_case.store_for(raw_store, sp_case.script.get("save_policy"))
    proxy = store if inner is raw_store else sp_proxies(inner)
    later: Later | None = None
    if cut_points(sp_case.script, sp_case.fresh_later):
        if inner is raw_store and "durable" in set(store.capabilities):
            options = runtime_options(request.config.getoption("--memconform-mutant"),
                                      request.config.getoption("--memconform-runtime"))
            later = in_fresh_process(store_url, options, proxy)
        else:
            later = in_process(runtime_factory, proxy)
    return _execute(runtime, sp_case.script, proxy, later, sp_case.fresh_later)


@when("the save-policy script is executed under each save policy", target_fixture="sp_variants")
def sp_execute_each_policy(
    sp_case: SavePolicyCase, runtime: Runtime, raw_store: object,
    sp_proxies: Callable[..., RecordingStore], request: pytest.FixtureRequest,
) -> dict[str, dict[str, Any]]:
    """The same script under message, turn and run, each on its own thread
    (``unsupported`` unless the runtime declares all three or declares none)."""
    require_policies(request, runtime, POLICIES)
    out = {}
    for policy in POLICIES:
        script = {**sp_case.script, "save_policy": policy,
                  "thread": f"{sp_case.script['thread']}-{policy}"}
        out[policy] = _execute(runtime, script, sp_proxies(sp_case.store_for(raw_store, policy)))
    return out


@when("the save-policy script is executed buffered and streamed", target_fixture="sp_variants")
def sp_execute_both_modes(
    sp_case: SavePolicyCase, runtime: Runtime, raw_store: object,
    sp_proxies: Callable[..., RecordingStore], request: pytest.FixtureRequest,
) -> dict[str, dict[str, Any]]:
    """The same script buffered and streamed, each on its own thread."""
    out = {}
    policy = sp_case.script.get("save_policy")
    require_policies(request, runtime, [policy])
    for mode, stream in (("buffered", False), ("streamed", True)):
        script = {**sp_case.script, "stream": stream,
                  "thread": f"{sp_case.script['thread']}-{mode}"}
        out[mode] = _execute(runtime, script, sp_proxies(sp_case.store_for(raw_store, policy)))
    return out
