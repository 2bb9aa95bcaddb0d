"""The fresh-process entry point of the resume test (document 004, PS-009, PS-031).

``python -m memconform.steps.job_resume --store URL --namespace NS --job ID``
opens the store named by ``URL`` and resumes job ``ID`` from its record alone,
as a process on another machine would: it is given no transcript and no
script of the job, only the store. ``--world FILE`` names a JSON file with the
environment the job acts on (``tools``, ``hooks``, ``model``, ``clock``): what
tools return belongs to the world, not to the agent's memory. The observation
(the runtime's answer, the ledger of tool effects and the timeline) is written
to standard output as one JSON object.

``--show-state SCOPE KEY``, ``--show-facts SCOPE`` and ``--show-messages
THREAD`` (repeatable: ``{"messages": {thread: [...]}}``) print what the store
holds, as JSON, without running anything: the store-side durability check.

``--coverage MEASUREMENT`` (given by the kit when its run measures code
coverage) starts measuring before the store is opened
(:mod:`memconform.measurement`); the data is written when the process ends.

``--script FILE`` runs that script (a ``persisted-state`` script, for example
a job's first run, or the requests of a ``candidates`` script the kit answers
in a fresh process, or the runs of a ``save-policy`` or ``turns`` script)
instead of a resume. ``--kill-after-write K``, ``--kill-after-append K``,
``--kill-before-tool N`` and ``--kill-before-model N`` arm the kill point:
right after the store acknowledged the K-th write of the process (``append``,
``set_committed``, ``record_error``, ``append_record``, ``write_state``,
``put_fact``, ``forget``) or its K-th ``append``, or when the runtime asks
for its N-th tool call or its N-th model call (before the kit's tool or fake
model answers), the kit's proxy writes one line
``{"killed_after": K, "ledger": [...], "timeline": [...]}`` to standard
output and blocks reading standard input; the kit then SIGKILLs the process.
Nothing reaches the runtime: no exception, no ``finally``. A run that ends
before the kill point writes its observation as usual, with
``writes`` (how many writes were acknowledged).

``--lifetime N`` (N > 1: the script is the part of a ``turns`` script after
its (N-1)-th restart) makes the kit's id source of this process give ids of
its own (:class:`~memconform.harness.environment.IdSource`).

``--runtime RUNTIME`` resumes with another runtime (default: the
simulator): any name :func:`~memconform.runtime_names.runtime_target`
resolves (``module:factory``, a framework adapter's name, ``simulator`` or a
variant of it such as ``anvia-main``); ``--mutant NAME`` applies a
mutant of the kit (a store mutant wraps the opened store, a runtime mutant
replaces the runtime).

Exit codes: 0 done, 2 usage, 3 the store could not be opened or broke the
contract, 4 a malformed world or script.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memconform import measurement
from memconform.adapters.registry import StoreURLError, open_store
from memconform.harness import process_groups
from memconform.harness.answers import limit_execute
from memconform.harness.environment import Environment, IdSource, ScriptError
from memconform.harness.proxy import (
    AdapterContractError,
    RecordingStore,
    mark_raised_by,
    raised_by_adapter,
)
from memconform.harness.runtime import SCRIPT_SCHEMA, Runtime, observe
from memconform.simulator.runtime import Simulator
from memconform.values import JSONValue

__all__ = ["WORLD_KEYS", "WRITE_METHODS", "KillPoint", "build_resume_script", "main"]

WRITE_METHODS = frozenset({
    "append", "set_committed", "record_error", "append_record", "write_state", "put_fact",
    "forget",
})
"""The store calls that write: the kill point counts their acknowledgements."""


class KillPoint(RecordingStore):
    """The recording proxy of a process the kit is about to kill.

    After the store acknowledged the ``after``-th write (or, with
    ``after_append``, its ``after_append``-th ``append``; with ``before_tool``
    or ``before_model``, when the runtime asks for that tool call or model
    call, 1-based, counted over every component), the
    proxy reports on standard output and blocks on standard input until the kit's
    SIGKILL arrives; if standard input closes instead, the process exits at
    once (``os._exit``: nothing of the runtime runs any more).
    """

    def __init__(
        self, store: object, *, after: int | None = None, before_tool: int | None = None,
        before_model: int | None = None, after_append: int | None = None,
    ) -> None:
        super().__init__(store)
        self.after = after
        self.after_append = after_append
        self.appends = 0
        self.before = {"tool": before_tool, "model": before_model}
        self.writes = 0
        self.calls = {"tool": 0, "model": 0}
        self.env: Environment | None = None

    def watch(self, env: Environment) -> None:
        """Keep ``env`` (its ledger is reported) and count its tool and model calls."""
        self.env = env
        for name, limit in self.before.items():
            if limit is not None:
                setattr(env, name, self._counted(name, getattr(env, name), limit))

    def _counted(self, name: str, call: Any, limit: int) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            if self.calls[name] == limit:
                self._stop()
            return call(*args, **kwargs)

        return counted

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        value = super()._call(method, *args, **kwargs)
        if method in WRITE_METHODS:
            self.writes += 1
            if method == "append":
                self.appends += 1
            if self.writes == self.after or (
                    method == "append" and self.appends == self.after_append):
                self._stop()
        return value

    def _stop(self) -> None:
        process_groups.kill_all()  # a runtime in its own processes dies with this one
        report = {
            "killed_after": self.writes,
            "ledger": [] if self.env is None else self.env.ledger,
            "timeline": self.timeline.to_json(),
        }
        sys.stdout.write(json.dumps(report, sort_keys=True, ensure_ascii=True) + "\n")
        sys.stdout.flush()
        try:
            sys.stdin.buffer.read(1)  # the kit's SIGKILL ends the process here
        finally:
            os._exit(137)

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
        # Imported here, not with the module: the steps import this module in every
        # pytest process, and resolving names imports the library adapters, which
        # changed what the derandomized generated checks draw (four store mutants
        # went unfound).
        from memconform.runtime_names import runtime_factory, runtime_target

        made: Runtime = runtime_factory(runtime_target(target))()
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


def _env_ready(proxy: RecordingStore, lifetime: int) -> Any:
    """What to do with the environment before the runtime starts: give it the
    lifetime's id source, and let a kill point watch it."""
    if not isinstance(proxy, KillPoint) and lifetime == 1:
        return None

    def ready(env: Environment) -> None:
        if lifetime != 1:
            env.ids = IdSource(lifetime)
        if isinstance(proxy, KillPoint):
            proxy.watch(env)

    return ready


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memconform.steps.job_resume",
        description="Resume a job from its persisted record in a fresh process.",
    )
    parser.add_argument("--store", required=True, help="the store URL")
    parser.add_argument("--namespace", help="the scenario namespace of the job")
    parser.add_argument("--job", help="the job id to resume")
    parser.add_argument("--world", help="JSON file: tools, hooks, model, clock, knowledge")
    parser.add_argument("--script", help="JSON file: a script to run instead of a resume")
    parser.add_argument("--kill-after-write", type=int, help="stop after the K-th write")
    parser.add_argument("--kill-after-append", type=int, help="stop after the K-th append")
    parser.add_argument("--kill-before-tool", type=int, help="stop at the N-th tool call")
    parser.add_argument("--kill-before-model", type=int, help="stop at the N-th model call")
    parser.add_argument("--lifetime", type=int, default=1, help="the process's lifetime number")
    parser.add_argument(
        "--runtime",
        help="module:factory, a framework name or a simulator variant (default: simulator)",
    )
    parser.add_argument("--mutant", help="a mutant of the kit to apply")
    parser.add_argument(
        "--execute-limit", type=float, default=CHILD_EXECUTE_LIMIT,
        help="seconds the runtime's execute may take (the parent's bound)",
    )
    parser.add_argument("--show-state", nargs=2, metavar=("SCOPE", "KEY"))
    parser.add_argument("--show-facts", metavar="SCOPE")
    parser.add_argument("--show-messages", metavar="THREAD", action="append")
    parser.add_argument("--coverage", help=argparse.SUPPRESS)
    return parser


def _show(proxy: RecordingStore, args: argparse.Namespace) -> dict[str, JSONValue]:
    shown: dict[str, JSONValue] = {}
    if args.show_state:
        entry = proxy.read_state(args.show_state[0], args.show_state[1])
        shown["state"] = None if entry is None else entry.to_json()
    if args.show_facts:
        shown["facts"] = [f.to_json() for f in proxy.facts(args.show_facts)]
    if args.show_messages:
        shown["messages"] = {
            thread: [m.to_json() for m in proxy.messages(thread)] for thread in args.show_messages
        }
    return shown


CHILD_EXECUTE_LIMIT = 100.0
"""Seconds a runtime's ``execute`` may take in this process: below the parent's
limit on the whole child (120 s), so a hung runtime ends the child with its
adapter error (exit 3) instead of being killed without a word."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; see the module docstring."""
    args = _parser().parse_args(argv)
    showing = bool(args.show_state or args.show_facts or args.show_messages)
    if not showing and not args.script and not (args.namespace and args.job):
        print("job_resume: --namespace and --job are required to resume", file=sys.stderr)
        return 2
    try:
        world: dict[str, Any] = {}
        if args.world:
            loaded = json.loads(Path(args.world).read_text(encoding="utf-8"))
            if not isinstance(loaded, dict):
                raise ScriptError("world: expected a JSON object")
            world = loaded
        script: dict[str, Any] | None = None
        if args.script:
            given = json.loads(Path(args.script).read_text(encoding="utf-8"))
            if not isinstance(given, dict):
                raise ScriptError("script: expected a JSON object")
            script = given
        store = _store(args.store, args.mutant)
    except StoreURLError as exc:
        print(f"job_resume: {exc}", file=sys.stderr)
        return 3
    except (ScriptError, json.JSONDecodeError, OSError) as exc:
        print(f"job_resume: {exc}", file=sys.stderr)
        return 4
    killing = any(
        point is not None
        for point in (args.kill_after_write, args.kill_after_append, args.kill_before_tool,
                      args.kill_before_model)
    )
    proxy = (
        KillPoint(store, after=args.kill_after_write, before_tool=args.kill_before_tool,
                  before_model=args.kill_before_model, after_append=args.kill_after_append)
        if killing else RecordingStore(store)
    )
    try:
        if showing:
            answer: dict[str, JSONValue] = _show(proxy, args)
        else:
            try:
                runtime = _runtime(args.runtime, args.mutant)
            except AdapterContractError as exc:  # a stdio runtime that does not start
                mark_raised_by(exc, "runtime")
                raise
            limit_execute(min(args.execute_limit, CHILD_EXECUTE_LIMIT))
            if script is None:
                script = build_resume_script(str(args.namespace), str(args.job), world)
            answer = observe(runtime, script, proxy, _env_ready(proxy, args.lifetime))
            if isinstance(proxy, KillPoint):
                answer["writes"] = proxy.writes
    except AdapterContractError as exc:
        whose = "runtime" if raised_by_adapter(exc) in ("execute", "runtime") else "store"
        print(f"job_resume: the {whose} broke the contract: {exc}", file=sys.stderr)
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
