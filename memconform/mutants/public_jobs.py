"""A broken persisted-state runtime written against the public API only.

Like :mod:`memconform.mutants.public_api`, this runtime sees the kit only
through ``execute(script, env)`` and what the environment offers
(``env.store``, ``env.tool``, ``env.model``, ``env.emit``); it imports nothing
of the kit's simulator. It runs the ``job`` and ``resume`` actions of a
``persisted-state`` script: one record per job under the key ``record`` of the
scope ``<namespace>/job/<id>``, rewritten by compare-and-set after each step's
tool succeeded.

Its bug: the values a step looks up are kept in a module-level dictionary, not
in the record. A resume in the process that ran the job finds them; a process
the kit killed takes them along, and a fresh process never had them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from memconform.mutants import Mutant
from memconform.values import JSONValue

__all__ = ["MUTANTS", "GlobalValuesJobs"]

PROFILE = "persisted-state"
RECORD = "record"

_VALUES: dict[str, dict[str, JSONValue]] = {}
"""Looked-up values per job scope: this process only (the bug)."""


def _field(result: JSONValue, path: str) -> tuple[bool, JSONValue]:
    value: Any = result
    for part in path.split(".")[1:]:
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, copy.deepcopy(value)


def _args(args: Any, values: Mapping[str, JSONValue]) -> tuple[Any, str | None]:
    if isinstance(args, str) and args.startswith("$") and len(args) > 1:
        name = args[1:]
        return (values[name], None) if name in values else (None, name)
    if isinstance(args, Mapping):
        out: dict[str, Any] = {}
        for key, item in args.items():
            out[key], missing = _args(item, values)
            if missing is not None:
                return None, missing
        return out, None
    return copy.deepcopy(args), None


class GlobalValuesJobs:
    """Runs jobs step by step; keeps looked-up values in module globals."""

    @property
    def profiles(self) -> frozenset[str]:
        """The persisted-state profile only."""
        return frozenset({PROFILE})

    def execute(self, script: Mapping[str, Any], env: Any) -> Mapping[str, JSONValue]:
        """Run the script's job and resume actions in order."""
        namespace = str(script["namespace"])
        outcomes: list[JSONValue] = []
        for action in script.get("actions", []):
            if action.get("do") == "job":
                job = action["job"]
                scope = f"{namespace}/job/{job['id']}"
                record = {"goal": job.get("goal", "unstated"), "blocked": None, "values": {},
                          "steps": [{**copy.deepcopy(s), "status": "pending"}
                                    for s in job["steps"]]}
                env.store.write_state(scope, RECORD, record, None)
                outcomes.append({"do": "job", **self.steps(env, scope, str(job["id"]))})
            elif action.get("do") == "resume":
                job_id = str(action["job"])
                outcomes.append({"do": "resume", **self.steps(env, f"{namespace}/job/{job_id}",
                                                             job_id)})
        return {"namespace": namespace, "outcomes": outcomes, "exports": []}

    def steps(self, env: Any, scope: str, job_id: str) -> dict[str, JSONValue]:
        """Every step not yet done, reading the record first each time."""
        entry = env.store.read_state(scope, RECORD)
        if entry is None:
            return {"job": job_id, "outcome": "unknown-job", "steps_run": []}
        ran: list[JSONValue] = []
        for index in range(len(entry.value["steps"])):
            entry = env.store.read_state(scope, RECORD)
            step = entry.value["steps"][index]
            if step.get("status") == "done":
                continue
            env.model("agent", {"job": job_id, "step": copy.deepcopy(step),
                                "record": copy.deepcopy(entry.value)})
            values = {**entry.value.get("values", {}), **_VALUES.get(scope, {})}
            args, missing = _args(step.get("args", {}), values)
            if missing is not None:
                return {"job": job_id, "outcome": "blocked", "steps_run": ran}
            result = env.tool(str(step["tool"]), args, call_id=f"{job_id}/{step['name']}")
            for name, path in (step.get("record") or {}).items():
                found, value = _field(result, str(path))
                if found:
                    _VALUES.setdefault(scope, {})[name] = value
            record = copy.deepcopy(entry.value)
            record["values"].update(copy.deepcopy(step.get("marks") or {}))
            record["steps"][index]["status"] = "done"
            env.store.write_state(scope, RECORD, record, entry.version)
            ran.append(str(step["name"]))
        return {"job": job_id, "outcome": "completed", "steps_run": ran}


MUTANTS: list[Mutant] = [
    Mutant(
        "ps-public-values-in-module-globals", "runtime",
        "A runtime on the public API only that keeps looked-up values in module globals.",
        frozenset({"PS-005", "PS-009"}), GlobalValuesJobs, PROFILE,
    ),
]
