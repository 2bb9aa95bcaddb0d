"""The kit-owned recording proxy that sits between every runtime and its store.

:class:`RecordingStore` gives one synchronous API over any store (plain or
async methods), logs every call with its arguments and its result or exception
on a :class:`~memconform.timeline.Timeline`, runs each call in a worker thread
with a timeout, and checks the shape of every answer. When the adapter itself
breaks the contract (a missing method, a wrong shape, a hang) it raises
:class:`AdapterContractError`, which the kit reports as the verdict ``error``.
Exceptions the store raises pass through unchanged (and are logged), marked as
the adapter's (:func:`raised_by_adapter`): a step that expects a refusal
judges them; any other that ends a scenario is an adapter error, never a crash
of the kit.

Every proxy of one session can share a :class:`HangGuard`: once a store method
has hung past the timeout ``limit`` times in a row, the kit stops calling the
store at all, so a hung adapter costs a few timeouts instead of one per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import queue
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from memconform.contract import CAPABILITY_METHODS, Capability, provisions_of
from memconform.timeline import Timeline
from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = [
    "DEFAULT_MAX_TIMEOUTS",
    "DEFAULT_TIMEOUT",
    "MESSAGES_PER_TIMEOUT",
    "AdapterContractError",
    "AdapterTimeoutError",
    "HangGuard",
    "RecordingStore",
    "mark_raised_by",
    "raised_by_adapter",
]

DEFAULT_TIMEOUT = 20.0
"""Seconds a single store call may take before the adapter counts as hung (with
three hangs in a row allowed, a hung store costs a run one minute)."""

MESSAGES_PER_TIMEOUT = 1000
"""A call carrying more messages than this (a large batch) gets one more timeout
per started thousand: the timeout tells a hung store from a working one, and a
store writing 10,000 rows one at a time is working."""

DEFAULT_MAX_TIMEOUTS = 3
"""Timeouts in a row of one store method after which the kit stops calling the store."""

_ORIGIN = "_memconform_raised_by"

T = TypeVar("T")


class AdapterContractError(Exception):
    """The adapter broke the Store contract itself (verdict ``error``).

    ``method`` names the store method; the message says what was wrong.
    """

    def __init__(self, method: str, problem: str) -> None:
        super().__init__(f"{method}: {problem}")
        self.method = method
        self.problem = problem


TIMED_OUT = "did not return within"
"""The words every hung store call's reason carries (a verdict's reason is text)."""


class AdapterTimeoutError(AdapterContractError):
    """A store call did not return within the kit's timeout."""


def mark_raised_by(exc: BaseException, where: str) -> None:
    """Note that ``exc`` came out of the adapter's ``where`` (a store method, or a
    runtime's ``execute``). The first mark wins: it names the innermost call."""
    if getattr(exc, _ORIGIN, None) is None:
        with contextlib.suppress(AttributeError, TypeError):
            setattr(exc, _ORIGIN, where)


def raised_by_adapter(exc: BaseException) -> str | None:
    """The adapter call ``exc`` came out of (see :func:`mark_raised_by`), or
    ``None`` when the kit raised it itself."""
    where = getattr(exc, _ORIGIN, None)
    return where if isinstance(where, str) else None


class _Hung(AdapterTimeoutError):
    """The proxy itself gave up waiting for a store call."""


class HangGuard:
    """Counts store calls that hung, per method, across every proxy that shares it.

    A method's count goes back to zero when a call of it returns (with a value
    or an exception). When a count reaches ``limit`` (``0``: never), ``stopped``
    says why, and every proxy sharing the guard refuses further calls at once
    with :class:`AdapterTimeoutError`. Thread-safe; it reads no clock.
    """

    def __init__(self, limit: int = DEFAULT_MAX_TIMEOUTS) -> None:
        if limit < 0:
            raise ValueError("limit must be 0 (never stop) or more")
        self.limit = limit
        self.stopped: str | None = None
        self.declared: dict[int, tuple[weakref.ref[Any], frozenset[str]]] = {}
        """The capabilities each store (by identity, with a weak reference that
        tells a live store from a later object given the same ``id``) declared
        when first read: a store's declaration is read once a session, so it
        still says which rules are claimed after the guard has stopped calling
        the store."""
        self._in_a_row: dict[str, int] = {}
        self._lock = threading.Lock()

    def timed_out(self, method: str, timeout: float) -> None:
        """Count one call of ``method`` that did not return within ``timeout`` s."""
        with self._lock:
            count = self._in_a_row.get(method, 0) + 1
            self._in_a_row[method] = count
            if self.limit and count >= self.limit and self.stopped is None:
                self.stopped = (
                    f"the kit stopped calling the store after {method} did not return "
                    f"within {timeout:g} s {count} times in a row"
                )

    def returned(self, method: str) -> None:
        """A call of ``method`` returned: its count starts again."""
        with self._lock:
            self._in_a_row.pop(method, None)


class _Forbidden(Exception):
    """A store call raised what no store may raise (``SystemExit``,
    ``KeyboardInterrupt``...); it carries the exception's type name only."""


class _Worker:
    """One daemon thread with its own event loop that runs store calls in order."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._thread = threading.Thread(target=self._serve, name="memconform-store", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        while True:
            job, future = self._jobs.get()
            if future is _STOP:
                loop.close()
                return
            try:
                value = job()
                if inspect.isawaitable(value):
                    value = loop.run_until_complete(_await(value))
                future.set_result(value)
            except Exception as exc:  # handed to the caller, never lost
                future.set_exception(exc)
            except BaseException as exc:  # SystemExit, KeyboardInterrupt... from the store
                future.set_exception(_Forbidden(type(exc).__name__))

    def stop(self) -> None:
        """Let the thread end after the calls already queued (a hung one never ends)."""
        self._jobs.put((lambda: None, _STOP))

    def run(self, job: Callable[[], Any], timeout: float | None) -> Any:
        future: Future[Any] = Future()
        self._jobs.put((job, future))
        try:
            return future.result(timeout=timeout)
        except TimeoutError:
            _ABANDONED.append(future)
            raise


_ABANDONED: list[Future[Any]] = []


def abandon(call: Future[Any]) -> None:
    """Count ``call`` (a runtime's ``execute`` the kit stopped waiting for) with
    the abandoned store calls: the process must not wait for it at exit."""
    _ABANDONED.append(call)


def abandoned_calls() -> int:
    """How many store calls the kit gave up waiting for are still running in
    their threads (nothing can stop them; the process must not wait for them
    at exit, nor let them meet the interpreter's shutdown)."""
    return sum(1 for f in _ABANDONED if not f.done())


_STOP: Future[Any] = Future()
_MISSING = object()


async def _await(value: Any) -> Any:
    return await value


def _size(args: tuple[Any, ...]) -> int:
    """How many messages a store call carries (the batch of an append)."""
    return sum(len(a) for a in args if isinstance(a, list | tuple))


def _describe(value: Any) -> JSONValue:
    """A JSON rendering of a call argument or result, for the timeline."""
    if isinstance(value, Message | ErrorRecord | TurnRecord | StateEntry | Fact):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [_describe(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): _describe(v) for k, v in value.items()}
    return repr(value)


def _list_of(kind: type[T], method: str, value: Any) -> list[T]:
    if not isinstance(value, list | tuple):
        raise AdapterContractError(method, f"returned {type(value).__name__}, expected a list")
    out: list[T] = []
    for i, item in enumerate(value):
        out.append(_one(kind, method, item, f"item {i}"))
    return out


def _one(kind: type[T], method: str, value: Any, where: str = "result") -> T:
    if isinstance(value, kind):
        return value
    if isinstance(value, dict):
        try:
            return kind.from_json(value)  # type: ignore[attr-defined, no-any-return]
        except ValueError as exc:
            raise AdapterContractError(method, f"{where} is malformed: {exc}") from None
    raise AdapterContractError(
        method, f"{where} is {type(value).__name__}, expected {kind.__name__}"
    )


class RecordingStore:
    """A synchronous, recorded, shape-checked view of any store.

    ``timeout`` is in seconds (``None`` waits forever). After a call has hung,
    every later call raises :class:`AdapterTimeoutError` at once: a hung adapter
    is broken, and waiting again would only multiply the delay. ``hangs`` is
    the session's :class:`HangGuard` (none: this proxy alone remembers hangs);
    once it has stopped, even building a proxy raises :class:`AdapterTimeoutError`.
    """

    def __init__(
        self,
        store: object,
        timeline: Timeline | None = None,
        *,
        timeout: float | None = None,
        hangs: HangGuard | None = None,
    ) -> None:
        self.inner = store
        self.timeline = timeline if timeline is not None else Timeline()
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.hangs = hangs
        self._worker = _Worker()
        self._hung: str | None = None
        self._closed = False
        self.capabilities = self._read_capabilities()
        self.provides = self._read_provides()

    # -- plumbing -----------------------------------------------------------------

    def _read_capabilities(self) -> frozenset[str]:
        known = None if self.hangs is None else self.hangs.declared.get(id(self.inner))
        if known is not None and known[0]() is self.inner:
            return known[1]
        names = self._declared_capabilities()
        if self.hangs is not None:
            try:
                alive = weakref.ref(self.inner)
            except TypeError:  # a store no weak reference can name is read each time
                return names
            self.hangs.declared[id(self.inner)] = (alive, names)
        return names

    def _declared_capabilities(self) -> frozenset[str]:
        def read() -> Any:
            declared = getattr(self.inner, "capabilities", _MISSING)
            return declared() if callable(declared) else declared

        declared = self._guarded("capabilities", read)
        if declared is _MISSING:
            raise AdapterContractError("capabilities", "the store has no 'capabilities'")
        if isinstance(declared, str) or not isinstance(declared, set | frozenset | list | tuple):
            raise AdapterContractError(
                "capabilities", f"is {type(declared).__name__}, expected a set of names"
            )
        names = frozenset(str(c) for c in declared)
        known = [c.value for c in Capability]
        unknown = sorted(names - set(known))
        if unknown:
            raise AdapterContractError(
                "capabilities",
                f"unknown capability {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(known)})",
            )
        for capability, methods in CAPABILITY_METHODS.items():
            if capability.value not in names:
                continue
            for method in methods:
                if not callable(getattr(self.inner, method, None)):
                    raise AdapterContractError(
                        method, f"declared capability {capability.value!r} needs this method"
                    )
        for method in ("append", "messages"):
            if not callable(getattr(self.inner, method, None)):
                raise AdapterContractError(method, "required method is missing")
        return names

    def _read_provides(self) -> frozenset[str]:
        """What the adapter supplies itself (``provides``; see
        :class:`~memconform.contract.Provision`); an unknown name is the
        adapter's error."""
        try:
            return frozenset(p.value for p in provisions_of(self.inner))
        except ValueError as exc:
            raise AdapterContractError("provides", str(exc)) from None

    def close(self) -> None:
        """Stop the worker thread; the store itself stays open (the kit owns it).

        Any later call raises ``RuntimeError`` at once."""
        self._closed = True
        self._worker.stop()

    def has(self, capability: Capability | str) -> bool:
        """Whether the store declares ``capability``."""
        return str(capability) in self.capabilities

    def _guarded(self, method: str, job: Callable[[], Any], size: int = 0) -> Any:
        """Run ``job`` (one call of the store's ``method``) on the worker within
        the timeout; a hang raises :class:`AdapterTimeoutError` and is counted,
        an exception is marked as the adapter's and passed on unchanged.

        ``size`` is how many messages the call carries: the timeout grows by one
        share per :data:`MESSAGES_PER_TIMEOUT` of them, so a correct store that
        writes a very large batch one row at a time is slow, never "hung"."""
        self._refuse_if_stopped(method)
        timeout = self.timeout * max(1, -(-size // MESSAGES_PER_TIMEOUT))
        try:
            value = self._worker.run(job, timeout)
        except TimeoutError:
            self._hung = method
            if self.hangs is not None:
                self.hangs.timed_out(method, timeout)
            raise _Hung(method, f"{TIMED_OUT} {timeout:g} s") from None
        except _Forbidden as exc:
            if self.hangs is not None:
                self.hangs.returned(method)
            raise AdapterContractError(
                method, f"raised {exc}, which only the kit's own process may raise (it "
                "would end the run)") from None
        except Exception as exc:
            if self.hangs is not None:
                self.hangs.returned(method)
            try:
                str(exc)
            except Exception:
                raise AdapterContractError(
                    method, f"raised {type(exc).__name__} whose message cannot be read "
                    "(its __str__ raised)") from None
            mark_raised_by(exc, method)
            raise
        if self.hangs is not None:
            self.hangs.returned(method)
        return value

    def _refuse_if_stopped(self, method: str) -> None:
        if self._closed:
            raise RuntimeError(f"{method}: the recording proxy is closed")
        if self.hangs is not None and self.hangs.stopped is not None:
            raise AdapterTimeoutError(method, f"not called: {self.hangs.stopped}")
        if self._hung is not None:
            raise AdapterTimeoutError(method, f"not called: {self._hung} hung earlier")

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        self._refuse_if_stopped(method)
        fn = getattr(self.inner, method, None)
        if not callable(fn):
            raise AdapterContractError(method, "method is missing")
        entry_args: dict[str, Any] = {"args": [_describe(a) for a in args]}
        if kwargs:
            entry_args["kwargs"] = {k: _describe(v) for k, v in kwargs.items()}
        try:
            value = self._guarded(method, lambda: fn(*args, **kwargs), _size(args))
        except _Hung:
            self.timeline.add("store", method, **entry_args, hung=True)
            raise
        except Exception as exc:
            self.timeline.add(
                "store", method, **entry_args,
                raised={"type": type(exc).__name__, "message": str(exc)},
            )
            raise
        self.timeline.add("store", method, **entry_args, result=_describe(value))
        return value

    # -- the contract, checked ------------------------------------------------------

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """Append one batch (see the Store contract)."""
        self._call("append", thread_id, list(batch))

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """Read messages; ``include_uncommitted`` is passed only when true."""
        if include_uncommitted:
            value = self._call("messages", thread_id, limit, include_uncommitted=True)
        else:
            value = self._call("messages", thread_id, limit)
        return _list_of(Message, "messages", value)

    @property
    def can_damage(self) -> bool:
        """Whether the store has the optional ``damage`` hook (see
        :class:`~memconform.contract.DamageHook`)."""
        return callable(getattr(self.inner, "damage", None))

    def damage(self, thread_id: str) -> None:
        """Make one stored message of the thread unreadable (the optional hook)."""
        self._call("damage", thread_id)

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """Set commit flags (capability ``commit-flags``)."""
        self._call("set_committed", thread_id, list(message_ids), committed)

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """Keep an error record (capability ``errors``)."""
        self._call("record_error", thread_id, record)

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """Read error records (capability ``errors``)."""
        return _list_of(ErrorRecord, "errors", self._call("errors", thread_id))

    def append_record(self, record: TurnRecord) -> None:
        """Keep a turn record (capability ``turn-records``)."""
        self._call("append_record", record)

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """Read turn records (capability ``turn-records``)."""
        return _list_of(TurnRecord, "records", self._call("records", thread_id))

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """Read working state (capability ``state``)."""
        value = self._call("read_state", scope, key)
        return None if value is None else _one(StateEntry, "read_state", value)

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """Compare-and-set working state (capability ``state``)."""
        result = self._call("write_state", scope, key, value, expected_version)
        return _one(StateEntry, "write_state", result)

    def put_fact(self, scope: str, fact: Fact) -> None:
        """Store a fact (capability ``knowledge``)."""
        self._call("put_fact", scope, fact)

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """Read a fact (capability ``knowledge``)."""
        value = self._call("get_fact", scope, subject)
        return None if value is None else _one(Fact, "get_fact", value)

    def facts(self, scope: str) -> list[Fact]:
        """Read all facts of a scope (capability ``knowledge``)."""
        return _list_of(Fact, "facts", self._call("facts", scope))

    def forget(self, scope: str, subject: str) -> bool:
        """Delete a fact (capability ``knowledge``)."""
        value = self._call("forget", scope, subject)
        if not isinstance(value, bool):
            raise AdapterContractError("forget", f"returned {type(value).__name__}, expected bool")
        return value
