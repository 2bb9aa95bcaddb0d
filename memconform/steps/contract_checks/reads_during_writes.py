"""Reads during writes: a reader process reads a thread again and again while a
writer process appends batches to it (held first inside a batch at the row
point, where the store has one); every read must show whole batches in order
and keep what earlier reads showed (:func:`judge_reads`)."""

from __future__ import annotations

from typing import Any

from memconform.harness.fresh_process import Process
from memconform.steps.contract_checks.children import (
    GRACE,
    await_ready,
    child_job,
    finish,
    kill,
    let_go,
    read_line,
    read_threads,
    release,
    spawn,
    spawn_paused,
    wait_reached,
)
from memconform.steps.contract_checks.result import CheckResult, ChildError, error_result, invisible

__all__ = ["check_reads_during_writes", "judge_reads"]


_ORDER_WAIT = 2 * GRACE
"""Seconds a writer appending while another is held at the row point may take to
be acknowledged before the check concludes that the store makes it wait for the
held writer (allowed); a bound on waiting, never a verdict on speed. The writer
has already opened the store and said it is appending, so what is left is one
small batch: a store that does not wait for the held writer acknowledges it in
milliseconds, and one that does (SQLite's write lock) costs this whole bound on
every run."""


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
            problems += [f"{thread}-held: {p}" for p in judge_reads(ids[:2], [found], final=False)]
            order = _order_around_held(url, f"{thread}-order", size, uncommitted, mutant, timeout)
            if order is not None:
                notes.append(order[0])
                problems += [f"{thread}-order: {p}" for p in order[1]]
        seen, reads = _watched(url, thread, batches, size, steps, uncommitted, mutant, timeout)
    except ChildError as exc:
        return error_result(expected, exc)
    if not seen[-1]:
        return invisible(expected)
    found_held = bool(problems)
    problems += judge_reads(ids, seen, final=True)
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
    held, reached_r, hold_w = spawn_paused(
        child_job("writer", url, mutant, timeout, writer=0, **job), 0
    )
    other: Process | None = None
    reached = False
    between: list[str] | None = None
    try:
        reached = wait_reached(reached_r, timeout * 4)
        if reached:
            other = spawn(child_job("writer", url, mutant, timeout, writer=1, **job))
            line = read_line(other, timeout * 4)  # {"appending": ...}
            if line is not None and "appending" in line:
                line = read_line(other, _ORDER_WAIT)
            if line is not None and "acked" in line:
                between = read_threads(url, mutant, timeout, [thread], uncommitted=uncommitted)[
                    thread
                ]
    finally:
        let_go(reached_r, hold_w)
        refusals = []
        for proc, what in ((held, "held writer"), (other, "writer 1")):
            if proc is None:
                continue
            try:
                finish(proc, timeout * 4, what)
            except ChildError as exc:
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
    after = read_threads(url, mutant, timeout, [thread], uncommitted=uncommitted)[thread]
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
    still waiting after :data:`GRACE` seconds is kept waiting by the writer (a
    lock: allowed) and reads once the writer is let go. ``(how, ids read)``,
    or ``None`` when the store has no row point."""
    reader = spawn(
        child_job("watch", url, mutant, timeout, thread=thread, total=2 * size, steps=1,
             include_uncommitted=uncommitted),
        stdin=True,
    )
    try:
        await_ready(reader, "reading", timeout)
    except ChildError:
        kill(reader, "a child of a check that went wrong")
        raise
    proc, reached_r, hold_w = spawn_paused(
        child_job("writer", url, mutant, timeout, writer=0, shared=thread, own=None, batches=2,
             size=size),
        size + size // 2,
    )
    line: dict[str, Any] | None = None
    held = False
    try:
        held = wait_reached(reached_r, timeout * 4)
        release(reader)  # its one read, while the writer is held (if it has a row point)
        if held:
            line = read_line(reader, GRACE)
    finally:
        let_go(reached_r, hold_w)
        try:
            finish(proc, timeout * 4, "held writer")
        finally:
            rest = finish(reader, timeout * 4, "reading")
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


def _watched(
    url: str, thread: str, batches: int, size: int, steps: int, uncommitted: bool,
    mutant: str | None, timeout: float,
) -> tuple[list[list[str]], int]:
    """A writer and a polling reader released at the same instant: every
    distinct read, in order, then a fresh process's read once the writer
    finished; and how many reads the poller made."""
    writer = spawn(
        child_job("writer", url, mutant, timeout, writer=0, shared=thread, own=None,
             batches=batches, size=size, barrier=True),
        stdin=True,
    )
    reader = spawn(
        child_job("watch", url, mutant, timeout, thread=thread, total=batches * size, steps=steps,
             include_uncommitted=uncommitted),
        stdin=True,
    )
    seen: list[list[str]] = []
    reads = 0
    try:
        await_ready(writer, "writer", timeout)
        await_ready(reader, "reading", timeout)
        release(reader)
        release(writer)
        for line in finish(reader, timeout * 8, "reading"):
            if "seen" in line:
                seen.append([str(i) for i in line["seen"]])
            reads = int(line.get("reads", reads))
        finish(writer, timeout * 8, "writer")
    finally:
        for proc in (writer, reader):
            if proc.poll() is None:
                kill(proc, "a child of a check that went wrong")
    final = read_threads(url, mutant, timeout, [thread], uncommitted=uncommitted)[thread]
    return [*seen, final], reads


def judge_reads(
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
