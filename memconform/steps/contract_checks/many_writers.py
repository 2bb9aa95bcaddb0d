"""Writes of every kind a store accepts, made by several processes: raced
(writers released at the same instant) and relayed (one process after another,
each in a different time zone).

Each writer makes a run of writes of one kind (:data:`memconform.steps.check_jobs.WRITES`:
messages, commit-flag changes, error records, turn records, new state keys,
facts), each naming one thing; a fresh process in yet another time zone then
reads back what the store holds. Nothing acknowledged may be lost or held
twice; where the kind keeps an order (messages, error records, turn records),
each writer's writes keep the order it made them, and relayed writes keep the
order of the relay. A store that reads, changes and rewrites one shared
document loses raced writes; one that orders by a local wall-clock stamp puts
a later process's writes first when its zone is behind."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memconform.steps.contract_checks.children import child_job, released_together, run_child
from memconform.steps.contract_checks.result import CheckResult, ChildError, error_result

__all__ = ["ORDERED", "ZONES", "check_raced_writes", "check_relayed_writes"]

ORDERED = frozenset({"message", "error", "record"})
"""The kinds of write whose reads keep the order they were made in."""

ZONES = ("Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu", "America/St_Johns")
"""The writers' time zones, in turn (UTC+14, UTC-11, UTC+5:45, UTC-3:30); the
reader runs in UTC."""

_WHAT = {
    "message": "message",
    "commit": "commit-flag change",
    "error": "error record",
    "record": "turn record",
    "key": "new state key",
    "fact": "fact",
}
"""Each kind of write in words (the plural adds an s)."""


def check_raced_writes(
    url: str, thread: str, write: str, *, writers: int = 4, count: int = 25,
    mutant: str | None = None, timeout: float = 30.0,
) -> CheckResult:
    """Release ``writers`` writers at once, each making ``count`` writes of the
    kind ``write`` to ``thread`` (also the scope of keys and facts)."""
    expected = _expected(write, relayed=False)
    jobs = [child_job("scribe", url, mutant, timeout, thread=thread, write=write, writer=w,
                      count=count) for w in range(writers)]
    try:
        outputs = released_together(jobs, timeout, f"{_WHAT[write]} writer", _zones(writers))
        made = [_wrote(lines) for lines in outputs]
        held = _read(url, thread, write, made, mutant, timeout)
    except ChildError as exc:
        return error_result(expected, exc)
    problems = _judge(write, made, held, relayed=False)
    how = f"{writers} writers in {writers} time zones released at the same instant, {count} each"
    return CheckResult(
        not problems, expected,
        "\n".join([*problems, how]) if problems else f"nothing lost, nothing twice ({how})",
        deterministic=False,
    )


def check_relayed_writes(
    url: str, thread: str, write: str, *, writers: int = 3, count: int = 3,
    mutant: str | None = None, timeout: float = 30.0,
) -> CheckResult:
    """Let ``writers`` processes, one after another and each in a different time
    zone, make ``count`` writes of the kind ``write`` to ``thread``."""
    expected = _expected(write, relayed=True)
    made: list[list[str]] = []
    try:
        for w, zone in enumerate(_zones(writers)):
            job = child_job("scribe", url, mutant, timeout, thread=thread, write=write,
                            writer=w, count=count)
            made.append(_wrote(run_child(job, timeout * 4, f"{_WHAT[write]} writer {w}", zone)))
        held = _read(url, thread, write, made, mutant, timeout)
    except ChildError as exc:
        return error_result(expected, exc)
    problems = _judge(write, made, held, relayed=True)
    zones = ", ".join(z["TZ"] for z in _zones(writers))
    how = f"{writers} processes one after another in the zones {zones}, {count} each"
    return CheckResult(
        not problems, expected,
        "\n".join([*problems, how]) if problems else f"all held in the relay's order ({how})",
    )


def _expected(write: str, *, relayed: bool) -> str:
    held = f"every acknowledged {_WHAT[write]} held once"
    if write not in ORDERED:
        return held
    if relayed:
        return f"{held}, in the order the processes made them"
    return f"{held}, each writer's {_WHAT[write]}s in its order"


def _zones(writers: int) -> list[Mapping[str, str]]:
    return [{"TZ": ZONES[w % len(ZONES)]} for w in range(writers)]


def _wrote(lines: Sequence[Mapping[str, object]]) -> list[str]:
    for line in lines:
        if "wrote" in line:
            return [str(name) for name in line["wrote"]]  # type: ignore[attr-defined]
    raise ChildError("open", "a writer ended without reporting its writes")


def _read(
    url: str, thread: str, write: str, made: list[list[str]], mutant: str | None, timeout: float
) -> list[str]:
    names = [name for run in made for name in run]
    job = child_job("read-written", url, mutant, timeout, thread=thread, write=write, names=names)
    lines = run_child(job, timeout * 4, "reading", {"TZ": "UTC"})
    return [str(name) for name in lines[-1]["held"]]


def _judge(write: str, made: list[list[str]], held: list[str], *, relayed: bool) -> list[str]:
    what = _WHAT[write]
    problems = []
    acked = [name for run in made for name in run]
    lost = [name for name in acked if name not in held]
    if lost:
        problems.append(f"{len(lost)} of {len(acked)} acknowledged {what}s are not held: "
                        f"{', '.join(lost[:8])}{' …' if len(lost) > 8 else ''}")
    twice = sorted({name for name in held if held.count(name) > 1})
    if twice:
        problems.append(f"held more than once: {', '.join(twice[:8])}")
    if write not in ORDERED or lost or twice:
        return problems
    if relayed:
        made_here = set(acked)
        mine = [name for name in held if name in made_here]
        if mine != acked:
            problems.append(f"the {what}s come back as {mine}, not in the order the processes "
                            f"made them: {acked}")
        return problems
    for w, run in enumerate(made):
        its_own = set(run)
        own = [name for name in held if name in its_own]
        if own != run:
            problems.append(f"writer {w}'s {what}s come back as {own}, not in its order")
    return problems
