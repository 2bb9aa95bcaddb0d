"""The ``memconform`` command.

Exit codes are the kit's own, never passed through from pytest or argparse:
0 conformant, 1 non-conformant or stale baseline, 3 adapter error, 4 kit error,
5 usage error.

The package, by what it does: :mod:`.parser` (the command line and its help),
:mod:`.options` (the command line checked), :mod:`.commands` (``rules``,
``mutants``, ``fingerprint``, ``report``, ``compliance``), :mod:`.run` (``run``),
:mod:`.probe` (the store and runtime read before a run), :mod:`.supervision` and
:mod:`.progress` (the suite's pytest as a child process), :mod:`.summary` (the
report written and the summary printed). Each command imports its heavy
dependencies inside its functions: ``memconform --help`` and ``memconform rules``
import neither pytest, Hypothesis nor the steps.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence

from memconform.catalogue import CatalogueError
from memconform.cli.commands import (
    compliance_command,
    fingerprint_command,
    mutants_command,
    report_command,
    rules_command,
)
from memconform.cli.exits import EXIT_ADAPTER, EXIT_KIT, EXIT_OK, EXIT_USAGE, UsageError
from memconform.cli.parser import parser as _parser
from memconform.cli.probe import store_identity as _store_identity  # noqa: F401
from memconform.cli.run import run_command
from memconform.cli.summary import runtime_classes_line as _runtime_classes_line  # noqa: F401
from memconform.cli.supervision import pytest_args as _pytest_args  # noqa: F401

# _parser, _pytest_args, _runtime_classes_line and _store_identity keep the
# private names they had when the command was one module, for code importing them
# from memconform.cli.

__all__ = ["EXIT_ADAPTER", "EXIT_KIT", "EXIT_OK", "EXIT_USAGE", "main"]

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "rules": rules_command, "run": run_command, "report": report_command,
    "mutants": mutants_command, "compliance": compliance_command,
    "fingerprint": fingerprint_command,
}
"""Each command's function: the parsed command line in, the exit code out."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code.

    A standard output closed by its reader (``memconform rules | head``) ends
    the command quietly with exit 0, as Unix tools end when the consumer stops
    reading: what was asked for was delivered as far as it was wanted. Whatever
    the command had written to files (a run's report) is written by then, but
    the exit code it would have returned is not: a gate must not pipe the
    command's output into a reader that can stop early."""
    try:
        args = _parser().parse_args(argv)
        if args.command is None:
            _parser().print_help(sys.stderr)
            return EXIT_USAGE
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"memconform: usage error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CatalogueError as exc:
        print(f"memconform: the rule catalogue is broken: {exc}", file=sys.stderr)
        return EXIT_KIT
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        print("memconform: interrupted", file=sys.stderr)
        return EXIT_KIT
    except Exception:
        print("memconform: internal error (a bug in the kit):", file=sys.stderr)
        traceback.print_exc()
        return EXIT_KIT


def _silence_stdout() -> None:
    """Point standard output at the null device, so the interpreter's flush of
    what is still buffered at exit finds no closed pipe to complain about."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (captured): nothing to silence
        pass
