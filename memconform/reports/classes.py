"""Conformance classes: how a class's status follows from its rules' verdicts,
and which runtime classes a run claims.

Store classes are ``core`` plus one per capability (see
:mod:`memconform.reports.verdict`). Runtime classes are per profile of the
catalogue's runtime rules, and for ``save-policy`` per save policy:
``save-policy/message``, ``save-policy/turn``, ``save-policy/run``, then
``strict-write``, ``turns``, ``candidates``, ``persisted-state``. A runtime
claims a class only for what it declared: the profile among its ``profiles``
and, for a save-policy class, the policy among its ``policies``. A runtime
that declares no ``policies`` claims no save-policy class (its scenarios are
still judged, rule by rule); a run whose runtime declared nothing the kit
read (a store run) has no runtime classes at all.

A save-policy class is judged from each rule's verdict over the scenarios of
that policy and those naming none (a scenario of an undeclared policy is
``unsupported`` and judges nothing); the other profiles' classes from the
rules' verdicts. Nothing here reads the clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memconform.reports.results import ClassResult, RuleResult

__all__ = [
    "NOT_JUDGED",
    "POLICY_PROFILE",
    "SAVE_POLICIES",
    "judge_class",
    "runtime_classes",
    "runtime_declaration",
]

SAVE_POLICIES = ("message", "turn", "run")
"""The save policies a runtime may declare (as
:data:`memconform.simulator.runtime.SAVE_POLICIES`; reports read only data)."""

POLICY_PROFILE = "save-policy"
"""The profile whose runtime classes are per save policy."""

NOT_JUDGED = frozenset({"not-scored", "unsupported", "informational"})
"""Verdicts that say nothing about a claimed class: not scored here, not
supported, or measured though the subject does not claim it."""


def judge_class(
    name: str, claimed: bool, members: Sequence[tuple[str, str]], left_out: bool
) -> ClassResult:
    """The class ``name`` from its members' ``(level, verdict)`` pairs:
    ``not-claimed`` unless ``claimed``; ``not-scored`` when no member was
    judged; ``achieved`` when every judged MUST member passes (``partial``
    when ``left_out``: a selection left some members out); else
    ``not-achieved``. ``unsupported`` members could not be judged and count
    nowhere; an ``xfail`` MUST member is counted apart and is not a pass."""
    judged = [(level, verdict) for level, verdict in members if verdict not in NOT_JUDGED]
    must = [verdict for level, verdict in judged if level == "MUST"]
    passed = sum(1 for v in must if v in ("pass", "stale"))
    xfail = sum(1 for v in must if v == "xfail")
    if not claimed:
        status = "not-claimed"
    elif not judged:
        status = "not-scored"
    elif passed == len(must):
        status = "partial" if left_out else "achieved"
    else:
        status = "not-achieved"
    return ClassResult(name, claimed, status, len(judged), len(must), passed, xfail)


def runtime_declaration(
    header_runtime: Mapping[str, Any], outcomes: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """What the runtime declared: the header's ``declares`` if given, else the
    first outcome record's ``runtime_declares``; ``None`` when neither says
    (no runtime was built). The result is ``{"profiles": [...], "policies":
    [...] or None}``, names sorted."""
    raw = header_runtime.get("declares")
    if not isinstance(raw, Mapping):
        raw = next((o["runtime_declares"] for o in outcomes
                    if isinstance(o.get("runtime_declares"), Mapping)), None)
    if raw is None:
        return None
    policies = raw.get("policies")
    return {
        "profiles": sorted({str(p) for p in raw.get("profiles") or ()}),
        "policies": None if policies is None else sorted(
            {str(p) for p in policies}, key=_policy_order),
    }


def _policy_order(name: str) -> tuple[int, str]:
    return (SAVE_POLICIES.index(name) if name in SAVE_POLICIES else len(SAVE_POLICIES), name)


def runtime_classes(
    rules: Sequence[RuleResult],
    per_policy: Mapping[str, Mapping[str, str]],
    declares: Mapping[str, Any] | None,
    unselected: set[str],
) -> tuple[ClassResult, ...]:
    """The runtime classes of a run (empty when ``declares`` is ``None``).

    ``per_policy`` maps a save-policy rule id to its verdict under each policy;
    a rule missing from it (not scored, or judged as undeclared capability) has
    its overall verdict under every policy."""
    if declares is None:
        return ()
    profiles = set(declares.get("profiles") or ())
    policies = declares.get("policies")
    runtime_rules = [r for r in rules if r.subject == "runtime"]
    order = list(dict.fromkeys(r.profile for r in runtime_rules))
    out: list[ClassResult] = []
    for profile in order:
        members = [r for r in runtime_rules if r.profile == profile]
        left_out = any(r.id in unselected for r in members)
        if profile != POLICY_PROFILE:
            pairs: list[tuple[str, str]] = [(r.level, r.verdict) for r in members]
            out.append(judge_class(profile, profile in profiles, pairs, left_out))
            continue
        for policy in SAVE_POLICIES:
            claimed = profile in profiles and policies is not None and policy in policies
            pairs = [(r.level, per_policy.get(r.id, {}).get(policy, r.verdict)) for r in members]
            out.append(judge_class(f"{profile}/{policy}", claimed, pairs, left_out))
    return tuple(out)
