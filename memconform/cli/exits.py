"""The exit codes of the ``memconform`` command and the errors that choose them.

The codes are the kit's own, never passed through from pytest or argparse:
0 conformant, 1 non-conformant or stale baseline, 3 adapter error, 4 kit error,
5 usage error.
"""

from __future__ import annotations

__all__ = [
    "EXIT_ADAPTER", "EXIT_KIT", "EXIT_NONCONFORMANT", "EXIT_OK", "EXIT_USAGE",
    "AdapterFailure", "UsageError",
]

EXIT_OK = 0
EXIT_NONCONFORMANT = 1
EXIT_ADAPTER = 3
EXIT_KIT = 4
EXIT_USAGE = 5


class UsageError(Exception):
    """The command line or a file it names is wrong; exit 5 with one line."""


class AdapterFailure(Exception):
    """The store could not even be opened or announce itself, or the runtime
    could not be built (exit 3, every rule it would judge ``error``)."""
