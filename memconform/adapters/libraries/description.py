"""What a library adapter says about itself, and where the kit reads it.

Every module of :mod:`memconform.adapters.libraries` that adapts a third-party
library declares one module-level :class:`Library` named ``LIBRARY``: the URL
schemes it opens and the runtime names it answers to (each with the callable
of the module that builds it), the optional extra (``pip install
'memconform[<extra>]'``) holding its library and that extra's version pins, and
its targets on the compliance pages. The kit keeps no other list of them: the
registry's schemes and runtime names
(:mod:`memconform.adapters.registry`), the store targets and runtime extras
(:mod:`memconform.compliance`) and the runtime targets
(:mod:`memconform.runtime_compliance`) are read from :func:`declared`.

A declaration is plain data: reading it imports the adapter module, never its
library (an adapter imports its library inside the functions that use it).
pyproject.toml's extras cannot be generated from it; tests/test_library_declarations.py
checks that each declared extra and its pins are the pyproject entry of that
name, and that every library extra there has a declaring module.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "LIBRARY_PACKAGE",
    "Library",
    "RuntimeEntry",
    "StoreEntry",
    "declared",
    "discover",
    "runtime_factories",
    "scheme_factories",
]

LIBRARY_PACKAGE = "memconform.adapters.libraries"
"""The package whose modules :func:`declared` reads."""


@dataclass(frozen=True)
class StoreEntry:
    """One store of the library on the compliance page (``compliance.md``), as
    :class:`memconform.compliance.Target` takes it (the extra is the library's).

    ``url`` may hold ``{dir}``, ``{run}`` and ``{server}`` (see ``Target``);
    ``server`` is ``"postgresql"`` or ``"redis"`` when the store lives on that
    server; ``row`` is the target's place on the page, which lists every
    library's targets by it (unique across libraries; a new target takes the
    next number)."""

    row: int
    name: str
    url: str
    label: str
    server: str = ""


@dataclass(frozen=True)
class RuntimeEntry:
    """One runtime of the framework on the runtimes page (``runtimes.md``), as
    :class:`memconform.runtime_compliance.RuntimeTarget` takes it (the extra is
    the library's; the fields are documented there)."""

    name: str
    runtime: str
    label: str
    packages: tuple[str, ...]
    script: str
    hooks: str
    lacks: tuple[tuple[str, str], ...] = ()
    node: str = ""
    needs: str = ""
    policies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Library:
    """A library adapter module's description of itself.

    ``module`` is the declaring module (``__name__``); ``schemes`` and
    ``runtimes`` pair each URL scheme and each runtime name with the name of the
    module's callable that builds it; ``extra`` and ``pins`` are the extra and
    its requirements exactly as pyproject.toml lists them (modules adapting one
    library share its extra); ``order`` places the library in the kit's lists
    (the registry's schemes and runtime names, the runtime extras and targets
    follow it: the order the kit took the libraries in; modules of one library
    share it); the targets are its entries on the compliance pages."""

    module: str
    extra: str
    pins: tuple[str, ...]
    order: int
    schemes: tuple[tuple[str, str], ...] = ()
    runtimes: tuple[tuple[str, str], ...] = ()
    store_targets: tuple[StoreEntry, ...] = ()
    runtime_targets: tuple[RuntimeEntry, ...] = ()


def scheme_factories(libraries: Iterable[Library]) -> dict[str, str]:
    """Scheme → ``module:callable`` opening it, for every scheme of ``libraries``
    (in their order, each library's in its own)."""
    return {scheme: f"{lib.module}:{factory}"
            for lib in libraries for scheme, factory in lib.schemes}


def runtime_factories(libraries: Iterable[Library]) -> dict[str, str]:
    """Runtime name → ``module:factory`` building it, for every runtime of
    ``libraries`` (in their order, each library's in its own)."""
    return {name: f"{lib.module}:{factory}"
            for lib in libraries for name, factory in lib.runtimes}


def discover(package: str = LIBRARY_PACKAGE) -> tuple[Library, ...]:
    """The ``LIBRARY`` of every module of ``package`` that declares one (a
    :class:`Library`), by ``order`` then module name. Imports each module of the
    package (and only those: not their libraries)."""
    root = importlib.import_module(package)
    found = []
    for info in pkgutil.iter_modules(root.__path__, f"{package}."):
        library = getattr(importlib.import_module(info.name), "LIBRARY", None)
        if isinstance(library, Library):
            found.append(library)
    return tuple(sorted(found, key=lambda lib: (lib.order, lib.module)))


@functools.cache
def declared() -> tuple[Library, ...]:
    """:func:`discover` of the kit's own library package, read once."""
    return discover()
