"""Fault injection: stores that fail, stall or hang on purpose, and the pause
point built-in adapters offer between the rows of a batch.

Two kinds of tool live here.

*Wrappers* (:class:`FailNthAppend`, :class:`RefusingStore`,
:class:`DelayingStore`, :class:`HangingStore`) sit around any store object and change how its calls
behave; everything they do not change is delegated unchanged (they are
:class:`~memconform.harness.wrapper.StoreWrapper` subclasses).

The *row point* (:func:`batch_row_pause`) is a call a store adapter makes
just before it writes each message row of a batch, inside its transaction.
It does nothing unless armed:

- in-process, :func:`arm_row_fault` makes the row point raise
  :class:`InjectedFault` at a chosen row, so the adapter's own transaction is
  interrupted in the middle of a batch (a real mid-write failure, not one
  simulated around the store);
- across processes, the environment variable :data:`PAUSE_ENV`
  (``row=K;reached=FD;hold=FD``, read once at import) makes the process stop
  before its K-th row (counted from 0 over every batch the process writes):
  it writes one line to the ``reached`` pipe and then blocks reading the
  ``hold`` pipe, so a test can kill it at a known point or release it.

The built-in SQLite store calls the row point; other adapters may call it
too, and a store that never does is reported as offering no fault point.
:func:`install_sqlite_abort_trigger` is a second, database-level fault for
SQLite files: a trigger that aborts the insert of a row with a marker text.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from memconform.contract import StoreError
from memconform.harness.wrapper import StoreWrapper
from memconform.values import Message

__all__ = [
    "PAUSE_ENV",
    "DelayingStore",
    "FailNthAppend",
    "HangingStore",
    "InjectedFault",
    "RefusingStore",
    "arm_row_fault",
    "batch_row_pause",
    "disarm_row_fault",
    "install_sqlite_abort_trigger",
    "pause_env_value",
    "remove_sqlite_abort_trigger",
    "row_fault_fired",
    "row_points_passed",
]

PAUSE_ENV = "MEMCONFORM_PAUSE"
"""Environment variable arming the cross-process pause: ``row=K;reached=FD;hold=FD``."""


class InjectedFault(StoreError):
    """A failure injected on purpose by the kit (never raised by a real store)."""


# -- the row point ---------------------------------------------------------------------


class _RowFault:
    """Process-wide state of the in-process row fault."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.at: int | None = None
        self.seen = 0
        self.fired = False


_FAULT = _RowFault()


def _parse_pause(text: str | None) -> tuple[int, int, int] | None:
    if not text:
        return None
    fields = dict(part.split("=", 1) for part in text.split(";") if "=" in part)
    try:
        return int(fields["row"]), int(fields["reached"]), int(fields["hold"])
    except (KeyError, ValueError):
        raise ValueError(
            f"{PAUSE_ENV} must look like row=K;reached=FD;hold=FD, got {text!r}"
        ) from None


_PAUSE_ROWS = [0]  # rows this process has passed through the row point (when a pause is armed)
_PAUSE_READ: list[tuple[str | None, tuple[int, int, int] | None]] = []


def _pause() -> tuple[int, int, int] | None:
    """The pause :data:`PAUSE_ENV` arms in this process, read when first needed
    (not at import: a child forked from a process that imported this module
    before its environment was set must see its own value)."""
    text = os.environ.get(PAUSE_ENV)
    if not _PAUSE_READ or _PAUSE_READ[0][0] != text:
        _PAUSE_READ[:] = [(text, _parse_pause(text))]
    return _PAUSE_READ[0][1]


def pause_env_value(row: int, reached_fd: int, hold_fd: int) -> str:
    """The :data:`PAUSE_ENV` value that stops a child before its ``row``-th row."""
    return f"row={row};reached={reached_fd};hold={hold_fd}"


def arm_row_fault(at_row: int = 1) -> None:
    """Make the next rows written through :func:`batch_row_pause` in this process
    fail: the row numbered ``at_row`` (0 = the first row after arming) raises
    :class:`InjectedFault` once, then the fault disarms itself."""
    if at_row < 0:
        raise ValueError("at_row must be >= 0")
    with _FAULT.lock:
        _FAULT.at, _FAULT.seen, _FAULT.fired = at_row, 0, False


def disarm_row_fault() -> bool:
    """Disarm the in-process fault; ``True`` when it fired since it was armed."""
    with _FAULT.lock:
        fired = _FAULT.fired
        _FAULT.at, _FAULT.seen, _FAULT.fired = None, 0, False
        return fired


def row_points_passed() -> int:
    """How many rows passed through the row point since the fault was armed."""
    with _FAULT.lock:
        return _FAULT.seen


def row_fault_fired() -> bool:
    """Whether the armed in-process fault has fired."""
    with _FAULT.lock:
        return _FAULT.fired


def batch_row_pause() -> None:
    """Called by an adapter before it writes each message row, inside its
    transaction. Does nothing unless a fault or a pause is armed (see the
    module docstring); raises :class:`InjectedFault` at an armed fault row."""
    if _FAULT.at is not None:
        with _FAULT.lock:
            if _FAULT.at is not None:
                row = _FAULT.seen
                _FAULT.seen += 1
                if row == _FAULT.at:
                    _FAULT.at = None
                    _FAULT.fired = True
                    raise InjectedFault(f"fault injected before row {row} of the batch")
    pause = _pause()
    if pause is not None:
        row, reached, hold = pause
        current = _PAUSE_ROWS[0]
        _PAUSE_ROWS[0] += 1
        if current == row:
            os.write(reached, b"reached\n")
            os.read(hold, 1)  # blocks until the test writes or closes its end


# -- wrappers ----------------------------------------------------------------------------


class FailNthAppend(StoreWrapper):
    """The ``n``-th call of ``append`` (1-based) fails; other calls pass through.

    ``where="before"`` raises :class:`InjectedFault` without calling the store
    (nothing can have been written). ``where="middle"`` arms the row point so
    the store's own write fails before the middle row of the batch; when the
    store never reaches the row point the call's result is returned as is and
    :attr:`missed` becomes ``True`` (the store offers no fault point).
    """

    def __init__(self, store: object, n: int = 1, *, where: str = "middle") -> None:
        super().__init__(store)
        if n < 1:
            raise ValueError("n counts from 1")
        if where not in ("before", "middle"):
            raise ValueError("where must be 'before' or 'middle'")
        self.n = n
        self.where = where
        self.calls = 0
        self.missed = False

    def append(self, thread_id: str, batch: Sequence[Message]) -> Any:
        """Fail on the ``n``-th call, delegate otherwise."""
        self.calls += 1
        append: Callable[..., Any] = self.inner.append
        if self.calls != self.n:
            return append(thread_id, batch)
        if self.where == "before":
            raise InjectedFault(f"append call {self.n} refused before reaching the store")
        arm_row_fault(max(len(batch) // 2, 0))
        try:
            return append(thread_id, batch)
        finally:
            self.missed = not disarm_row_fault()


class RefusingStore(StoreWrapper):
    """The store the kit hands a runtime when a scenario needs a store refusal.

    The ``append`` calls numbered in ``appends`` (1-based, counted over every
    thread) and every call of the methods named in ``methods`` (for example
    ``record_error``, ``set_committed``, ``write_state``) raise
    :class:`~memconform.contract.StoreError` (the contract's own
    refusal, as a real store raises it) before reaching the store, so nothing
    of them is stored. Nothing in the script tells the runtime.
    """

    def __init__(
        self, store: object, *, appends: Iterable[int] = (), methods: Iterable[str] = ()
    ) -> None:
        super().__init__(store)
        self.appends = frozenset(appends)
        self.methods = frozenset(methods)
        self.append_calls = 0

    def append(self, thread_id: str, batch: Sequence[Message]) -> Any:
        """Refuse the numbered calls, delegate the others."""
        self.append_calls += 1
        if self.append_calls in self.appends:
            raise StoreError(f"the store refused append call {self.append_calls}")
        return self.inner.append(thread_id, batch)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name not in self.methods or not callable(target):
            return target

        def refused(*args: Any, **kwargs: Any) -> Any:
            raise StoreError(f"the store refused {name}")

        return refused


class DelayingStore(StoreWrapper):
    """Calls of the named ``methods`` wait for ``gate`` before reaching the store.

    The gate is a :class:`threading.Event` the test sets when it wants the
    calls to go on; nothing here measures time.
    """

    def __init__(
        self,
        store: object,
        methods: Iterable[str] = ("append",),
        gate: threading.Event | None = None,
    ) -> None:
        super().__init__(store)
        self.methods = frozenset(methods)
        self.gate = gate if gate is not None else threading.Event()
        self.waiting = threading.Semaphore(0)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name not in self.methods or not callable(target):
            return target

        def gated(*args: Any, **kwargs: Any) -> Any:
            self.waiting.release()
            self.gate.wait()
            return target(*args, **kwargs)

        return gated

    def release(self) -> None:
        """Let every waiting and future call through."""
        self.gate.set()


class HangingStore(DelayingStore):
    """Calls of the named ``methods`` never return: they wait on an event nobody
    sets (call :meth:`release` only to let the stuck worker end after a test)."""


# -- SQLite: a database-level fault ------------------------------------------------------

_TRIGGER = "memconform_abort_marked_row"


def install_sqlite_abort_trigger(path: str | os.PathLike[str], marker: str) -> None:
    """Make every insert of a message whose text equals ``marker`` abort inside
    the database (``RAISE(ABORT)``), in the SQLite file at ``path``.

    Put the marker text on the middle message of a batch to fail a real
    transaction half-way; :func:`remove_sqlite_abort_trigger` undoes it.
    """
    literal = "'" + marker.replace("'", "''") + "'"
    with sqlite3.connect(path, timeout=30) as conn:
        conn.execute(f"DROP TRIGGER IF EXISTS {_TRIGGER}")
        conn.execute(
            f"CREATE TRIGGER {_TRIGGER} BEFORE INSERT ON messages WHEN NEW.text = {literal} "
            "BEGIN SELECT RAISE(ABORT, 'memconform injected fault'); END"
        )
    conn.close()


def remove_sqlite_abort_trigger(path: str | os.PathLike[str]) -> None:
    """Remove the trigger of :func:`install_sqlite_abort_trigger`."""
    with sqlite3.connect(path, timeout=30) as conn:
        conn.execute(f"DROP TRIGGER IF EXISTS {_TRIGGER}")
    conn.close()
