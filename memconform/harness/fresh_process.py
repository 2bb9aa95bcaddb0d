"""Fresh processes: the child processes the kit starts to play "another machine".

A fresh process is given exactly three things and nothing else of the
parent:

- the interpreter the kit runs on (``sys.executable``);
- the kit's import path, passed as a command-line argument (never through
  ``PYTHONPATH``), so a store or runtime the kit itself imports (from a
  checkout, a test folder, a folder on the parent's ``PYTHONPATH``) is
  importable there too;
- an environment holding only ``PATH`` and, where the caller names one,
  ``TMPDIR``; the caller may add the kit's own control variables (the
  cross-process pause of :mod:`memconform.harness.faults`).

:func:`python_command` builds the command line: the interpreter in isolated
mode (``-I``: no ``PYTHON*`` variables, no user site folder, no script folder
on the path) runs a short bootstrap that puts the given import path first and
then runs the named module as ``__main__`` with the remaining arguments.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

__all__ = ["fresh_environment", "kit_import_path", "python_command"]

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
    """``PATH`` of this process, ``TMPDIR`` when given, and ``extra``: nothing else."""
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    if tmpdir is not None:
        env["TMPDIR"] = os.fspath(tmpdir)
    if extra:
        env.update(extra)
    return env
