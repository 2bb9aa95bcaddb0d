"""The suite's pytest as a child process of ``memconform run``: its command line,
its supervision (signals, the deadline, the progress line) and why it stopped.

The child runs in a process group of its own; the kit never passes pytest's exit
status through as its own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memconform.cli.options import jobs, judged_subject
from memconform.cli.progress import PROGRESS_EVERY, Progress
from memconform.harness.import_path import shadowed
from memconform.outcome_log import SessionOutcomes

__all__ = ["Suite", "pytest_args", "stopped_reason"]


def pytest_args(
    args: argparse.Namespace, selection: list[str] | None, outcomes: Path
) -> list[str]:
    """The command line of the suite's pytest for ``run``'s ``args``, narrowed to
    ``selection``, writing its outcomes to ``outcomes`` (its folder is the rootdir
    and holds the default SQLite store)."""
    from memconform import steps

    suite = Path(steps.__file__).resolve().parent / "suite.py"
    checks = Path(steps.__file__).resolve().parent / "generated_checks.py"
    quick = bool(getattr(args, "quick", False))
    argv = [
        sys.executable, *(["-P"] if shadowed() else []), "-m", "pytest", str(suite),
        *([] if quick else [str(checks)]),
        "-p", "no:cacheprovider", "-p", "memconform.steps.plugin",
        # Faker's pytest plugin (a `faker` fixture the suite never asks for) imports
        # all of Faker's locales in every process: 0.4 s each, for nothing.
        "-p", "no:faker",
        "--rootdir", str(outcomes.parent), "-c", os.devnull,
        "--strict-markers", "-W", "error",
        # Python's own tracebacks: pytest's long form parses the source of every
        # frame, which costs seconds per failure when a broken store fails hundreds.
        "--tb=native",
        "--memconform-outcomes", str(outcomes), "--memconform-timeout", str(args.timeout),
        "--memconform-max-timeouts", str(args.max_timeouts),
    ]
    argv += ["--memconform-store", args.store or f"sqlite:///{outcomes.parent / 'memconform.db'}"]
    argv += ["--memconform-subject", judged_subject(args)]
    if args.runtime:
        argv += ["--memconform-runtime", args.runtime]
    if args.mutant:
        argv += ["--memconform-mutant", args.mutant]
    marks = [f"({' or '.join(selection)})"] if selection is not None else []
    if quick:
        marks.append("not stress")
        argv.append("--memconform-quick")
    if marks:
        argv += ["-m", " and ".join(marks)]
    return argv + _thoroughness_and_limits(args)


def _thoroughness_and_limits(args: argparse.Namespace) -> list[str]:
    """The options of the suite's pytest for ``--certify``, ``--measure-unclaimed``,
    ``--jobs``, ``-x`` and ``--maxfail``."""
    argv = []
    if args.certify:
        argv += ["--memconform-thoroughness", "thorough"]
    if getattr(args, "measure_unclaimed", False):
        argv += ["--memconform-measure-unclaimed"]
    workers = jobs(args.jobs)  # idempotent: a checked value stays as it is
    if workers > 1:
        argv += ["-n", str(workers)]
    maxfail = 1 if args.exitfirst else args.maxfail
    if maxfail is not None:
        argv += ["--memconform-maxfail", str(maxfail)]
    return argv


def stopped_reason(session: SessionOutcomes, args: argparse.Namespace) -> str | None:
    """Why the suite stopped before its end, in the words of the command line."""
    if session.stopped is None:
        return None
    if session.stopped.startswith("stopped after"):
        option = "-x" if args.exitfirst else f"--maxfail {args.maxfail}"
        return f"{option}: {session.stopped}"
    if session.stopped.startswith("the deadline of") and args.deadline is not None:
        return f"the deadline of {args.deadline:g} s passed"  # the suite got what was left
    return session.stopped


class Suite:
    """The suite's pytest, in a process group of its own.

    While it runs, SIGINT and SIGTERM to this process are passed on to the
    whole group as SIGINT (pytest then ends the session and writes how it
    ended); a second signal kills the group. Past the deadline, the suite has
    ``grace`` seconds to stop by itself before it is interrupted the same way.
    ``stopped`` says why the kit stopped it, if it did.
    """

    def __init__(self, argv: list[str], env: dict[str, str] | None, log: Path | None) -> None:
        self.stopped: str | None = None
        self._signals = 0
        self._previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            self._log = log.open("w", encoding="utf-8") if log is not None else None
            self._proc = subprocess.Popen(
                argv, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=subprocess.STDOUT if self._log is not None else None,
                start_new_session=True,
            )
        except BaseException:
            self._restore()
            raise
        if self._signals:  # a signal came before the suite had started
            self._signals -= 1
            self._interrupt(self.stopped or "interrupted")

    def _interrupt(self, why: str) -> None:
        self._signals += 1
        if self.stopped is None:
            self.stopped = why
        proc = getattr(self, "_proc", None)
        if proc is None:
            return
        sig = signal.SIGINT if self._signals == 1 else signal.SIGKILL
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def _on_signal(self, signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        self._interrupt(f"interrupted by {name}")

    def wait(
        self, deadline_at: float | None, *, grace: float, deadline: float | None,
        progress: Progress | None = None,
    ) -> int:
        """Wait for the suite to end; its exit status. ``progress`` is shown
        every :data:`PROGRESS_EVERY` seconds while it runs."""
        try:
            hard_stop = None if deadline_at is None else deadline_at + grace
            while True:
                timeout = None if hard_stop is None else max(hard_stop - time.monotonic(), 0)
                if progress is not None:
                    timeout = PROGRESS_EVERY if timeout is None else min(timeout, PROGRESS_EVERY)
                try:
                    return self._proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    if progress is not None:
                        progress.show()
                    if hard_stop is not None and time.monotonic() >= hard_stop:
                        self._interrupt(f"the deadline of {deadline:g} s passed")
                        hard_stop = time.monotonic() + 10.0  # then kill it
        finally:
            self._restore()
            if self._log is not None:
                self._log.close()

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

