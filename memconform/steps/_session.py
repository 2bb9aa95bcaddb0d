"""What the plugin's hooks share through one session, and how it ends.

:data:`SESSION` holds what hooks without the config share (the outcomes file,
the judged rules, the failures counted against ``--memconform-maxfail``, why
an interrupt stopped the session); the hooks here start and end the session:
the deadline (``--memconform-deadline``), the stop after ``maxfail`` failing
scenarios, the closing line of the outcomes file, and the exit of a process
whose abandoned store calls could hang its shutdown. Registered through
:mod:`memconform.steps.plugin`, which re-exports every hook.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time

import pytest

from memconform import measurement
from memconform.harness.proxy import (
    DEFAULT_MAX_TIMEOUTS,
    DEFAULT_TIMEOUT,
    HangGuard,
    abandoned_calls,
)
from memconform.outcome_log import OutcomeLog

__all__ = [
    "DEADLINE",
    "RULE_TAG",
    "SESSION",
    "call_timeout",
    "count_failure",
    "hang_guard",
    "pytest_keyboard_interrupt",
    "pytest_runtest_protocol",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_unconfigure",
    "rules_of",
    "subject_of",
]

RULE_TAG = re.compile(r"^(SP|SW|TU|CA|PS|ST)-\d{3}$")


def rules_of(item: pytest.Item) -> list[str]:
    """The rule tags of ``item``, in marker order (a rule tagged twice, twice)."""
    return [m.name for m in item.iter_markers() if RULE_TAG.match(m.name)]


def subject_of(config: pytest.Config) -> str:
    """What this run judges: ``--memconform-subject``, else ``runtime`` when a
    runtime is named, ``store`` when a store is, ``both`` otherwise."""
    chosen = config.getoption("--memconform-subject")
    if chosen:
        return str(chosen)
    if config.getoption("--memconform-runtime"):
        return "runtime"
    if config.getoption("--memconform-store"):
        return "store"
    return "both"


def call_timeout(config: pytest.Config) -> float:
    """How long one store call may take (``--memconform-timeout``, else the default)."""
    given = config.getoption("--memconform-timeout")
    return DEFAULT_TIMEOUT if given is None else float(given)


_HANGS = pytest.StashKey[HangGuard]()


def hang_guard(config: pytest.Config) -> HangGuard:
    """The session's :class:`HangGuard`, shared by every recording proxy."""
    guard = config.stash.get(_HANGS, None)
    if guard is None:
        given = config.getoption("--memconform-max-timeouts")
        guard = HangGuard(max(0, DEFAULT_MAX_TIMEOUTS if given is None else int(given)))
        config.stash[_HANGS] = guard
    return guard


class _SessionState:
    """What hooks without the config share: the outcomes file of this session
    (only where outcomes are gathered: not in an xdist worker) and why the
    session stopped early, when an interrupt said so."""

    log: OutcomeLog | None = None
    stopped: str | None = None
    session: pytest.Session | None = None
    failures = 0
    maxfail: int | None = None
    judged: frozenset[str] = frozenset()


SESSION = _SessionState()
DEADLINE = pytest.StashKey[tuple[float, float]]()
"""When the session must start no more scenarios (monotonic time, and the
``--memconform-deadline`` seconds it came from)."""


def count_failure() -> None:
    """One more failing scenario of a judged rule; at ``--memconform-maxfail``
    the session stops (with pytest-xdist, the controller stops the workers)."""
    SESSION.failures += 1
    limit = SESSION.maxfail
    session = SESSION.session
    if limit is None or SESSION.failures < limit or session is None:
        return
    plural = "" if limit == 1 else "s"
    reason = f"stopped after {limit} failing scenario{plural}"
    dsession = session.config.pluginmanager.getplugin("dsession")
    if dsession is not None:
        if not dsession.shouldstop:
            dsession.shouldstop = reason
    elif not session.shouldstop:
        session.shouldstop = reason


def pytest_sessionstart(session: pytest.Session) -> None:
    SESSION.session = session


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Past the deadline, run nothing more: the session stops early and says why."""
    deadline = item.config.stash.get(DEADLINE, None)
    if deadline is not None and time.monotonic() >= deadline[0]:
        item.session.shouldstop = f"the deadline of {deadline[1]:g} s passed"
        return True
    return None


def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    SESSION.stopped = str(excinfo.value) or "interrupted"


def _stop_reason(session: pytest.Session) -> str | None:
    for reason in (session.shouldstop, session.shouldfail, SESSION.stopped):
        if reason:
            return reason if isinstance(reason, str) else "stopped early"
    return None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    measurement.stop()  # xdist workers may end without running exit handlers
    if SESSION.log is not None:
        SESSION.log.close(int(exitstatus), _stop_reason(session))
        SESSION.log = None
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


_EXIT_STATUS = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A store call the kit gave up waiting for may still be running in its
    thread; at interpreter shutdown it can hold the lock of a standard stream
    and abort the process (SIGABRT) after every outcome was written. Such a
    process ends here, with pytest's exit status, once its streams are flushed."""
    if abandoned_calls() and _EXIT_STATUS in config.stash:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(config.stash[_EXIT_STATUS])
