"""``memconform run``: check the command line, read what is under test, run the
suite's pytest under supervision, then judge and report (:mod:`.summary`).

Exit codes as :mod:`memconform.cli.exits`: a subject that cannot be opened or
built is judged without running a scenario (every rule it would score is
``error``, exit 3); a suite whose pytest broke on its own is the kit's error
(exit 4), whatever the verdicts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memconform.catalogue import Catalogue, load_catalogue
from memconform.cli.exits import EXIT_KIT, AdapterFailure, UsageError
from memconform.cli.options import (
    check_judged,
    check_run,
    judged_subject,
    measured_packages,
    report_folder,
    scored_rules,
    selected_rules,
)
from memconform.cli.probe import subject_identity
from memconform.cli.progress import Progress
from memconform.cli.summary import COUNTEREXAMPLES, COVERAGE_HTML, finish
from memconform.cli.supervision import Suite, pytest_args, stopped_reason
from memconform.harness.import_path import import_like_python_m
from memconform.outcome_log import SessionOutcomes, read_outcomes

__all__ = ["run_command"]


def run_command(args: argparse.Namespace) -> int:
    """Run the conformance suite against one subject and write the report; the exit code."""
    catalogue = load_catalogue()
    selection = selected_rules(args, catalogue)
    measured = measured_packages(args)
    check_run(args)
    check_judged(args, catalogue, selection)
    clock_started = time.monotonic()
    import_like_python_m()
    baseline = _baseline(args, catalogue)
    out_dir = report_folder(args.out)
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        identity = subject_identity(args)
    except AdapterFailure as exc:
        return _adapter_failed(args, catalogue, selection, baseline, started, exc)
    interactive = sys.stdout.isatty() and not os.environ.get("CI")
    coverage = None
    with tempfile.TemporaryDirectory(prefix="memconform-") as tmp:
        outcomes_path = Path(tmp) / "outcomes.json"
        argv = _suite_argv(args, selection, outcomes_path, out_dir)
        log_path = out_dir / "pytest.log"
        env, data_dir = _measurement_env(measured, Path(tmp))
        deadline_at = None
        if args.deadline is not None:
            deadline_at = clock_started + args.deadline
            remaining = max(deadline_at - time.monotonic(), 0.0)
            argv += ["--memconform-deadline", f"{remaining:.3f}"]
        argv += ["-q", "--no-header", "-p", "no:warnings"]
        suite = Suite(argv, env, log_path)
        returncode = _wait(suite, args, deadline_at, outcomes_path, interactive=interactive)
        session = read_outcomes(outcomes_path)
        stopped, broken = _ending(session, returncode, suite.stopped, args, log_path)
        if broken and not session.outcomes:
            return EXIT_KIT
        if data_dir is not None:
            from memconform import measurement

            coverage = measurement.summarise(data_dir, measured, out_dir / COVERAGE_HTML)
    code = finish(
        args, catalogue, selection, baseline, identity, session.outcomes, started, coverage,
        stopped, session.collected,
    )
    if broken:
        code = EXIT_KIT  # the suite's pytest failed on its own: a bug of the kit
    if coverage is not None:
        _print_coverage(coverage, measured, out_dir)
    return code


def _baseline(args: argparse.Namespace, catalogue: Catalogue) -> Any:
    """The known failures of ``--baseline``, checked against the catalogue; ``None``
    without one."""
    if not args.baseline:
        return None
    from memconform import reports

    try:
        baseline = reports.load_baseline(Path(args.baseline))
        reports.check_baseline(baseline, catalogue)
    except (OSError, reports.BaselineError) as exc:
        raise UsageError(f"baseline {args.baseline}: {exc}") from None
    return baseline


def _adapter_failed(
    args: argparse.Namespace,
    catalogue: Catalogue,
    selection: list[str] | None,
    baseline: Any,
    started: str,
    exc: AdapterFailure,
) -> int:
    """Fail fast: no scenario could judge anything. Every rule the run would
    score gets ``error`` with the cause, and the report is written."""
    from memconform.adapters.registry import redact_url

    print(f"memconform: adapter error: {exc}", file=sys.stderr)
    identity: dict[str, Any] = {
        "runtime": args.runtime or "memconform.simulator:Simulator",
        "store": redact_url(args.store) if args.store else "sqlite:///<temporary file>",
        "capabilities": [],
        "adapter_error": str(exc),
    }
    failed = {
        "nodeid": "<opening the store>" if not args.runtime else "<building the runtime>",
        "scenario": "opening the store" if not args.runtime else "building the runtime",
        "feature": None,
        "rules": scored_rules(catalogue, judged_subject(args), selection),
        "outcome": "error",
        "message": str(exc),
    }
    return finish(args, catalogue, selection, baseline, identity, [failed], started)


def _suite_argv(
    args: argparse.Namespace, selection: list[str] | None, outcomes: Path, out_dir: Path
) -> list[str]:
    """The suite's command line, exporting counterexamples into the report folder
    (an earlier run's there are removed first)."""
    argv = pytest_args(args, selection, outcomes)
    for stale in (out_dir / COUNTEREXAMPLES).glob("counterexample-*.feature"):
        stale.unlink()  # an earlier run's, into the same folder
    return [*argv, "--memconform-export-failures", str(out_dir / COUNTEREXAMPLES)]


def _measurement_env(
    measured: tuple[str, ...], tmp: Path
) -> tuple[dict[str, str] | None, Path | None]:
    """The suite's environment and coverage data folder when ``measured`` names
    packages; ``(None, None)`` (the kit's own environment) otherwise."""
    if not measured:
        return None, None
    from memconform import measurement

    data_dir = tmp / "coverage-data"
    data_dir.mkdir()
    spec = measurement.Measurement(measured, str(data_dir))
    return {**os.environ, measurement.ENVIRONMENT: spec.to_json()}, data_dir


def _wait(
    suite: Suite, args: argparse.Namespace, deadline_at: float | None, outcomes: Path,
    *, interactive: bool,
) -> int:
    """Wait for the suite's pytest to end; its exit status. On a terminal one
    progress line; in a CI log (no terminal) nothing until the summary."""
    progress = Progress(outcomes, sys.stdout) if interactive else None
    try:
        return suite.wait(
            deadline_at, grace=args.timeout, deadline=args.deadline, progress=progress
        )
    finally:
        if progress is not None:
            progress.close()


def _ending(
    session: SessionOutcomes,
    returncode: int,
    suite_stopped: str | None,
    args: argparse.Namespace,
    log_path: Path,
) -> tuple[str | None, bool]:
    """Why the suite stopped early (``None``: it ran to its end) and whether it broke
    (its pytest failed on its own), both said on stderr."""
    stopped = suite_stopped or stopped_reason(session, args)
    # pytest's 5: every scenario was deselected (all the selected rules
    # belong to profiles the runtime does not declare, say), not a breakage
    ended = (0, 1, 5) if session.finished and not session.outcomes else (0, 1)
    broken = stopped is None and (not session.finished or returncode not in ended)
    if broken:
        print(
            f"memconform: the suite did not complete (pytest exit {returncode}); "
            f"see {log_path}",
            file=sys.stderr,
        )
        if session.outcomes:
            stopped = f"the suite ended without finishing (pytest exit {returncode})"
    if stopped is not None:
        print(f"memconform: the run stopped early: {stopped}", file=sys.stderr)
    return stopped, broken


def _print_coverage(coverage: dict[str, Any], measured: tuple[str, ...], out_dir: Path) -> None:
    totals = coverage["totals"]
    print(
        f"  coverage of {', '.join(measured)}: {totals['lines_covered']}/"
        f"{totals['statements']} lines, {totals['branches_covered']}/"
        f"{totals['branches']} branches"
    )
    if coverage["source_html"]:
        print(f"  wrote {out_dir / COVERAGE_HTML} (your source: keep it private)")
