"""The runtime side: a runtime takes a script and returns an observation.

A runtime is any object with ``profiles`` (the profile names it can execute,
see :func:`declared_profiles`) and ``execute(script, env)``; the reference
:class:`Simulator` is one. It may also declare ``policies``, the save policies
it implements (see :func:`declared_policies`), as a store declares
capabilities. The kit never hands a runtime a script of a profile it does not
declare: :func:`observe` raises :class:`ProfileNotDeclared` instead. The kit
builds the :class:`~memconform.simulator.environment.Environment` (and with it
the recording proxy), so what the runtime did is observed, not self-reported.
An exception out of a runtime other than the reference simulator is marked as
the adapter's (see :func:`memconform.adapters.proxy.raised_by_adapter`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from memconform.adapters.answers import call_execute, check_observation
from memconform.adapters.proxy import AdapterContractError, RecordingStore, mark_raised_by
from memconform.simulator.environment import Environment, ScriptError
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

SCRIPT_SCHEMA = "memconform.script/1"
OBSERVATION_SCHEMA = "memconform.observation/1"

PROFILE_MODULES: dict[str, str] = {
    "save-policy": "memconform.simulator.save_policy",
    "strict-write": "memconform.simulator.strict_write",
    "turns": "memconform.simulator.turns",
    "candidates": "memconform.simulator.candidates",
    "persisted-state": "memconform.simulator.persisted_state",
}
"""Where the simulator's executor for each profile lives; each module has
``execute(script, env) -> dict``."""


RUNTIME_PROFILES: tuple[str, ...] = tuple(PROFILE_MODULES)
"""The profiles a runtime can declare, in catalogue order (``store`` is no
runtime's: its rules are kept by stores)."""

SAVE_POLICIES: tuple[str, ...] = ("message", "turn", "run")
"""The save policies of document 000, in report order."""


class ProfileNotDeclared(Exception):
    """A script of a profile the runtime does not declare: the runtime is not
    called, and the scenario is ``unsupported`` (the reason names the profile)."""

    def __init__(self, profile: str, declared: frozenset[str]) -> None:
        has = ", ".join(p for p in RUNTIME_PROFILES if p in declared) or "none"
        super().__init__(f"the runtime does not declare the {profile} profile "
                         f"(its profiles: {has})")
        self.profile = profile


def declared_profiles(runtime: object) -> frozenset[str]:
    """The profiles ``runtime`` declares it executes, from its required
    ``profiles`` attribute (a set of :data:`RUNTIME_PROFILES` names; an empty
    set declares none). A runtime without it, a value that is not a set of
    names, or an unknown name raises :class:`ValueError` naming the known
    profiles."""
    declared = declared_names(runtime, "profiles", RUNTIME_PROFILES, "profiles")
    if declared is None:
        raise ValueError(f"the runtime declares no profiles: it needs a profiles attribute, "
                         f"a set of names ({', '.join(RUNTIME_PROFILES)})")
    return declared


def profile_declared(runtime: object, profile: str) -> bool:
    """Whether ``runtime`` declares ``profile`` (read by :func:`declared_profiles`,
    whose :class:`ValueError` a declaration the kit cannot read raises): the one
    gate of every command running a runtime on a profile's scripts."""
    return profile in declared_profiles(runtime)


def require_profile(runtime: object, profile: str) -> None:
    """Return when ``runtime`` declares ``profile``; raise :class:`ProfileNotDeclared`
    (the runtime is not called: ``unsupported``) when it does not, and
    :class:`ValueError` when its declaration cannot be read (the adapter's error).

    ``memconform run`` (:func:`observe`, and the plugin deselecting the
    scenarios of undeclared profiles through :func:`profile_declared`) and
    ``memconform fingerprint`` (:func:`memconform.fingerprint.fingerprint`) gate
    with it."""
    if not profile_declared(runtime, profile):
        raise ProfileNotDeclared(profile, declared_profiles(runtime))


def declared_policies(runtime: object) -> frozenset[str] | None:
    """The save policies ``runtime`` declares it implements, from its optional
    ``policies`` attribute (a set of :data:`SAVE_POLICIES` names).

    ``None`` when it has no ``policies`` (it declares nothing: every save-policy
    scenario still runs and is judged, but the runtime achieves no save-policy
    conformance class); an empty set when it declares that it implements none
    (every scenario configuring a policy is ``unsupported``). A value that is
    not a set of names, or an unknown name, raises :class:`ValueError` naming
    the known policies."""
    return declared_names(runtime, "policies", SAVE_POLICIES, "save policies")


def declared_names(
    runtime: object, attribute: str, known: Sequence[str], what: str,
    error: type[ValueError] = ValueError,
) -> frozenset[str] | None:
    """The names ``runtime`` declares in its optional ``attribute`` (a set of
    ``known`` names, ``what`` saying of what): ``None`` when it has no such
    attribute; a value that is not a collection of names, or an unknown name,
    raises ``error`` naming the known ones."""
    declared = getattr(runtime, attribute, None)
    if declared is None:
        return None
    if isinstance(declared, str) or not isinstance(declared, set | frozenset | list | tuple):
        raise error(f"the runtime's {attribute} is {type(declared).__name__}, "
                    f"expected a set of names ({', '.join(known)})")
    names = frozenset(str(n) for n in declared)
    unknown = sorted(names - set(known))
    if unknown:
        raise error(f"the runtime declares unknown {what} {', '.join(unknown)} "
                    f"(known: {', '.join(known)})")
    return names


@runtime_checkable
class Runtime(Protocol):
    """What an agent runtime implements to be judged by the kit.

    ``profiles`` is required (:func:`declared_profiles`): a rule of a profile
    not declared is ``unsupported`` and its scenarios do not run. Optional
    attributes a runtime may add (not part of the protocol, read with
    ``getattr``): ``policies``, the save policies it implements
    (:func:`declared_policies`); ``hooks``, the optional hooks it has natively
    (:func:`memconform.fingerprint.declared_hooks`); ``provides``, what its
    adapter stamps itself. Runtime conformance classes are claimed only for
    the declared profiles and, for ``save-policy``, the declared policies."""

    @property
    def profiles(self) -> frozenset[str]:
        """The profile names this runtime can execute."""
        ...

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """Execute ``script`` using only ``env`` and return what the caller saw
        (outcomes, replies, events, errors, views), as JSON data."""
        ...


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


def observe(
    runtime: Runtime,
    script: Mapping[str, Any],
    store: RecordingStore,
    env_ready: Callable[[Environment], None] | None = None,
) -> dict[str, JSONValue]:
    """Execute ``script`` on ``runtime`` against ``store`` and return the observation:
    the runtime's answer plus the kit's own ``timeline`` and ``ledger``.

    What a runtime other than :class:`Simulator` raises is passed on marked as
    the adapter's; an answer that is not a mapping raises
    :class:`~memconform.adapters.proxy.AdapterContractError`. ``env_ready`` is
    called with the environment before the runtime starts (the kill point of
    :mod:`memconform.simulator.job_resume` reads its ledger). A script of a
    profile the runtime does not declare raises :class:`ProfileNotDeclared`
    before anything runs."""
    if script.get("schema", SCRIPT_SCHEMA) != SCRIPT_SCHEMA:
        raise ScriptError(f"schema: expected {SCRIPT_SCHEMA!r}, got {script.get('schema')!r}")
    profile = script.get("profile")
    if profile in PROFILE_MODULES:
        try:
            require_profile(runtime, str(profile))
        except ValueError as exc:
            raise AdapterContractError("profiles", str(exc)) from None
    env = Environment(script, store)
    if env_ready is not None:
        env_ready(env)
    try:
        raw = call_execute(runtime, script, env, bounded=type(runtime) is not Simulator)
    except Exception as exc:
        if type(runtime) is not Simulator:
            mark_raised_by(exc, "execute")
        raise
    if not isinstance(raw, Mapping):
        raise AdapterContractError(
            "execute", f"returned {type(raw).__name__}, expected a mapping (the observation)"
        )
    answer = dict(raw)
    observation: dict[str, JSONValue] = {
        "schema": OBSERVATION_SCHEMA,
        "profile": script.get("profile"),
        **answer,
        "ledger": env.ledger,
        "timeline": env.timeline.to_json(),
    }
    check_observation(observation)
    return observation
