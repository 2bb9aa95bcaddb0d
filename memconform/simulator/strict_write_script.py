"""The strict-write script as data: the pipeline of tasks, the turns, the rules
and the output writes of a ``strict-write`` script, each checked as it is read.

A malformed script raises :class:`~memconform.harness.environment.ScriptError`
naming the field; nothing here touches a store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memconform.harness.environment import ScriptError

__all__ = ["TASK_KINDS", "Task", "parse_list", "parse_output_set", "parse_pipeline",
           "parse_rules", "parse_turns"]

TASK_KINDS = ("write", "tool", "llm", "behavior", "output")
"""The kinds of task a pipeline step may hold."""


@dataclass(frozen=True)
class Task:
    id: str
    kind: str
    tool: str | None
    writes: tuple[Mapping[str, Any], ...]


def _text(raw: Mapping[str, Any], name: str, where: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value:
        raise ScriptError(f"{where}.{name}: expected non-empty text")
    return value


def _check_write(op: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(op, Mapping):
        raise ScriptError(f"{where}: expected an object")
    name = op.get("op")
    if name == "action":
        _text(op, "action", where)
        return op
    if name not in ("set", "change", "remove", "append"):
        raise ScriptError(f"{where}.op: must be set, change, remove, append or action")
    target = "data" if "data" in op else "output" if "output" in op else None
    if target is None:
        raise ScriptError(f"{where}: needs 'data' or 'output' naming the key")
    _text(op, target, where)
    if target == "data" and name == "append":
        raise ScriptError(f"{where}.op: data takes set, change or remove")
    if target == "output" and name == "set":
        raise ScriptError(f"{where}.op: output takes append, change or remove")
    if name in ("set", "change") and target == "data" and "value" not in op:
        raise ScriptError(f"{where}.value: missing")
    if target == "output" and name in ("append", "change") and "item" not in op:
        raise ScriptError(f"{where}.item: missing")
    index = op.get("index")
    if target == "output" and name == "change" and not isinstance(index, int):
        raise ScriptError(f"{where}.index: expected the position of the item to change")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool) or index < 0):
        raise ScriptError(f"{where}.index: expected a position (0 or more)")
    return op


def parse_pipeline(script: Mapping[str, Any]) -> tuple[Task, ...]:
    raw = script.get("pipeline")
    if not isinstance(raw, list) or not raw:
        raise ScriptError("pipeline: expected a non-empty list of tasks")
    tasks: list[Task] = []
    seen: set[str] = set()
    for n, item in enumerate(raw):
        where = f"pipeline[{n}]"
        if not isinstance(item, Mapping):
            raise ScriptError(f"{where}: expected an object")
        task_id = _text(item, "id", where)
        if task_id.startswith("eddi://"):
            raise ScriptError(f"{where}.id: give the bare task name, without eddi://")
        if task_id in seen:
            raise ScriptError(f"{where}.id: task {task_id!r} appears twice")
        seen.add(task_id)
        kind = item.get("kind", "write")
        if kind not in TASK_KINDS:
            raise ScriptError(f"{where}.kind: must be one of {', '.join(TASK_KINDS)}")
        tool = item.get("tool")
        if tool is not None and (not isinstance(tool, str) or kind != "tool"):
            raise ScriptError(f"{where}.tool: only a tool task names a tool, as text")
        writes = item.get("writes", [])
        if not isinstance(writes, list):
            raise ScriptError(f"{where}.writes: expected a list")
        checked = tuple(_check_write(op, f"{where}.writes[{i}]") for i, op in enumerate(writes))
        tasks.append(Task(task_id, str(kind), tool, checked))
    return tuple(tasks)


def parse_list(script: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    raw = script.get(name, [])
    if not isinstance(raw, list):
        raise ScriptError(f"{name}: expected a list")
    for n, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise ScriptError(f"{name}[{n}]: expected an object")
    return list(raw)


def parse_turns(script: Mapping[str, Any]) -> list[tuple[str, bool]]:
    turns = parse_list(script, "turns")
    if not turns:
        raise ScriptError("turns: expected at least one turn")
    out: list[tuple[str, bool]] = []
    for n, turn in enumerate(turns):
        text = turn.get("input")
        if not isinstance(text, str):
            raise ScriptError(f"turns[{n}].input: expected text")
        streaming = turn.get("streaming", False)
        if not isinstance(streaming, bool):
            raise ScriptError(f"turns[{n}].streaming: expected true or false")
        out.append((text, streaming))
    return out


def parse_rules(script: Mapping[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    rules: list[tuple[str, tuple[str, ...]]] = []
    for n, rule in enumerate(parse_list(script, "behaviorRules")):
        when = _text(rule, "when", f"behaviorRules[{n}]")
        actions = rule.get("actions")
        if not isinstance(actions, list) or not all(isinstance(a, str) and a for a in actions):
            raise ScriptError(f"behaviorRules[{n}].actions: expected a list of action names")
        rules.append((when, tuple(actions)))
    return rules


def parse_output_set(script: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [
        (_text(o, "action", f"outputSet[{n}]"), _text(o, "text", f"outputSet[{n}]"))
        for n, o in enumerate(parse_list(script, "outputSet"))
    ]
