"""The child processes of the multi-process checks: how a check starts one
(a fresh process doing one job of :mod:`memconform.steps.check_jobs`), reads
its JSON lines, holds it at the adapter's row point, lets it go, waits for it
and kills it.

Every helper that finds a child unable to do what the check needs raises
:class:`~memconform.steps.contract_checks.result.ChildError`: a child that
reported a store error, crashed, or hung past its timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import Any

from memconform import measurement
from memconform.harness.faults import PAUSE_ENV, pause_env_value
from memconform.harness.fresh_process import Process, fresh_environment, start
from memconform.harness.readiness import readable
from memconform.steps.contract_checks.result import ChildError

__all__ = [
    "GRACE",
    "await_ready",
    "child_job",
    "finish",
    "json_lines",
    "kill",
    "let_go",
    "raise_reported",
    "read_line",
    "read_threads",
    "release",
    "released_together",
    "run_child",
    "spawn",
    "spawn_paused",
    "wait_reached",
]


PRELOAD = (
    "sqlite3",
    "memconform.adapters.registry",
    "memconform.contract",
    "memconform.harness.proxy",
    "memconform.mutants",
    "memconform.values",
)
"""The kit's modules a check child imports, which its fork server imports once."""

GRACE = 1.0
"""Seconds the held-writer phase lets the second writer run before releasing the
first (a correct store may keep it waiting on a lock; that is fine)."""


def spawn(
    job: Mapping[str, Any],
    *,
    extra_env: Mapping[str, str] | None = None,
    pass_fds: Sequence[int] = (),
    stdin: bool = False,
) -> Process:
    """A fresh process doing ``job`` (:mod:`memconform.steps.check_jobs`);
    ``stdin``: give it a pipe to read from (else it reads nothing)."""
    measuring = measurement.child_argument()
    if measuring is not None:
        job = {**job, "coverage": measuring}
    return start(
        "memconform.steps.check_jobs", json.dumps(job),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        env=fresh_environment(extra=extra_env), pass_fds=pass_fds, preload=PRELOAD,
    )


def read_line(proc: Process, timeout: float) -> dict[str, Any] | None:
    """The child's next JSON line, read straight from its descriptor (nothing is
    buffered, so :func:`finish` later sees the rest), waiting at most
    ``timeout`` seconds; ``None`` at the end of its output or on timeout."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    data = bytearray()
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready = readable([fd], max(left, 0))
        if not ready:
            return None
        chunk = os.read(fd, 1)
        if not chunk:
            return None
        data += chunk
    text = data.decode("utf-8", "replace")
    parsed = json_lines(text)
    if not parsed:  # the store's own output, not the kit's: read on
        return read_line(proc, max(deadline - time.monotonic(), 0))
    line = parsed[0]
    raise_reported(line, "")
    return line


def json_lines(text: str) -> list[dict[str, Any]]:
    """The kit's JSON objects among a child's output lines; whatever else the
    store printed (even a line that starts with a brace) is left out."""
    found = []
    for raw in text.splitlines():
        if not raw.startswith("{"):
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def raise_reported(line: Mapping[str, Any], what: str) -> None:
    if "error" in line:
        raise ChildError(
            str(line.get("method", "?")),
            f"in the {what or 'child'} process: {line['error']}",
            refused=bool(line.get("refused")),
        )


def release(proc: Process) -> None:
    """Write the one byte a waiting child reads (a child that has already ended
    is fine); :func:`finish` closes its stdin later."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.write("g")
        proc.stdin.flush()


def finish(proc: Process, timeout: float, what: str) -> list[dict[str, Any]]:
    """Wait for a child and parse its remaining JSON lines; raise
    :class:`ChildError` when it hung, reported a store error or crashed."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        measurement.note_killed(f"the {what} process (hung)")
        proc.communicate()
        raise ChildError(
            "append", f"the {what} process did not finish within {timeout:g} s"
        ) from None
    out, err = out or "", err or ""  # a stream already read to its end and closed
    lines = json_lines(out)
    for line in lines:
        raise_reported(line, what)
    if proc.returncode != 0:
        raise ChildError("open", f"the {what} process exited {proc.returncode}: {err[-800:]}")
    return lines


def kill(proc: Process, what: str = "a writer killed on purpose") -> None:
    """SIGKILL ``proc`` (already ended: nothing to do) and reap it."""
    if proc.poll() is None:
        measurement.note_killed(what)
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGKILL)
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.communicate()


def released_together(
    jobs: Sequence[Mapping[str, Any]],
    timeout: float,
    what: str,
    envs: Sequence[Mapping[str, str] | None] = (),
) -> list[list[dict[str, Any]]]:
    """Start a child for each of ``jobs`` (``envs[i]``: extra environment of the
    ``i``-th), wait until every one has reported ``{"ready": true}``, release
    them all at once and return each child's remaining JSON lines, in the order
    of ``jobs``. A child that ends before it is ready, hangs or reports a store
    error raises :class:`ChildError`; none is left running."""
    procs = [
        spawn(job, stdin=True, extra_env=envs[n] if n < len(envs) else None)
        for n, job in enumerate(jobs)
    ]
    try:
        for n, proc in enumerate(procs):
            if read_line(proc, timeout * 4) is None:
                release(proc)
                finish(proc, timeout * 4, f"{what} {n}")
                raise ChildError("open", f"{what} {n} ended before it was ready")
        for proc in procs:
            release(proc)
        return [finish(proc, timeout * 8, f"{what} {n}") for n, proc in enumerate(procs)]
    finally:
        for proc in procs:
            if proc.poll() is None:
                kill(proc)


def run_child(
    job: Mapping[str, Any], timeout: float, what: str, env: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """A fresh process doing ``job`` (``env``: extra environment) to its end."""
    return finish(spawn(job, extra_env=env), timeout, what)


def read_threads(
    url: str, mutant: str | None, timeout: float, threads: list[str], *, uncommitted: bool
) -> dict[str, list[str]]:
    """The message ids a fresh process reads from each of ``threads``."""
    read = run_child(
        child_job("read", url, mutant, timeout, threads=threads, include_uncommitted=uncommitted),
        timeout * 4,
        "reading",
    )[-1]["read"]["messages"]
    return {t: [m["id"] for m in ms] for t, ms in read.items()}


def wait_reached(fd: int, timeout: float) -> bool:
    """Whether the child wrote to the ``reached`` pipe (``False``: it closed it,
    i.e. ended without reaching the row point, or the timeout passed)."""
    ready = readable([fd], timeout)
    return bool(ready) and os.read(fd, 64).startswith(b"reached")


def child_job(
    kind: str, url: str, mutant: str | None, timeout: float, **fields: Any
) -> dict[str, Any]:
    return {"kind": kind, "url": url, "mutant": mutant, "timeout": timeout, **fields}


def spawn_paused(job: Mapping[str, Any], row: int) -> tuple[Process, int, int]:
    """``job``'s child with the kit's pause armed before the ``row``-th row it
    writes (0: the first): the child, the descriptor it writes ``reached`` to
    when it stops there (:func:`wait_reached`), and the one that lets it go
    (:func:`let_go`)."""
    reached_r, reached_w = os.pipe()
    hold_r, hold_w = os.pipe()
    proc = spawn(
        job,
        extra_env={PAUSE_ENV: pause_env_value(row, reached_w, hold_r)},
        pass_fds=(reached_w, hold_r),
    )
    os.close(reached_w)
    os.close(hold_r)
    return proc, reached_r, hold_w


def let_go(reached: int, hold: int) -> None:
    """Let a child of :func:`spawn_paused` go on (one that has ended is fine)
    and close both descriptors."""
    with contextlib.suppress(BrokenPipeError, OSError):
        os.write(hold, b"g")
    os.close(hold)
    os.close(reached)


def await_ready(proc: Process, what: str, timeout: float) -> None:
    """Wait for a child's ``{"ready": true}``."""
    line = read_line(proc, timeout * 4)
    if line is None or not line.get("ready"):
        release(proc)
        finish(proc, timeout * 4, what)
        raise ChildError("open", f"the {what} process ended before it was ready")
