"""The commands besides ``run``: ``rules``, ``mutants``, ``fingerprint``,
``report`` and ``compliance``. Each takes the parsed command line and returns
the exit code (:mod:`memconform.cli.exits`); what they print is their output.

The modules doing the work are imported inside each command, so that listing the
rules never imports the steps, pytest or Hypothesis.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memconform.catalogue import load_catalogue
from memconform.cli.exits import EXIT_ADAPTER, EXIT_NONCONFORMANT, EXIT_OK, UsageError
from memconform.cli.options import check_profiles, rule_ids
from memconform.cli.summary import count
from memconform.harness.import_path import import_like_python_m

__all__ = [
    "compliance_command", "fingerprint_command", "mutants_command", "report_command",
    "rules_command",
]


def rules_command(args: argparse.Namespace) -> int:
    """Print the rule catalogue (of ``--profile``), as a table or JSON."""
    check_profiles(args.profile)
    catalogue = load_catalogue()
    chosen = catalogue.select(profiles=args.profile)
    if args.format == "json":
        print(json.dumps([r.to_json() for r in chosen], indent=2, ensure_ascii=False))
        return EXIT_OK
    rows = [("ID", "LEVEL", "PROFILE", "SUBJECT", "CAPABILITY", "TEXT")]
    rows += [(r.id, r.level, r.profile, r.subject, r.capability or "-", r.text) for r in chosen]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row[:5], widths, strict=True)), row[5])
    print(f"\n{count(len(chosen), 'rule')} (catalogue {catalogue.version}, {catalogue.digest})")
    return EXIT_OK


def mutants_command(args: argparse.Namespace) -> int:
    """List the deliberately broken stores and runtimes (those ``--rule`` rejects)."""
    from memconform.mutants import all_mutants

    args.rule = rule_ids(args.rule)
    unknown = [r for r in args.rule if r not in load_catalogue().ids]
    if unknown:
        raise UsageError(f"unknown rule {unknown[0]!r} (see: memconform rules)")
    chosen = [
        m for m in all_mutants().values() if not args.rule or m.kills & set(args.rule)
    ]
    if args.format == "json":
        rows = [
            {"name": m.name, "kind": m.kind, "profile": m.profile, "doc": m.doc,
             "kills": sorted(m.kills)}
            for m in chosen
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return EXIT_OK
    for mutant in chosen:
        kills = ", ".join(sorted(mutant.kills)) or "-"
        print(f"{mutant.name:<40} {mutant.kind:<8} {mutant.profile:<16} {mutant.doc}")
        print(f"{'':<40} kills: {kills}")
    print(f"\n{count(len(chosen), 'mutant')}")
    return EXIT_OK


def fingerprint_command(args: argparse.Namespace) -> int:
    """Take a runtime's save-policy fingerprint and print (and with ``--out``
    write) it; see the command's description for the exit codes."""
    from memconform import fingerprint

    import_like_python_m()
    try:
        subject = fingerprint.subject_for(args.runtime, args.policy, args.mutant)
    except fingerprint.FingerprintError as exc:
        raise UsageError(str(exc)) from None
    try:
        runtime = subject.build()
    except Exception as exc:
        print(f"memconform: the runtime factory {args.runtime!r} raised "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ADAPTER
    from memconform.harness.runtime import ProfileNotDeclared, require_profile

    try:
        require_profile(runtime, fingerprint.PROFILE)  # the gate of memconform run
        result = fingerprint.fingerprint(subject)
    except ProfileNotDeclared as exc:
        print(f"memconform: unsupported: {exc}; nothing was run", file=sys.stderr)
        return EXIT_OK
    except ValueError as exc:  # FingerprintError, or a declaration the kit cannot read
        print(f"memconform: the runtime built by {args.runtime!r}: {exc}", file=sys.stderr)
        return EXIT_ADAPTER
    _show_fingerprint(args, result)
    raised = [p for p, seen in result.observed.items() if seen.outcome.startswith("raised ")]
    if raised:
        print(f"memconform: the runtime raised instead of answering at {len(raised)} "
              f"point(s): {', '.join(raised)}", file=sys.stderr)
        return EXIT_ADAPTER
    if args.policy is not None and result.differences(args.policy):
        return EXIT_NONCONFORMANT
    return EXIT_OK


def _show_fingerprint(args: argparse.Namespace, result: Any) -> None:
    """Write the fingerprint to ``--out`` (canonical JSON) and print it in ``--format``."""
    from memconform import fingerprint

    text = fingerprint.render_json(result)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    if args.format == "json":
        sys.stdout.write(text)
    else:
        sys.stdout.write(fingerprint.render_text(result))
        if args.out:
            print(f"wrote {args.out}")


def report_command(args: argparse.Namespace) -> int:
    """Re-render one results file, or compare several, into ``--out``."""
    from memconform import reports

    loaded = []
    for name in args.results:
        try:
            loaded.append(reports.load_results(Path(name)))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{name}: {exc}") from None
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if len(loaded) == 1:
        for path in reports.write_reports(loaded[0], out_dir):
            print(f"wrote {path}")
    else:
        print(f"wrote {reports.write_comparison(loaded, out_dir)}")
    return EXIT_OK


def compliance_command(args: argparse.Namespace) -> int:
    """Judge the certified stores and framework runtimes (``--target``: some of
    them), each in its own venv, and write their pages (``--from-results``: from
    the kept results); exit 3 when a chosen target has no results."""
    from memconform import compliance, runtime_compliance

    store_targets, runtime_targets = _compliance_targets(args)
    out = Path(args.out)
    source = Path(args.source).resolve()
    if not (source / "pyproject.toml").is_file():
        raise UsageError(f"{source} is not a checkout of the kit (no pyproject.toml)")
    names = {t.name for t in compliance.TARGETS} | {
        t.name for t in runtime_compliance.RUNTIME_TARGETS
    }
    try:
        findings = compliance.load_findings(out / "findings.toml", load_catalogue().ids, names)
        decisions = compliance.load_decisions(out / "findings.toml")
    except compliance.ComplianceError as exc:
        raise UsageError(str(exc)) from None
    runs = compliance.kept_runs(out, compliance.TARGETS)
    runtime_runs = runtime_compliance.kept_runtime_runs(out, runtime_compliance.RUNTIME_TARGETS)
    if not args.from_results:
        runs, runtime_runs = _judge_targets(
            args, store_targets, runtime_targets, runs, runtime_runs, source
        )
    written = []
    if store_targets:
        written += compliance.write_page(runs, findings, out, decisions)
    if runtime_targets:
        written += runtime_compliance.write_runtime_page(runtime_runs, findings, out)
    for path in written:
        print(f"wrote {path}")
    broken = [r.target.name for r in runs if r.target in store_targets and r.results is None]
    broken += [r.target.name for r in runtime_runs
               if r.target in runtime_targets and r.results is None]
    return EXIT_ADAPTER if broken else EXIT_OK


def _compliance_targets(args: argparse.Namespace) -> tuple[list[Any], list[Any]]:
    """The store and runtime targets ``--target`` and ``--runtimes`` choose; an
    unknown name is a usage error."""
    from memconform import compliance, runtime_compliance

    stores = {t.name: t for t in compliance.TARGETS}
    runtimes = {t.name: t for t in runtime_compliance.RUNTIME_TARGETS}
    unknown = [name for name in args.target if name not in stores | runtimes]
    if unknown:
        raise UsageError(f"unknown target {unknown[0]!r} (known: {', '.join(stores)}; "
                         f"runtimes: {', '.join(runtimes)})")
    if args.target:
        return (
            [stores[n] for n in args.target if n in stores],
            [runtimes[n] for n in args.target if n in runtimes],
        )
    store_targets = [] if args.runtimes else list(compliance.TARGETS)
    return store_targets, list(runtime_compliance.RUNTIME_TARGETS)


def _judge_targets(
    args: argparse.Namespace,
    store_targets: list[Any],
    runtime_targets: list[Any],
    runs: list[Any],
    runtime_runs: list[Any],
    source: Path,
) -> tuple[list[Any], list[Any]]:
    """Run each chosen target in its venv, keeping its results beside the pages;
    every target's run (the kept one where it was not chosen), in catalogue order."""
    from memconform import compliance, runtime_compliance

    out = Path(args.out)
    venvs = Path(args.venvs).resolve()
    total = len(store_targets) + len(runtime_targets)
    previous = {r.target.name: r for r in runs}
    for n, target in enumerate(store_targets, 1):
        venv = _compliance_venv(n, total, target.name, target.extra, venvs, source)
        if isinstance(venv, str):
            previous[target.name] = compliance.TargetRun(target, None, venv)
            continue
        run = previous[target.name] = compliance.run_target(
            target, venv, out / "compliance" / f"{target.name}.json", args.timeout
        )
        _said(run.problem, run.results)
    runtime_previous = {r.target.name: r for r in runtime_runs}
    for n, runtime in enumerate(runtime_targets, len(store_targets) + 1):
        if runtime.built():  # built outside the kit and not here: its kept run stays
            print(f"[{n}/{total}] {runtime.name}: not run, {runtime.built()}; "
                  "its kept results stay", file=sys.stderr)
            continue
        if runtime.node:
            venv = _node_packages(n, total, runtime, source)
        else:
            venv = _compliance_venv(n, total, runtime.name, runtime.extra, venvs, source)
        if isinstance(venv, str):
            runtime_previous[runtime.name] = runtime_compliance.RuntimeRun(runtime, None, venv)
            continue
        done = runtime_previous[runtime.name] = runtime_compliance.run_runtime_target(
            runtime, venv, out / runtime_compliance.KEPT / f"{runtime.name}.json",
            args.timeout, source,
        )
        _said(done.problem, done.results)
    return (
        [previous[t.name] for t in compliance.TARGETS],
        [runtime_previous[t.name] for t in runtime_compliance.RUNTIME_TARGETS],
    )


def _node_packages(n: int, total: int, target: Any, source: Path) -> Path | str:
    """Install Node target ``target``'s packages (the ``n``-th of ``total``); the
    kit's own environment, or why they cannot be installed (said on stderr)."""
    from memconform import runtime_compliance

    print(f"[{n}/{total}] {target.name}: npm ci in {target.node}", flush=True)
    problem = runtime_compliance.prepare_node(target, source)
    if problem:
        print(f"  {problem}", file=sys.stderr)
        return problem
    print(f"[{n}/{total}] {target.name}: running", flush=True)
    return Path(sys.prefix)


def _compliance_venv(
    n: int, total: int, name: str, extra: str, venvs: Path, source: Path
) -> Path | str:
    """The prepared environment of target ``name`` (the ``n``-th of ``total``), or
    why it cannot be prepared (said on stderr)."""
    from memconform import compliance

    print(f"[{n}/{total}] {name}: preparing .../{extra}", flush=True)
    try:
        venv = compliance.prepare_venv(extra, venvs, source)
    except compliance.ComplianceError as exc:
        print(f"  {exc}", file=sys.stderr)
        return str(exc)
    print(f"[{n}/{total}] {name}: running", flush=True)
    return venv


def _said(problem: str, results: Any) -> None:
    """One line on a finished target: its problem or ``done``, and its totals."""
    totals = results.totals if results is not None else {}
    print(f"  {problem or 'done'}: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())
                                                  if v))

