"""The command line checked before anything runs: profile and rule names, what
``memconform run`` selects and judges, and the values no run could use.

Every refusal raises :class:`~memconform.cli.exits.UsageError` (exit 5) with one
line; nothing here runs a scenario or opens a store.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from memconform.catalogue import PROFILES, Catalogue
from memconform.cli.exits import UsageError

__all__ = [
    "check_judged", "check_profiles", "check_run", "jobs", "judged_subject", "measured_packages",
    "report_folder", "rule_ids", "scored_rules", "selected_rules",
]


def check_profiles(profiles: Sequence[str]) -> None:
    """Refuse a profile name the catalogue does not know."""
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown:
        raise UsageError(f"unknown profile {unknown[0]!r} (known: {', '.join(PROFILES)})")


def rule_ids(given: Sequence[str]) -> list[str]:
    """Rule ids as the catalogue spells them: ``st-001`` names ST-001."""
    return [r.strip().upper() for r in given]


def selected_rules(args: argparse.Namespace, catalogue: Catalogue) -> list[str] | None:
    """The rule ids ``run`` is narrowed to (catalogue order), ``None`` for all.

    Spells ``args.rule`` as the catalogue does, and refuses unknown profiles or
    rules and a ``--certify`` that is narrowed."""
    check_profiles(args.profile)
    args.rule = rule_ids(args.rule)
    unknown = [r for r in args.rule if r not in catalogue.ids]
    if unknown:
        raise UsageError(f"unknown rule {unknown[0]!r} (see `memconform rules`)")
    if args.certify and (args.profile or args.rule or args.mutant or args.quick):
        raise UsageError(
            "--certify runs every rule; it refuses --profile, --rule, --mutant and --quick"
        )
    if not args.profile and not args.rule:
        return None
    chosen = {r.id for r in catalogue.select(profiles=args.profile)} if args.profile else set()
    chosen |= set(args.rule)
    return [r.id for r in catalogue if r.id in chosen]


def judged_subject(args: argparse.Namespace) -> str:
    """What ``run`` judges: ``runtime``, ``store`` or ``both`` (neither named)."""
    return "runtime" if args.runtime else "store" if args.store else "both"


def scored_rules(
    catalogue: Catalogue, subject: str, selection: list[str] | None
) -> list[str]:
    """The rules this run scores whatever the outcomes (see the reports' scope)."""
    return [
        r.id for r in catalogue
        if (selection is None or r.id in selection)
        and subject in ("both", r.subject)
        and not r.untested
    ]


def check_judged(
    args: argparse.Namespace, catalogue: Catalogue, selection: list[str] | None
) -> None:
    """Refuse a selection (``--rule``, ``--profile`` or both) of which this run
    would score no rule: a run that judges nothing would end conformant (exit
    0) having judged nothing, a gate passing by default. The line names the
    subject and why: the rules selected are the other subject's (``SP-001 is a
    runtime rule; --store judges store rules``) or no scenario judges them."""
    subject = judged_subject(args)
    if selection is None or scored_rules(catalogue, subject, selection):
        return
    rules = [catalogue[rule_id] for rule_id in selection]
    judges = (
        f"--{subject} judges {subject} rules" if subject != "both"
        else "a run judges only the rules scenarios test"
    )
    others = [r for r in rules if subject not in ("both", r.subject)]
    if len(rules) == 1:
        rule = rules[0]
        why = f"is a {rule.subject} rule" if others else "is judged by no scenario (untested)"
        raise UsageError(f"{rule.id} {why}; {judges}")
    chosen = " ".join(
        [f"--profile {p}" for p in args.profile] + [f"--rule {r}" for r in args.rule]
    )
    if len(others) == len(rules):
        kind = others[0].subject
        raise UsageError(f"{chosen} selects only {kind} rules; {judges}")
    reasons = [
        f"{r.id} is a {r.subject} rule" if r in others else f"{r.id} is untested"
        for r in rules
    ]
    shown = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")
    raise UsageError(f"{chosen} selects no rule this run judges ({shown}); {judges}")


def measured_packages(args: argparse.Namespace) -> tuple[str, ...]:
    """The packages ``--coverage`` names, none without it."""
    if args.coverage is None:
        return ()
    from memconform.measurement import package_names

    try:
        return package_names(args.coverage)
    except ValueError as exc:
        raise UsageError(f"--coverage: {exc}") from None


def check_run(args: argparse.Namespace) -> None:
    """Refuse, before anything runs, the options of ``run`` that contradict each
    other or that no run could use; resolves a ``--runtime`` name (the names
    ``memconform fingerprint`` accepts: :func:`memconform.runtime_names.runtime_target`)
    to its ``module:factory`` in ``args``, keeping the name as given in
    ``args.runtime_name``."""
    if args.store and args.runtime:
        raise UsageError("judge one subject at a time: give --store or --runtime, not both")
    if args.runtime:
        from memconform.runtime_names import UnknownRuntime, runtime_target

        args.runtime_name = args.runtime
        try:
            args.runtime = runtime_target(args.runtime)
        except UnknownRuntime as exc:
            raise UsageError(str(exc)) from None
    if args.fingerprint and args.store:
        raise UsageError("--fingerprint judges a runtime: it refuses --store")
    if args.max_timeouts < 0:
        raise UsageError(f"--max-timeouts must be 0 (never stop) or more, not {args.max_timeouts}")
    _check_values(args)
    if args.maxfail is not None and args.maxfail < 1:
        raise UsageError(f"--maxfail must be 1 or more, not {args.maxfail}")
    if args.deadline is not None and not args.deadline > 0:
        raise UsageError(f"--deadline must be a positive number of seconds, not {args.deadline:g}")


def _check_values(args: argparse.Namespace) -> None:
    """Refuse, before anything runs, the values no run could use."""
    if not args.timeout > 0:  # also refuses nan
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    args.jobs = jobs(args.jobs)
    if args.mutant is not None:
        from memconform.mutants import all_mutants

        if args.mutant not in all_mutants():
            raise UsageError(f"unknown mutant {args.mutant!r} (see: memconform mutants)")


def report_folder(name: str) -> Path:
    """The report folder, created; one that cannot be is a usage error."""
    folder = Path(name)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--out {name}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {name}: cannot create the folder ({exc.strerror})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--out {name}: the folder is not writable")
    return folder


def jobs(given: int | str | None) -> int:
    """The number of worker processes ``--jobs`` asks for.

    ``None`` (the option not given) takes ``MEMCONFORM_JOBS`` from the
    environment, else ``auto``; ``auto`` is one worker per core this process may
    run on. A number below 1, or an environment value that is neither a number
    nor ``auto``, is a usage error.
    """
    source = "--jobs"
    if given is None:
        given, source = os.environ.get("MEMCONFORM_JOBS", "auto"), "MEMCONFORM_JOBS"
    if isinstance(given, str):
        if given.strip().lower() == "auto":
            return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                       else os.cpu_count() or 1)
        try:
            given = int(given)
        except ValueError:
            raise UsageError(f"{source} must be a whole number or auto, not {given!r}") from None
    if given < 1:
        raise UsageError(f"{source} must be 1 or more, not {given}")
    return given
