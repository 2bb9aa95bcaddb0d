"""The warm-reader check: a process that keeps the store open sees what other
processes wrote since it last read.

A writer process makes ready what its writes need (messages appended
uncommitted whose flags it will set, keys and facts written a first time that
it will rewrite) and waits. A reader process then opens the store, reads what
the thread holds of that kind of write and waits with the store open. The
writer makes its writes (committing the messages, recording errors, appending
turn records, rewriting the keys and facts) and ends. The reader reads again;
a fresh process reads last. The reader's second read must show exactly what
the fresh process reads: a store that serves a process from a cache it keeps
in memory, checked by something other writes leave alone (how many messages
the thread holds, how many facts the scope holds, whether a key exists),
shows that process flags, entries and facts that another process has already
replaced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memconform.harness.fresh_process import Process
from memconform.steps.contract_checks.children import (
    await_ready,
    child_job,
    finish,
    kill,
    read_line,
    release,
    run_child,
    spawn,
)
from memconform.steps.contract_checks.result import CheckResult, ChildError, error_result

__all__ = ["WHAT", "check_warm_reads"]

WHAT = {
    "commit": "commit-flag change",
    "error": "error record",
    "record": "turn record",
    "key-rewrite": "state-key rewrite",
    "fact-rewrite": "fact replacement",
}
"""The kinds of write this check makes, in words."""


def check_warm_reads(
    url: str, thread: str, write: str, *, count: int = 5, mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """Let a writer make ``count`` writes of the kind ``write`` to ``thread`` (also
    the scope) between two reads of a reader that keeps the store open."""
    expected = (f"a process that read before another process's {WHAT[write]}s reads "
                "afterwards what a fresh process reads")
    names = [f"w0-{n:03d}" for n in range(count)]
    writer = spawn(child_job("scribe", url, mutant, timeout, thread=thread, write=write,
                             writer=0, count=count), stdin=True)
    reader: Process | None = None
    try:
        await_ready(writer, f"{WHAT[write]} writer", timeout)
        reader = spawn(child_job("reread", url, mutant, timeout, thread=thread, write=write,
                                 names=names), stdin=True)
        before = _field(reader, "before", timeout)
        release(writer)
        finish(writer, timeout * 4, f"{WHAT[write]} writer")
        release(reader)
        after = _last(finish(reader, timeout * 4, "reader"), "after")
        fresh = _last(run_child(child_job("look", url, mutant, timeout, thread=thread,
                                          write=write, names=names), timeout * 4, "reading"),
                      "held")
    except ChildError as exc:
        return error_result(expected, exc)
    finally:
        for proc in (writer, reader):
            if proc is not None and proc.poll() is None:
                kill(proc, "a process left waiting")
    problems = _judge(before, after, fresh, write)
    how = (f"a reader kept the store open across {count} {WHAT[write]}s of another process, "
           "then a fresh process read")
    return CheckResult(
        not problems, expected,
        "\n".join([*problems, how]) if problems else f"the reader saw every change ({how})",
    )


def _field(proc: Process, name: str, timeout: float) -> Any:
    line = read_line(proc, timeout * 4)
    if line is None or name not in line:
        release(proc)
        finish(proc, timeout * 4, "reader")
        raise ChildError("open", "the reader ended before its first read")
    return line[name]


def _last(lines: Sequence[Mapping[str, Any]], name: str) -> Any:
    for line in reversed(lines):
        if name in line:
            return line[name]
    raise ChildError("open", f"a child ended without reporting {name!r}")


def _judge(before: Any, after: Any, fresh: Any, write: str) -> list[str]:
    if fresh == before:
        return [f"the other process's acknowledged {WHAT[write]}s are not visible even to a "
                f"fresh process: it reads {_short(fresh)}"]
    if after == fresh:
        return []
    stale = " (what it read before them)" if after == before else ""
    return [f"after another process's {WHAT[write]}s the reader that kept the store open "
            f"reads {_short(after)}{stale}, while a fresh process reads {_short(fresh)}"]


def _short(value: Any, limit: int = 400) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + " …"
