"""What the steps of the ``strict-write`` profile share: :class:`StrictWriteRun`
(one run of a script and what the kit observed), the pipeline-table parser
:func:`parse_writes` and the readers of the store and the observation.

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

from memconform.contract import Capability
from memconform.harness.proxy import RecordingStore
from memconform.simulator.strict_write import META, model_view
from memconform.steps.common import Mismatch
from memconform.values import JSONValue, Message

__all__ = ["StrictWriteRun", "parse_writes"]

_POLICY = ("memoryPolicy", "strictWriteDiscipline")
_WRITE = re.compile(
    r"^(?:(?P<action>action)\s+(?P<name>\S+)"
    r"|data\s+(?P<dkey>[^\s=~\-][^\s]*)\s*(?P<dop>=|~|-)\s*(?P<dvalue>.*)"
    r"|output\s+(?P<okey>[^\s\[]+)(?:\[(?P<index>\d+)\])?\s*(?P<oop>\+=|~|-)\s*(?P<ovalue>.*))$"
)


def _split_writes(cell: str) -> list[str]:
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


def json_value(text: str, where: str) -> JSONValue:
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(f"{where}: not JSON: {text!r}") from None


def parse_writes(cell: str) -> list[dict[str, JSONValue]]:
    """Turn a ``writes`` cell into the script's write operations."""
    ops: list[dict[str, JSONValue]] = []
    for part in _split_writes(cell):
        match = _WRITE.match(part)
        if match is None:
            raise ValueError(f"writes: cannot read {part!r}")
        if match["action"]:
            ops.append({"op": "action", "action": match["name"]})
        elif match["dkey"]:
            op = {"=": "set", "~": "change", "-": "remove"}[match["dop"]]
            entry: dict[str, JSONValue] = {"op": op, "data": match["dkey"]}
            if op != "remove":
                entry["value"] = json_value(match["dvalue"], part)
            ops.append(entry)
        else:
            op = {"+=": "append", "~": "change", "-": "remove"}[match["oop"]]
            entry = {"op": op, "output": match["okey"]}
            if match["index"] is not None:
                entry["index"] = int(match["index"])
            if op != "remove":
                entry["item"] = json_value(match["ovalue"], part)
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


def policy_of(script: dict[str, Any]) -> dict[str, Any]:
    policy: dict[str, Any] = script.setdefault(_POLICY[0], {}).setdefault(_POLICY[1], {})
    return policy


def task_kind(script: Mapping[str, Any], task: str) -> str:
    for entry in script["pipeline"]:
        if entry["id"] == task:
            return str(entry.get("kind", "write"))
    raise ValueError(f"strict-write pipeline has no task {task!r}")


def all_stored(store: RecordingStore, thread: str) -> list[Message]:
    if store.has(Capability.COMMIT_FLAGS):
        return store.messages(thread, include_uncommitted=True)
    return store.messages(thread)


def visible_view(store: RecordingStore, thread: str) -> dict[str, JSONValue]:
    return model_view(store.messages(thread))


def meta_of(message: Message) -> Mapping[str, Any]:
    meta = message.metadata.get(META)
    return meta if isinstance(meta, Mapping) else {}


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def task_errors(sw_run: StrictWriteRun, n: int) -> list[dict[str, Any]]:
    errors = sw_run.turn(n).get("taskErrors") or []
    return list(errors)


def error_text(sw_run: StrictWriteRun, n: int) -> str:
    errors = task_errors(sw_run, n)
    if len(errors) != 1 or not isinstance(errors[0].get("text"), str):
        raise Mismatch(f"taskErrors of strict-write turn {n}", "one entry with a text",
                       repr(errors))
    return str(errors[0]["text"])


def task_ran(sw_run: StrictWriteRun, store: RecordingStore, task: str, n: int) -> bool:
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
        meta_of(m).get("task") == task and meta_of(m).get("step") == n
        for m in all_stored(store, thread)
    )


def step_view(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> dict[str, Any]:
    view = visible_view(store, sw_run.script["thread"])
    steps = view["steps"]
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict) and step.get("step") == n:
            return step
    return {"step": n, "input": None, "data": {}, "output": {}}
