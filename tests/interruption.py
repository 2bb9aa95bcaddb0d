"""A pytest plugin of the kit's own test suite: an interrupted session stops
every process it started.

pytest-xdist's controller, sent SIGINT on its own (``kill -INT``, a CI runner
cancelling a job) or SIGTERM, leaves its workers running test after test, and
their children (``memconform run`` subprocesses, library runs, fresh store
processes) run on after the controller is gone. A Ctrl-C in a terminal reaches
the whole process group; a signal sent to the controller reaches only it. So
the controller signals every process below it and then stops as on Ctrl-C:
SIGINT to its workers (their tests end with ``KeyboardInterrupt``), SIGTERM to
every process a test started, however deep and whatever its session (a
``memconform run`` below writes its partial report and stops; a process a shell
started in the background, which ignores SIGINT, stops too).

Where ``/proc`` is missing (not Linux) the controller's handlers stay pytest's own.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from types import FrameType

import pytest

__all__ = ["descendants"]


def descendants(pid: int, proc: Path = Path("/proc"), depth: int | None = None) -> list[int]:
    """Every process below ``pid`` (children first, then theirs; with ``depth``,
    that many generations), read from ``proc``; a process that ends while it
    is read is left out."""
    children: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the name in parentheses may hold spaces and parentheses: read after the last ")"
        parent = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo = [(pid, 0)]
    while todo:
        parent, generation = todo.pop(0)
        if depth is not None and generation == depth:
            continue
        for child in sorted(children.get(parent, [])):
            found.append(child)
            todo.append((child, generation + 1))
    return found


def _stop_everything_below(signum: int, frame: FrameType | None) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.default_int_handler)  # a second signal: no forwarding again
    workers = set(descendants(os.getpid(), depth=1))
    for pid in descendants(os.getpid()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGINT if pid in workers else signal.SIGTERM)
    raise KeyboardInterrupt


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not Path("/proc/self/stat").is_file():
        return  # a worker (its controller forwards), or no /proc to read
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop_everything_below)
