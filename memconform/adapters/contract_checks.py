"""Store promises that need several processes: durable, concurrent-writers and
atomic-batch.

Each check takes a store URL and a thread id (unique to the caller), starts
fresh processes (:mod:`memconform.adapters.fresh_process`: the kit's import
path as an argument, no environment but ``PATH``) that open the store by that
URL and do one job of :mod:`memconform.adapters.check_jobs`, and judges what a
*fresh* process reads back.

- :func:`check_durable`: one process writes, acknowledges and is then killed
  outright (SIGKILL: it never closes the store); a fresh process reads.
- :func:`check_concurrent_writers`: first a writer is held inside its batch
  (at the adapter's row point) while a second writer appends to the same
  thread; then, in rounds that widen, several writers released at the same
  instant append to one shared thread and to threads of their own. Nothing
  acknowledged may be lost, each writer's order must hold, and no batch may
  be interleaved with another.
- :func:`check_atomic_batch`: a writer is killed with SIGKILL in the middle of
  a batch. For stores whose adapter calls
  :func:`memconform.adapters.faults.batch_row_pause` the kill lands before a
  known row. For any other store the kit measures how long a large append
  takes and kills writers at times spread over that span until enough kills
  landed while an append was in flight (the writer had said it started and
  not that it returned), while a reader polls the thread being written; too
  few such kills make the result inconclusive.

- :func:`check_reads_during_writes`: a reader process reads a thread again
  and again while a writer process appends batches to it (held first inside
  a batch at the row point, where the store has one); every read must show
  whole batches in order and keep what earlier reads showed.

Every result says in its evidence how it was reached (where the kills landed,
how many writers and rounds ran). A child whose store call raised where the
check needs success, or that hangs past the timeout, makes the result an
adapter error (verdict ``error``) naming the method.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memconform import measurement
from memconform.adapters.faults import PAUSE_ENV, pause_env_value
from memconform.adapters.fresh_process import fresh_environment, python_command
from memconform.values import same_value

__all__ = [
    "CheckResult",
    "check_atomic_batch",
    "check_concurrent_writers",
    "check_durable",
    "check_reads_during_writes",
]

_GRACE = 1.0
"""Seconds the held-writer phase lets the second writer run before releasing the
first (a correct store may keep it waiting on a lock; that is fine)."""

_ORDER_WAIT = 5.0
"""Seconds a writer appending while another is held at the row point may take to
be acknowledged before the check concludes that the store makes it wait for the
held writer (allowed); a bound on waiting, never a verdict on speed."""

_SPREAD = 0.6180339887498949
"""Kill offsets are the fractional parts of n times this (the golden ratio's
fraction): a fixed sequence that covers the span of an append evenly."""


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one multi-process check.

    ``expected`` and ``evidence`` are human-readable; the evidence always says
    how the result was reached. ``deterministic`` is ``False`` when the check
    could not control where the fault landed, and for a failure found only where
    timing put the processes (writers released at once, a reader polling): such
    a failure is real, but another run may not meet the same moment. ``adapter_error`` is
    ``(method, problem)`` when the store itself broke. ``conclusive`` is
    ``False`` when the check could not exercise the promise (what one process
    writes is invisible to the next, too few kills landed during an append):
    neither a pass nor a failure.
    """

    passed: bool
    expected: str
    evidence: str
    deterministic: bool = True
    adapter_error: tuple[str, str] | None = None
    conclusive: bool = True
    details: Mapping[str, Any] = field(default_factory=dict)


class _ChildError(Exception):
    """A child could not do what the check needs. ``refused`` is ``True`` when the
    store refused the call with ``StoreError`` (a failure of the rule, not of the
    adapter)."""

    def __init__(self, method: str, problem: str, refused: bool = False) -> None:
        super().__init__(f"{method}: {problem}")
        self.method = method
        self.problem = problem
        self.refused = refused


# -- children -------------------------------------------------------------------------------


def _spawn(
    job: Mapping[str, Any],
    *,
    extra_env: Mapping[str, str] | None = None,
    pass_fds: Sequence[int] = (),
    stdin: bool = False,
) -> subprocess.Popen[str]:
    """A fresh process doing ``job`` (:mod:`memconform.adapters.check_jobs`);
    ``stdin``: give it a pipe to read from (else it reads nothing)."""
    measuring = measurement.child_argument()
    if measuring is not None:
        job = {**job, "coverage": measuring}
    return subprocess.Popen(
        python_command("memconform.adapters.check_jobs", json.dumps(job)),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=fresh_environment(extra=extra_env),
        pass_fds=tuple(pass_fds),
    )


def _read_line(proc: subprocess.Popen[str], timeout: float) -> dict[str, Any] | None:
    """The child's next JSON line, read straight from its descriptor (nothing is
    buffered, so :func:`_finish` later sees the rest), waiting at most
    ``timeout`` seconds; ``None`` at the end of its output or on timeout."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    data = bytearray()
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        if not ready:
            return None
        chunk = os.read(fd, 1)
        if not chunk:
            return None
        data += chunk
    text = data.decode("utf-8", "replace")
    parsed = _json_lines(text)
    if not parsed:  # the store's own output, not the kit's: read on
        return _read_line(proc, max(deadline - time.monotonic(), 0))
    line = parsed[0]
    _raise_reported(line, "")
    return line


def _json_lines(text: str) -> list[dict[str, Any]]:
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


def _raise_reported(line: Mapping[str, Any], what: str) -> None:
    if "error" in line:
        raise _ChildError(
            str(line.get("method", "?")),
            f"in the {what or 'child'} process: {line['error']}",
            refused=bool(line.get("refused")),
        )


def _release(proc: subprocess.Popen[str]) -> None:
    """Write the one byte a waiting child reads (a child that has already ended
    is fine); :func:`_finish` closes its stdin later."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.write("g")
        proc.stdin.flush()


def _finish(proc: subprocess.Popen[str], timeout: float, what: str) -> list[dict[str, Any]]:
    """Wait for a child and parse its remaining JSON lines; raise
    :class:`_ChildError` when it hung, reported a store error or crashed."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        measurement.note_killed(f"the {what} process (hung)")
        proc.communicate()
        raise _ChildError(
            "append", f"the {what} process did not finish within {timeout:g} s"
        ) from None
    lines = _json_lines(out)
    for line in lines:
        _raise_reported(line, what)
    if proc.returncode != 0:
        raise _ChildError("open", f"the {what} process exited {proc.returncode}: {err[-800:]}")
    return lines


def _kill(proc: subprocess.Popen[str], what: str = "a writer killed on purpose") -> None:
    """SIGKILL ``proc`` (already ended: nothing to do) and reap it."""
    if proc.poll() is None:
        measurement.note_killed(what)
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGKILL)
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.communicate()


def _run(job: Mapping[str, Any], timeout: float, what: str) -> list[dict[str, Any]]:
    return _finish(_spawn(job), timeout, what)


def _read_threads(
    url: str, mutant: str | None, timeout: float, threads: list[str], *, uncommitted: bool
) -> dict[str, list[str]]:
    """The message ids a fresh process reads from each of ``threads``."""
    read = _run(
        _job("read", url, mutant, timeout, threads=threads, include_uncommitted=uncommitted),
        timeout * 4,
        "reading",
    )[-1]["read"]["messages"]
    return {t: [m["id"] for m in ms] for t, ms in read.items()}


def _wait_reached(fd: int, timeout: float) -> bool:
    """Whether the child wrote to the ``reached`` pipe (``False``: it closed it,
    i.e. ended without reaching the row point, or the timeout passed)."""
    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready) and os.read(fd, 64).startswith(b"reached")


def _job(kind: str, url: str, mutant: str | None, timeout: float, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "url": url, "mutant": mutant, "timeout": timeout, **fields}


def _error_result(expected: str, exc: _ChildError) -> CheckResult:
    if exc.refused:
        return CheckResult(False, expected, f"the store refused a call the check needs: {exc}")
    return CheckResult(False, expected, str(exc), adapter_error=(exc.method, exc.problem))


def _sample_batches(thread: str, capabilities: frozenset[str]) -> list[list[dict[str, Any]]]:
    committed_flag = "commit-flags" not in capabilities
    return [
        [
            _msg("d1", "user", "Where is the config? \u202eRTL\u202c e\u0301 😀", thread),
            _msg(
                "d2",
                "assistant",
                "",
                thread,
                parts=[{"type": "tool-call", "id": "c1", "name": "ls", "args": {"path": "."}}],
            ),
            _msg("d3", "tool", "settings/\n  app.toml\n", thread, metadata={"exit": 0}),
        ],
        [
            _msg("d4", "assistant", "It lives in settings/.", thread, committed=committed_flag),
            _msg("d5", "user", "  thanks  ", thread),
        ],
    ]


def _msg(
    mid: str,
    role: str,
    text: str,
    thread: str,
    *,
    parts: list[Any] | None = None,
    metadata: dict[str, Any] | None = None,
    committed: bool = True,
) -> dict[str, Any]:
    return {
        "id": mid,
        "role": role,
        "text": text,
        "parts": parts or [],
        "run_id": "run-1",
        "round": 1,
        "turn_id": "T1",
        "committed": committed,
        "metadata": {"thread": thread, **(metadata or {})},
    }


def check_durable(
    url: str,
    thread: str,
    *,
    capabilities: Iterable[str],
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """One process writes messages (and state and a fact, where declared) to
    ``thread``, acknowledges, and is killed with SIGKILL without closing the
    store; a fresh process must read back exactly what was acknowledged."""
    caps = frozenset(capabilities)
    expected = (
        "a fresh process reads back every acknowledged write, field for field, after the "
        "writer was killed outright without closing the store"
    )
    write = _job(
        "write-durable",
        url,
        mutant,
        timeout,
        thread=thread,
        capabilities=sorted(caps),
        batches=_sample_batches(thread, caps),
        wait_for_kill=True,
    )
    writer = _spawn(write, stdin=True)
    try:
        line = _read_line(writer, timeout * 4)
        if line is None or "acked" not in line:
            _release(writer)
            _finish(writer, timeout * 4, "writing")  # raises what went wrong, if anything
            raise _ChildError("append", "the writing process ended without acknowledging")
        acked = line["acked"]
        _kill(writer)  # acknowledged, never closed: only what is really stored survives
        read = _run(
            _job("read-durable", url, mutant, timeout, thread=thread, capabilities=sorted(caps)),
            timeout * 4,
            "reading",
        )[-1]["read"]
    except _ChildError as exc:
        _kill(writer)
        return _error_result(expected, exc)
    problems = [
        f"{part}: wrote {json.dumps(acked[part], ensure_ascii=True)[:600]}, "
        f"read {json.dumps(read.get(part), ensure_ascii=True)[:600]}"
        for part in acked
        if not same_value(acked[part], read.get(part))
    ]
    how = (
        "the writer was killed with SIGKILL right after it acknowledged its writes "
        f"({', '.join(sorted(acked))}), so it never closed the store"
    )
    return CheckResult(
        not problems,
        expected,
        "\n".join([*problems, how]) if problems else
        f"{how}; a fresh process read back everything acknowledged",
        details={"acked": acked, "read": read},
    )


def check_concurrent_writers(
    url: str,
    thread: str,
    *,
    writers: int = 3,
    batches: int = 8,
    size: int = 3,
    rounds: int = 2,
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """The held-writer phase on ``thread``, then up to ``rounds`` rounds in which
    writers released at the same instant append to a shared thread and to
    threads of their own: round ``r`` (from 1) has ``writers * r`` writers of
    ``batches * r`` batches of ``size`` messages. The rounds stop at the first
    one that finds a problem."""
    expected = (
        "every acknowledged batch present, each batch contiguous, each writer's batches "
        "in the order acknowledged"
    )
    notes: list[str] = []
    problems: list[str] = []
    try:
        held = _held_phase(url, thread, size, mutant, timeout, notes)
        for r in range(1, rounds + 1):
            shared = f"{thread}-r{r}"
            acks = _released_round(
                url, shared, writers * r, batches * r, size, mutant, timeout
            )
            if r == 1:  # one read for the held phase and the first round
                acks += held
            threads = sorted({t for t, _, _ in acks} | {shared})
            problems += _judge_concurrency(
                acks, _read_threads(url, mutant, timeout, threads, uncommitted=False)
            )
            notes.append(
                f"round {r}: {writers * r} writers released at the same instant, "
                f"{batches * r} batches of {size} each to the shared thread and to their own"
            )
            if problems:
                break
    except _ChildError as exc:
        return _error_result(expected, exc)
    how = "; ".join(notes)
    held_at_row_point = not any(n.startswith("best effort") for n in notes)
    # what the held phase found is found every time; what only the released
    # rounds found depends on how the writers happened to meet
    timed = any(not p.startswith(f"{thread}: ") for p in problems)
    return CheckResult(
        not problems,
        expected,
        "\n".join([*problems, how]) if problems else
        f"no loss, no reordering, no interleaving ({how})",
        deterministic=held_at_row_point and not timed,
    )


def _released_round(
    url: str, shared: str, writers: int, batches: int, size: int, mutant: str | None,
    timeout: float,
) -> list[tuple[str, int, list[str]]]:
    """Start ``writers`` writers, wait until each has opened the store, release them
    all at once and collect what they acknowledged."""
    procs = [
        _spawn(
            _job(
                "writer", url, mutant, timeout, shared=shared, own=f"{shared}-own-{w}",
                writer=w, batches=batches, size=size, barrier=True,
            ),
            stdin=True,
        )
        for w in range(writers)
    ]
    acks: list[tuple[str, int, list[str]]] = []
    try:
        for w, proc in enumerate(procs):
            ready = _read_line(proc, timeout * 4)
            if ready is None:
                _release(proc)
                _finish(proc, timeout * 4, f"writer {w}")
                raise _ChildError("open", f"writer {w} ended before it was ready")
        for proc in procs:
            _release(proc)
        for w, proc in enumerate(procs):
            for line in _finish(proc, timeout * 8, f"writer {w}"):
                if "acked" in line:
                    acks.append((line["thread"], w, line["acked"]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                _kill(proc)
    return acks


def _spawn_paused(job: Mapping[str, Any], row: int) -> tuple[subprocess.Popen[str], int, int]:
    """``job``'s child with the kit's pause armed before the ``row``-th row it
    writes (0: the first): the child, the descriptor it writes ``reached`` to
    when it stops there (:func:`_wait_reached`), and the one that lets it go
    (:func:`_let_go`)."""
    reached_r, reached_w = os.pipe()
    hold_r, hold_w = os.pipe()
    proc = _spawn(
        job,
        extra_env={PAUSE_ENV: pause_env_value(row, reached_w, hold_r)},
        pass_fds=(reached_w, hold_r),
    )
    os.close(reached_w)
    os.close(hold_r)
    return proc, reached_r, hold_w


def _let_go(reached: int, hold: int) -> None:
    """Let a child of :func:`_spawn_paused` go on (one that has ended is fine)
    and close both descriptors."""
    with contextlib.suppress(BrokenPipeError, OSError):
        os.write(hold, b"g")
    os.close(hold)
    os.close(reached)


def _held_phase(
    url: str, thread: str, size: int, mutant: str | None, timeout: float, notes: list[str]
) -> list[tuple[str, int, list[str]]]:
    """Writer 0 is held inside its batch at the row point while writer 1 appends
    to the same thread; then writer 0 is let go."""
    job = {"shared": thread, "own": None, "batches": 1, "size": size}
    held, reached_r, hold_w = _spawn_paused(
        _job("writer", url, mutant, timeout, writer=0, **job), 1
    )
    other: subprocess.Popen[str] | None = None
    try:
        if _wait_reached(reached_r, timeout):
            notes.append(
                "a writer was held inside its batch at the adapter's row point while "
                "another appended to the same thread"
            )
        else:
            notes.append(
                "best effort: the store has no row point, so the first writer could not be "
                "held inside its batch"
            )
        other = _spawn(_job("writer", url, mutant, timeout, writer=1, **job))
        # {"appending": ...}: it is calling append now (bounded, so the held writer's
        # own call does not time out while we wait)
        _read_line(other, timeout / 2)
        with contextlib.suppress(subprocess.TimeoutExpired):
            other.wait(timeout=_GRACE)  # kept waiting by the held writer's lock: allowed
    finally:
        _let_go(reached_r, hold_w)
    acks: list[tuple[str, int, list[str]]] = []
    for w, proc in ((0, held), (1, other)):
        if proc is None:
            continue
        for line in _finish(proc, timeout * 4, f"writer {w}"):
            if "acked" in line:
                acks.append((line["thread"], w, line["acked"]))
    return acks


def _judge_concurrency(
    acks: list[tuple[str, int, list[str]]], stored: Mapping[str, list[str]]
) -> list[str]:
    problems: list[str] = []
    for thread, ids in stored.items():
        position = {mid: i for i, mid in enumerate(ids)}
        mine = [(w, batch) for t, w, batch in acks if t == thread]
        for w, batch in mine:
            missing = [m for m in batch if m not in position]
            if missing:
                problems.append(f"{thread}: writer {w} lost acknowledged {missing}")
                continue
            spots = [position[m] for m in batch]
            if spots != list(range(spots[0], spots[0] + len(batch))):
                around = ids[min(spots) : max(spots) + 1]
                problems.append(f"{thread}: batch {batch} of writer {w} interleaved: {around}")
        by_writer: dict[int, list[int]] = {}
        for w, batch in mine:
            if batch and batch[0] in position:
                by_writer.setdefault(w, []).append(position[batch[0]])
        for w, starts in by_writer.items():
            if starts != sorted(starts):
                problems.append(f"{thread}: writer {w}'s batches out of acknowledged order")
        acked_ids = {m for _, batch in mine for m in batch}
        extra = [m for m in ids if m not in acked_ids]
        if extra:
            problems.append(f"{thread}: unacknowledged messages stored: {extra[:10]}")
    return problems


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
    try:
        pinned = _kill_at_row_point(
            url, thread, probe, size, kill_before, uncommitted, mutant, timeout
        )
        if pinned is None:
            return _timed_kills(
                url, thread, probe, kills, attempts, big, text_size, budget, uncommitted,
                mutant, timeout, expected,
            )
    except _ChildError as exc:
        return _error_result(expected, exc)
    note, found = pinned
    if found is None:
        return _invisible(expected)
    stored = _judge_batch([f"k{i}" for i in range(size)], found)
    return CheckResult(
        stored != "partly stored",
        expected,
        f"{note}; the batch was {stored}: {len(found)} of {size} found by another process",
        details={"found": found},
    )


def check_reads_during_writes(
    url: str,
    thread: str,
    *,
    batches: int = 24,
    size: int = 4,
    steps: int = 4000,
    uncommitted: bool = False,
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """Reads by another process while a writer process appends batches: each
    read must show the first batches whole and in their order, and nothing a
    read showed may be missing from a later one.

    First, where the adapter calls the row point, a writer is held inside its
    second batch (after ``size // 2`` of its rows) of thread ``thread-held``
    while another process reads that thread: it must find exactly the first
    batch, so a store that makes rows visible one by one fails every time.
    Then a writer appends ``batches`` batches of ``size`` messages to
    ``thread`` while a reader, released at the same instant, reads it again
    and again (at most ``steps`` reads). Without a row point, when no read
    fell between none and all of the batches, nothing was seen mid-write and
    the result is inconclusive."""
    expected = (
        "every read by another process shows whole batches, in the order appended, and "
        "keeps what an earlier read showed"
    )
    notes: list[str] = []
    problems: list[str] = []
    ids = [[f"w0-b{b}-{i}" for i in range(size)] for b in range(batches)]
    total = batches * size
    try:
        held = _read_held(url, f"{thread}-held", size, uncommitted, mutant, timeout)
        if held is not None:
            note, found = held
            notes.append(note)
            problems += [f"{thread}-held: {p}" for p in _judge_reads(ids[:2], [found], final=False)]
            order = _order_around_held(url, f"{thread}-order", size, uncommitted, mutant, timeout)
            if order is not None:
                notes.append(order[0])
                problems += [f"{thread}-order: {p}" for p in order[1]]
        seen, reads = _watched(url, thread, batches, size, steps, uncommitted, mutant, timeout)
    except _ChildError as exc:
        return _error_result(expected, exc)
    if not seen[-1]:
        return _invisible(expected)
    found_held = bool(problems)
    problems += _judge_reads(ids, seen, final=True)
    between = sum(1 for got in seen[:-1] if 0 < len(got) < total)
    notes.append(
        f"{'' if held is not None else 'best effort: the store has no row point; '}"
        f"another process read the thread {reads} times while a writer appended {batches} "
        f"batches of {size}, {between} of those reads showing some but not all of them"
    )
    how = "; ".join(notes)
    if problems:
        return CheckResult(
            False, expected, "\n".join([*problems[:8], how]),
            # the polling meets the writer where timing puts it; the held phases do not
            deterministic=found_held,
            details={"seen": seen},
        )
    if held is None and between == 0:
        return CheckResult(
            False, expected, f"no read fell while the batches were being appended ({how})",
            deterministic=False, conclusive=False,
        )
    return CheckResult(
        True, expected,
        f"{how}; every read showed whole batches in order and kept what earlier reads showed",
        deterministic=held is not None,
    )


def _order_around_held(
    url: str, thread: str, size: int, uncommitted: bool, mutant: str | None, timeout: float
) -> tuple[str, list[str]] | None:
    """Writer 0 is held at the row point before the first row of its batch while
    writer 1 appends a batch to the same thread. When writer 1 is acknowledged
    within :data:`_ORDER_WAIT` seconds (a store that makes it wait for the held
    writer's lock is allowed to), another process reads the thread, writer 0 is
    let go, and a fresh process's read after both ended must begin with what
    that read showed: a batch committed later never lands before messages a
    reader has already seen (a store ordering rows by a clock read when the
    append was called, before its write, puts writer 0's batch first).
    A writer the store refused (an optimistic lock) leaves the phase empty:
    writers at once are ST-033's to judge. ``(how, problems)``, or ``None`` when
    the store has no row point."""
    job = {"shared": thread, "own": None, "batches": 1, "size": size}
    held, reached_r, hold_w = _spawn_paused(
        _job("writer", url, mutant, timeout, writer=0, **job), 0
    )
    other: subprocess.Popen[str] | None = None
    reached = False
    between: list[str] | None = None
    try:
        reached = _wait_reached(reached_r, timeout * 4)
        if reached:
            other = _spawn(_job("writer", url, mutant, timeout, writer=1, **job))
            line = _read_line(other, timeout * 4)  # {"appending": ...}
            if line is not None and "appending" in line:
                line = _read_line(other, _ORDER_WAIT)
            if line is not None and "acked" in line:
                between = _read_threads(url, mutant, timeout, [thread], uncommitted=uncommitted)[
                    thread
                ]
    finally:
        _let_go(reached_r, hold_w)
        refusals = []
        for proc, what in ((held, "held writer"), (other, "writer 1")):
            if proc is None:
                continue
            try:
                _finish(proc, timeout * 4, what)
            except _ChildError as exc:
                if not exc.refused:
                    raise
                refusals.append(str(exc))
    if not reached:
        return None
    if refusals:
        # two writers on one thread at once is ST-033's to judge; this phase
        # is about what readers see, which needs both appends to succeed
        return (
            "a writer held at the row point before its first row while another appended to "
            f"the same thread was refused ({refusals[0]}), so this phase shows nothing",
            [],
        )
    if between is None:
        return (
            "a second writer appending while the first was held at the row point waited "
            "for it (allowed), so no read fell between their batches",
            [],
        )
    after = _read_threads(url, mutant, timeout, [thread], uncommitted=uncommitted)[thread]
    how = (
        "a writer was held at the row point before its first row while another writer "
        "appended and was acknowledged; another process read the thread, then the held "
        "writer was let go"
    )
    if after[: len(between)] == between:
        return how, []
    return how, [
        f"a read showed {between[:8]} while the first writer was held; after it was let go "
        f"a read showed {after[:12]}: its batch, committed later, was put before messages "
        "an earlier read showed"
    ]


def _read_held(
    url: str, thread: str, size: int, uncommitted: bool, mutant: str | None, timeout: float
) -> tuple[str, list[str]] | None:
    """A reader opens the store first; then a writer of two batches is held at
    the row point inside the second while the reader reads once. A reader
    still waiting after :data:`_GRACE` seconds is kept waiting by the writer (a
    lock: allowed) and reads once the writer is let go. ``(how, ids read)``,
    or ``None`` when the store has no row point."""
    reader = _spawn(
        _job("watch", url, mutant, timeout, thread=thread, total=2 * size, steps=1,
             include_uncommitted=uncommitted),
        stdin=True,
    )
    try:
        _ready(reader, "reading", timeout)
    except _ChildError:
        _kill(reader, "a child of a check that went wrong")
        raise
    proc, reached_r, hold_w = _spawn_paused(
        _job("writer", url, mutant, timeout, writer=0, shared=thread, own=None, batches=2,
             size=size),
        size + size // 2,
    )
    line: dict[str, Any] | None = None
    held = False
    try:
        held = _wait_reached(reached_r, timeout * 4)
        _release(reader)  # its one read, while the writer is held (if it has a row point)
        if held:
            line = _read_line(reader, _GRACE)
    finally:
        _let_go(reached_r, hold_w)
        try:
            _finish(proc, timeout * 4, "held writer")
        finally:
            rest = _finish(reader, timeout * 4, "reading")
    if not held:
        return None
    if line is not None and "seen" in line:
        return (
            f"a writer was held inside its second batch (after {size // 2} of its {size} "
            f"rows, at the adapter's row point) while another process read the thread",
            [str(i) for i in line["seen"]],
        )
    seen = [[str(i) for i in r["seen"]] for r in rest if "seen" in r]
    return (
        f"a writer was held inside its second batch (after {size // 2} of its {size} rows, "
        "at the adapter's row point); another process reading meanwhile waited for it",
        seen[0] if seen else [],
    )


def _ready(proc: subprocess.Popen[str], what: str, timeout: float) -> None:
    """Wait for a child's ``{"ready": true}``."""
    line = _read_line(proc, timeout * 4)
    if line is None or not line.get("ready"):
        _release(proc)
        _finish(proc, timeout * 4, what)
        raise _ChildError("open", f"the {what} process ended before it was ready")


def _watched(
    url: str, thread: str, batches: int, size: int, steps: int, uncommitted: bool,
    mutant: str | None, timeout: float,
) -> tuple[list[list[str]], int]:
    """A writer and a polling reader released at the same instant: every
    distinct read, in order, then a fresh process's read once the writer
    finished; and how many reads the poller made."""
    writer = _spawn(
        _job("writer", url, mutant, timeout, writer=0, shared=thread, own=None,
             batches=batches, size=size, barrier=True),
        stdin=True,
    )
    reader = _spawn(
        _job("watch", url, mutant, timeout, thread=thread, total=batches * size, steps=steps,
             include_uncommitted=uncommitted),
        stdin=True,
    )
    seen: list[list[str]] = []
    reads = 0
    try:
        _ready(writer, "writer", timeout)
        _ready(reader, "reading", timeout)
        _release(reader)
        _release(writer)
        for line in _finish(reader, timeout * 8, "reading"):
            if "seen" in line:
                seen.append([str(i) for i in line["seen"]])
            reads = int(line.get("reads", reads))
        _finish(writer, timeout * 8, "writer")
    finally:
        for proc in (writer, reader):
            if proc.poll() is None:
                _kill(proc, "a child of a check that went wrong")
    final = _read_threads(url, mutant, timeout, [thread], uncommitted=uncommitted)[thread]
    return [*seen, final], reads


def _judge_reads(
    batches: list[list[str]], seen: list[list[str]], *, final: bool
) -> list[str]:
    """What is wrong with the reads ``seen`` (in the order they were made; with
    ``final`` the last one came after the writer finished) of a thread a
    writer appended ``batches`` to: each must be the first few batches, whole
    and in order, none may lose a message an earlier one showed, and the final
    one must hold them all."""
    whole = [m for batch in batches for m in batch]
    boundaries = {0}
    for one in batches:
        boundaries.add(max(boundaries) + len(one))
    problems: list[str] = []
    before: list[str] = []
    for n, ids in enumerate(seen, 1):
        where = "the read after the writer finished" if final and n == len(seen) else f"read {n}"
        if ids == whole[: len(ids)] and len(ids) not in boundaries:
            cut = next(b for b, one in enumerate(batches) if ids[-1] in one)
            shown = sum(1 for m in batches[cut] if m in ids)
            problems.append(
                f"{where} showed part of a batch: {shown} of the {len(batches[cut])} "
                f"messages of batch {cut + 1} ({', '.join(ids[-shown:])})"
            )
        elif ids != whole[: len(ids)]:
            if sorted(ids) == sorted(whole[: len(ids)]):
                problems.append(f"{where} showed the batches out of order: {ids[:12]}")
            else:
                problems.append(
                    f"{where} is not the first batches as appended: {ids[:12]}"
                    + ("…" if len(ids) > 12 else "")
                )
        gone = [m for m in before if m not in ids]
        if gone:
            problems.append(f"{where} no longer showed {gone[:8]}, which an earlier read showed")
        before = ids
    if final and seen and seen[-1] != whole:
        problems.append(
            f"after the writer finished, another process read {len(seen[-1])} of the "
            f"{len(whole)} acknowledged messages"
        )
    return list(dict.fromkeys(problems))


def _invisible(expected: str) -> CheckResult:
    return CheckResult(
        False,
        expected,
        "what one process appended was invisible to the next, so a killed writer cannot "
        "be judged from another process",
        conclusive=False,
    )


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
    proc, reached_r, hold_w = _spawn_paused(
        _job("kill-target", url, mutant, timeout, thread=thread, probe=probe, size=size,
             text_size=64),
        1 + kill_before,
    )
    try:
        reached = _wait_reached(reached_r, timeout * 4)
        if reached:
            _kill(proc)
    finally:
        _let_go(reached_r, hold_w)  # a killed writer reads nothing more
    if not reached:
        _finish(proc, timeout * 4, "writing")  # raises what went wrong, if anything
        return None
    read = _read_threads(url, mutant, timeout, [probe, thread], uncommitted=uncommitted)
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
    reader = _spawn(
        _job("poll", url, mutant, timeout, probe=probe, measure=f"{thread}-measure", size=big,
             text_size=text_size, include_uncommitted=uncommitted),
        stdin=True,
    )
    assert reader.stdin is not None
    partial: list[str] = []
    landed: list[float] = []  # where each in-flight kill landed, as a fraction of the span
    tried = 0
    reads = 0
    try:
        visible = _read_line(reader, timeout * 4)
        if visible is None:
            _finish(reader, timeout * 4, "reading")
            raise _ChildError("messages", "the reading process ended without reading")
        if not visible["visible"]:
            _finish(reader, timeout * 4, "reading")
            return _invisible(expected)
        measured = _read_line(reader, timeout * 4)
        if measured is None:
            _finish(reader, timeout * 4, "reading")
            raise _ChildError("append", "the reading process ended without timing its append")
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
            proc = _spawn(
                _job("kill-target", url, mutant, timeout, thread=name, size=big,
                     text_size=text_size)
            )
            try:
                if _read_line(proc, timeout * 4) is None:  # {"start": t}
                    _finish(proc, timeout * 4, "killed writer")
                    raise _ChildError("append", "the writer ended before it started appending")
                done = _read_line(proc, span * fraction)  # {"done": t} if it returned first
            finally:
                _kill(proc)
            if done is None:
                landed.append(fraction)
    finally:
        tail = _finish(reader, timeout * 4, "reading while appends ran")
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


def _watch(reader: subprocess.Popen[str], name: str, big: int, timeout: float) -> list[str]:
    """Tell the reader to poll ``name``; return what it found wrong with the
    thread it polled before (read after that thread's writer was killed)."""
    assert reader.stdin is not None
    first = name.endswith("-kill-0")
    with contextlib.suppress(BrokenPipeError, OSError):
        reader.stdin.write(name + "\n")
        reader.stdin.flush()
    found: list[str] = []
    while not first:
        line = _read_line(reader, timeout * 4)
        if line is None:
            raise _ChildError("messages", "the reading process stopped answering")
        found += _partials(line, big)
        if "after" in line:
            break
    return found
