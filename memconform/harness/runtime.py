"""The runtime contract, and how the kit runs a runtime under test.

A runtime is any object with ``profiles`` (the profile names it can execute,
see :func:`declared_profiles`) and ``execute(script, env)``; the reference
simulator (:class:`memconform.simulator.runtime.Simulator`) is one. It may also
declare ``policies``, the save policies it implements (see
:func:`declared_policies`), as a store declares capabilities, and ``hooks``,
the optional hooks it has natively (:func:`declared_hooks`). The kit never
hands a runtime a script of a profile it does not declare: :func:`observe`
raises :class:`ProfileNotDeclared` instead. The kit builds the
:class:`~memconform.harness.environment.Environment` (and with it the recording
proxy), so what the runtime did is observed, not self-reported. An exception
out of a runtime other than the reference is marked as the adapter's (see
:func:`memconform.harness.proxy.raised_by_adapter`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from memconform.harness.answers import call_execute, check_observation
from memconform.harness.environment import Environment, ScriptError
from memconform.harness.proxy import AdapterContractError, RecordingStore, mark_raised_by
from memconform.values import JSONValue

__all__ = [
    "OBSERVATION_SCHEMA",
    "OPTIONAL_HOOKS",
    "RETRYABLE_STATUSES",
    "RUNTIME_PROFILES",
    "SAVE_POLICIES",
    "SCRIPT_SCHEMA",
    "DeclarationError",
    "ProfileNotDeclared",
    "Runtime",
    "declared_hooks",
    "declared_names",
    "declared_policies",
    "declared_profiles",
    "hooks_needed",
    "observe",
    "profile_declared",
    "reference_runtime",
    "require_profile",
]

SCRIPT_SCHEMA = "memconform.script/1"
OBSERVATION_SCHEMA = "memconform.observation/1"

RUNTIME_PROFILES: tuple[str, ...] = (
    "save-policy", "strict-write", "turns", "candidates", "persisted-state",
)
"""The profiles a runtime can declare, in catalogue order (``store`` is no
runtime's: its rules are kept by stores)."""

SAVE_POLICIES: tuple[str, ...] = ("message", "turn", "run")
"""The save policies of document 000, in report order."""

RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""Model failures a runtime with the ``retry`` feature retries."""

OPTIONAL_HOOKS = (
    "input_guardrail", "output_guardrail", "tool_error", "run_end", "cancel", "approval",
    "stream", "retry",
)
"""The native hooks and features a runtime may lack. A runtime may declare the
ones it has as ``hooks`` (a set of these names); a point needing one it does not
declare is ``unsupported``: not run, never emulated, not counted in any
distance. A runtime declaring no ``hooks`` is run at every point."""


class DeclarationError(ValueError):
    """A runtime name, policy, hook or mutant the kit cannot use (a usage error)."""


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


def declared_hooks(runtime: object) -> frozenset[str] | None:
    """The optional hooks ``runtime`` declares (``None``: it declares none, so
    every point is run); an unknown name raises :class:`DeclarationError`."""
    return declared_names(runtime, "hooks", OPTIONAL_HOOKS, "hooks", DeclarationError)


def hooks_needed(script: Mapping[str, Any]) -> frozenset[str]:
    """The optional hooks (:data:`OPTIONAL_HOOKS`) a save-policy ``script`` cannot
    run without: each scripted hook of that name, a cancellation, an approval or
    resume, streaming, and a model failure a provider retry may fix."""
    needed = {name for name in (script.get("hooks") or {}) if name in OPTIONAL_HOOKS}
    runs = [r for r in script.get("runs") or [] if isinstance(r, Mapping)]
    if any(r.get("cancel_before_model_call") for r in runs):
        needed.add("cancel")
    if any(r.get("stream") for r in runs) or script.get("stream"):
        needed.add("stream")
    steps = [step for component in (script.get("model") or {}).values()
             for step in (component if isinstance(component, list) else [component])
             if isinstance(step, Mapping)]
    calls = [c for step in steps for c in step.get("tool_calls") or [] if isinstance(c, Mapping)]
    if any(r.get("resume") is not None for r in runs) or any(
            c.get("needs_approval") for c in calls):
        needed.add("approval")
    if any(isinstance(step.get("fail"), Mapping)
           and step["fail"].get("status") in RETRYABLE_STATUSES for step in steps):
        needed.add("retry")
    return frozenset(needed)


_REFERENCE: set[type] = set()


def reference_runtime(cls: type) -> type:
    """Mark ``cls`` as the kit's own reference runtime: :func:`observe` neither
    bounds its ``execute`` in time nor marks what it raises as an adapter's.
    Only exactly this class counts (a subclass, such as a mutant, is judged as
    any runtime under test is)."""
    _REFERENCE.add(cls)
    return cls


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
    :class:`~memconform.harness.proxy.AdapterContractError`. ``env_ready`` is
    called with the environment before the runtime starts (the kill point of
    :mod:`memconform.steps.job_resume` reads its ledger). A script of a
    profile the runtime does not declare raises :class:`ProfileNotDeclared`
    before anything runs."""
    if script.get("schema", SCRIPT_SCHEMA) != SCRIPT_SCHEMA:
        raise ScriptError(f"schema: expected {SCRIPT_SCHEMA!r}, got {script.get('schema')!r}")
    profile = script.get("profile")
    if profile in RUNTIME_PROFILES:
        try:
            require_profile(runtime, str(profile))
        except ValueError as exc:
            raise AdapterContractError("profiles", str(exc)) from None
    env = Environment(script, store)
    if env_ready is not None:
        env_ready(env)
    try:
        raw = call_execute(runtime, script, env, bounded=type(runtime) not in _REFERENCE)
    except Exception as exc:
        if type(runtime) not in _REFERENCE:
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
