"""The fork server: fresh processes that cost a fork instead of an interpreter start.

A fresh process (:mod:`memconform.harness.fresh_process`) pays an interpreter
start and the kit's imports, 0.2 to 0.4 s; the multi-process checks and the
fresh-process resumes start some 150 of them per run. The fork server is one
such fresh process (the kit's interpreter in isolated mode, the kit's import
path, the environment a fresh process gets), started once per kit process and
import path. It imports the modules it is asked to preload (the kit's own; never
the store or runtime under test, never a module a child runs), freezes what it
allocated, and waits. For each request it forks a child that

- takes the request's descriptors as its 0, 1, 2 and passed descriptors (each
  at the number the caller gave) and closes every other;
- moves to the request's working folder and takes exactly the request's
  environment (plus what the interpreter itself added to its own at start-up,
  as a fresh interpreter would), then resets what Python read from the old one
  (the time zone, the temporary folder);
- runs the module as ``__main__`` with the request's arguments and ends as any
  interpreter ends: ``atexit`` handlers run, non-daemon threads are joined, an
  uncaught exception prints its traceback and exits 1.

The child shares with a fresh interpreter everything a rule can see: nothing of
the store or runtime was imported, opened or built before the fork, no script
read, no clock or id drawn (``random`` reseeds itself in a forked child). It is
not a child of the kit's process: the server reaps it and writes its exit status
(Popen's convention: negative for a signal) to a pipe the request gave, which
:class:`ForkedProcess` reads. Signals go straight to the child's pid.

The protocol on the Unix socket between the kit and its server (one request at a
time): a 4-byte big-endian length, then a JSON object, with descriptors attached
to the request (``SCM_RIGHTS``). The server first sends ``{"ready": true}`` or
``{"error": text}``; a request is ``{"module", "args", "env", "cwd", "targets"}``
with the status pipe's write end and then one descriptor per entry of
``targets`` (its number in the child); the answer is ``{"pid": N}`` or
``{"error": text}``.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import io
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import IO, Any

from memconform.harness.readiness import readable

__all__ = ["READY_TIMEOUT", "ForkServer", "ForkServerError", "ForkedProcess", "main"]

READY_TIMEOUT = 60.0
"""Seconds a new server may take to preload before the kit gives up on it."""

_MAX_FDS = 64
_HEADER = struct.Struct(">I")


class ForkServerError(RuntimeError):
    """The fork server could not start or could not start a child."""


# -- framing ------------------------------------------------------------------------------


def _send(sock: socket.socket, message: Mapping[str, Any], fds: Sequence[int] = ()) -> None:
    data = json.dumps(message).encode("utf-8")
    packet = _HEADER.pack(len(data)) + data
    sent = socket.send_fds(sock, [packet], list(fds)) if fds else sock.send(packet)
    if sent < len(packet):
        sock.sendall(packet[sent:])


def _receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One message and the descriptors that came with it; :class:`EOFError` at the end."""
    data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, _MAX_FDS)
    if not data:
        for fd in fds:
            os.close(fd)
        raise EOFError("the other end closed the socket")
    buffer = bytearray(data)
    while len(buffer) < _HEADER.size:
        buffer += _recv_more(sock)
    (size,) = _HEADER.unpack_from(buffer)
    while len(buffer) < _HEADER.size + size:
        buffer += _recv_more(sock)
    message: dict[str, Any] = json.loads(bytes(buffer[_HEADER.size : _HEADER.size + size]))
    return message, list(fds)


def _recv_more(sock: socket.socket) -> bytes:
    chunk = sock.recv(1 << 16)
    if not chunk:
        raise EOFError("the other end closed the socket mid-message")
    return chunk


# -- the server ---------------------------------------------------------------------------


class _Request:
    """What a forked child is to become (returned by :func:`_serve` in the child only)."""

    def __init__(self, message: dict[str, Any], fds: list[int], added: dict[str, str]) -> None:
        self.message, self.fds, self.added = message, fds, added


def main(argv: Sequence[str] | None = None) -> None:
    """The server: ``argv`` is the socket's descriptor, the JSON list of modules
    to preload and the JSON environment it was started with."""
    args = list(sys.argv[1:] if argv is None else argv)
    sock = socket.socket(fileno=int(args[0]))
    started_with: dict[str, str] = json.loads(args[2])
    added = {k: v for k, v in os.environ.items() if k not in started_with}
    try:
        for name in json.loads(args[1]):
            importlib.import_module(name)
    except BaseException:  # any failure to preload is reported, not raised
        _send(sock, {"error": traceback.format_exc()})
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the kit's to handle
    gc.collect()
    gc.freeze()
    request = _serve(sock, added)
    if request is not None:
        _become(request)


def _serve(sock: socket.socket, added: dict[str, str]) -> _Request | None:
    """Fork a child per request until the kit closes the socket; returns only in
    a child (its request) or when the kit is gone (``None``)."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    statuses: dict[int, int] = {}
    _send(sock, {"ready": True})
    while True:
        ready = readable([sock.fileno(), wake_read], None)
        if wake_read in ready:
            with contextlib.suppress(BlockingIOError):
                while os.read(wake_read, 512):
                    pass
        _reap(statuses)
        if sock.fileno() not in ready:
            continue
        try:
            message, fds = _receive(sock)
        except (EOFError, OSError, ValueError):
            return None
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            _send(sock, {"error": f"fork failed: {exc}"})
            continue
        if pid == 0:
            sock.detach()  # its descriptor is closed with the others, never by a finalizer
            signal.set_wakeup_fd(-1)
            for number in (signal.SIGCHLD, signal.SIGTERM):
                signal.signal(number, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            return _Request(message, fds, added)
        status_fd, *child_fds = fds
        for fd in child_fds:
            os.close(fd)
        statuses[pid] = status_fd
        _send(sock, {"pid": pid})


def _reap(statuses: dict[int, int]) -> None:
    """Collect every ended child and write its exit code to its status pipe."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = statuses.pop(pid, None)
        if fd is None:
            continue
        with contextlib.suppress(OSError):
            os.write(fd, b"%d\n" % os.waitstatus_to_exitcode(status))
        os.close(fd)


def _become(request: _Request) -> None:
    """In the child: take the request's descriptors, folder and environment and
    run its module as ``__main__`` (its exit is the interpreter's)."""
    message = request.message
    os.close(request.fds[0])  # the status pipe is the server's to write
    _place_descriptors(request.fds[1:], [int(t) for t in message["targets"]])
    os.chdir(message["cwd"])
    env = {**request.added, **message["env"]}
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    import tempfile

    tempfile.tempdir = None
    module = str(message["module"])
    sys.modules.pop(module, None)
    sys.argv = [module, *message["args"]]
    import runpy

    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _place_descriptors(fds: Sequence[int], targets: Sequence[int]) -> None:
    """Give each of ``fds`` the number of its target and close every other descriptor."""
    floor = max([*targets, 2]) + 1
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, floor) for fd in fds]
    for fd in fds:
        os.close(fd)
    for source, target in zip(moved, targets, strict=True):
        os.dup2(source, target)
    keep = sorted(set(targets))
    low = 0
    for number in keep:
        if number > low:
            os.closerange(low, number)
        low = number + 1
    os.closerange(low, max(os.sysconf("SC_OPEN_MAX"), low))


# -- the client ---------------------------------------------------------------------------


class ForkedProcess:
    """A child of the fork server with the part of :class:`subprocess.Popen`'s
    interface the kit uses (text mode): ``pid``, ``args``, ``returncode``, the
    ``stdin``/``stdout``/``stderr`` streams, :meth:`poll`, :meth:`wait`,
    :meth:`communicate` (output read before a timeout is kept for the next call),
    :meth:`send_signal`, :meth:`kill`, :meth:`terminate` and use as a context
    manager."""

    def __init__(
        self,
        pid: int,
        args: list[str],
        status: int,
        streams: tuple[IO[str] | None, IO[str] | None, IO[str] | None],
    ) -> None:
        self.pid = pid
        self.args = args
        self.returncode: int | None = None
        self.stdin, self.stdout, self.stderr = streams
        self._status = status
        self._status_text = b""
        self._lock = threading.Lock()
        self._read: dict[int, list[bytes]] = {}

    def __enter__(self) -> ForkedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        if self.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self.stdin.close()
        self.wait()

    def poll(self) -> int | None:
        """The exit code if the child has ended, else ``None``."""
        return self._collect(0.0)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the child's end (:class:`subprocess.TimeoutExpired` after ``timeout``)."""
        code = self._collect(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return code

    def _collect(self, timeout: float | None) -> int | None:
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            deadline = None if timeout is None else time.monotonic() + timeout
            while not self._status_text.endswith(b"\n"):
                left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                ready = readable([self._status], left)
                if not ready:
                    return None
                chunk = os.read(self._status, 64)
                if not chunk:  # the server died before the child: its status is lost
                    self._status_text += b"1\n" if not self._status_text else b"\n"
                    break
                self._status_text += chunk
            os.close(self._status)
            self.returncode = int(self._status_text.strip() or b"1")
            return self.returncode

    def send_signal(self, signum: int) -> None:
        """Send ``signum`` to the child unless it has already been reaped."""
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def communicate(
        self, input: str | None = None, timeout: float | None = None
    ) -> tuple[Any, Any]:
        """Write ``input``, close the child's input, read its output to the end and
        wait for it, as :meth:`subprocess.Popen.communicate` does."""
        if self.stdin is not None and not self.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                if input:
                    self.stdin.write(input)
                self.stdin.close()
        deadline = None if timeout is None else time.monotonic() + timeout
        streams = [s for s in (self.stdout, self.stderr) if s is not None and not s.closed]
        open_fds = {s.fileno(): s for s in streams}
        for fd in open_fds:
            self._read.setdefault(fd, [])
        pending = {fd for fd in open_fds if not self._ended(fd)}
        while pending:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            ready = readable(list(pending), left)
            for fd in ready:
                chunk = os.read(fd, 1 << 15)
                self._read[fd].append(chunk)
                if not chunk:
                    pending.discard(fd)
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        if self._collect(left) is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        texts: list[str | None] = []
        for stream in (self.stdout, self.stderr):
            if stream is None or stream.closed:
                texts.append(None)
                continue
            raw = b"".join(self._read.get(stream.fileno(), []))
            encoding = getattr(stream, "encoding", None) or "utf-8"
            texts.append(raw.decode(encoding, "replace").replace("\r\n", "\n"))
            stream.close()
        return texts[0], texts[1]

    def _ended(self, fd: int) -> bool:
        chunks = self._read.get(fd, [])
        return bool(chunks) and chunks[-1] == b""


class ForkServer:
    """One fork server process and the socket to it (see the module docstring)."""

    def __init__(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        preload: Sequence[str],
    ) -> None:
        """Start the server with ``command`` (a :func:`python_command` for this
        module, to which the socket, ``preload`` and ``env`` are appended) and
        wait until it has preloaded; :class:`ForkServerError` if it cannot."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock = ours
        self._lock = threading.Lock()
        try:
            self._proc = subprocess.Popen(
                [*command, str(theirs.fileno()), json.dumps(list(preload)), json.dumps(dict(env))],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env=dict(env), pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        ready = readable([ours.fileno()], READY_TIMEOUT)
        try:
            answer, _ = _receive(ours) if ready else ({"error": "no answer in time"}, [])
        except (EOFError, OSError, ValueError) as exc:
            answer = {"error": str(exc)}
        if not answer.get("ready"):
            self.close()
            raise ForkServerError(f"the fork server did not start: {answer.get('error')}")

    def alive(self) -> bool:
        return self._proc.poll() is None

    def start(
        self,
        module: str,
        args: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str,
        stdin: int | None,
        stdout: int | None,
        stderr: int | None,
        pass_fds: Sequence[int] = (),
    ) -> ForkedProcess:
        """A child running ``module`` with ``args``; each stream is
        ``subprocess.PIPE``, ``subprocess.DEVNULL``, ``None`` (this process's own)
        or a descriptor, ``stderr`` also ``subprocess.STDOUT``."""
        to_close: list[int] = []
        ours: list[IO[str] | None] = [None, None, None]
        child: list[int] = []
        try:
            for number, how in enumerate((stdin, stdout, stderr)):
                child.append(self._child_end(number, how, ours, child, to_close))
            status_read, status_write = os.pipe()
            to_close.append(status_write)
            message = {
                "module": module, "args": list(args), "env": dict(env), "cwd": cwd,
                "targets": [0, 1, 2, *pass_fds],
            }
            with self._lock:
                try:
                    _send(self._sock, message, [status_write, *child, *pass_fds])
                    answer, _ = _receive(self._sock)
                except (EOFError, OSError, ValueError) as exc:
                    os.close(status_read)
                    raise ForkServerError(f"the fork server is gone: {exc}") from exc
        except BaseException:
            for stream in ours:
                if stream is not None:
                    stream.close()
            raise
        finally:
            for fd in to_close:
                os.close(fd)
        if "pid" not in answer:
            os.close(status_read)
            for stream in ours:
                if stream is not None:
                    stream.close()
            raise ForkServerError(str(answer.get("error")))
        streams = (ours[0], ours[1], ours[2])
        return ForkedProcess(int(answer["pid"]), [module, *args], status_read, streams)

    @staticmethod
    def _child_end(
        number: int, how: int | None, ours: list[IO[str] | None], child: list[int],
        to_close: list[int],
    ) -> int:
        """The descriptor the child gets as ``number`` (opening a pipe or
        ``/dev/null`` as needed, noted in ``to_close``)."""
        if how is None:
            return number
        if how == subprocess.STDOUT and number == 2:
            return child[1]
        if how == subprocess.DEVNULL:
            fd = os.open(os.devnull, os.O_RDWR)
            to_close.append(fd)
            return fd
        if how == subprocess.PIPE:
            read, write = os.pipe()
            if number == 0:
                to_close.append(read)
                ours[0] = io.TextIOWrapper(open(write, "wb"), write_through=True)  # noqa: SIM115
                return read
            to_close.append(write)
            ours[number] = io.TextIOWrapper(open(read, "rb"))  # noqa: SIM115
            return write
        if how < 0:
            raise ValueError(f"unsupported stream setting {how}")
        return how

    def close(self) -> None:
        """End the server (its running children go on and are reaped by init)."""
        with contextlib.suppress(OSError):
            self._sock.close()
        proc = getattr(self, "_proc", None)
        if proc is None:
            return
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
