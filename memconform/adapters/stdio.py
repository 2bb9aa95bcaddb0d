"""``stdio:<command>``: a store in another process, spoken to over JSON lines.

The protocol (``memconform.stdio/1``) is specified in ``spec/stdio-protocol.md``
and ``spec/schemas/stdio-protocol.schema.json``. :class:`StdioStore` starts the
command, says ``hello``, forwards every Store method as one request and turns
each answer back into value types.

A child that misbehaves never takes the kit down. When it exits, prints a line
that is not a JSON object, answers another id, answers a malformed result or
does not answer within ``timeout`` seconds, the call raises
:class:`~memconform.harness.proxy.AdapterContractError` naming the method
(verdict ``error``); the child is then stopped and every later call fails at
once. Error answers of the kinds ``store``, ``duplicate-id``, ``conflict``,
``unsupported-value``, ``value`` and ``key`` are raised as the matching
exceptions, so rejections the rules require still pass.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import shlex
import subprocess
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, NoReturn, TypeVar

from memconform.adapters.registry import StoreURLError
from memconform.contract import (
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
)
from memconform.harness.faults import PAUSE_ENV
from memconform.harness.proxy import AdapterContractError, AdapterTimeoutError
from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = [
    "DEFAULT_TIMEOUT",
    "ERROR_KINDS",
    "HOOKS",
    "PROTOCOL",
    "StdioStore",
    "open_stdio",
]

PROTOCOL = "memconform.stdio/1"
HOOKS = frozenset({"damage"})
"""The optional hooks a child may declare in ``hello``."""
DEFAULT_TIMEOUT = 15.0
"""Seconds one answer may take; below the recording proxy's own timeout, so a hung
child is reported by the adapter, which can also stop it."""

ERROR_KINDS: dict[str, Callable[[str], Exception]] = {
    "store": StoreError,
    "duplicate-id": DuplicateIdError,
    "conflict": ConflictError,
    "unsupported-value": UnsupportedValueError,
    "value": ValueError,
    "key": KeyError,
}
"""Error kinds a store answers on purpose, and the exception each becomes
(``internal`` is not here: it is the adapter breaking the contract)."""

_STDERR_LINES = 20
_STDERR_GRACE = 2.0
"""Seconds to let the standard-error reader drain an exited child's pipe."""
_EOF = None
T = TypeVar("T")


def _timeout_from_env(error: type[ValueError] = StoreURLError) -> float:
    """Seconds one answer may take, from ``MEMCONFORM_STDIO_TIMEOUT`` (a stdio
    store's and a stdio runtime's alike); a value that is not a positive number
    raises ``error``."""
    raw = os.environ.get("MEMCONFORM_STDIO_TIMEOUT")
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise error(f"MEMCONFORM_STDIO_TIMEOUT must be seconds, got {raw!r}") from None
    if not value > 0:
        raise error(f"MEMCONFORM_STDIO_TIMEOUT must be positive, got {raw!r}")
    return value


def _child_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """The child's environment: ``env`` (default: this process's) without the
    kit's cross-process pause, whose pipe descriptors only this process holds."""
    out = dict(os.environ if env is None else env)
    out.pop(PAUSE_ENV, None)
    return out


def _pump_lines(stream: IO[bytes], sink: queue.Queue[bytes | None]) -> None:
    try:
        for line in iter(stream.readline, b""):
            sink.put(line)
    except (OSError, ValueError):
        pass
    finally:
        sink.put(_EOF)


def _pump_stderr(stream: IO[bytes], tail: collections.deque[str]) -> None:
    try:
        for line in iter(stream.readline, b""):
            tail.append(line.decode("utf-8", "replace").rstrip())
    except (OSError, ValueError):
        pass


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` if it still runs and reap it (used on failure and at exit)."""
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _value(kind: type[T], method: str, data: Any, where: str = "result") -> T:
    try:
        return kind.from_json(data)  # type: ignore[attr-defined, no-any-return]
    except ValueError as exc:
        raise AdapterContractError(method, f"{where} is malformed: {exc}") from None


def _values(kind: type[T], method: str, data: Any) -> list[T]:
    if not isinstance(data, list):
        raise AdapterContractError(method, f"result is {type(data).__name__}, expected an array")
    return [_value(kind, method, item, f"result item {i}") for i, item in enumerate(data)]


def _nothing(method: str, data: Any) -> None:
    if data is not None:
        raise AdapterContractError(method, f"result is {_shorten(repr(data))}, expected null")


class StdioStore:
    """A store in a child process speaking ``memconform.stdio/1``.

    ``command`` is the program and its arguments. The child is started and
    greeted at once; a child that cannot be started or does not answer the
    greeting raises :class:`AdapterContractError` for ``hello``. Calls from
    several threads are serialised. ``name``, ``version``, ``capabilities``,
    ``provides`` and ``hooks`` are what the child declared.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not command:
            raise StoreURLError("stdio: needs a command, e.g. stdio:node store.mjs")
        self.command = list(command)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._next_id = 0
        self._broken: str | None = None
        self._closed = False
        try:
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=_child_env(env),
            )
        except OSError as exc:
            raise AdapterContractError(
                "hello", f"cannot start {shlex.join(self.command)}: {exc}"
            ) from None
        self._finalizer = weakref.finalize(self, _stop, self._proc)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        assert self._proc.stdout is not None
        assert self._proc.stderr is not None
        threading.Thread(
            target=_pump_lines, args=(self._proc.stdout, self._lines),
            name="memconform-stdio-out", daemon=True,
        ).start()
        self._stderr_pump = threading.Thread(
            target=_pump_stderr, args=(self._proc.stderr, self._stderr),
            name="memconform-stdio-err", daemon=True,
        )
        self._stderr_pump.start()
        hello = self._request("hello", {"protocol": PROTOCOL})
        if not isinstance(hello, dict):
            self._fail("hello", f"result is {type(hello).__name__}, expected an object")
        if hello.get("protocol") != PROTOCOL:
            self._fail(
                "hello", f"the store speaks {hello.get('protocol')!r}, the kit speaks {PROTOCOL!r}"
            )
        declared = hello.get("capabilities")
        if not isinstance(declared, list) or not all(isinstance(c, str) for c in declared):
            self._fail("hello", "capabilities must be an array of names")
        provided = hello.get("provides", [])
        if not isinstance(provided, list) or not all(isinstance(p, str) for p in provided):
            self._fail("hello", "provides must be an array of names")
        hooks = hello.get("hooks", [])
        if not isinstance(hooks, list) or not all(isinstance(h, str) for h in hooks):
            self._fail("hello", "hooks must be an array of names")
        unknown = sorted(set(hooks) - HOOKS)
        if unknown:
            self._fail("hello", f"unknown hooks {unknown}; known: {sorted(HOOKS)}")
        self.hooks = frozenset(hooks)
        """The optional hooks the child declared (``damage``)."""
        if "damage" in self.hooks:
            self.damage = self._damage
        self.name = str(hello.get("name", "?"))
        self.version = str(hello.get("version", "?"))
        self._capabilities = frozenset(declared)
        self.provides = frozenset(provided)
        """What the adapter said in ``hello`` it supplies itself (checked by the
        recording proxy like any adapter's ``provides``)."""

    damage: Callable[[str], None] | None = None
    """The optional ``damage`` hook (:class:`~memconform.contract.DamageHook`),
    present only when the child declared it in ``hello``."""

    def _damage(self, thread_id: str) -> None:
        _nothing("damage", self._request("damage", {"thread_id": thread_id}))

    # -- plumbing ---------------------------------------------------------------------

    @property
    def capabilities(self) -> frozenset[str]:
        """The capability names the child declared in its ``hello`` answer."""
        return self._capabilities

    @property
    def returncode(self) -> int | None:
        """The child's exit status, or ``None`` while it runs."""
        return self._proc.poll()

    def _stderr_tail(self) -> str:
        if self._proc.poll() is not None:
            # an exited child's last words may still be in the pipe: let the pump finish
            self._stderr_pump.join(timeout=_STDERR_GRACE)
        lines = [line for line in self._stderr if line]
        return f"; its standard error ended with: {' | '.join(lines[-5:])}" if lines else ""

    def _fail(self, method: str, problem: str, *, hung: bool = False) -> NoReturn:
        """Stop the child and raise the adapter error for ``method``."""
        if self._broken is None:
            self._broken = f"{method}: {problem}"
        _stop(self._proc)
        error = AdapterTimeoutError if hung else AdapterContractError
        raise error(method, problem)

    def _exit_problem(self) -> str:
        try:
            code = self._proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return "the store process closed its standard output but kept running"
        return f"the store process exited with status {code} before answering"

    def _request(self, method: str, params: dict[str, JSONValue]) -> Any:
        with self._lock:
            if self._broken is not None:
                raise AdapterContractError(
                    method, f"not sent: the store process was stopped after {self._broken}"
                )
            if self._closed:
                raise AdapterContractError(method, "not sent: the store was closed")
            self._next_id += 1
            request_id = self._next_id
            try:
                line = json.dumps(
                    {"id": request_id, "method": method, "params": params}, allow_nan=False
                )
            except ValueError as exc:
                raise UnsupportedValueError(f"{method}: a value is not JSON ({exc})") from None
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(line.encode("utf-8") + b"\n")
                self._proc.stdin.flush()
            except (OSError, ValueError):
                self._fail(method, self._exit_problem() + self._stderr_tail())
            try:
                raw = self._lines.get(timeout=self.timeout)
            except queue.Empty:
                self._fail(
                    method, f"no answer within {self.timeout:g} s" + self._stderr_tail(), hung=True
                )
            if raw is _EOF:
                self._fail(method, self._exit_problem() + self._stderr_tail())
            assert raw is not None
            return self._answer(method, request_id, raw)

    def _answer(self, method: str, request_id: int, raw: bytes) -> Any:
        try:
            response = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self._fail(
                method,
                "answered with a line that is not JSON: "
                + _shorten(raw.decode("utf-8", "replace").rstrip()),
            )
        if not isinstance(response, dict):
            self._fail(method, f"answered {type(response).__name__}, expected a JSON object")
        if response.get("id") != request_id or isinstance(response.get("id"), bool):
            self._fail(
                method, f"answered id {response.get('id')!r} to request id {request_id}"
            )
        has_result, has_error = "result" in response, "error" in response
        if has_result == has_error:
            self._fail(method, "an answer needs exactly one of 'result' and 'error'")
        if has_result:
            return response["result"]
        error = response["error"]
        if not isinstance(error, dict) or not isinstance(error.get("kind"), str):
            self._fail(method, f"malformed error answer: {_shorten(repr(error))}")
        kind, message = error["kind"], str(error.get("message", ""))
        if kind == "internal":
            raise AdapterContractError(method, f"the store failed internally: {message}")
        if kind not in ERROR_KINDS:
            self._fail(method, f"unknown error kind {kind!r}: {message}")
        raise ERROR_KINDS[kind](message)

    def close(self) -> None:
        """Say ``close``, let the child exit, and reap it. Closing twice is harmless."""
        with self._lock:
            if self._closed:
                return
        if self._broken is None and self._proc.poll() is None:
            with contextlib.suppress(AdapterContractError):
                self._request("close", {})
        with self._lock:
            self._closed = True
            try:
                if self._proc.stdin is not None:
                    self._proc.stdin.close()
            except OSError:
                pass
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=self.timeout)
            self._finalizer()

    # -- core -------------------------------------------------------------------------

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        result = self._request(
            "append", {"thread_id": thread_id, "batch": [m.to_json() for m in batch]}
        )
        _nothing("append", result)

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        result = self._request(
            "messages",
            {"thread_id": thread_id, "limit": limit, "include_uncommitted": include_uncommitted},
        )
        return _values(Message, "messages", result)

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        result = self._request(
            "set_committed",
            {"thread_id": thread_id, "message_ids": list(message_ids), "committed": committed},
        )
        _nothing("set_committed", result)

    # -- errors -----------------------------------------------------------------------

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        result = self._request("record_error", {"thread_id": thread_id, "record": record.to_json()})
        _nothing("record_error", result)

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        return _values(ErrorRecord, "errors", self._request("errors", {"thread_id": thread_id}))

    # -- turn-records -----------------------------------------------------------------

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        _nothing("append_record", self._request("append_record", {"record": record.to_json()}))

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        return _values(TurnRecord, "records", self._request("records", {"thread_id": thread_id}))

    # -- state ------------------------------------------------------------------------

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        result = self._request("read_state", {"scope": scope, "key": key})
        return None if result is None else _value(StateEntry, "read_state", result)

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        result = self._request(
            "write_state",
            {"scope": scope, "key": key, "value": value, "expected_version": expected_version},
        )
        return _value(StateEntry, "write_state", result)

    # -- knowledge --------------------------------------------------------------------

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        _nothing("put_fact", self._request("put_fact", {"scope": scope, "fact": fact.to_json()}))

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        result = self._request("get_fact", {"scope": scope, "subject": subject})
        return None if result is None else _value(Fact, "get_fact", result)

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`."""
        return _values(Fact, "facts", self._request("facts", {"scope": scope}))

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        result = self._request("forget", {"scope": scope, "subject": subject})
        if not isinstance(result, bool):
            raise AdapterContractError(
                "forget", f"result is {type(result).__name__}, expected bool"
            )
        return result


def open_stdio(url: str) -> StdioStore:
    """Open ``stdio:<command>`` (``stdio://<command>`` too): the rest of the URL is
    split like a POSIX shell command line. The answer timeout comes from
    ``MEMCONFORM_STDIO_TIMEOUT``."""
    command = url.split(":", 1)[1] if ":" in url else ""
    command = command.removeprefix("//")  # stdio://cmd reads as stdio:cmd
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise StoreURLError(f"cannot split the stdio: command {command!r}: {exc}") from None
    if not words:
        raise StoreURLError("stdio: needs a command, e.g. stdio:node store.mjs")
    return StdioStore(words, timeout=_timeout_from_env())
