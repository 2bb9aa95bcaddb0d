"""The ``atomic-batch`` check: a writer is killed with SIGKILL in the middle of
a batch, and another process must find the batch wholly there or wholly absent.

For stores whose adapter calls :func:`memconform.harness.faults.batch_row_pause`
the kill lands before a known row. For any other store the kit measures how
long a large append takes and kills writers at times spread over that span
until enough kills landed while an append was in flight (the writer had said
it started and not that it returned), while a reader polls the thread being
written; too few such kills make the result inconclusive.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from typing import Any

from memconform.harness.fresh_process import Process
from memconform.steps.contract_checks.children import (
    child_job,
    finish,
    kill,
    let_go,
    read_line,
    read_threads,
    spawn,
    spawn_paused,
    wait_reached,
)
from memconform.steps.contract_checks.result import (
    CheckResult,
    ChildError,
    error_result,
    invisible,
)

__all__ = ["check_atomic_batch"]


_SPREAD = 0.6180339887498949
"""Kill offsets are the fractional parts of n times this (the golden ratio's
fraction): a fixed sequence that covers the span of an append evenly."""


def check_atomic_batch(
    url: str,
    thread: str,
    *,
    capabilities: Iterable[str],
    size: int = 6,
    kill_before: int = 3,
    kills: int = 3,
    attempts: int = 20,
    big: int = 400,
    text_size: int = 1024,
    budget: float = 60.0,
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """Kill writers with SIGKILL in the middle of a batch; another process must
    find each batch wholly there or wholly absent.

    With the adapter's row point, one kill lands before row ``kill_before`` of a
    ``size``-message batch. Without it, batches of ``big`` messages are appended
    and killed at times spread over the measured span of one such append, at
    most ``attempts`` times and within ``budget`` seconds, until ``kills`` kills
    landed while an append was in flight; a reader polls the thread being
    written all along and must never see part of a batch."""
    caps = frozenset(capabilities)
    uncommitted = "commit-flags" in caps
    expected = "every batch whose writer was killed wholly stored or wholly absent, never partly"
    probe = f"{thread}-probe"
    notes: list[str] = []
    for n, (rows, before) in enumerate(((size, kill_before), *LATE_KILLS)):
        try:
            pinned = _kill_at_row_point(
                url, f"{thread}-{n}" if n else thread, f"{probe}-{n}" if n else probe, rows,
                before, uncommitted, mutant, timeout,
            )
            if pinned is None:
                return _timed_kills(
                    url, thread, probe, kills, attempts, big, text_size, budget, uncommitted,
                    mutant, timeout, expected,
                )
        except ChildError as exc:
            return error_result(expected, exc)
        note, found = pinned
        if found is None:
            return invisible(expected)
        stored = _judge_batch([f"k{i}" for i in range(rows)], found)
        notes.append(f"{note}; the batch was {stored}: {len(found)} of {rows} found by "
                     "another process")
        if stored == "partly stored":
            return CheckResult(False, expected, notes[-1], details={"found": found})
    return CheckResult(True, expected, "; ".join(notes))


LATE_KILLS = ((257, 256),)
"""Kills at the row point past the first rows: before the last row of a batch
longer than the chunks a store may commit on their own (50, 100, 256 rows)."""


def _judge_batch(ids: list[str], found: list[str]) -> str:
    if found == ids:
        return "wholly stored"
    return "wholly absent" if not found else "partly stored"


def _kill_at_row_point(
    url: str, thread: str, probe: str, size: int, kill_before: int, uncommitted: bool,
    mutant: str | None, timeout: float,
) -> tuple[str, list[str] | None] | None:
    """Append one probe message, then kill the writer paused before row
    ``kill_before`` of a batch; ``(how, ids found)`` (``None`` for the ids when
    the probe was invisible to another process), or ``None`` when the store
    never reached the row point."""
    proc, reached_r, hold_w = spawn_paused(
        child_job("kill-target", url, mutant, timeout, thread=thread, probe=probe, size=size,
             text_size=64),
        1 + kill_before,
    )
    try:
        reached = wait_reached(reached_r, timeout * 4)
        if reached:
            kill(proc)
    finally:
        let_go(reached_r, hold_w)  # a killed writer reads nothing more
    if not reached:
        finish(proc, timeout * 4, "writing")  # raises what went wrong, if anything
        return None
    read = read_threads(url, mutant, timeout, [probe, thread], uncommitted=uncommitted)
    if not read[probe]:
        return "", None
    ids = {f"k{i}" for i in range(size)}
    return (
        f"the writer was killed before row {kill_before} of {size} (at the adapter's row point)",
        [i for i in read[thread] if i in ids],
    )


def _timed_kills(
    url: str, thread: str, probe: str, kills: int, attempts: int, big: int, text_size: int,
    budget: float, uncommitted: bool, mutant: str | None, timeout: float, expected: str,
) -> CheckResult:
    """Kills spread over the measured span of a ``big``-message append, with a
    polling reader; see :func:`check_atomic_batch`."""
    reader = spawn(
        child_job("poll", url, mutant, timeout, probe=probe, measure=f"{thread}-measure", size=big,
             text_size=text_size, include_uncommitted=uncommitted),
        stdin=True,
    )
    assert reader.stdin is not None
    partial: list[str] = []
    landed: list[float] = []  # where each in-flight kill landed, as a fraction of the span
    tried = 0
    reads = 0
    try:
        visible = read_line(reader, timeout * 4)
        if visible is None:
            finish(reader, timeout * 4, "reading")
            raise ChildError("messages", "the reading process ended without reading")
        if not visible["visible"]:
            finish(reader, timeout * 4, "reading")
            return invisible(expected)
        measured = read_line(reader, timeout * 4)
        if measured is None:
            finish(reader, timeout * 4, "reading")
            raise ChildError("append", "the reading process ended without timing its append")
        span = max(float(measured["span"]), 1e-4)
        started = time.monotonic()
        while (
            not partial and len(landed) < kills and tried < attempts
            and time.monotonic() - started < budget
        ):
            name = f"{thread}-kill-{tried}"
            fraction = ((tried + 1) * _SPREAD) % 1.0
            tried += 1
            partial += _watch(reader, name, big, timeout)
            proc = spawn(
                child_job("kill-target", url, mutant, timeout, thread=name, size=big,
                     text_size=text_size)
            )
            try:
                if read_line(proc, timeout * 4) is None:  # {"start": t}
                    finish(proc, timeout * 4, "killed writer")
                    raise ChildError("append", "the writer ended before it started appending")
                done = read_line(proc, span * fraction)  # {"done": t} if it returned first
            finally:
                kill(proc)
            if done is None:
                landed.append(fraction)
    finally:
        tail = finish(reader, timeout * 4, "reading while appends ran")
    for line in tail:
        partial += _partials(line, big)
        reads = int(line.get("reads", reads))
    where = ", ".join(f"{f:.0%}" for f in landed) or "none"
    how = (
        f"best effort: the store has no row point; one append of {big} messages took "
        f"{span * 1000:.1f} ms; {tried} writers were killed at times spread over that span, "
        f"{len(landed)} of them while their append was in flight (at {where} of it); "
        f"another process polled the thread being written {reads} times"
    )
    if partial:
        return CheckResult(False, expected, "\n".join([*partial[:8], how]), deterministic=False)
    if len(landed) < kills:
        return CheckResult(
            False,
            expected,
            f"only {len(landed)} of the {kills} kills needed landed while an append was in "
            f"flight ({how})",
            deterministic=False,
            conclusive=False,
        )
    return CheckResult(
        True,
        expected,
        f"{how}; every batch was wholly stored or wholly absent and no read saw part of one",
        deterministic=False,
    )


def _partials(line: Mapping[str, Any], big: int) -> list[str]:
    if "partial" in line:
        p = line["partial"]
        return [
            f"{p['thread']}: another process saw {p['seen']} of {p['of']} messages of a "
            "batch while it was being appended"
        ]
    if "after" in line and 0 < line["seen"] < big:
        return [
            f"{line['after']}: partly stored, {line['seen']} of {big} messages found after "
            "its writer was killed"
        ]
    return []


def _watch(reader: Process, name: str, big: int, timeout: float) -> list[str]:
    """Tell the reader to poll ``name``; return what it found wrong with the
    thread it polled before (read after that thread's writer was killed)."""
    assert reader.stdin is not None
    first = name.endswith("-kill-0")
    with contextlib.suppress(BrokenPipeError, OSError):
        reader.stdin.write(name + "\n")
        reader.stdin.flush()
    found: list[str] = []
    while not first:
        line = read_line(reader, timeout * 4)
        if line is None:
            raise ChildError("messages", "the reading process stopped answering")
        found += _partials(line, big)
        if "after" in line:
            break
    return found
