"""Step definitions of the ``strict-write`` profile (``features/strict-write``):
the agent (Given) and the run (When).

Every phrase says "strict-write" so it never collides with another profile's.
A scenario builds a script in the ``sw_script`` fixture (the agent, its
pipeline, its memory policy and what its tools and model do), runs it through
the runtime under test with the kit's recording proxy, and then judges what
the kit observed: the store's messages (read back through the proxy), the
model calls and events on the timeline, and the answer the caller got. The
Then steps live in the family modules ``strict_write_answers`` (the caller's
answer), ``strict_write_digests`` (error digests and secrets) and
``strict_write_memory`` (tasks, memory, what the model saw, the store's
flags); the shared :class:`~memconform.steps.strict_write_world.StrictWriteRun`
and the pipeline-table parser in ``strict_write_world``.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_bdd import given, parsers, when

from memconform.contract import Capability
from memconform.harness.faults import RefusingStore
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import Runtime, observe
from memconform.steps.common import require_capability
from memconform.steps.secret_syntaxes import secret_syntax
from memconform.steps.strict_write_world import (
    _POLICY,
    StrictWriteRun,
    json_value,
    parse_writes,
    policy_of,
    task_kind,
)

__all__ = ["StrictWriteRun", "parse_writes"]


# -- the agent -----------------------------------------------------------------------------


@given("a strict-write agent with the pipeline:", target_fixture="sw_script")
def strict_write_agent(namespace: str, datatable: list[list[str]]) -> dict[str, Any]:
    header, *rows = datatable
    columns = [c.strip() for c in header]
    pipeline: list[dict[str, Any]] = []
    for row in rows:
        cells = dict(zip(columns, (c.strip() for c in row), strict=True))
        task: dict[str, Any] = {"id": cells["task"], "kind": cells.get("kind") or "write"}
        if cells.get("writes"):
            task["writes"] = parse_writes(cells["writes"])
        pipeline.append(task)
    return {
        "profile": "strict-write",
        "thread": f"{namespace}-sw",
        "pipeline": pipeline,
        "turns": [],
        "model": {},
        "tools": {},
        "behaviorRules": [],
        "outputSet": [],
    }


@given(parsers.parse('strict write is enabled with onFailure "{mode}"'))
def strict_write_enabled(sw_script: dict[str, Any], store: RecordingStore, mode: str) -> None:
    require_capability(store.capabilities, Capability.COMMIT_FLAGS)
    policy_of(sw_script).update({"enabled": True, "onFailure": mode})


@given("strict write is enabled without naming onFailure")
def strict_write_enabled_default(sw_script: dict[str, Any], store: RecordingStore) -> None:
    require_capability(store.capabilities, Capability.COMMIT_FLAGS)
    policy_of(sw_script).update({"enabled": True})


@given(parsers.parse('strict write is disabled with onFailure "{mode}"'))
def strict_write_disabled(sw_script: dict[str, Any], mode: str) -> None:
    policy_of(sw_script).update({"enabled": False, "onFailure": mode})


@given("the strict-write agent has no memory policy")
def strict_write_no_policy(sw_script: dict[str, Any]) -> None:
    sw_script.pop(_POLICY[0], None)


@given(parsers.parse("the strict-write continueOnFailure setting is {value}"))
def strict_write_continue(sw_script: dict[str, Any], value: str) -> None:
    if value not in ("on", "off"):
        raise ValueError(f"continueOnFailure must be 'on' or 'off', got {value!r}")
    policy_of(sw_script)["continueOnFailure"] = value == "on"


@given(parsers.parse('the strict-write behavior rule turns "{when}" into "{action}"'))
def strict_write_behavior_rule(sw_script: dict[str, Any], when: str, action: str) -> None:
    sw_script["behaviorRules"].append({"when": when, "actions": [action]})


@given(parsers.parse('the strict-write output set answers "{action}" with "{text}"'))
def strict_write_output_set(sw_script: dict[str, Any], action: str, text: str) -> None:
    sw_script["outputSet"].append({"action": action, "text": text})


def _add_outcome(script: dict[str, Any], task: str, outcome: dict[str, Any]) -> None:
    section = "model" if task_kind(script, task) == "llm" else "tools"
    script[section].setdefault(task, []).append(outcome)


@given(parsers.parse('the strict-write task "{task}" fails on its next call with "{message}"'))
def strict_write_task_fails(sw_script: dict[str, Any], task: str, message: str) -> None:
    _add_outcome(sw_script, task, {"fail": {"type": "LifecycleException", "message": message}})


@given(parsers.parse('the strict-write task "{task}" fails on its next call with the error:'))
def strict_write_task_fails_with(sw_script: dict[str, Any], task: str, docstring: str) -> None:
    error = json_value(docstring, f"error of {task}")
    if not isinstance(error, dict):
        raise ValueError("the error must be a JSON object")
    _add_outcome(sw_script, task, {"fail": error})


@given(parsers.parse('the strict-write task "{task}" fails on its next call with the secret '
                     'syntax "{syntax}"'))
def strict_write_task_fails_with_secret(sw_script: dict[str, Any], task: str,
                                        syntax: str) -> None:
    """The error of the row ``syntax`` of the secret-syntax table."""
    _add_outcome(sw_script, task, {"fail": dict(secret_syntax(syntax).error)})


@given(parsers.parse('the strict-write task "{task}" succeeds on its next call'))
def strict_write_task_succeeds(sw_script: dict[str, Any], task: str) -> None:
    if task_kind(sw_script, task) == "llm":
        _add_outcome(sw_script, task, {"reply": f"{task} answered"})
    else:
        _add_outcome(sw_script, task, {"result": f"{task} result"})


@given(parsers.parse('the strict-write task "{task}" is interrupted by a graceful shutdown'))
def strict_write_task_shutdown(sw_script: dict[str, Any], task: str) -> None:
    error = {"type": "GracefulShutdown", "message": "the server is shutting down"}
    _add_outcome(sw_script, task, {"fail": error})


# -- running -------------------------------------------------------------------------------


def _complete(script: dict[str, Any]) -> dict[str, Any]:
    """Give every model task enough replies and every tool a default result."""
    done: dict[str, Any] = json.loads(json.dumps(script))
    turns = len(done["turns"])
    for entry in done["pipeline"]:
        if entry.get("kind") == "llm":
            steps = done["model"].setdefault(entry["id"], [])
            steps.extend({"reply": f"answer {n}"} for n in range(len(steps) + 1, turns + 1))
        elif entry.get("kind") == "tool":
            outcomes = done["tools"].setdefault(entry.get("tool") or entry["id"], [])
            outcomes.append({"result": f"{entry['id']} result"})
    return done


_REFUSED_APPENDS = "kit: refused appends"
"""Where a scenario notes the appends the kit's store refuses: taken out of the
script before the runtime sees it (nothing in the script tells the runtime)."""
_REFUSED_METHODS = "kit: refused methods"
"""Where a scenario notes the store methods (``set_committed``, ``record_error``)
whose every call the kit's store refuses; taken out of the script like
:data:`_REFUSED_APPENDS`."""


def _run(runtime: Runtime, store: RecordingStore, script: dict[str, Any]) -> StrictWriteRun:
    refused = script.pop(_REFUSED_APPENDS, None)
    methods = script.pop(_REFUSED_METHODS, None)
    done = _complete(script)
    result = StrictWriteRun(done, store_calls_before=len(store.timeline.of("store")))
    proxy = store
    if refused or methods:
        proxy = RecordingStore(
            RefusingStore(store.inner, appends=refused or (), methods=methods or ()),
            store.timeline, timeout=store.timeout, hangs=store.hangs,
        )
    try:
        result.observation = observe(runtime, done, proxy)
    except ValueError as exc:  # ScriptError among them: a configuration refused
        result.rejection = exc
    finally:
        if proxy is not store:
            proxy.close()
    if refused:
        result.extra["refused_appends"] = sorted(refused)
    if methods:
        result.extra["refused_methods"] = sorted(methods)
    return result


@given(parsers.parse("the store refuses the strict-write agent's append number {n:d}"))
def strict_write_store_refuses(sw_script: dict[str, Any], n: int) -> None:
    sw_script.setdefault(_REFUSED_APPENDS, set()).add(n)


@given("the store refuses every strict-write set_committed and record_error call")
def strict_write_store_refuses_commits(sw_script: dict[str, Any]) -> None:
    sw_script.setdefault(_REFUSED_METHODS, set()).update({"set_committed", "record_error"})


@when(parsers.re(r'the strict-write agent answers "(?P<text>[^"]*)"$'), target_fixture="sw_run")
def strict_write_answers(
    runtime: Runtime, store: RecordingStore, sw_script: dict[str, Any], text: str
) -> StrictWriteRun:
    sw_script["turns"] = [{"input": text}]
    return _run(runtime, store, sw_script)


@when(parsers.re(r'the strict-write agent answers "(?P<text>[^"]*)" while streaming$'),
      target_fixture="sw_run")
def strict_write_answers_streaming(
    runtime: Runtime, store: RecordingStore, sw_script: dict[str, Any], text: str
) -> StrictWriteRun:
    sw_script["turns"] = [{"input": text, "streaming": True}]
    return _run(runtime, store, sw_script)


@when(parsers.re(r'the strict-write agent answers "(?P<first>[^"]*)" '
                 r'and then "(?P<second>[^"]*)"$'),
      target_fixture="sw_run")
def strict_write_answers_twice(
    runtime: Runtime, store: RecordingStore, sw_script: dict[str, Any], first: str, second: str
) -> StrictWriteRun:
    sw_script["turns"] = [{"input": first}, {"input": second}]
    return _run(runtime, store, sw_script)


@when(parsers.re(r'the strict-write agent answers "(?P<first>[^"]*)" while streaming '
                 r'and then "(?P<second>[^"]*)"$'),
      target_fixture="sw_run")
def strict_write_answers_streaming_then(
    runtime: Runtime, store: RecordingStore, sw_script: dict[str, Any], first: str, second: str
) -> StrictWriteRun:
    sw_script["turns"] = [{"input": first, "streaming": True}, {"input": second}]
    return _run(runtime, store, sw_script)


@when("the strict-write agent is constructed", target_fixture="sw_run")
def strict_write_constructed(
    runtime: Runtime, store: RecordingStore, sw_script: dict[str, Any]
) -> StrictWriteRun:
    sw_script["turns"] = [{"input": "hello"}]
    return _run(runtime, store, sw_script)
