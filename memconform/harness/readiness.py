"""Waiting for file descriptors to become readable, whatever their numbers.

``select.select`` refuses a descriptor numbered past ``FD_SETSIZE`` (1024): a
kit process that holds many files open (a library that leaks a connection per
scenario, over a certification's hundreds of scenarios) would crash the next
time it waits on a child's pipe. ``poll`` has no such limit; where it is
missing, ``select`` is the fallback.
"""

from __future__ import annotations

import math
import select
from collections.abc import Sequence

__all__ = ["readable"]

_EVENTS = sum(getattr(select, name, 0) for name in ("POLLIN", "POLLHUP", "POLLERR"))


def readable(fds: Sequence[int], timeout: float | None) -> list[int]:
    """The descriptors of ``fds`` that can be read without blocking (data, end
    of file or an error to report) within ``timeout`` seconds; ``None`` waits
    as long as it takes, ``0`` only looks."""
    if not hasattr(select, "poll"):
        ready, _, _ = select.select(list(fds), [], [], timeout)
        return list(ready)
    poller = select.poll()
    for fd in fds:
        poller.register(fd, _EVENTS)
    wait = None if timeout is None else max(0, math.ceil(timeout * 1000))
    return [fd for fd, _ in poller.poll(wait)]
