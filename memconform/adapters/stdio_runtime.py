"""``stdio:<command>`` runtimes: an agent runtime in any language, driven over JSON lines.

The protocol (``memconform.runtime/1``) is specified in
``spec/runtime-protocol.md``. :class:`StdioRuntime` is the kit's side: it
starts the command, reads what the runtime declares in ``hello`` (once per
process), and runs every script in a **fresh child**, started in a session of
its own: a runtime keeps nothing between two scripts but what it stored, and
a kill (:mod:`memconform.harness.process_groups`) is a SIGKILL of the child's
whole process group.

While it executes, the child asks the kit for everything it may touch: the
fake model, the scripted tools and hooks, the clock, the ids and every store
call. The kit carries each call out on the same
:class:`~memconform.harness.environment.Environment` a Python runtime gets, so
the store calls go through the recording proxy (kill points, refusals and the
timeline work unchanged), and answers it on the same pipe. A scripted failure
is answered as ``scripted-failure``, a store's refusal with the store
protocol's error kinds. The kit's own failures (a script the runtime ran past,
a store that broke its contract, a kill point) are never answered: the child
is killed and the failure goes on as it would out of a Python runtime.

A child that misbehaves never takes the kit down: one that exits, writes a line
that is not a JSON object, makes a call the protocol does not have or stays
silent longer than the timeout raises
:class:`~memconform.harness.proxy.AdapterContractError` for ``execute`` (verdict
``error``, exit 3), naming the runtime's command and ending with its last lines
of standard error.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import os
import queue
import shlex
import subprocess
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from memconform.adapters.stdio import (
    DEFAULT_TIMEOUT,
    _child_env,
    _pump_lines,
    _pump_stderr,
    _shorten,
    _timeout_from_env,
)
from memconform.adapters.stdio_server import RequestError, StdioServer, error_kind
from memconform.contract import StoreError
from memconform.harness import process_groups
from memconform.harness.answers import note_execute_hung
from memconform.harness.environment import Environment, ScriptedFailure, ScriptError
from memconform.harness.proxy import AdapterContractError, AdapterTimeoutError
from memconform.values import JSONValue

__all__ = [
    "DEFAULT_TIMEOUT", "PREFIX", "PROTOCOL", "ConfigurationRejected", "StdioRuntime",
    "is_stdio_runtime",
    "open_stdio_runtime", "stdio_target",
]

PROTOCOL = "memconform.runtime/1"
PREFIX = "stdio:"

_STORE_METHODS = frozenset({
    "append", "messages", "set_committed", "record_error", "errors", "append_record",
    "records", "read_state", "write_state", "put_fact", "get_fact", "facts", "forget",
})
"""The store methods a runtime may call (``store.<method>``); ``damage`` is the kit's."""
_STDERR_LINES = 20
_EXIT_GRACE = 2.0
"""Seconds the standard-error reader may take to drain an exited child's pipe."""


class ConfigurationRejected(ScriptError):
    """The runtime refused the script's configuration (it answered ``execute``
    with the error kind ``configuration``), as a Python runtime's ``execute``
    raising ``ValueError`` does: the scenarios about rejected settings read it."""


def is_stdio_runtime(target: str) -> bool:
    """Whether a ``--runtime`` value names a runtime over the protocol."""
    return target.startswith(PREFIX)


def _words(target: str) -> list[str]:
    command = target[len(PREFIX):].removeprefix("//")
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ValueError(f"cannot split the runtime command {command!r}: {exc}") from None
    if not words:
        raise ValueError("stdio: needs a command, e.g. stdio:node runtime.mjs")
    return words


def stdio_target(target: str) -> str:
    """``target`` with every word naming an existing file made absolute, so the
    same value starts the same runtime from any folder (the kit's child
    processes pass it on). Links are not followed: a virtual environment's
    ``python`` stays itself. Raises :class:`ValueError` for a value that splits
    into no command."""
    words = [os.path.abspath(w) if not os.path.isabs(w) and os.path.isfile(w) else w
             for w in _words(target)]
    return PREFIX + shlex.join(words)


class _Child:
    """One runtime process: its lines in, the kit's lines out, its group killed at the end."""

    def __init__(self, command: Sequence[str], timeout: float) -> None:
        self.command = list(command)
        self.timeout = timeout
        self.label = shlex.join(self.command)
        try:
            self.proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=_child_env(None), start_new_session=True,
            )
        except OSError as exc:
            raise AdapterContractError("hello", f"cannot start {self.label}: {exc}") from None
        self.pgid = self.proc.pid  # a new session: its leader's pid names the group
        process_groups.register(self.pgid)
        self._finalizer = weakref.finalize(self, _kill, self.proc, self.pgid)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        threading.Thread(target=_pump_lines, args=(self.proc.stdout, self.lines),
                         name="memconform-runtime-out", daemon=True).start()
        self._stderr_pump = threading.Thread(
            target=_pump_stderr, args=(self.proc.stderr, self.stderr),
            name="memconform-runtime-err", daemon=True)
        self._stderr_pump.start()
        self.next_id = 0

    def fail(self, where: str, problem: str, *, hung: bool = False) -> NoReturn:
        """Kill the child and raise the adapter's error for ``where``."""
        self.kill()
        tail = self.stderr_tail()
        error = AdapterTimeoutError if hung else AdapterContractError
        raise error(where, f"the runtime {self.label} {problem}{tail}")

    def stderr_tail(self) -> str:
        self._stderr_pump.join(timeout=_EXIT_GRACE)
        lines = [line for line in self.stderr if line]
        return f"; its standard error ended with: {' | '.join(lines[-5:])}" if lines else ""

    def send(self, where: str, message: Mapping[str, Any]) -> None:
        """Write one line; a child that stopped reading fails ``where``."""
        line = json.dumps(message, ensure_ascii=True, allow_nan=False)
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line.encode("ascii") + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            self.fail(where, self._exit_problem())

    def request(self, method: str, params: Mapping[str, Any]) -> int:
        """Send the kit's request ``method``; its id."""
        self.next_id += 1
        self.send(method, {"id": self.next_id, "method": method, "params": dict(params)})
        return self.next_id

    def receive(self, where: str) -> dict[str, Any]:
        """The child's next line, a JSON object."""
        try:
            raw = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            self.fail(where, f"wrote nothing within {self.timeout:g} s", hung=True)
        if raw is None:
            self.fail(where, self._exit_problem())
        try:
            message = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self.fail(where, "wrote a line that is not JSON: "
                      + _shorten(raw.decode("utf-8", "replace").rstrip()))
        if not isinstance(message, dict):
            self.fail(where, f"wrote {type(message).__name__}, expected a JSON object")
        return message

    def answer_of(self, where: str, request_id: int, message: Mapping[str, Any]) -> Any:
        """The ``result`` of the child's answer to ``request_id``; an ``error``
        answer, or a malformed one, fails ``where``."""
        if message.get("id") != request_id or isinstance(message.get("id"), bool):
            self.fail(where, f"answered id {message.get('id')!r} to request id {request_id}")
        if ("result" in message) == ("error" in message):
            self.fail(where, "answered with neither or both of 'result' and 'error'")
        if "error" in message:
            error = message["error"]
            text = error.get("message") if isinstance(error, dict) else error
            if where == "execute" and isinstance(error, dict) and error.get("kind") == \
                    "configuration":
                raise ConfigurationRejected(str(text))
            self.fail(where, f"failed: {_shorten(str(text))}")
        return message["result"]

    def _exit_problem(self) -> str:
        try:
            code = self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return "closed its standard output but kept running"
        return f"exited with status {code} before answering"

    def close(self) -> None:
        """Say ``close`` and kill the child's group: once it has answered, nothing
        it could still do reaches the kit, so its exit is not waited for."""
        if self.proc.poll() is None:
            with contextlib.suppress(AdapterContractError):
                self.request("close", {})
        self.kill()

    def alive(self) -> bool:
        """Whether the child still runs."""
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the child's process group and reap the child (idempotent)."""
        self._finalizer()


def _kill(proc: subprocess.Popen[bytes], pgid: int) -> None:
    process_groups.kill_group(pgid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _names(hello: Mapping[str, Any], key: str, child: _Child, *, optional: bool) -> Any:
    value = hello.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        child.fail("hello", f"declared {key} as {_shorten(repr(value))}, expected an array "
                   "of names" + (" or null" if optional else ""))
    return frozenset(value)


def _hello(child: _Child) -> dict[str, Any]:
    request_id = child.request("hello", {"protocol": PROTOCOL})
    hello = child.answer_of("hello", request_id, child.receive("hello"))
    if not isinstance(hello, dict):
        child.fail("hello", f"answered hello with {type(hello).__name__}, expected an object")
    if hello.get("protocol") != PROTOCOL:
        child.fail("hello", f"speaks {hello.get('protocol')!r}; the kit speaks {PROTOCOL!r}")
    return hello


@functools.cache
def _declarations(command: tuple[str, ...], timeout: float) -> dict[str, Any]:
    """What the runtime ``command`` declares in ``hello``, asked once per process."""
    child = _Child(command, timeout)
    try:
        hello = _hello(child)
        return {
            "name": str(hello.get("name") or command[-1]),
            "version": str(hello.get("version") or "?"),
            "profiles": _names(hello, "profiles", child, optional=False),
            "policies": _names(hello, "policies", child, optional=True),
            "hooks": _names(hello, "hooks", child, optional=True),
            "provides": _names(hello, "provides", child, optional=True) or frozenset(),
        }
    finally:
        child.close()


class StdioRuntime:
    """A runtime in child processes speaking ``memconform.runtime/1``.

    Building one starts the command once and keeps what it declares
    (``profiles``, ``policies``, ``hooks``, ``provides``, ``name``,
    ``version``; ``policies`` and ``hooks`` are ``None`` when it declares
    none); :meth:`execute` runs each script in a fresh child.

    The next child is started while a script runs, so its start-up overlaps the
    kit's own work; it is as fresh as one started later (it has seen nothing).
    :meth:`close` kills it; a runtime not closed has it killed at exit."""

    def __init__(self, command: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.command = tuple(command)
        self.timeout = timeout
        declared = _declarations(self.command, timeout)
        self.name: str = declared["name"]
        self.version: str = declared["version"]
        self.profiles: frozenset[str] = declared["profiles"]
        self.provides: frozenset[str] = declared["provides"]
        if declared["policies"] is not None:
            self.policies: frozenset[str] = declared["policies"]
        if declared["hooks"] is not None:
            self.hooks: frozenset[str] = declared["hooks"]
        self._lock = threading.Lock()
        self._spare: _Child | None = None

    def _fresh_child(self) -> _Child:
        """A child that has run nothing, and the next one started."""
        with self._lock:
            child, self._spare = self._spare, None
            if child is None or not child.alive():
                if child is not None:
                    child.kill()
                child = _Child(self.command, self.timeout)
            self._spare = _Child(self.command, self.timeout)
        return child

    def close(self) -> None:
        """Kill the child started for the next script (closing twice is harmless)."""
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.kill()

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """Run ``script`` in a fresh child, serving its calls on ``env``; the
        child's answer, a JSON object."""
        child = self._fresh_child()
        try:
            return self._run(child, script, env)
        except AdapterTimeoutError as exc:
            note_execute_hung(str(exc))  # a hung runtime costs one timeout, not one per script
            raise
        finally:
            child.close()

    def _run(self, child: _Child, script: Mapping[str, Any], env: Environment) -> dict[str, Any]:
        _hello(child)
        request_id = child.request("execute", {"script": dict(script)})
        calls = _Calls(env)
        while True:
            message = child.receive("execute")
            if "call" not in message:
                answer = child.answer_of("execute", request_id, message)
                if not isinstance(answer, dict):
                    child.fail("execute", f"answered {type(answer).__name__}, expected an "
                               "object (the observation)")
                return answer
            child.send("execute", calls.answer(child, message))


class _Calls:
    """The kit's answers to one child's calls, carried out on ``env``."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.store = StdioServer(env.store)
        self.handlers: dict[str, Callable[[Mapping[str, Any]], Any]] = {
            "model": lambda p: self.env.model(_text(p, "component"), p.get("request")),
            "model_calls": lambda p: self.env.model_calls(
                None if p.get("component") is None else _text(p, "component")),
            "tool": lambda p: self.env.tool(
                _text(p, "name"), p.get("args"),
                None if p.get("call_id") is None else _text(p, "call_id")),
            "hook": lambda p: self.env.hook(_text(p, "name"), p.get("payload")),
            "emit": self._emit,
            "ids.next": lambda p: self.env.ids.next(_text(p, "prefix")),
            "clock.now": lambda p: self.env.clock.now(),
            "clock.advance": lambda p: self.env.clock.advance(_seconds(p)),
            "ledger": lambda p: self.env.ledger,
            "store.capabilities": lambda p: sorted(str(c) for c in self.env.store.capabilities),
            "store.has": lambda p: self.env.store.has(_text(p, "capability")),
        }

    def _emit(self, params: Mapping[str, Any]) -> None:
        data = params.get("data", {})
        if not isinstance(data, dict) or "name" in data:
            raise RequestError("emit: data must be an object without a 'name' field")
        self.env.emit(_text(params, "name"), **data)

    def answer(self, child: _Child, message: Mapping[str, Any]) -> dict[str, Any]:
        """The line answering one call. A call the protocol does not have, or
        cannot read, fails the child; the kit's own failures pass on."""
        call, method, params = message.get("call"), message.get("method"), message.get("params", {})
        if not isinstance(call, int) or isinstance(call, bool):
            child.fail("execute", f"made a call with the number {call!r}, expected an integer")
        if not isinstance(method, str) or not isinstance(params, dict):
            child.fail("execute", f"made call {call} without a method name and params object")
        try:
            if method.startswith("store.") and method[6:] in _STORE_METHODS:
                try:
                    result = self.store.dispatch(method[6:], params)
                except RequestError:
                    raise
                except (StoreError, ValueError, KeyError) as exc:
                    return {"call": call, "error": {"kind": error_kind(exc),
                                                    "message": _message(exc)}}
            elif method in self.handlers:
                result = self.handlers[method](params)
            else:
                child.fail("execute", f"made a call the protocol does not have: {method!r}")
        except ScriptedFailure as exc:
            return {"call": call, "error": {"kind": "scripted-failure",
                                            "message": str(exc), "error": exc.error}}
        except RequestError as exc:
            child.fail("execute", f"made a call {method!r} the kit cannot read: {exc}")
        except BaseException:
            child.kill()  # the kit's own failure: the runtime never sees it
            raise
        return {"call": call, "result": result}


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc)


def _text(params: Mapping[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise RequestError(f"params: field {name!r} must be a string")
    return value


def _seconds(params: Mapping[str, Any]) -> float:
    value = params.get("seconds")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError("params: field 'seconds' must be a number")
    return float(value)


def open_stdio_runtime(target: str) -> StdioRuntime:
    """The runtime ``stdio:<command>`` names; the line timeout comes from
    ``MEMCONFORM_STDIO_TIMEOUT``."""
    return StdioRuntime(_words(target), timeout=_timeout_from_env(ValueError))
