"""Resumes of suspended ``save-policy`` runs, each on a fresh runtime instance.

A script whose run answers a pending approval (``{"resume": {...}}``) is not
handed to the runtime whole. The kit runs the runs before the resume and
reads, from the suspended run's observation, the continuation its caller got
(``continuation``; a runtime giving none hands back its ``run_id`` and the
ids of its ``pending_tool_calls``). The resume and the runs after it are a
second part, whose resume carries that continuation unchanged; the runtime
resumes from it and the store alone.

Where the second part runs (:func:`execute_with_resumes`'s ``later``): on a
durable store, in a second fresh process
(:func:`memconform.steps.child_runs.run_fresh` with ``--lifetime``), so nothing
of the first process's memory reaches it; on a store that lives in the kit's
process (``memory://``), in a second ``execute`` call in the same process.

The later part's model replies, tool outcomes and hook answers go on from the
calls the earlier parts made (:func:`later_part`), as one uninterrupted script
would have them; the kit's timeline of every part is one timeline.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from memconform.harness.environment import Environment, IdSource
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import Runtime, observe
from memconform.steps.child_runs import run_fresh

__all__ = [
    "Later",
    "continuation_of",
    "cut_points",
    "execute_with_resumes",
    "in_fresh_process",
    "in_process",
    "later_part",
    "resume_points",
]

Later = Callable[[dict[str, Any], int], dict[str, Any]]
"""Runs a later part (the script, its lifetime number) and returns its observation."""


def cut_points(script: Mapping[str, Any], fresh_later: bool = False) -> list[int]:
    """Where the kit cuts ``script`` into parts, each later part on a fresh
    runtime instance: every resume without a continuation, and with
    ``fresh_later`` every run after the first (the kit's choice; the script
    handed to the runtime says nothing of it)."""
    if not fresh_later:
        return resume_points(script)
    runs = script.get("runs")
    return list(range(1, len(runs))) if isinstance(runs, list) else []


def resume_points(script: Mapping[str, Any]) -> list[int]:
    """Indices of the runs (after the first) that resume without a continuation."""
    runs = script.get("runs")
    if not isinstance(runs, list):
        return []
    return [
        i for i, run in enumerate(runs)
        if i > 0 and isinstance(run, Mapping) and isinstance(run.get("resume"), Mapping)
        and "continuation" not in run["resume"]
    ]


def continuation_of(run: Mapping[str, Any]) -> dict[str, Any]:
    """What the caller of ``run`` (a run's observation) holds to resume it."""
    given = run.get("continuation")
    if isinstance(given, Mapping):
        return dict(given)
    pending = run.get("pending_tool_calls")
    return {
        "run_id": run.get("run_id"),
        "tool_call_ids": [c.get("id") for c in pending if isinstance(c, Mapping)]
        if isinstance(pending, list) else [],
    }


def _used(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    used: dict[str, dict[str, int]] = {"model": {}, "tools": {}, "hooks": {}}
    section = {"model": "model", "tool": "tools", "hook": "hooks"}
    for entry in entries:
        name = section.get(str(entry.get("kind")))
        if name is not None:
            counts = used[name]
            counts[str(entry["name"])] = counts.get(str(entry["name"]), 0) + 1
    return used


def later_part(
    script: Mapping[str, Any], begin: int, end: int, continuation: Mapping[str, Any],
    entries: list[dict[str, Any]],
) -> dict[str, Any]:
    """The runs ``begin:end`` of ``script``, the first resuming with
    ``continuation`` when it is a resume; model steps go on after the calls on
    ``entries`` (the earlier parts' timeline), tool outcomes and hook answers
    given as lists too (a single outcome answers every call)."""
    part = copy.deepcopy(dict(script))
    runs = list(part["runs"])[begin:end]
    if isinstance(runs[0].get("resume"), Mapping):
        runs[0] = {**runs[0],
                   "resume": {**runs[0]["resume"], "continuation": dict(continuation)}}
    part["runs"] = runs
    used = _used(entries)
    model = part.get("model")
    if isinstance(model, Mapping):
        part["model"] = {
            name: (list(steps)[used["model"].get(name, 0):] if isinstance(steps, list) else steps)
            for name, steps in model.items()
        }
    for section in ("tools", "hooks"):
        given = part.get(section)
        if isinstance(given, Mapping):
            part[section] = {
                name: (list(outcome)[min(used[section].get(name, 0), len(outcome) - 1):]
                       if isinstance(outcome, list) and outcome else outcome)
                for name, outcome in given.items()
            }
    return part


def in_process(build: Callable[[], Runtime], proxy: RecordingStore) -> Later:
    """Run a later part in this process on a runtime instance ``build`` makes
    afresh (nothing the earlier instance kept in its own memory reaches it):
    an ``execute`` call on ``proxy``, its environment giving ids of the part's
    own lifetime."""
    def later(part: dict[str, Any], lifetime: int) -> dict[str, Any]:
        def ready(env: Environment) -> None:
            env.ids = IdSource(lifetime)
        return dict(observe(build(), part, proxy, ready))
    return later


def in_fresh_process(store_url: str, options: list[str], proxy: RecordingStore) -> Later:
    """Run a later part in a fresh process on the store at ``store_url`` (with
    the runtime ``options``); its timeline, as the kit's proxy there recorded
    it, is copied onto ``proxy``'s."""
    def later(part: dict[str, Any], lifetime: int) -> dict[str, Any]:
        child = run_fresh(store_url, ["--lifetime", str(lifetime)], script=part, options=options,
                          what="the fresh process resuming the suspended save-policy run")
        for entry in child.get("timeline") or []:
            data = {k: v for k, v in entry.items() if k not in ("seq", "kind", "name")}
            proxy.timeline.add(str(entry["kind"]), str(entry["name"]), **data)
        return child
    return later


def execute_with_resumes(
    runtime: Runtime, script: Mapping[str, Any], proxy: RecordingStore, later: Later | None,
    fresh_later: bool = False,
) -> dict[str, Any]:
    """Execute ``script``: whole when it is not cut (see :func:`cut_points`;
    never when ``later`` is ``None``), else in parts, each later part by
    ``later``. The observation is every part's: runs and ledger concatenated,
    the timeline of ``proxy``."""
    cuts = cut_points(script, fresh_later) if later is not None else []
    if not cuts:
        return dict(observe(runtime, script, proxy))
    assert later is not None
    start = len(proxy.timeline)
    runs = list(script["runs"])
    observation = dict(observe(runtime, {**script, "runs": runs[:cuts[0]]}, proxy))
    ends = [*cuts[1:], len(runs)]
    for lifetime, (begin, end) in enumerate(zip(cuts, ends, strict=True), start=2):
        done = observation.get("runs")
        if not isinstance(done, list) or len(done) != begin or not isinstance(done[-1], Mapping):
            break  # the runtime refused the script or answered for other runs
        entries = list(proxy.timeline.to_json())[start:]
        part = later_part(script, begin, end, continuation_of(done[-1]), entries)
        child = later(part, lifetime)
        for key, value in child.items():
            before = observation.get(key)
            observation[key] = [*before, *value] if (
                key != "timeline" and isinstance(before, list) and isinstance(value, list)
            ) else value
        observation["timeline"] = proxy.timeline.to_json()
    return observation
