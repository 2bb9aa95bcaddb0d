"""Fresh processes: the child processes the kit starts to play "another machine".

A fresh process is given exactly three things and nothing else of the
parent:

- the interpreter the kit runs on (``sys.executable``);
- the kit's import path, passed as a command-line argument (never through
  ``PYTHONPATH``), so a store or runtime the kit itself imports (from a
  checkout, a test folder, a folder on the parent's ``PYTHONPATH``) is
  importable there too;
- the environment the kit was started with, which is the deployment's
  configuration another machine running it has too (a store's path or DSN in
  a variable), less the kit's and its test runner's own variables
  (:data:`KIT_VARIABLES`) and the temporary folder: ``TMPDIR`` is a new one
  where the caller names one. Taken when this module is first imported, so
  nothing a store or runtime writes to ``os.environ`` while it runs reaches
  the child. The caller may add the kit's own control variables (the
  cross-process pause of :mod:`memconform.harness.faults`).

:func:`python_command` builds the command line: the interpreter in isolated
mode (``-I``: no ``PYTHON*`` variables, no user site folder, no script folder
on the path) runs a short bootstrap that puts the given import path first and
then runs the named module as ``__main__`` with the remaining arguments.

:func:`start` and :func:`run` start such a process as :class:`subprocess.Popen`
and :func:`subprocess.run` would. On Linux they fork it from a fork server
(:mod:`memconform.harness.fork_server`: the same command's interpreter, having
preloaded the kit's modules the caller names), which makes a child cost a fork
instead of an interpreter start; what the child can observe is the same. The
server is not used while the kit measures its own coverage (children then start
under coverage), nor when ``MEMCONFORM_FORK_SERVER=0``; a server that cannot
start or dies makes them start the interpreter as before.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Union

from memconform import measurement
from memconform.harness.fork_server import ForkedProcess, ForkServer, ForkServerError

__all__ = [
    "FORK_SERVER_ENV",
    "KIT_VARIABLES",
    "Process",
    "fresh_environment",
    "kit_import_path",
    "python_command",
    "run",
    "start",
]

KIT_VARIABLES = ("MEMCONFORM_", "PYTEST_", "PYTHON", "COV_CORE_", "COVERAGE_")
"""Prefixes of the variables a fresh process never inherits: the kit's own
switches, pytest's and its plugins' per-worker and per-test values, the
interpreter's (ignored in isolated mode anyway) and coverage's."""

_TEMPORARY = frozenset({"TMPDIR", "TEMP", "TMP"})

_STARTED_WITH = {
    name: value for name, value in os.environ.items()
    if not name.startswith(KIT_VARIABLES) and name not in _TEMPORARY
}
"""The environment the kit was started with, as a fresh process gets it."""

FORK_SERVER_ENV = "MEMCONFORM_FORK_SERVER"
"""Set to ``0`` to start every fresh process as a new interpreter."""

Process = Union["subprocess.Popen[str]", ForkedProcess]
"""A started fresh process: forked from the fork server, or a new interpreter."""

_BOOTSTRAP = (
    "import os, runpy, sys\n"
    "given = [p for p in sys.argv[1].split(os.pathsep) if p]\n"
    "sys.path[:] = given + [p for p in sys.path if p not in given]\n"
    "module = sys.argv[2]\n"
    "sys.argv = [module, *sys.argv[3:]]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


def kit_import_path() -> list[str]:
    """This process's import path as absolute folders and archives that exist
    (an empty entry, the current folder, becomes its absolute name)."""
    out: list[str] = []
    for entry in sys.path:
        path = os.path.abspath(entry or os.getcwd())
        if os.path.exists(path) and path not in out:
            out.append(path)
    return out


def python_command(
    module: str, *args: str, import_path: Sequence[str] | None = None
) -> list[str]:
    """The command running ``python -m module args…`` in a fresh process whose
    import path starts with ``import_path`` (default: :func:`kit_import_path`)."""
    path = kit_import_path() if import_path is None else list(import_path)
    return [sys.executable, "-I", "-c", _BOOTSTRAP, os.pathsep.join(path), module, *args]


def fresh_environment(
    tmpdir: str | os.PathLike[str] | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment the kit was started with, less :data:`KIT_VARIABLES` and
    the temporary folder; ``TMPDIR`` when given, and ``extra``."""
    env = {**_STARTED_WITH, "PATH": os.environ.get("PATH", os.defpath)}
    if tmpdir is not None:
        env["TMPDIR"] = os.fspath(tmpdir)
    if extra:
        env.update(extra)
    return env


_SERVERS: dict[tuple[int, tuple[str, ...], tuple[str, ...]], ForkServer | None] = {}
_SERVERS_LOCK = threading.Lock()


def _fork_server(import_path: Sequence[str], preload: Sequence[str]) -> ForkServer | None:
    """This process's fork server for ``import_path`` and ``preload`` (started on
    first use), or ``None`` where forking is not to be used."""
    if (
        not sys.platform.startswith("linux")
        or os.environ.get(FORK_SERVER_ENV, "1") == "0"
        or measurement.active()
    ):
        return None
    key = (os.getpid(), tuple(import_path), tuple(preload))
    with _SERVERS_LOCK:
        if key not in _SERVERS:
            try:
                _SERVERS[key] = ForkServer(
                    python_command("memconform.harness.fork_server", import_path=import_path),
                    fresh_environment(), preload,
                )
            except (ForkServerError, OSError):
                _SERVERS[key] = None
        server = _SERVERS[key]
        if server is not None and not server.alive():
            server.close()
            server = _SERVERS[key] = None
        return server


@atexit.register
def _close_servers() -> None:
    for key, server in list(_SERVERS.items()):
        if server is not None and key[0] == os.getpid():
            server.close()
    _SERVERS.clear()


def start(
    module: str,
    *args: str,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None = None,
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | None = subprocess.PIPE,
    stderr: int | None = subprocess.PIPE,
    pass_fds: Sequence[int] = (),
    preload: Sequence[str] = (),
    import_path: Sequence[str] | None = None,
) -> Process:
    """A fresh process running ``python -m module args…`` in text mode with
    exactly ``env``, in ``cwd`` (default: this process's folder), its streams set
    as :class:`subprocess.Popen`'s are and ``pass_fds`` kept at their numbers.
    ``preload``: modules of the kit its fork server imports once (never the
    store or runtime under test, never ``module``)."""
    path = kit_import_path() if import_path is None else list(import_path)
    folder = os.fspath(cwd) if cwd is not None else os.getcwd()
    server = _fork_server(path, preload)
    if server is not None:
        try:
            return server.start(
                module, args, env=env, cwd=folder, stdin=stdin, stdout=stdout,
                stderr=stderr, pass_fds=pass_fds,
            )
        except ForkServerError:
            pass
    return subprocess.Popen(
        python_command(module, *args, import_path=path), cwd=folder, env=dict(env),
        stdin=stdin, stdout=stdout, stderr=stderr, text=True, pass_fds=tuple(pass_fds),
    )


def run(
    module: str,
    *args: str,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    preload: Sequence[str] = (),
    import_path: Sequence[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run :func:`start`'s process to its end and return its output, as
    ``subprocess.run(..., capture_output=True, text=True)`` does; a process
    still running after ``timeout`` seconds is killed and
    :class:`subprocess.TimeoutExpired` raised."""
    with start(
        module, *args, env=env, cwd=cwd, preload=preload, import_path=import_path
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode or 0, out or "", err or "")
