"""Deliberately broken stores and runtimes: every check must be able to fail.

Each profile module (``memconform.mutants.<profile>``) exports ``MUTANTS``, a
list of :class:`Mutant`. A store mutant wraps a working store and breaks one
promise; a runtime mutant is a runtime that breaks one rule. ``kills`` names
the rules whose scenarios must reject it (the mutant test checks exactly that).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

__all__ = ["Mutant", "all_mutants", "get_mutant", "mutants_by_rule", "store_mutant"]


@dataclass(frozen=True)
class Mutant:
    """One broken store or runtime.

    ``kind`` is ``store`` (``build(store) -> store``) or ``runtime``
    (``build() -> runtime``); ``doc`` says in one line what it breaks.
    """

    name: str
    kind: str
    doc: str
    kills: frozenset[str]
    build: Callable[..., object]
    profile: str


def store_mutant(name: str, build: Callable[..., object], kills: str) -> Mutant:
    """A store mutant of the ``store`` profile: ``build(store) -> store``; its
    doc is the first line of ``build``'s docstring, ``kills`` space-separated ids."""
    doc = (build.__doc__ or "").strip().splitlines()[0]
    return Mutant(name=name, kind="store", doc=doc, kills=frozenset(kills.split()),
                  build=build, profile="store")


@cache
def all_mutants() -> dict[str, Mutant]:
    """Every mutant of every profile module, by name."""
    found: dict[str, Mutant] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for mutant in getattr(module, "MUTANTS", []):
            if mutant.name in found:
                raise ValueError(f"duplicate mutant name {mutant.name!r}")
            found[mutant.name] = mutant
    return dict(sorted(found.items()))


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``; ``KeyError`` lists the known names."""
    mutants = all_mutants()
    if name not in mutants:
        raise KeyError(f"unknown mutant {name!r}; known: {', '.join(mutants)}")
    return mutants[name]


@cache
def mutants_by_rule() -> dict[str, tuple[str, ...]]:
    """Rule id -> the names of the mutants its scenarios reject, sorted.

    This is the claim each mutant makes in ``kills``; the mutant tests prove every
    claim by running the scenarios against the mutant. A rule missing here has no
    mutant (every MUST rule has at least one; a test checks it).
    """
    found: dict[str, list[str]] = {}
    for mutant in all_mutants().values():
        for rule in mutant.kills:
            found.setdefault(rule, []).append(mutant.name)
    return {rule: tuple(sorted(names)) for rule, names in sorted(found.items())}
