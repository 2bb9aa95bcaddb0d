"""The names a ``--runtime`` option accepts, resolved once for every command.

:func:`runtime_target` turns a name into the ``module:factory`` that builds the
runtime (called without arguments), the form every process of a run passes on:

- ``simulator`` (also ``reference``, and ``memconform.simulator:Simulator``, the
  name a report's header gives the reference): the reference simulator;
- a variant of the simulator (:data:`VARIANT_PROFILES`: ``anvia-main``,
  ``eddi-snapshot``): the reference, with the documented divergent behaviour
  of its profile (:func:`variant_runtime`);
- a framework name of :data:`~memconform.adapters.registry.BUILTIN_RUNTIMES`
  (``openai-agents``, ``langgraph``, ...): its adapter's factory;
- ``stdio:<command>``: a runtime in another process, spoken to over the
  runtime protocol (:mod:`memconform.adapters.stdio_runtime`); its words
  naming files are made absolute, so every process starts the same command;
- anything else holding a ``:``: taken as ``module:factory`` already (whether
  it imports is the caller's to find out).

Any other name raises :class:`UnknownRuntime` (a ``ValueError``) listing what
is accepted. Nothing is imported or built by resolving a name.

This module sits above the simulator and the adapters (which never import each
other) because it names both; ``memconform run``, ``memconform fingerprint`` and
the job-resume child all resolve through it.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from typing import Any

from memconform.adapters.registry import BUILTIN_RUNTIMES, resolve_runtime
from memconform.adapters.stdio_runtime import is_stdio_runtime, open_stdio_runtime, stdio_target
from memconform.harness.environment import Environment
from memconform.simulator import save_policy_script, strict_write
from memconform.simulator.runtime import Simulator
from memconform.values import JSONValue

__all__ = [
    "SIMULATOR_NAMES", "SIMULATOR_TARGET", "VARIANT_PROFILES", "UnknownRuntime",
    "accepted_names", "runtime_factory", "runtime_target", "variant_runtime",
]

SIMULATOR_NAMES = ("simulator", "reference", "memconform.simulator:Simulator")
"""The names of the reference simulator (the last is what a report's header shows)."""

SIMULATOR_TARGET = "memconform.simulator.runtime:Simulator"
"""The ``module:factory`` of the reference simulator."""

VARIANT_PROFILES: dict[str, str] = {
    **dict.fromkeys(save_policy_script.VARIANTS, "save-policy"),
    **dict.fromkeys(strict_write.VARIANTS, "strict-write"),
}
"""Each variant of the simulator → the profile whose behaviour it changes."""


class UnknownRuntime(ValueError):
    """A ``--runtime`` value that names no runtime (see :func:`accepted_names`)."""


def accepted_names() -> str:
    """What a ``--runtime`` value may be, in words, for error messages."""
    return (
        f"simulator, one of its variants ({', '.join(VARIANT_PROFILES)}), a framework "
        f"({', '.join(BUILTIN_RUNTIMES)}), stdio:<command> or module:factory"
    )


def runtime_target(name: str) -> str:
    """The ``module:factory`` that builds the runtime ``name`` names (see the
    module docstring); raises :class:`UnknownRuntime` for a name that names
    none. A ``module:factory`` comes back unchanged, so resolving twice is
    resolving once."""
    if name in SIMULATOR_NAMES:
        return SIMULATOR_TARGET
    if is_stdio_runtime(name):
        try:
            return stdio_target(name)
        except ValueError as exc:
            raise UnknownRuntime(f"--runtime {name!r}: {exc}") from None
    if name in VARIANT_PROFILES:
        return f"{__name__}:{_attribute(name)}"
    target = resolve_runtime(name)
    if ":" not in target:
        raise UnknownRuntime(f"--runtime must be {accepted_names()}, not {name!r}")
    return target


def runtime_factory(target: str) -> Callable[[], Any]:
    """What builds the runtime of ``target`` (a value :func:`runtime_target`
    returned), called without arguments: a ``stdio:`` runtime's opener, or the
    ``module:factory`` imported. An import that fails raises its own error
    (``ImportError``, ``AttributeError``): the caller says whose it is."""
    if is_stdio_runtime(target):
        return functools.partial(open_stdio_runtime, target)
    module_name, _, attr = target.partition(":")
    factory: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        factory = getattr(factory, part)
    built: Callable[[], Any] = factory
    return built


class _VariantSimulator(Simulator):
    """The simulator with ``variant`` applied to the scripts of its ``profile``
    only; every other profile runs as the reference (a variant reproduces one
    real code base's divergence from one document)."""

    def __init__(self, variant: str, profile: str) -> None:
        super().__init__(variant)
        self.variant_profile = profile

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """The variant's behaviour for its profile, the reference's for the others."""
        if script.get("profile") == self.variant_profile:
            return super().execute(script, env)
        return Simulator().execute(script, env)


def variant_runtime(variant: str) -> Simulator:
    """The simulator variant ``variant`` (a key of :data:`VARIANT_PROFILES`)."""
    return _VariantSimulator(variant, VARIANT_PROFILES[variant])


def _attribute(variant: str) -> str:
    """The module attribute whose call builds ``variant``: ``anvia-main`` → ``anvia_main``."""
    return variant.replace("-", "_")


def __getattr__(attribute: str) -> Callable[[], Simulator]:
    """Each variant's factory, as :func:`runtime_target` names it (``anvia_main``)."""
    for variant in VARIANT_PROFILES:
        if _attribute(variant) == attribute:
            return functools.partial(variant_runtime, variant)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
