"""Step definitions of the ``strict-write`` profile (``features/strict-write``).

Every phrase says "strict-write" so it never collides with another profile's.
A scenario builds a script in the ``sw_script`` fixture (the agent, its
pipeline, its memory policy and what its tools and model do), runs it through
the runtime under test with the kit's recording proxy, and then judges what
the kit observed: the store's messages (read back through the proxy), the
model calls and events on the timeline, and the answer the caller got.

Pipeline tables have the columns ``task``, ``kind`` and ``writes``. A
``writes`` cell lists operations separated by ``;``:

- ``data KEY = JSON`` (set), ``data KEY ~ JSON`` (change in place), ``data KEY -``
  (remove);
- ``output KEY += JSON`` (append an item), ``output KEY[i] ~ JSON`` (change item
  ``i`` in place), ``output KEY[i] -`` (remove item ``i``), ``output KEY -`` (remove
  the key);
- ``action NAME`` (add an action).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_bdd import given, parsers, then, when

from memconform.adapters.contract import Capability
from memconform.adapters.faults import RefusingStore
from memconform.adapters.proxy import RecordingStore
from memconform.secret_syntaxes import secret_syntax
from memconform.simulator.environment import ScriptError
from memconform.simulator.runtime import Runtime, observe
from memconform.simulator.strict_write import (
    ACTIONS_KEY,
    END_USER_NOTICE,
    META,
    TASK_ERRORS_KEY,
    fold_memory,
    model_view,
)
from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.values import JSONValue, Message

__all__ = ["StrictWriteRun", "parse_writes"]

_POLICY = ("memoryPolicy", "strictWriteDiscipline")
_WRITE = re.compile(
    r"^(?:(?P<action>action)\s+(?P<name>\S+)"
    r"|data\s+(?P<dkey>[^\s=~\-][^\s]*)\s*(?P<dop>=|~|-)\s*(?P<dvalue>.*)"
    r"|output\s+(?P<okey>[^\s\[]+)(?:\[(?P<index>\d+)\])?\s*(?P<oop>\+=|~|-)\s*(?P<ovalue>.*))$"
)


def _split(cell: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    escaped = False
    for char in cell:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == ";" and not quoted:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def _json(text: str, where: str) -> JSONValue:
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(f"{where}: not JSON: {text!r}") from None


def parse_writes(cell: str) -> list[dict[str, JSONValue]]:
    """Turn a ``writes`` cell into the script's write operations."""
    ops: list[dict[str, JSONValue]] = []
    for part in _split(cell):
        match = _WRITE.match(part)
        if match is None:
            raise ValueError(f"writes: cannot read {part!r}")
        if match["action"]:
            ops.append({"op": "action", "action": match["name"]})
        elif match["dkey"]:
            op = {"=": "set", "~": "change", "-": "remove"}[match["dop"]]
            entry: dict[str, JSONValue] = {"op": op, "data": match["dkey"]}
            if op != "remove":
                entry["value"] = _json(match["dvalue"], part)
            ops.append(entry)
        else:
            op = {"+=": "append", "~": "change", "-": "remove"}[match["oop"]]
            entry = {"op": op, "output": match["okey"]}
            if match["index"] is not None:
                entry["index"] = int(match["index"])
            if op != "remove":
                entry["item"] = _json(match["ovalue"], part)
            ops.append(entry)
    return ops


@dataclass
class StrictWriteRun:
    """The outcome of running the scenario's script: the observation, or the
    rejection when the runtime refused the script."""

    script: dict[str, Any]
    observation: dict[str, Any] | None = None
    rejection: Exception | None = None
    store_calls_before: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def turn(self, n: int) -> dict[str, Any]:
        """The caller's answer for turn ``n`` (from 1)."""
        if self.observation is None:
            raise Mismatch("the strict-write run", "an observation", f"rejected: {self.rejection}")
        turns = self.observation.get("turns") or []
        if not 1 <= n <= len(turns):
            raise Mismatch(f"strict-write turn {n}", "the turn in the observation", repr(turns))
        turn: dict[str, Any] = turns[n - 1]
        return turn

    @property
    def timeline(self) -> list[dict[str, Any]]:
        """The kit's timeline of the run."""
        if self.observation is None:
            return []
        entries: list[dict[str, Any]] = self.observation.get("timeline", [])
        return entries


def _policy(script: dict[str, Any]) -> dict[str, Any]:
    policy: dict[str, Any] = script.setdefault(_POLICY[0], {}).setdefault(_POLICY[1], {})
    return policy


def _task_kind(script: Mapping[str, Any], task: str) -> str:
    for entry in script["pipeline"]:
        if entry["id"] == task:
            return str(entry.get("kind", "write"))
    raise ValueError(f"strict-write pipeline has no task {task!r}")


def _stored(store: RecordingStore, thread: str) -> list[Message]:
    if store.has(Capability.COMMIT_FLAGS):
        return store.messages(thread, include_uncommitted=True)
    return store.messages(thread)


def _visible(store: RecordingStore, thread: str) -> dict[str, JSONValue]:
    return model_view(store.messages(thread))


def _meta(message: Message) -> Mapping[str, Any]:
    meta = message.metadata.get(META)
    return meta if isinstance(meta, Mapping) else {}


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


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
    _policy(sw_script).update({"enabled": True, "onFailure": mode})


@given("strict write is enabled without naming onFailure")
def strict_write_enabled_default(sw_script: dict[str, Any], store: RecordingStore) -> None:
    require_capability(store.capabilities, Capability.COMMIT_FLAGS)
    _policy(sw_script).update({"enabled": True})


@given(parsers.parse('strict write is disabled with onFailure "{mode}"'))
def strict_write_disabled(sw_script: dict[str, Any], mode: str) -> None:
    _policy(sw_script).update({"enabled": False, "onFailure": mode})


@given("the strict-write agent has no memory policy")
def strict_write_no_policy(sw_script: dict[str, Any]) -> None:
    sw_script.pop(_POLICY[0], None)


@given(parsers.parse("the strict-write continueOnFailure setting is {value}"))
def strict_write_continue(sw_script: dict[str, Any], value: str) -> None:
    if value not in ("on", "off"):
        raise ValueError(f"continueOnFailure must be 'on' or 'off', got {value!r}")
    _policy(sw_script)["continueOnFailure"] = value == "on"


@given(parsers.parse('the strict-write behavior rule turns "{when}" into "{action}"'))
def strict_write_behavior_rule(sw_script: dict[str, Any], when: str, action: str) -> None:
    sw_script["behaviorRules"].append({"when": when, "actions": [action]})


@given(parsers.parse('the strict-write output set answers "{action}" with "{text}"'))
def strict_write_output_set(sw_script: dict[str, Any], action: str, text: str) -> None:
    sw_script["outputSet"].append({"action": action, "text": text})


def _add_outcome(script: dict[str, Any], task: str, outcome: dict[str, Any]) -> None:
    section = "model" if _task_kind(script, task) == "llm" else "tools"
    script[section].setdefault(task, []).append(outcome)


@given(parsers.parse('the strict-write task "{task}" fails on its next call with "{message}"'))
def strict_write_task_fails(sw_script: dict[str, Any], task: str, message: str) -> None:
    _add_outcome(sw_script, task, {"fail": {"type": "LifecycleException", "message": message}})


@given(parsers.parse('the strict-write task "{task}" fails on its next call with the error:'))
def strict_write_task_fails_with(sw_script: dict[str, Any], task: str, docstring: str) -> None:
    error = _json(docstring, f"error of {task}")
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
    if _task_kind(sw_script, task) == "llm":
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
    except ScriptError as exc:
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


# -- the caller's answer -------------------------------------------------------------------


@then(parsers.parse('the strict-write turn {n:d} ends in state "{state}"'))
@decides("SW-001", "SW-002", "SW-015", "SW-026", "SW-028")
def strict_write_turn_state(sw_run: StrictWriteRun, n: int, state: str) -> None:
    expect_equal(f"state of strict-write turn {n}", state, sw_run.turn(n).get("state"))


@then(parsers.parse(
    "the strict-write turn {n:d} ends in state \"ERROR\" because the store refused a write"
))
@decides("SW-033")
def strict_write_refused_turn(sw_run: StrictWriteRun, n: int) -> None:
    appends = [e for e in sw_run.timeline if e.get("kind") == "store" and e.get("name") == "append"]
    refused = sw_run.extra.get("refused_appends") or []
    if not refused or len(appends) < max(refused):
        raise Mismatch("the kit's refusal", f"append number {refused} reached the store",
                       f"{len(appends)} appends")
    turn = sw_run.turn(n)
    expect_equal(f"state of strict-write turn {n} after the store refused a write", "ERROR",
                 turn.get("state"))


@then(parsers.parse(
    'the strict-write turn {n:d} stops at task "{task}" because the store refused to hide '
    "its writes"
))
@decides("SW-043")
def strict_write_refused_commit_turn(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                                     task: str) -> None:
    """Whether the later tasks ran is read from the kit's tools, model requests and
    store, never from the turn's own ``tasks`` list (a claim)."""
    refused = [e for e in sw_run.timeline if e.get("kind") == "store"
               and e.get("name") in ("set_committed", "record_error")]
    if not refused:
        raise Mismatch("the kit's refusal", "the runtime asked the store to hide the failed "
                       "task's writes (set_committed) and was refused",
                       "no set_committed or record_error call")
    turn = sw_run.turn(n)
    names = [str(entry["id"]) for entry in sw_run.script["pipeline"]]
    if task not in names:
        raise ValueError(f"strict-write pipeline has no task {task!r}")
    later = [t for t in names[names.index(task) + 1:] if _task_ran(sw_run, store, t, n)]
    if later:
        raise Mismatch(f"tasks after {task!r} in strict-write turn {n} after the store refused "
                       "set_committed", "none run", _dump(later))
    expect_equal(f"state of strict-write turn {n} after the store refused set_committed",
                 "ERROR", turn.get("state"))


@then(parsers.parse("the strict-write reply of turn {n:d} is empty"))
@decides("SW-015")
def strict_write_reply_empty(sw_run: StrictWriteRun, n: int) -> None:
    expect_equal(f"reply of strict-write turn {n}", "", sw_run.turn(n).get("reply"))


@then(parsers.parse('the strict-write reply of turn {n:d} is "{text}"'))
@decides("SW-026", "SW-029")
def strict_write_reply(sw_run: StrictWriteRun, n: int, text: str) -> None:
    """``\\n`` in ``text`` stands for a line break between reply parts."""
    expected = text.replace("\\n", "\n")
    expect_equal(f"reply of strict-write turn {n}", expected, sw_run.turn(n).get("reply"))


def _task_errors(sw_run: StrictWriteRun, n: int) -> list[dict[str, Any]]:
    errors = sw_run.turn(n).get("taskErrors") or []
    return list(errors)


@then(parsers.parse('the strict-write caller gets one task error for "{task}" in turn {n:d}'))
@decides("SW-011", "SW-016")
def strict_write_caller_entry(sw_run: StrictWriteRun, task: str, n: int) -> None:
    errors = _task_errors(sw_run, n)
    shapes = [(e.get("type"), e.get("taskId")) for e in errors]
    expect_equal(f"taskErrors of strict-write turn {n}", [("errorDigest", task)], shapes)
    text = errors[0].get("text")
    prefix = f"Task 'eddi://{task}' failed: "
    if not isinstance(text, str) or not text.startswith(prefix):
        raise Mismatch(f"taskErrors text of strict-write turn {n}", prefix + "<reason>", repr(text))


@then(parsers.parse("the strict-write caller gets no task error in turn {n:d}"))
@decides("SW-012")
def strict_write_caller_nothing(sw_run: StrictWriteRun, n: int) -> None:
    expect_equal(f"taskErrors of strict-write turn {n}", [], _task_errors(sw_run, n))


def _error_text(sw_run: StrictWriteRun, n: int) -> str:
    errors = _task_errors(sw_run, n)
    if len(errors) != 1 or not isinstance(errors[0].get("text"), str):
        raise Mismatch(f"taskErrors of strict-write turn {n}", "one entry with a text",
                       repr(errors))
    return str(errors[0]["text"])


@then(parsers.parse('the strict-write task error of turn {n:d} reads "{text}"'))
@decides("SW-016", "SW-018", "SW-021")
def strict_write_error_reads(sw_run: StrictWriteRun, n: int, text: str) -> None:
    expect_equal(f"digest text of strict-write turn {n}", text, _error_text(sw_run, n))


@then(parsers.parse("the strict-write task error of turn {n:d} is at most {limit:d} characters"))
@decides("SW-022", "SW-023")
def strict_write_error_length(sw_run: StrictWriteRun, n: int, limit: int) -> None:
    text = _error_text(sw_run, n)
    if len(text) > limit:
        raise Mismatch(f"length of the strict-write digest of turn {n}",
                       f"at most {limit} characters", f"{len(text)}: {text!r}")


@then(parsers.parse('the strict-write task error of turn {n:d} does not contain "{fragment}"'))
@decides("SW-019", "SW-020", "SW-023", "SW-024")
def strict_write_error_lacks(sw_run: StrictWriteRun, n: int, fragment: str) -> None:
    text = _error_text(sw_run, n)
    if fragment in text:
        raise Mismatch(f"strict-write digest of turn {n}", f"no {fragment!r}", text)


@then(parsers.parse('the strict-write task error of turn {n:d} contains "{fragment}"'))
@decides("SW-019", "SW-020", "SW-022")
def strict_write_error_has(sw_run: StrictWriteRun, n: int, fragment: str) -> None:
    text = _error_text(sw_run, n)
    if fragment not in text:
        raise Mismatch(f"strict-write digest of turn {n}", f"containing {fragment!r}", text)


@then(parsers.parse('the strict-write task error of turn {n:d} keeps no secret of the syntax '
                    '"{syntax}"'))
@decides("SW-019", "SW-031")
def strict_write_error_keeps_no_secret(sw_run: StrictWriteRun, n: int, syntax: str) -> None:
    text = _error_text(sw_run, n)
    kept = [s for s in secret_syntax(syntax).secrets if s in text]
    if kept:
        raise Mismatch(f"strict-write digest of turn {n}", f"none of {kept!r}", text)


def _strings(value: Any) -> list[str]:
    """Every text inside ``value`` (keys included), however deeply nested."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return []


def _kept_secrets(syntax: str, value: Any) -> list[str]:
    texts = _strings(value)
    return [s for s in secret_syntax(syntax).secrets if any(s in t for t in texts)]


@then(parsers.parse('the strict-write stream of turn {n:d} keeps no secret of the syntax '
                    '"{syntax}"'))
@decides("SW-019", "SW-031")
def strict_write_stream_keeps_no_secret(sw_run: StrictWriteRun, n: int, syntax: str) -> None:
    """Every event emitted for turn ``n`` (the ``task_failed`` event and any other)."""
    events = [e for e in sw_run.timeline if e["kind"] == "event" and e.get("turn") == n]
    if not any(e["name"] == "task_failed" for e in events):
        raise Mismatch(f"a task_failed event of strict-write turn {n}", "one event",
                       _dump(events), rules=("SW-024",))
    kept = _kept_secrets(syntax, events)
    if kept:
        raise Mismatch(f"stream events of strict-write turn {n}", f"none of {kept!r}",
                       _dump(events))


@then(parsers.parse('the strict-write stored digest of turn {n:d} keeps no secret of the syntax '
                    '"{syntax}"'))
@decides("SW-019", "SW-031")
def strict_write_stored_digest_keeps_no_secret(sw_run: StrictWriteRun, store: RecordingStore,
                                               n: int, syntax: str) -> None:
    """Every stored ``taskErrors`` message of step ``n``, committed or not, read back."""
    stored = [m.to_json() for m in _stored(store, sw_run.script["thread"])
              if _meta(m).get("step") == n and _meta(m).get("key") == TASK_ERRORS_KEY]
    if not stored:
        raise Mismatch(f"the stored digest of strict-write turn {n}", "a taskErrors message",
                       "none", rules=("SW-009",))
    kept = _kept_secrets(syntax, stored)
    if kept:
        raise Mismatch(f"the stored digest of strict-write turn {n}", f"none of {kept!r}",
                       _dump(stored))


def _model_requests(sw_run: StrictWriteRun, task: str, n: int) -> list[Any]:
    """What the kit's fake model ``task`` was sent in turn ``n``, every call."""
    return [e.get("request") for e in sw_run.timeline
            if e["kind"] == "model" and e["name"] == task
            and isinstance(e.get("request"), dict) and e["request"].get("turn") == n]


@then(parsers.parse('in turn {n:d} the strict-write model "{task}" is sent no secret of the '
                    'syntax "{syntax}"'))
@decides("SW-019", "SW-031")
def strict_write_request_keeps_no_secret(sw_run: StrictWriteRun, task: str, n: int,
                                         syntax: str) -> None:
    """The requests the fake model received, as the kit recorded them."""
    requests = _model_requests(sw_run, task, n)
    if not requests:
        raise Mismatch(f"strict-write model task {task} in turn {n}", "a model call",
                       "no call", rules=("SW-009",))
    kept = _kept_secrets(syntax, requests)
    if kept:
        raise Mismatch(f"what strict-write model {task} was sent in turn {n}",
                       f"none of {kept!r}", _dump(requests))


@then(parsers.parse('the strict-write caller\'s reason of turn {n:d} is neither stored nor '
                    'sent to the model "{task}" in turn {m:d}'))
@decides("SW-017")
def strict_write_reason_caller_only(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                                    task: str, m: int) -> None:
    """The caller's cleaned reason (or, where it is part of the raw error that stays in
    memory without strict write, the whole digest text) appears in no stored message and
    in no request of turn ``m``."""
    text = _error_text(sw_run, n)
    reason = text.split("failed: ", 1)[1] if "failed: " in text else ""
    raw = _strings([o.get("fail") for outcomes in (sw_run.script.get("model") or {}).values()
                    for o in outcomes] + [o.get("fail") for outcomes in
                    (sw_run.script.get("tools") or {}).values() for o in outcomes])
    wanted = reason if reason and not any(reason in r for r in raw) else text
    stored = [x.to_json() for x in _stored(store, sw_run.script["thread"])]
    places = {"the stored messages": stored,
              f"the requests of turn {m}": _model_requests(sw_run, task, m)}
    found = [name for name, value in places.items() if any(wanted in t for t in _strings(value))]
    if found:
        raise Mismatch(f"the caller's reason of strict-write turn {n}",
                       f"absent from {', '.join(places)}", f"{wanted!r} in {', '.join(found)}")


@then(parsers.parse('the strict-write task error of turn {n:d} names the task "{task}"'))
@decides("SW-018")
def strict_write_error_names_task(sw_run: StrictWriteRun, n: int, task: str) -> None:
    text = _error_text(sw_run, n)
    prefix = f"Task 'eddi://{task}' failed: "
    if not text.startswith(prefix):
        raise Mismatch(f"strict-write digest of turn {n}", f"starting with {prefix!r}", text)


@then(parsers.parse("the strict-write end user sees only the generic notice in turn {n:d}"))
@decides("SW-025")
def strict_write_end_user(sw_run: StrictWriteRun, n: int) -> None:
    turn = sw_run.turn(n)
    expect_equal(f"end-user notice of strict-write turn {n}", END_USER_NOTICE,
                 turn.get("endUserNotice"))


@then(parsers.parse("the strict-write stream of turn {n:d} has a task_failed event "
                    "with the caller's reason"))
@decides("SW-024")
def strict_write_stream_event(sw_run: StrictWriteRun, n: int) -> None:
    text = _error_text(sw_run, n)
    events = [e for e in sw_run.timeline
              if e["kind"] == "event" and e["name"] == "task_failed" and e.get("turn") == n]
    if len(events) != 1:
        raise Mismatch(f"task_failed events of strict-write turn {n}", "exactly one",
                       _dump(events))
    reason = events[0].get("reason")
    prefix = text[: text.find("failed: ") + len("failed: ")]
    full = prefix + reason if isinstance(reason, str) else None
    same = full is not None and bool(reason) and (
        full == text or (text.endswith("...") and full.startswith(text[:-3].rstrip()))
    )
    if not same:
        raise Mismatch(f"reason of the task_failed event of strict-write turn {n}",
                       f"the reason of {text!r}", repr(reason))


@then(parsers.parse("the strict-write stream of turn {n:d} has no task_failed event"))
@decides("SW-012")
def strict_write_stream_nothing(sw_run: StrictWriteRun, n: int) -> None:
    events = [e for e in sw_run.timeline
              if e["kind"] == "event" and e["name"] == "task_failed" and e.get("turn") == n]
    expect_equal(f"task_failed events of strict-write turn {n}", [], events)


@then(parsers.parse('the strict-write configuration is rejected naming "{name}"'))
@decides("SW-003")
def strict_write_rejected(sw_run: StrictWriteRun, name: str) -> None:
    if sw_run.rejection is None:
        raise Mismatch("strict-write configuration", f"rejected naming {name}", "accepted")
    if name not in str(sw_run.rejection):
        raise Mismatch("strict-write rejection", f"naming {name}", str(sw_run.rejection))


@then("nothing reached the strict-write store")
@decides("SW-003")
def strict_write_nothing_stored(sw_run: StrictWriteRun, store: RecordingStore) -> None:
    calls = store.timeline.of("store")[sw_run.store_calls_before:]
    writes = [c.name for c in calls if c.name in ("append", "set_committed")]
    expect_equal("store writes of the rejected strict-write agent", [], writes)


# -- tasks ---------------------------------------------------------------------------------


def _task_ran(sw_run: StrictWriteRun, store: RecordingStore, task: str, n: int) -> bool:
    for entry in sw_run.timeline:
        args = entry.get("args")
        if (entry["kind"] == "tool" and isinstance(args, dict)
                and args.get("task") == task and args.get("turn") == n):
            return True
        if entry["kind"] == "model" and entry["name"] == task:
            request = entry.get("request")
            if isinstance(request, dict) and request.get("turn") == n:
                return True
    thread = sw_run.script["thread"]
    return any(
        _meta(m).get("task") == task and _meta(m).get("step") == n for m in _stored(store, thread)
    )


@then(parsers.parse('the strict-write task "{task}" does not run in turn {n:d}'))
@decides("SW-002", "SW-015", "SW-028")
def strict_write_task_not_run(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                              n: int) -> None:
    if _task_ran(sw_run, store, task, n):
        raise Mismatch(f"strict-write task {task} in turn {n}", "not run", "it ran")


@then(parsers.parse('the strict-write task "{task}" runs in turn {n:d}'))
@decides("SW-026")
def strict_write_task_run(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                          n: int) -> None:
    if not _task_ran(sw_run, store, task, n):
        raise Mismatch(f"strict-write task {task} in turn {n}", "run", "it did not run")


@then(parsers.parse('the strict-write model task "{task}" is called again in turn {n:d}'))
@decides("SW-037")
def strict_write_model_called_again(sw_run: StrictWriteRun, task: str, n: int) -> None:
    """The kit's fake model received a call of ``task`` for turn ``n``."""
    calls = [e for e in sw_run.timeline if e["kind"] == "model" and e["name"] == task
             and isinstance(e.get("request"), dict) and e["request"].get("turn") == n]
    if not calls:
        raise Mismatch(f"a call of the model task {task} in turn {n}", "at least one",
                       "none on the timeline")


# -- memory --------------------------------------------------------------------------------


def _written_by(store: RecordingStore, sw_run: StrictWriteRun, task: str, n: int) -> list[Message]:
    thread = sw_run.script["thread"]
    written = [m for m in _stored(store, thread)
               if _meta(m).get("task") == task and _meta(m).get("step") == n]
    if not written:
        raise Mismatch(f"memory written by strict-write task {task} in turn {n}",
                       "stored messages", "none")
    return written


@then(parsers.parse('everything the strict-write task "{task}" wrote in turn {n:d} '
                    "is stored but uncommitted"))
@decides("SW-001", "SW-004", "SW-005", "SW-007")
def strict_write_all_uncommitted(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                                 n: int) -> None:
    written = _written_by(store, sw_run, task, n)
    committed = [m for m in written if m.committed]
    if committed:
        raise Mismatch(f"commit flags of what strict-write task {task} wrote in turn {n}",
                       "all uncommitted", _dump([m.to_json() for m in committed]))


@then(parsers.parse('everything the strict-write task "{task}" wrote in turn {n:d} '
                    "is stored and committed"))
@decides("SW-001", "SW-002", "SW-007", "SW-013")
def strict_write_all_committed(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                               n: int) -> None:
    written = _written_by(store, sw_run, task, n)
    hidden = [m for m in written if not m.committed]
    if hidden:
        raise Mismatch(f"commit flags of what strict-write task {task} wrote in turn {n}",
                       "all committed", _dump([m.to_json() for m in hidden]))


def _step_view(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> dict[str, Any]:
    view = _visible(store, sw_run.script["thread"])
    steps = view["steps"]
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict) and step.get("step") == n:
            return step
    return {"step": n, "input": None, "data": {}, "output": {}}


@then(parsers.parse('the strict-write data "{key}" of turn {n:d} is visible as {value}'))
@decides("SW-014")
def strict_write_data_visible(sw_run: StrictWriteRun, store: RecordingStore, key: str, n: int,
                              value: str) -> None:
    data = _step_view(sw_run, store, n)["data"]
    expect_equal(f"model-visible data {key!r} of strict-write turn {n}",
                 _json(value, "expected value"), data.get(key, "<absent>"))


@then(parsers.parse('the strict-write data "{key}" of turn {n:d} is not visible'))
@decides("SW-007")
def strict_write_data_hidden(sw_run: StrictWriteRun, store: RecordingStore, key: str,
                             n: int) -> None:
    data = _step_view(sw_run, store, n)["data"]
    if key in data:
        raise Mismatch(f"model-visible data of strict-write turn {n}", f"no {key!r}",
                       _dump(data))


@then(parsers.parse('the strict-write output "{key}" of turn {n:d} is not visible'))
@decides("SW-008")
def strict_write_output_hidden(sw_run: StrictWriteRun, store: RecordingStore, key: str,
                               n: int) -> None:
    output = _step_view(sw_run, store, n)["output"]
    if key in output:
        raise Mismatch(f"model-visible output of strict-write turn {n}", f"no {key!r}",
                       _dump(output))


@then(parsers.parse('the strict-write model-visible memory does not contain "{fragment}"'))
@decides("SW-008", "SW-012")
def strict_write_memory_lacks(sw_run: StrictWriteRun, store: RecordingStore,
                              fragment: str) -> None:
    view = _dump(_visible(store, sw_run.script["thread"]))
    if fragment in view:
        raise Mismatch("strict-write model-visible memory", f"no {fragment!r}", view)


def _digests(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> list[Any]:
    items: list[Any] = _step_view(sw_run, store, n)["output"].get(TASK_ERRORS_KEY, [])
    return items


@then(parsers.parse('the strict-write memory of turn {n:d} holds the digest for "{task}"'))
@decides("SW-001", "SW-009", "SW-011", "SW-018")
def strict_write_digest_stored(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                               task: str) -> None:
    digests = _digests(sw_run, store, n)
    expected = _error_text(sw_run, n)
    wanted = {"type": "errorDigest", "taskId": task, "text": expected}
    if not any(isinstance(d, dict) and {k: d.get(k) for k in wanted} == wanted for d in digests):
        raise Mismatch(f"digests in model-visible memory of strict-write turn {n}",
                       _dump([wanted]), _dump(digests))


@then(parsers.parse('the strict-write memory of turn {n:d} holds {count:d} digests'))
@decides("SW-030")
def strict_write_digest_count(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                              count: int) -> None:
    digests = _digests(sw_run, store, n)
    expect_equal(f"number of digests in model-visible memory of strict-write turn {n}",
                 count, len(digests))


@then(parsers.parse("the strict-write memory of turn {n:d} holds no digest"))
@decides("SW-002", "SW-012", "SW-013", "SW-014", "SW-017")
def strict_write_no_digest(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> None:
    digests = _digests(sw_run, store, n)
    expect_equal(f"digests in model-visible memory of strict-write turn {n}", [], digests)
    thread = sw_run.script["thread"]
    stored = [m for m in _stored(store, thread)
              if _meta(m).get("step") == n and _meta(m).get("key") == TASK_ERRORS_KEY]
    expect_equal(f"taskErrors stored for strict-write turn {n}", [],
                 [m.to_json() for m in stored])


def _actions(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> list[str]:
    steps = fold_memory(store.messages(sw_run.script["thread"]))
    step = steps.get(n)
    return [] if step is None else [str(a) for a in step.output_items(ACTIONS_KEY)]


@then(parsers.parse('the strict-write actions of turn {n:d} include "{action}"'))
@decides("SW-010", "SW-011", "SW-013", "SW-029")
def strict_write_action_emitted(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                                action: str) -> None:
    actions = _actions(sw_run, store, n)
    if action not in actions:
        raise Mismatch(f"stored actions of strict-write turn {n}", f"including {action!r}",
                       repr(actions))


@then(parsers.parse('the strict-write actions of turn {n:d} are {actions}'))
@decides("SW-008", "SW-010", "SW-013", "SW-014", "SW-017", "SW-030")
def strict_write_actions_exact(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                               actions: str) -> None:
    expect_equal(f"stored actions of strict-write turn {n}", _json(actions, "actions"),
                 _actions(sw_run, store, n))


@then(parsers.parse("the strict-write actions of turn {n:d} name no failed task"))
@decides("SW-001", "SW-002", "SW-014", "SW-017")
def strict_write_no_failure_action(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> None:
    thread = sw_run.script["thread"]
    failed = [m.text for m in _stored(store, thread)
              if _meta(m).get("step") == n and "task_failed_" in m.text]
    expect_equal(f"task_failed actions stored for strict-write turn {n}", [], failed)


# -- what the model saw --------------------------------------------------------------------


def _model_request(sw_run: StrictWriteRun, task: str, n: int) -> str:
    for entry in sw_run.timeline:
        request = entry.get("request")
        if (entry["kind"] == "model" and entry["name"] == task and isinstance(request, dict)
                and request.get("turn") == n):
            return _dump(request)
    raise Mismatch(f"strict-write model task {task} in turn {n}", "a model call", "no call")


@then(parsers.parse('in turn {n:d} the strict-write model "{task}" sees "{fragment}"'))
@decides("SW-005", "SW-006", "SW-009", "SW-013", "SW-014", "SW-027", "SW-029")
def strict_write_model_sees(sw_run: StrictWriteRun, task: str, n: int, fragment: str) -> None:
    request = _model_request(sw_run, task, n)
    if fragment not in request:
        raise Mismatch(f"view of strict-write model {task} in turn {n}",
                       f"containing {fragment!r}", request)


@then(parsers.parse('in turn {n:d} the strict-write model "{task}" does not see "{fragment}"'))
@decides("SW-005", "SW-006", "SW-017", "SW-027")
def strict_write_model_blind(sw_run: StrictWriteRun, task: str, n: int, fragment: str) -> None:
    request = _model_request(sw_run, task, n)
    if fragment in request:
        raise Mismatch(f"view of strict-write model {task} in turn {n}",
                       f"no {fragment!r}", request)


# -- the store's flags, read back ----------------------------------------------------------


@then(parsers.parse('the strict-write store reads back the raw error of "{task}" in turn {n:d} '
                    "as uncommitted"))
@decides("SW-004")
def strict_write_flag_read_back(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                                n: int) -> None:
    thread = sw_run.script["thread"]
    key = f"{task}:error"
    everything = store.messages(thread, include_uncommitted=True)
    raw = [m for m in everything if _meta(m).get("key") == key and _meta(m).get("step") == n]
    expect_equal(f"commit flags of {key} read back with uncommitted included", [False],
                 [m.committed for m in raw])
    default = [m.id for m in store.messages(thread) if _meta(m).get("key") == key]
    expect_equal(f"{key} in the default read", [], default)
    keys = [(_meta(m).get("key"), _meta(m).get("step")) for m in everything]
    digest_at = [i for i, k in enumerate(keys) if k == (TASK_ERRORS_KEY, n)]
    raw_at = keys.index((key, n))
    if digest_at and raw_at > digest_at[0]:
        raise Mismatch(f"place of {key} in strict-write thread", "before the digest written "
                       "after it", _dump([list(k) for k in keys]))


@then(parsers.parse("the strict-write model-visible memory of turn {n:d}, digests aside, is:"))
@decides("SW-007", "SW-008", "SW-013")
def strict_write_memory_table(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                              datatable: list[list[str]]) -> None:
    """The table lists ``kind`` (data or output), ``key`` and ``value`` (JSON) of every
    model-visible entry of the step except the ``taskErrors`` digests."""
    header, *rows = datatable
    columns = [c.strip() for c in header]
    expected: list[tuple[str, str, JSONValue]] = []
    for row in rows:
        cells = dict(zip(columns, (c.strip() for c in row), strict=True))
        expected.append((cells["kind"], cells["key"], _json(cells["value"], cells["key"])))
    step = _step_view(sw_run, store, n)
    observed: list[tuple[str, str, JSONValue]] = [
        ("data", k, v) for k, v in sorted(step["data"].items())
    ] + [("output", k, v) for k, v in sorted(step["output"].items()) if k != TASK_ERRORS_KEY]
    if sorted(expected, key=_dump) != sorted(observed, key=_dump):
        raise Mismatch(
            f"model-visible memory of strict-write turn {n}",
            "\n".join(f"{k} | {key} | {_dump(v)}" for k, key, v in expected),
            "\n".join(f"{k} | {key} | {_dump(v)}" for k, key, v in observed),
        )
