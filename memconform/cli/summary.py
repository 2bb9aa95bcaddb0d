"""The end of ``memconform run``: the outcomes judged, the report files written
and the summary printed, rule by rule for what failed, then the totals.

The exit code is the reports' (:func:`memconform.reports.exit_code`); nothing
here runs a scenario.
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memconform import __version__
from memconform.catalogue import Catalogue
from memconform.cli.options import judged_subject

__all__ = [
    "COUNTEREXAMPLES", "COVERAGE_HTML", "SUMMARY_VERDICTS", "count", "finish",
    "print_summary", "runtime_classes_line",
]

COVERAGE_HTML = "coverage-html"
"""The folder, beside report.html, of coverage.py's own report with the source."""

COUNTEREXAMPLES = "counterexamples"
"""The folder, beside report.html, where each property failure's shrunk
counterexample is written as a Gherkin scenario that replays it without
Hypothesis (:mod:`memconform.properties.export`); absent when none failed."""

SUMMARY_VERDICTS = ("fail", "error", "stale")
"""The verdicts named rule by rule at the end of a run (as pytest's short summary)."""


def count(n: int, noun: str) -> str:
    """``1 rule``, ``2 rules``, ``0 rules``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def finish(
    args: argparse.Namespace,
    catalogue: Catalogue,
    selection: list[str] | None,
    baseline: Any,
    identity: dict[str, Any],
    outcomes: list[dict[str, Any]],
    started: str,
    coverage: dict[str, Any] | None = None,
    stopped_early: str | None = None,
    collected: dict[str, list[str]] | None = None,
) -> int:
    """Judge ``outcomes``, write the report files, print the summary; the exit code."""
    from memconform import reports

    out_dir = Path(args.out)
    finished = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    subject = judged_subject(args)
    header = {
        "kit": {"name": "memconform", "version": __version__},
        "catalogue": {"version": catalogue.version, "hash": catalogue.digest},
        "subject": subject,
        **identity,
        "mutant": args.mutant,
        "seed": 0,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "started": started,
        "finished": finished,
        "selection": selection,
        "certify": bool(args.certify),
        "mode": "certify" if args.certify else "quick" if getattr(args, "quick", False) else "run",
        "stopped_early": stopped_early,
    }
    results = reports.build_results(outcomes, catalogue, header, baseline, collected=collected)
    if coverage is not None:
        results = dataclasses.replace(results, coverage=coverage)
    if getattr(args, "fingerprint", False):
        results = dataclasses.replace(results, fingerprint=_run_fingerprint(args))
    written = reports.write_reports(results, out_dir)
    written += sorted((out_dir / COUNTEREXAMPLES).glob("*.feature"))
    code: int = reports.exit_code(results)
    ran = {str(o.get("nodeid")) for o in outcomes if not str(o.get("nodeid")).startswith("<")}
    print_summary(results, written, code, len(ran))
    return code


def _run_fingerprint(args: argparse.Namespace) -> dict[str, Any] | None:
    """The save-policy fingerprint of the run's runtime (and save-policy mutant),
    or ``None`` when the runtime cannot be fingerprinted (said on stderr)."""
    from memconform import fingerprint
    from memconform.mutants import all_mutants

    mutant = args.mutant
    if mutant is not None and all_mutants()[mutant].profile != "save-policy":
        mutant = None  # a mutant of another profile runs the save-policy scripts unchanged
    try:
        subject = fingerprint.subject_for(args.runtime or "simulator", None, mutant)
        subject.build()
        result = fingerprint.fingerprint(subject)
    except Exception as exc:
        print(f"memconform: no fingerprint: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    data: dict[str, Any] = result.to_json()
    return data


def print_summary(results: Any, written: Sequence[Path], code: int, scenarios: int) -> None:
    """The end of a run on stdout: each failed, errored and stale rule with why and
    how to re-run it, the totals, the runtime classes, the files written, the code.

    Rules errored for the same reason (a store that cannot be opened errors every
    rule the run would judge with one cause) are named once, the first of them,
    with how many more share it: ``... (and 97 more times)``; results.json still
    holds each rule."""
    data = results.to_json()
    named = [r for r in data.get("rules", []) if r.get("verdict") in SUMMARY_VERDICTS]
    if named:
        print("memconform: short summary")
    ordered = sorted(named, key=lambda r: (SUMMARY_VERDICTS.index(r["verdict"]), r["id"]))
    for rule, repeats in _fold_repeated_errors(ordered):
        reason = " ".join(str(rule.get("reason") or "").split())
        if len(reason) > 200:
            reason = reason[:199] + "…"
        if repeats:
            reason += f" (and {repeats} more {'time' if repeats == 1 else 'times'})"
        print(f"{rule['verdict'].upper():<5} {rule['id']}: {reason}")
        if rule.get("rerun"):
            print(f"      re-run: {rule['rerun']}")
    totals = data.get("footer", {}).get("totals", {})
    shown = ", ".join(f"{k} {v}" for k, v in sorted(totals.items()) if v)
    print(f"memconform: {shown or 'no rules run'} ({count(scenarios, 'scenario')} run)")
    if data.get("header", {}).get("mode") == "quick":
        print("  quick: stress-size rows and generated checks left out, multi-process checks "
              "lighter (not a certification)")
    for line in (store_classes_line(data), runtime_classes_line(data)):
        if line:
            print(line)
    for path in written:
        print(f"  wrote {path}")
    print(f"  exit code {code}")


def _fold_repeated_errors(
    rules: Sequence[Mapping[str, Any]],
) -> list[tuple[Mapping[str, Any], int]]:
    """Each rule to name with how many later ``error`` rules share its reason
    (those are left out); failed and stale rules are each named."""
    first: dict[str, int] = {}
    folded: list[tuple[Mapping[str, Any], int]] = []
    for rule in rules:
        reason = str(rule.get("reason") or "")
        if rule.get("verdict") != "error" or not reason:
            folded.append((rule, 0))
        elif reason in first:
            shown, repeats = folded[first[reason]]
            folded[first[reason]] = (shown, repeats + 1)
        else:
            first[reason] = len(folded)
            folded.append((rule, 0))
    return folded


def store_classes_line(data: Mapping[str, Any]) -> str | None:
    """One line on the store conformance classes of a run that judged a store
    (``None`` otherwise): those achieved, and those claimed but not achieved."""
    if (data.get("header") or {}).get("subject") not in ("store", "both"):
        return None
    classes = [c for c in data.get("classes") or [] if c.get("claimed")]
    if not classes:
        return None
    achieved = [c["name"] for c in classes if c.get("status") == "achieved"]
    missed = [f"{c['name']} ({c['status']})" for c in classes if c.get("status") != "achieved"]
    line = f"memconform: store classes achieved: {', '.join(achieved) or 'none'}"
    return line + (f"; not achieved: {', '.join(missed)}" if missed else "")


def runtime_classes_line(data: Mapping[str, Any]) -> str | None:
    """One line on the runtime conformance classes of a run (``None`` when it has
    none): those achieved, and those claimed (declared) but not achieved."""
    classes = data.get("runtime_classes") or []
    if not classes:
        return None
    claimed = [c for c in classes if c.get("claimed")]
    if not claimed:
        declares = ((data.get("header") or {}).get("runtime") or {}).get("declares") or {}
        policies = declares.get("policies")
        said = ("no save policies declared" if policies is None
                else f"save policies: {', '.join(policies) or 'none'}")
        profiles = ", ".join(declares.get("profiles") or []) or "none"
        return (f"memconform: runtime classes: none claimed (profiles: {profiles}; {said})")
    achieved = [c["name"] for c in claimed if c.get("status") == "achieved"]
    missed = [f"{c['name']} ({c['status']})" for c in claimed if c.get("status") != "achieved"]
    line = f"memconform: runtime classes achieved: {', '.join(achieved) or 'none'}"
    return line + (f"; not achieved: {', '.join(missed)}" if missed else "")
