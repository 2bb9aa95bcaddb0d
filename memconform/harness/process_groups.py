"""The process groups of runtimes the kit started, so a kill reaches all of them.

A runtime in another process (``stdio:`` runtimes) is started in a session of
its own, so its process group holds it and everything it spawned. The kit
registers the group while the runtime runs; a kill point
(:mod:`memconform.steps.job_resume`) calls :func:`kill_all` before it reports,
so nothing of the runtime runs on once the kit has decided it is dead: a
SIGKILL of each group, as a crash of the machine would end it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

__all__ = ["kill_all", "kill_group", "register", "registered", "unregister"]

_LOCK = threading.Lock()
_GROUPS: set[int] = set()


def register(pgid: int) -> None:
    """Keep ``pgid``, the process group of a runtime the kit started."""
    with _LOCK:
        _GROUPS.add(pgid)


def unregister(pgid: int) -> None:
    """Forget ``pgid`` (the runtime ended, or was killed)."""
    with _LOCK:
        _GROUPS.discard(pgid)


def registered() -> frozenset[int]:
    """The process groups kept now."""
    with _LOCK:
        return frozenset(_GROUPS)


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group ``pgid`` (one already gone is no error)
    and forget it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    unregister(pgid)


def kill_all() -> None:
    """SIGKILL every registered group."""
    for pgid in registered():
        kill_group(pgid)
