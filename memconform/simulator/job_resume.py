"""The fresh-process entry point of the resume test (document 004, PS-009, PS-031).

``python -m memconform.simulator.job_resume --store URL --namespace NS --job ID``
opens the store named by ``URL`` and resumes job ``ID`` from its record alone,
as a process on another machine would: it is given no transcript and no
script of the job, only the store. ``--world FILE`` names a JSON file with the
environment the job acts on (``tools``, ``hooks``, ``model``, ``clock``): what
tools return belongs to the world, not to the agent's memory. The observation
(the runtime's answer, the ledger of tool effects and the timeline) is written
to standard output as one JSON object.

``--show-state SCOPE KEY`` and ``--show-facts SCOPE`` print what the store
holds, as JSON, without running anything: the store-side durability check.

``--coverage MEASUREMENT`` (given by the kit when its run measures code
coverage) starts measuring before the store is opened
(:mod:`memconform.measurement`); the data is written when the process ends.

``--runtime module:factory`` resumes with another runtime (default: the
simulator); ``--mutant NAME`` applies a mutant of the kit (a store mutant wraps
the opened store, a runtime mutant replaces the runtime).

Exit codes: 0 done, 2 usage, 3 the store could not be opened or broke the
contract, 4 a malformed world or script.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memconform import measurement
from memconform.adapters.proxy import AdapterContractError, RecordingStore
from memconform.adapters.registry import StoreURLError, open_store
from memconform.simulator.environment import ScriptError
from memconform.simulator.runtime import SCRIPT_SCHEMA, Runtime, Simulator, observe
from memconform.values import JSONValue

__all__ = ["WORLD_KEYS", "build_resume_script", "main"]

WORLD_KEYS = ("tools", "hooks", "model", "clock", "knowledge")
"""Sections of a world file passed on to the resume script."""


def build_resume_script(namespace: str, job_id: str, world: dict[str, Any]) -> dict[str, Any]:
    """The script a fresh process runs: one ``resume`` action plus the world."""
    script: dict[str, Any] = {
        "schema": SCRIPT_SCHEMA,
        "profile": "persisted-state",
        "namespace": namespace,
        "actions": [{"do": "resume", "job": job_id}],
    }
    for key in WORLD_KEYS:
        if key in world:
            script[key] = world[key]
    return script


def _runtime(target: str | None, mutant_name: str | None) -> Runtime:
    if mutant_name:
        from memconform.mutants import get_mutant

        mutant = get_mutant(mutant_name)
        if mutant.kind == "runtime":
            built: Runtime = mutant.build()  # type: ignore[assignment]
            return built
    if target:
        module_name, _, attr = target.partition(":")
        factory: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            factory = getattr(factory, part)
        made: Runtime = factory()
        return made
    return Simulator()


def _store(url: str, mutant_name: str | None) -> object:
    store = open_store(url)
    if mutant_name:
        from memconform.mutants import get_mutant

        mutant = get_mutant(mutant_name)
        if mutant.kind == "store":
            store = mutant.build(store)
    return store


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memconform.simulator.job_resume",
        description="Resume a job from its persisted record in a fresh process.",
    )
    parser.add_argument("--store", required=True, help="the store URL")
    parser.add_argument("--namespace", help="the scenario namespace of the job")
    parser.add_argument("--job", help="the job id to resume")
    parser.add_argument("--world", help="JSON file: tools, hooks, model, clock, knowledge")
    parser.add_argument("--runtime", help="module:factory of the runtime (default: simulator)")
    parser.add_argument("--mutant", help="a mutant of the kit to apply")
    parser.add_argument("--show-state", nargs=2, metavar=("SCOPE", "KEY"))
    parser.add_argument("--show-facts", metavar="SCOPE")
    parser.add_argument("--coverage", help=argparse.SUPPRESS)
    return parser


def _show(proxy: RecordingStore, args: argparse.Namespace) -> dict[str, JSONValue]:
    shown: dict[str, JSONValue] = {}
    if args.show_state:
        entry = proxy.read_state(args.show_state[0], args.show_state[1])
        shown["state"] = None if entry is None else entry.to_json()
    if args.show_facts:
        shown["facts"] = [f.to_json() for f in proxy.facts(args.show_facts)]
    return shown


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; see the module docstring."""
    args = _parser().parse_args(argv)
    showing = bool(args.show_state or args.show_facts)
    if not showing and not (args.namespace and args.job):
        print("job_resume: --namespace and --job are required to resume", file=sys.stderr)
        return 2
    try:
        world: dict[str, Any] = {}
        if args.world:
            loaded = json.loads(Path(args.world).read_text(encoding="utf-8"))
            if not isinstance(loaded, dict):
                raise ScriptError("world: expected a JSON object")
            world = loaded
        store = _store(args.store, args.mutant)
    except StoreURLError as exc:
        print(f"job_resume: {exc}", file=sys.stderr)
        return 3
    except (ScriptError, json.JSONDecodeError, OSError) as exc:
        print(f"job_resume: {exc}", file=sys.stderr)
        return 4
    proxy = RecordingStore(store)
    try:
        if showing:
            answer: dict[str, JSONValue] = _show(proxy, args)
        else:
            runtime = _runtime(args.runtime, args.mutant)
            answer = observe(runtime, build_resume_script(args.namespace, args.job, world), proxy)
    except AdapterContractError as exc:
        print(f"job_resume: the store broke the contract: {exc}", file=sys.stderr)
        return 3
    except ScriptError as exc:
        print(f"job_resume: {exc}", file=sys.stderr)
        return 4
    finally:
        proxy.close()
        close = getattr(store, "close", None)
        if callable(close):
            close()
    json.dump(answer, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    # before main(), so that main's own lines are measured too
    measurement.start_from_argv(sys.argv)
    raise SystemExit(main())
