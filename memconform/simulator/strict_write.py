"""The ``strict-write`` executor: document 001's lifecycle pipeline with commit flags.

A script describes an agent: its ``memoryPolicy.strictWriteDiscipline``
(``enabled``, ``onFailure``, ``continueOnFailure``), a ``pipeline`` of tasks that
runs once per conversation step (turn), ``behaviorRules``, an ``outputSet`` and
the ``turns`` (user inputs). See ``spec/schemas/script-strict-write.schema.json``.

Conversation memory lives in the store, one message per write, in the thread
``script["thread"]``. Each message carries in ``metadata["strictWrite"]`` the
step, the task that wrote it, what it is (``input``, ``data`` or ``output``),
its key and the operation (``set``, ``change``, ``remove``, ``append``). The
state of memory is the fold of the *committed* messages in store order
(:func:`fold_memory`); hiding a write is ``set_committed(..., False)``, never a
deletion, so a hidden write stays stored and can be inspected. Actions are the
items of the ``actions`` output key; digests are the items of ``taskErrors``. A
change or removal of an output item that is not there writes nothing.

Tasks (``kind``):

- ``write``: only its scripted ``writes``;
- ``tool``: its writes, then ``env.tool(tool or id, …)``; the result is stored as
  data ``<id>:result``;
- ``llm``: its writes, then ``env.model(id, {"turn", "view"})`` where ``view`` is
  :func:`model_view` over the store's committed messages; the reply is appended
  to the ``output`` key;
- ``behavior``: appends the actions of every behaviour rule whose ``when`` action
  is among this step's or the previous step's actions;
- ``output``: appends the ``outputSet`` text of every action of this step.

A ``tool`` or ``llm`` task fails when the script makes its call fail. The failed
task's raw error is stored as data ``<id>:error``; what happens next follows the
policy (:meth:`Executor.fail_task`). An error of type ``GracefulShutdown`` is a
graceful-shutdown interrupt: it is handled like any failure and the pipeline
never continues past it.

The answer (``spec/schemas/observation-strict-write.schema.json``) gives, per
turn, its ``state`` (``READY`` or ``ERROR``), the ``reply`` (empty on ``ERROR``),
the caller's ``taskErrors``, the step's ``actions``, the ``endUserNotice`` and
each task's status. Streaming turns emit a ``task_failed`` event per entry the
caller gets.

:class:`Behaviour` names every point where runtimes differ; :data:`SEED` is the
document's behaviour, :data:`EDDI_SNAPSHOT` the real EDDI code (variant
``eddi-snapshot``), and the mutants switch single points off.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memconform.contract import StoreError
from memconform.harness.environment import Environment, ScriptedFailure, ScriptError
from memconform.simulator.digest import (
    SEED_RULES,
    DigestRules,
    digest_text,
    failure_reason,
    raw_error_text,
    snapshot_digest_text,
)
from memconform.simulator.strict_write_script import (
    TASK_KINDS,
    Task,
    parse_output_set,
    parse_pipeline,
    parse_rules,
    parse_turns,
)
from memconform.values import JSONValue, Message, Role, freeze_json

__all__ = [
    "ACTIONS_KEY",
    "EDDI_SNAPSHOT",
    "END_USER_NOTICE",
    "META",
    "ON_FAILURE_MODES",
    "OUTPUT_KEY",
    "SEED",
    "SHUTDOWN_ERROR_TYPE",
    "TASK_ERRORS_KEY",
    "TASK_KINDS",
    "VARIANTS",
    "Behaviour",
    "Executor",
    "Policy",
    "StepMemory",
    "execute",
    "fold_memory",
    "model_view",
    "parse_policy",
    "run",
]

ON_FAILURE_MODES = ("digest", "exclude_all", "keep_all")
VARIANTS = ("eddi-snapshot",)
SHUTDOWN_ERROR_TYPE = "GracefulShutdown"
END_USER_NOTICE = "Something went wrong. Try again."
"""The only text an end user is shown for a failed turn."""

META = "strictWrite"
ACTIONS_KEY = "actions"
OUTPUT_KEY = "output"
TASK_ERRORS_KEY = "taskErrors"
_POLICY_PATH = "memoryPolicy.strictWriteDiscipline"


# -- configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """The strict-write settings, defaults applied."""

    enabled: bool = False
    on_failure: str = "digest"
    continue_on_failure: bool = False


def _flag(raw: Mapping[str, Any], name: str, default: bool) -> bool:
    value = raw.get(name, default)
    if not isinstance(value, bool):
        raise ScriptError(f"{_POLICY_PATH}.{name}: expected true or false, got {value!r}")
    return value


def parse_policy(script: Mapping[str, Any], *, reject_unknown_mode: bool = True) -> Policy:
    """Read ``memoryPolicy.strictWriteDiscipline`` (absent means every default).

    An ``onFailure`` outside :data:`ON_FAILURE_MODES` raises :class:`ScriptError`
    naming the field, whether or not strict write is enabled; with
    ``reject_unknown_mode=False`` it falls back to ``digest`` instead.
    """
    policy = script.get("memoryPolicy")
    if policy is None:
        return Policy()
    if not isinstance(policy, Mapping):
        raise ScriptError("memoryPolicy: expected an object")
    raw = policy.get("strictWriteDiscipline")
    if raw is None:
        return Policy()
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{_POLICY_PATH}: expected an object")
    mode = raw.get("onFailure", "digest")
    if mode not in ON_FAILURE_MODES:
        if reject_unknown_mode:
            raise ScriptError(
                f"{_POLICY_PATH}.onFailure: must be one of {', '.join(ON_FAILURE_MODES)}, "
                f"got {mode!r}"
            )
        mode = "digest"
    return Policy(
        enabled=_flag(raw, "enabled", False),
        on_failure=str(mode),
        continue_on_failure=_flag(raw, "continueOnFailure", False),
    )


@dataclass(frozen=True)
class Behaviour:
    """How the executor resolves each point where runtimes differ.

    Every switch defaults to what document 001 specifies:

    - ``digest_rules`` / ``snapshot_digest``: how the digest text is built;
    - ``reject_unknown_mode``: an unknown ``onFailure`` is an error (else ``digest``);
    - ``honour_enabled``: ``enabled: false`` switches strict write off;
    - ``keep_all_applies`` / ``keep_all_action``: ``keep_all`` is a strict mode and
      emits the failure action;
    - ``rollback_appended_items``, ``rollback_in_place_changes``, ``restore_removals``:
      how far the rollback reaches; ``rollback_only_failed_task``: it touches only
      the failed task's writes;
    - ``digest_after_rollback`` / ``digest_in_same_turn``: when the digest is stored;
    - ``bare_task_ids``: ``taskId`` and the action suffix use the bare name;
    - ``exclude_all_silent``: ``exclude_all`` tells the caller nothing;
    - ``caller_entry_by_default`` / ``caller_only_by_default``: without strict write
      the caller gets an entry that is never stored;
    - ``honour_continue`` / ``continue_by_default`` / ``stop_at_shutdown``: when the
      pipeline goes on after a failure;
    - ``persist_failed_turn``: a failed turn's step stays visible;
    - ``rerun_failed_model``: a model task that failed runs again in the next turn;
    - ``view_committed_only``: model calls see committed data only;
    - ``stream_clean_reason``: the stream event carries the cleaned reason;
    - ``generic_end_user_notice``: end users see a generic notice;
    - ``empty_reply_on_error``: a turn that ends in ``ERROR`` replies nothing (else it
      replies with the end-user notice);
    - ``task_type_field``: entries carry ``taskType`` (the EDDI code does);
    - ``swallow_store_refusals``: a memory write the store refused is taken as
      written (wrong: SW-033 wants the turn to end in ``ERROR``);
    - ``swallow_streamed_store_refusals``: the same, only while the turn streams;
    - ``swallow_commit_refusals``: a ``set_committed`` the store refused is taken
      as done (wrong: SW-043 wants the turn to stop and end in ``ERROR``);
    - ``refusal_as_task_failure``: a memory write the store refused fails its
      task like any error, so ``continueOnFailure`` runs the rest of the pipeline
      and the turn can end ``READY`` (wrong: SW-033 stops it in ``ERROR``).
    """

    digest_rules: DigestRules = SEED_RULES
    snapshot_digest: bool = False
    reject_unknown_mode: bool = True
    honour_enabled: bool = True
    keep_all_applies: bool = True
    keep_all_action: bool = True
    rollback_appended_items: bool = True
    rollback_in_place_changes: bool = True
    restore_removals: bool = True
    rollback_only_failed_task: bool = True
    digest_after_rollback: bool = True
    digest_in_same_turn: bool = True
    bare_task_ids: bool = True
    exclude_all_silent: bool = True
    caller_entry_by_default: bool = True
    caller_only_by_default: bool = True
    honour_continue: bool = True
    continue_by_default: bool = False
    stop_at_shutdown: bool = True
    persist_failed_turn: bool = True
    rerun_failed_model: bool = True
    view_committed_only: bool = True
    stream_clean_reason: bool = True
    generic_end_user_notice: bool = True
    empty_reply_on_error: bool = True
    task_type_field: bool = False
    swallow_store_refusals: bool = False
    swallow_streamed_store_refusals: bool = False
    swallow_commit_refusals: bool = False
    refusal_as_task_failure: bool = False


SEED = Behaviour()
EDDI_SNAPSHOT = Behaviour(
    snapshot_digest=True,
    reject_unknown_mode=False,
    keep_all_applies=False,
    rollback_appended_items=False,
    rollback_in_place_changes=False,
    restore_removals=False,
    caller_entry_by_default=False,
    honour_continue=False,
    task_type_field=True,
)
"""The EDDI snapshot (74a69d9b): keep_all applies nothing, rollback by key only,
no caller entry without strict write, no continueOnFailure, snapshot digest."""


# -- memory ---------------------------------------------------------------------------------


@dataclass
class StepMemory:
    """The visible state of one conversation step.

    ``data`` maps a key to ``(message id, value)``; ``outputs`` maps a key to a
    list of ``(message id, item)``, where the id is the message that first
    appended the item (in-place changes keep it).
    """

    step: int
    input: str | None = None
    data: dict[str, tuple[str, JSONValue]] = field(default_factory=dict)
    outputs: dict[str, list[tuple[str, JSONValue]]] = field(default_factory=dict)

    def output_items(self, key: str) -> list[JSONValue]:
        """The items under ``key`` (``[]`` when the key is absent)."""
        return [item for _, item in self.outputs.get(key, [])]


def _meta(message: Message) -> Mapping[str, Any] | None:
    meta = message.metadata.get(META) if isinstance(message.metadata, Mapping) else None
    return meta if isinstance(meta, Mapping) else None


def fold_memory(messages: Sequence[Message]) -> dict[int, StepMemory]:
    """Replay the committed strict-write messages of a thread, in order, into the
    visible state of each step. Uncommitted messages and messages without
    strict-write metadata are skipped."""
    steps: dict[int, StepMemory] = {}
    for message in messages:
        meta = _meta(message)
        if meta is None or not message.committed:
            continue
        step_no = int(meta.get("step", 0))
        step = steps.setdefault(step_no, StepMemory(step_no))
        kind, key, op = meta.get("kind"), str(meta.get("key", "")), meta.get("op")
        value = message.parts[0] if message.parts else None
        if kind == "input":
            step.input = message.text
        elif kind == "data":
            if op == "remove":
                step.data.pop(key, None)
            else:
                step.data[key] = (message.id, value)
        elif kind == "output":
            items = step.outputs.get(key)
            target = meta.get("target")
            if op == "append":
                step.outputs.setdefault(key, []).append((message.id, value))
            elif op == "change" and items is not None:
                step.outputs[key] = [(i, value if i == target else v) for i, v in items]
            elif op == "remove" and items is not None:
                if target is None:
                    del step.outputs[key]
                else:
                    step.outputs[key] = [(i, v) for i, v in items if i != target]
    return dict(sorted(steps.items()))


def model_view(messages: Sequence[Message]) -> dict[str, JSONValue]:
    """What a model task is shown: for each step, its input, its committed data
    and its outputs that were not rolled back (error digests included, under
    ``taskErrors``), oldest step first.

    Built only from committed messages: an uncommitted message never contributes,
    whatever the list passed in holds. Actions are routing information for
    behaviour rules and are never shown.
    """
    view: list[JSONValue] = []
    for step in fold_memory(messages).values():
        view.append(
            {
                "step": step.step,
                "input": step.input,
                "data": {k: v for k, (_, v) in step.data.items()},
                "output": {
                    k: [item for _, item in items]
                    for k, items in step.outputs.items()
                    if k != ACTIONS_KEY
                },
            }
        )
    return {"steps": view}


# -- execution --------------------------------------------------------------------------------


@dataclass
class _Turn:
    number: int
    input: str
    streaming: bool
    state: str = "READY"
    task_errors: list[dict[str, JSONValue]] = field(default_factory=list)
    tasks: list[dict[str, JSONValue]] = field(default_factory=list)
    late_digests: list[dict[str, JSONValue]] = field(default_factory=list)


class Executor:
    """Runs one strict-write script against ``env``; :meth:`run` returns the
    caller's observation. ``behaviour`` selects the variant or a mutant."""

    def __init__(
        self, script: Mapping[str, Any], env: Environment, behaviour: Behaviour = SEED
    ) -> None:
        self.env = env
        self.behaviour = behaviour
        thread = script.get("thread")
        if not isinstance(thread, str) or not thread:
            raise ScriptError("thread: expected the thread id as non-empty text")
        self.thread = thread
        self.policy = parse_policy(script, reject_unknown_mode=behaviour.reject_unknown_mode)
        self.pipeline = parse_pipeline(script)
        self.rules = parse_rules(script)
        self.output_set = parse_output_set(script)
        self.turns = parse_turns(script)
        if self.mode is not None and not env.store.has("commit-flags"):
            raise ScriptError(
                f"{_POLICY_PATH}.enabled: strict write needs a store declaring 'commit-flags'"
            )
        self._log: list[Message] = []
        self._streaming = False

    # -- policy ------------------------------------------------------------------------------

    @property
    def mode(self) -> str | None:
        """The effective failure mode, ``None`` when strict write is off."""
        enabled = self.policy.enabled or not self.behaviour.honour_enabled
        if not enabled:
            return None
        if self.policy.on_failure == "keep_all" and not self.behaviour.keep_all_applies:
            return None
        return self.policy.on_failure

    @property
    def continues(self) -> bool:
        """Whether the remaining tasks run after a failure."""
        if self.behaviour.continue_by_default:
            return True
        return (
            self.mode is not None
            and self.policy.continue_on_failure
            and self.behaviour.honour_continue
        )

    # -- memory writes --------------------------------------------------------------------------

    def _write(
        self, step: int, task: str | None, kind: str, key: str, op: str,
        value: JSONValue = None, target: str | None = None, *, has_value: bool = True,
    ) -> Message:
        value = freeze_json(value)
        meta: dict[str, JSONValue] = {
            "step": step, "task": task, "kind": kind, "key": key, "op": op,
        }
        role: Role
        if target is not None:
            meta["target"] = target
        if kind == "input":
            role, text = "user", str(value)
        elif kind == "output" and key == OUTPUT_KEY:
            role, text = "assistant", _item_text(value)
        else:
            role, text = "system", f"{key} {op} {_item_text(value)}".rstrip()
        message = Message(
            id=self.env.ids.next("sw"),
            role=role,
            text=text,
            parts=(value,) if has_value and kind != "input" else (),
            turn_id=f"step-{step}",
            metadata={META: meta},
        )
        try:
            self.env.store.append(self.thread, [message])
        except StoreError:
            swallowed = self.behaviour.swallow_store_refusals or (
                self.behaviour.swallow_streamed_store_refusals and self._streaming
            )
            if not swallowed:
                raise
        self._log.append(message)
        return message

    def _step(self, step: int) -> StepMemory:
        return fold_memory(self._log).get(step, StepMemory(step))

    def _set_committed(self, ids: Sequence[str], committed: bool) -> None:
        if not ids:
            return
        try:
            self.env.store.set_committed(self.thread, list(ids), committed)
        except StoreError:
            if not self.behaviour.swallow_commit_refusals:
                raise
        wanted = set(ids)
        self._log = [replace(m, committed=committed) if m.id in wanted else m for m in self._log]

    # -- tasks ------------------------------------------------------------------------------------

    def _apply_write(self, step: int, task: Task, op: Mapping[str, Any]) -> None:
        name = op["op"]
        if name == "action":
            self._write(step, task.id, "output", ACTIONS_KEY, "append", op["action"])
            return
        if "data" in op:
            key = op["data"]
            if name == "remove":
                self._write(step, task.id, "data", key, "remove", has_value=False)
            else:
                self._write(step, task.id, "data", key, name, op["value"])
            return
        key = op["output"]
        if name == "append":
            self._write(step, task.id, "output", key, "append", op["item"])
            return
        items = self._step(step).outputs.get(key)
        index = op.get("index")
        if items is None or (index is not None and index >= len(items)):
            return  # nothing there to change or remove (an earlier failure may have hidden it)
        target = None if index is None else items[index][0]
        if name == "change":
            self._write(step, task.id, "output", key, "change", op["item"], target)
        else:
            self._write(step, task.id, "output", key, "remove", None, target, has_value=False)

    def _perform(self, turn: _Turn, task: Task, previous_actions: list[str]) -> None:
        step = turn.number
        for op in task.writes:
            self._apply_write(step, task, op)
        if task.kind == "tool":
            result = self.env.tool(
                task.tool or task.id, {"turn": step, "task": task.id}, call_id=f"{task.id}@{step}"
            )
            self._write(step, task.id, "data", f"{task.id}:result", "set", result)
        elif task.kind == "llm":
            if self.behaviour.view_committed_only:
                visible = self.env.store.messages(self.thread)
            else:
                stored = self.env.store.messages(self.thread, include_uncommitted=True)
                visible = [replace(m, committed=True) for m in stored]
            answer = self.env.model(task.id, {"turn": step, "view": model_view(visible)})
            item = {"type": "text", "text": answer.get("reply", "")}
            self._write(step, task.id, "output", OUTPUT_KEY, "append", item)
        elif task.kind == "behavior":
            current = [str(a) for a in self._step(step).output_items(ACTIONS_KEY)]
            seen = set(current) | set(previous_actions)
            for when, actions in self.rules:
                if when in seen:
                    for action in actions:
                        if action not in current:
                            self._write(step, task.id, "output", ACTIONS_KEY, "append", action)
                            current.append(action)
        elif task.kind == "output":
            current = [str(a) for a in self._step(step).output_items(ACTIONS_KEY)]
            for action, text in self.output_set:
                if action in current:
                    item = {"type": "text", "text": text}
                    self._write(step, task.id, "output", OUTPUT_KEY, "append", item)

    # -- failure ----------------------------------------------------------------------------------

    def _entry(self, task: Task, error: Mapping[str, Any]) -> dict[str, JSONValue]:
        if self.behaviour.snapshot_digest:
            text = snapshot_digest_text(task.id, error)
        else:
            text = digest_text(task.id, error, self.behaviour.digest_rules)
        task_id = task.id if self.behaviour.bare_task_ids else f"eddi://{task.id}"
        entry: dict[str, JSONValue] = {"type": "errorDigest", "taskId": task_id, "text": text}
        if self.behaviour.task_type_field:
            entry["taskType"] = task.kind
        return entry

    def _rollback_ids(
        self, written: list[Message], keys_before: set[str], earlier: list[str]
    ) -> list[str]:
        b = self.behaviour
        ids: list[str] = []
        for message in written:
            meta = _meta(message) or {}
            op, kind = meta.get("op"), meta.get("kind")
            if op == "change" and not b.rollback_in_place_changes:
                continue
            if op == "remove" and not b.restore_removals:
                continue
            if (
                kind == "output" and op == "append" and meta.get("key") in keys_before
                and not b.rollback_appended_items
            ):
                continue
            ids.append(message.id)
        if not b.rollback_only_failed_task:
            ids = [i for i in earlier if i not in ids] + ids
        return ids

    def fail_task(
        self, turn: _Turn, task: Task, error: Mapping[str, Any],
        written: list[Message], keys_before: set[str], earlier: list[str],
    ) -> None:
        """Record ``task``'s failure in ``turn`` under the policy.

        Always: the raw error is stored (committed) as data ``<id>:error``. Then,
        with ``digest`` or ``exclude_all``: everything the task wrote in this step
        is uncommitted (data, appended items, in-place changes, removals), then in
        ``digest`` mode the digest is appended to ``taskErrors``; with any mode the
        action ``task_failed_<id>`` is appended to ``actions``. The caller gets the
        digest entry in every case but ``exclude_all``; the end user never does.
        """
        b = self.behaviour
        step = turn.number
        raw = self._write(step, task.id, "data", f"{task.id}:error", "set", raw_error_text(error))
        written = [*written, raw]
        entry = self._entry(task, error)
        mode = self.mode
        if mode == "digest" and not b.digest_after_rollback:
            written.append(self._write(step, None, "output", TASK_ERRORS_KEY, "append", entry))
        if mode in ("digest", "exclude_all"):
            self._set_committed(self._rollback_ids(written, keys_before, earlier), False)
        if mode == "digest" and b.digest_after_rollback:
            if b.digest_in_same_turn:
                self._write(step, None, "output", TASK_ERRORS_KEY, "append", entry)
            else:
                turn.late_digests.append(entry)
        if mode is None and not b.caller_only_by_default:
            self._write(step, None, "output", TASK_ERRORS_KEY, "append", entry)
        if mode in ("digest", "exclude_all") or (mode == "keep_all" and b.keep_all_action):
            suffix = task.id if b.bare_task_ids else f"eddi://{task.id}"
            self._write(step, None, "output", ACTIONS_KEY, "append", f"task_failed_{suffix}")
        if mode is None:
            tell_caller = b.caller_entry_by_default
        elif mode == "exclude_all":
            tell_caller = not b.exclude_all_silent
        else:
            tell_caller = True
        if tell_caller:
            turn.task_errors.append(entry)
            if turn.streaming:
                reason = (
                    failure_reason(error, b.digest_rules)
                    if b.stream_clean_reason and not b.snapshot_digest
                    else str(error.get("message") or "")
                )
                self.env.emit(
                    "task_failed", turn=step, taskId=entry["taskId"], text=entry["text"],
                    reason=reason,
                )

    # -- turns -------------------------------------------------------------------------------------

    def _previous_actions(self, step: int) -> list[str]:
        steps = fold_memory(self.env.store.messages(self.thread))
        earlier = [s for n, s in steps.items() if n < step]
        return [str(a) for a in earlier[-1].output_items(ACTIONS_KEY)] if earlier else []

    def _benched(self, task: Task, previous_actions: list[str]) -> bool:
        """Whether a model task that failed in the previous turn sits this turn out
        (never, unless ``rerun_failed_model`` is off)."""
        return (not self.behaviour.rerun_failed_model and task.kind == "llm"
                and f"task_failed_{task.id}" in previous_actions)

    def _run_turn(self, number: int, text: str, streaming: bool) -> dict[str, JSONValue]:
        turn = _Turn(number, text, streaming)
        self._streaming = streaming
        self._write(number, None, "input", "input", "set", text)
        step_start = len(self._log)
        previous = self._previous_actions(number)
        stopped = False
        for task in self.pipeline:
            if stopped or self._benched(task, previous):
                turn.tasks.append({"task": task.id, "status": "not-run"})
                continue
            keys_before = set(self._step(number).outputs)
            start = len(self._log)
            try:
                self._perform(turn, task, previous)
            except StoreError:
                # the store refused what the task wrote: the task did not happen
                turn.tasks.append({"task": task.id, "status": "failed"})
                if self.behaviour.refusal_as_task_failure and self.continues:
                    continue
                stopped = True
                turn.state = "ERROR"
                continue
            except ScriptedFailure as failure:
                written = self._log[start:]
                earlier = [m.id for m in self._log[step_start:start]]
                turn.tasks.append({"task": task.id, "status": "failed"})
                try:
                    self.fail_task(turn, task, failure.error, written, keys_before, earlier)
                except StoreError:
                    # the store refused to hide (or record) the failed task's writes:
                    # they stay as stored, so no later task may run over them
                    stopped = True
                    turn.state = "ERROR"
                    continue
                shutdown = failure.type_name == SHUTDOWN_ERROR_TYPE
                if (shutdown and self.behaviour.stop_at_shutdown) or not self.continues:
                    stopped = True
                    turn.state = "ERROR"
                continue
            turn.tasks.append({"task": task.id, "status": "done"})
        for entry in turn.late_digests:
            self._write(number, None, "output", TASK_ERRORS_KEY, "append", entry)
        if turn.state == "ERROR" and not self.behaviour.persist_failed_turn:
            step_ids = [m.id for m in self._log if (_meta(m) or {}).get("step") == number]
            # the turn already ends in ERROR; refused, its writes stay as stored
            with contextlib.suppress(StoreError):
                self._set_committed(step_ids, False)
        memory = self._step(number)
        reply = ""
        if turn.state != "ERROR":
            reply = "\n".join(_item_text(i) for i in memory.output_items(OUTPUT_KEY))
        elif not self.behaviour.empty_reply_on_error:
            reply = END_USER_NOTICE
        notice: str | None = None
        if turn.state == "ERROR":
            notice = END_USER_NOTICE
            if not self.behaviour.generic_end_user_notice and turn.task_errors:
                notice = str(turn.task_errors[0]["text"])
        return {
            "turn": number,
            "input": text,
            "state": turn.state,
            "reply": reply,
            "taskErrors": list(turn.task_errors),
            "actions": [str(a) for a in memory.output_items(ACTIONS_KEY)],
            "endUserNotice": notice,
            "tasks": list(turn.tasks),
        }

    def run(self) -> dict[str, JSONValue]:
        """Run every turn; return ``{"thread", "policy", "turns"}``."""
        turns = [
            self._run_turn(n, text, streaming)
            for n, (text, streaming) in enumerate(self.turns, 1)
        ]
        return {
            "thread": self.thread,
            "policy": {
                "enabled": self.policy.enabled,
                "onFailure": self.policy.on_failure,
                "continueOnFailure": self.policy.continue_on_failure,
            },
            "turns": freeze_json(turns),
        }


def _item_text(value: JSONValue) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return str(value["text"])
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def run(
    script: Mapping[str, Any], env: Environment, behaviour: Behaviour = SEED
) -> dict[str, JSONValue]:
    """Validate ``script`` (raising :class:`ScriptError` naming the field, before
    any store call) and execute it with ``behaviour``."""
    return Executor(script, env, behaviour).run()


def execute(script: Mapping[str, Any], env: Environment) -> dict[str, JSONValue]:
    """The simulator's entry point: the document's behaviour, or the variant named
    by ``script["variant"]`` (``eddi-snapshot``)."""
    variant = script.get("variant")
    if variant is None:
        return run(script, env, SEED)
    if variant not in VARIANTS:
        raise ScriptError(
            f"variant: must be one of {', '.join(VARIANTS)} or absent, got {variant!r}"
        )
    return run(script, env, EDDI_SNAPSHOT)
