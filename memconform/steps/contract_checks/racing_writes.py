"""The racing-writes check: writes that must exclude each other still do when
processes race. Writers released at the same instant each increment one state
key by compare-and-set (reading the entry, writing the value one higher with
the version read, reading again after a conflict) and append a batch whose
message ids every writer uses. No acknowledged increment may be lost (the key
ends at the number of increments acknowledged, its version too) and each id
is stored once, by the one writer whose append was acknowledged."""

from __future__ import annotations

from dataclasses import replace

from memconform.steps.contract_checks.children import (
    child_job,
    read_threads,
    released_together,
    run_child,
)
from memconform.steps.contract_checks.result import CheckResult, ChildError, error_result

__all__ = ["check_racing_writes"]

IDS = ("raced-0", "raced-1", "raced-2")
"""The message ids every racing writer appends."""


def check_racing_writes(
    url: str,
    thread: str,
    *,
    state: bool,
    writers: int = 4,
    increments: int = 30,
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """Release ``writers`` writers at once; each appends the batch of :data:`IDS`
    to ``thread`` and, with ``state``, increments the key ``counter`` of the
    scope ``thread`` ``increments`` times by compare-and-set."""
    expected = (
        "each message id stored once, by the one writer whose append was acknowledged"
        + ("; every acknowledged increment kept (value and version equal to their count)"
           if state else "")
    )
    try:
        reports = _race(url, thread, state, writers, increments, mutant, timeout)
        held = read_threads(url, mutant, timeout, [thread], uncommitted=False)[thread]
        entry = _read_counter(url, thread, mutant, timeout) if state else None
    except ChildError as exc:
        # a refusal met in the race (SQLite's "database is locked") is as timed as the race
        return replace(error_result(expected, exc), deterministic=False)
    problems = _judge_ids(reports, held)
    if state:
        problems += _judge_counter(reports, entry)
    how = (f"{writers} writers released at the same instant"
           + (f", {increments} increments each" if state else ""))
    return CheckResult(
        not problems, expected,
        "\n".join([*problems, how]) if problems else f"nothing lost, no id twice ({how})",
        deterministic=False,
    )


def _race(
    url: str, thread: str, state: bool, writers: int, increments: int, mutant: str | None,
    timeout: float,
) -> list[dict[str, object]]:
    jobs = [child_job("racer", url, mutant, timeout, thread=thread, writer=w, ids=list(IDS),
                      increments=increments if state else 0) for w in range(writers)]
    outputs = released_together(jobs, timeout, "racing writer")
    return [{**line, "writer": w} for w, lines in enumerate(outputs)
            for line in lines if "raced" in line]


def _read_counter(url: str, thread: str, mutant: str | None, timeout: float) -> object:
    lines = run_child(child_job("read-state", url, mutant, timeout, scope=thread, key="counter"),
                      timeout * 4, "reading the counter")
    return lines[-1]["state"]


def _judge_ids(reports: list[dict[str, object]], held: list[str]) -> list[str]:
    """ST-010 under racing writers: one append acknowledged, its ids held once."""
    winners = [r["writer"] for r in reports if r.get("appended") is True]
    problems = []
    if len(winners) != 1:
        problems.append(f"{len(winners)} writers had the same ids acknowledged "
                        f"(writers {winners}); exactly one may")
    twice = sorted({i for i in held if held.count(i) > 1})
    if twice:
        problems.append(f"ids stored more than once: {', '.join(twice)}")
    if winners and sorted(set(held) & set(IDS)) != sorted(IDS):
        problems.append(f"the acknowledged batch is not all stored: {held}")
    return problems


def _judge_counter(reports: list[dict[str, object]], entry: object) -> list[str]:
    """ST-026 under racing writers: every acknowledged increment kept."""
    acked = sum(int(str(r.get("increments", 0))) for r in reports)
    if not isinstance(entry, dict):
        return [f"{acked} increments were acknowledged, but the key reads as absent"]
    value, version = entry.get("value"), entry.get("version")
    if value == acked and version == acked:
        return []
    return [f"{acked} increments were acknowledged by compare-and-set, but the key holds "
            f"value {value!r} at version {version!r}: a write naming a version another "
            "writer had already replaced was accepted"]
