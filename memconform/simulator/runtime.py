"""The reference runtime: :class:`Simulator` executes every profile's scripts as
the documents specify (or as a named variant reproduces the real code).

The runtime contract it keeps, and :func:`~memconform.harness.runtime.observe`,
which runs any runtime under the kit's eyes, live in
:mod:`memconform.harness.runtime`; their names are re-exported here for
runtimes written against this module.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from memconform.harness.environment import Environment, ScriptError
from memconform.harness.runtime import (
    OBSERVATION_SCHEMA,
    RUNTIME_PROFILES,
    SAVE_POLICIES,
    SCRIPT_SCHEMA,
    ProfileNotDeclared,
    Runtime,
    declared_names,
    declared_policies,
    declared_profiles,
    observe,
    profile_declared,
    reference_runtime,
    require_profile,
)
from memconform.values import JSONValue

__all__ = [
    "OBSERVATION_SCHEMA",
    "PROFILE_MODULES",
    "RUNTIME_PROFILES",
    "SAVE_POLICIES",
    "SCRIPT_SCHEMA",
    "ProfileNotDeclared",
    "Runtime",
    "Simulator",
    "declared_names",
    "declared_policies",
    "declared_profiles",
    "observe",
    "profile_declared",
    "require_profile",
]

PROFILE_MODULES: dict[str, str] = {
    "save-policy": "memconform.simulator.save_policy",
    "strict-write": "memconform.simulator.strict_write",
    "turns": "memconform.simulator.turns",
    "candidates": "memconform.simulator.candidates",
    "persisted-state": "memconform.simulator.persisted_state",
}
"""Where the simulator's executor for each profile lives; each module has
``execute(script, env) -> dict``."""

assert tuple(PROFILE_MODULES) == RUNTIME_PROFILES, "one profile list"


@reference_runtime
class Simulator:
    """The reference runtime: deterministic, no I/O except through ``env``.

    ``variant`` selects a documented divergent behaviour (for example
    ``anvia-main`` or ``eddi-snapshot``); ``None`` is the behaviour the documents
    specify. Profile executors read it from ``script["variant"]`` when set here.
    """

    def __init__(self, variant: str | None = None) -> None:
        self.variant = variant

    @property
    def profiles(self) -> frozenset[str]:
        """Every profile of the five documents."""
        return frozenset(PROFILE_MODULES)

    @property
    def policies(self) -> frozenset[str]:
        """Every save policy (each variant too: a variant changes what a policy
        does at a documented point, never which policies can be configured)."""
        return frozenset(SAVE_POLICIES)

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """Dispatch to the profile's executor."""
        profile = script.get("profile")
        if profile not in PROFILE_MODULES:
            known = ", ".join(sorted(PROFILE_MODULES))
            raise ScriptError(f"profile: must be one of {known}, got {profile!r}")
        if self.variant is not None:
            script = {**script, "variant": self.variant}
        module = importlib.import_module(PROFILE_MODULES[str(profile)])
        result: Mapping[str, JSONValue] = module.execute(script, env)
        return result
