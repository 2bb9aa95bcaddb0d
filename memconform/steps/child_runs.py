"""Child runs of the kit's fresh-process entry point, shared by every profile.

:func:`run_fresh` starts ``memconform.steps.job_resume`` in a fresh process
(:mod:`memconform.harness.fresh_process`: the kit's interpreter, its import
path passed as an argument, the kit's starting environment less its own
variables, with a new empty ``TMPDIR``, a new working directory), waits for
it and returns the observation it printed. :func:`run_killed` starts the same entry point armed
with a kill point (``--kill-after-write K``, ``--kill-after-append K``,
``--kill-before-tool N``, ``--kill-before-model N``), reads its standard
output until the kit's proxy there reports the point was reached, and
SIGKILLs it: nothing reaches the runtime, no ``finally`` runs.

Both take the script (or world) as a value and write it to a file of their own
folder; ``options`` are the runtime options (``--runtime``, ``--mutant``).
Contracts:

- exit code 3 of the child (the store could not be opened or broke the
  contract) raises :class:`AdapterContractError`;
- any other failure of the child raises :class:`Mismatch` naming ``what``;
- a child still running after :data:`CHILD_TIMEOUT` seconds raises
  :class:`subprocess.TimeoutExpired` (noted for the coverage measurement).

The child's observation is what the kit's proxy in that process recorded (its
timeline, the ledger of the kit's tools); verdicts read the store afterwards
through the kit's own proxy or another fresh process, never the child's claims.
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memconform import measurement
from memconform.harness.answers import execute_hung, execute_limit, note_execute_hung
from memconform.harness.fresh_process import Process, fresh_environment, run, start
from memconform.harness.proxy import TIMED_OUT, AdapterContractError, AdapterTimeoutError
from memconform.steps.common import Mismatch

__all__ = ["CHILD_TIMEOUT", "run_fresh", "run_killed", "runtime_options"]

CHILD_TIMEOUT = 120.0
"""Seconds a child run may take before the kit gives up on it."""

ENTRY = "memconform.steps.job_resume"

PRELOAD = (
    "sqlite3",
    "memconform.adapters.registry",
    "memconform.harness.answers",
    "memconform.harness.environment",
    "memconform.harness.proxy",
    "memconform.harness.runtime",
    "memconform.measurement",
    "memconform.mutants",
    "memconform.simulator.runtime",
    "memconform.values",
)
"""The kit's modules the entry point imports, which its fork server imports once."""


def runtime_options(mutant: str | None, runtime: str | None) -> list[str]:
    """The child's ``--mutant`` and ``--runtime`` options for the given names."""
    options: list[str] = []
    if mutant:
        options += ["--mutant", mutant]
    if runtime:
        options += ["--runtime", runtime]
    return options


def _bounded_runtime(options: Sequence[str]) -> list[str]:
    """The child's option bounding its runtime's ``execute`` as this process
    bounds it. With a runtime in ``options`` (any but the reference simulator)
    whose ``execute`` already hung, here or in an earlier child, no child is
    started: the runtime counts as hung, at once."""
    if not options:
        return []
    hung = execute_hung()
    if hung is not None:
        raise AdapterTimeoutError("execute", f"not called: {hung}")
    seconds = execute_limit()
    return [] if seconds is None else ["--execute-limit", f"{seconds:g}"]


def _note_hang(stderr: str, options: Sequence[str]) -> None:
    """A child whose runtime's ``execute`` hung makes every later one refused."""
    if options and TIMED_OUT in stderr and "execute" in stderr:
        note_execute_hung("an earlier execute in a fresh process did not return in time")


def _files(
    root: Path, script: Mapping[str, Any] | None, world: Mapping[str, Any] | None
) -> list[str]:
    args: list[str] = []
    for name, value in (("script", script), ("world", world)):
        if value is not None:
            path = root / f"{name}.json"
            path.write_text(json.dumps(value), encoding="utf-8")
            args += [f"--{name}", str(path)]
    return args


def _folders(folder: str) -> tuple[Path, Path, Path]:
    root = Path(folder)
    workdir, tmp = root / "work", root / "tmp"
    workdir.mkdir()
    tmp.mkdir()
    return root, workdir, tmp


def run_fresh(
    store_url: str,
    args: Sequence[str] = (),
    *,
    script: Mapping[str, Any] | None = None,
    world: Mapping[str, Any] | None = None,
    options: Sequence[str] = (),
    what: str = "the fresh process",
) -> dict[str, Any]:
    """Run the entry point with ``args`` (and ``script``/``world`` files) in a
    fresh process on ``store_url`` and return the JSON object it printed."""
    with tempfile.TemporaryDirectory(prefix="memconform-fresh-") as folder:
        root, workdir, tmp = _folders(folder)
        arguments = [
            "--store", store_url, *args, *_files(root, script, world),
            *measurement.child_options(), *options, *_bounded_runtime(options),
        ]
        try:
            proc = run(
                ENTRY, *arguments, cwd=workdir, env=fresh_environment(tmp),
                timeout=CHILD_TIMEOUT, preload=PRELOAD,
            )
        except subprocess.TimeoutExpired:
            measurement.note_killed("the fresh process (hung)")
            if options:
                note_execute_hung("an earlier fresh process did not end in time")
            raise
    _note_hang(proc.stderr, options)
    if proc.returncode == 3:
        raise AdapterContractError("fresh process", proc.stderr.strip()[-2000:])
    if proc.returncode != 0:
        raise Mismatch(
            what, "exit code 0 and an observation",
            f"exit code {proc.returncode}\n{proc.stderr.strip()[-2000:]}",
        )
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


def run_killed(
    store_url: str,
    script: Mapping[str, Any],
    kill: Sequence[str],
    *,
    options: Sequence[str] = (),
    what: str = "the process running the script",
) -> dict[str, Any]:
    """Run ``script`` in a fresh process armed with the kill point ``kill`` and
    SIGKILL it when the point is reached. Returns the kill report
    (``killed_after``, ``ledger``, ``timeline`` up to the kill) or, when the run
    ended before the point, the child's observation (without ``killed_after``)."""
    with tempfile.TemporaryDirectory(prefix="memconform-kill-") as folder:
        root, workdir, tmp = _folders(folder)
        arguments = [
            "--store", store_url, *_files(root, script, None), *kill,
            *measurement.child_options(), *options, *_bounded_runtime(options),
        ]
        with start(
            ENTRY, *arguments, cwd=workdir, env=fresh_environment(tmp),
            stdin=subprocess.PIPE, preload=PRELOAD,
        ) as proc:
            try:
                out, err = _until_killed(proc)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    if out.get("killed_after") is not None:
        return out
    _note_hang(err, options)
    if proc.returncode == 3:
        raise AdapterContractError("killed process", err.strip()[-2000:])
    if proc.returncode != 0 or not out:
        raise Mismatch(
            what, "a run the kit could kill",
            f"exit code {proc.returncode}\n{err.strip()[-2000:]}",
        )
    return out


def _until_killed(proc: Process) -> tuple[dict[str, Any], str]:
    """Read the child's lines until its kill report (then SIGKILL it) or its end;
    a child still running after :data:`CHILD_TIMEOUT` (a hung runtime or store
    that prints nothing) is killed, so reading never waits for ever."""
    assert proc.stdout is not None
    assert proc.stderr is not None
    found: dict[str, Any] = {}
    fired = threading.Event()

    def give_up() -> None:
        fired.set()
        proc.kill()

    watchdog = threading.Timer(CHILD_TIMEOUT, give_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        read = _read_until_killed(proc, found)
    finally:
        watchdog.cancel()
    if fired.is_set():
        measurement.note_killed("the killed process (hung)")
        raise AdapterTimeoutError(
            "killed process", f"{TIMED_OUT} {CHILD_TIMEOUT:g} s: the process running the "
            "script neither reached the kill point nor ended, and printed nothing")
    return read


def _read_until_killed(
    proc: Process, found: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    assert proc.stdout is not None
    assert proc.stderr is not None
    for line in proc.stdout:
        try:
            data = json.loads(line)
        except ValueError:
            continue  # the runtime's own output, not the kit's
        if isinstance(data, dict) and "killed_after" in data:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return data, ""
        if isinstance(data, dict):
            found = data
    try:
        proc.wait(timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        measurement.note_killed("the killed process (hung)")
        raise
    return found, proc.stderr.read()
