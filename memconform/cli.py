"""The ``memconform`` command.

Exit codes are the kit's own, never passed through from pytest or argparse:
0 conformant, 1 non-conformant or stale baseline, 3 adapter error, 4 kit error,
5 usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from memconform import __version__
from memconform.adapters.proxy import DEFAULT_MAX_TIMEOUTS, DEFAULT_TIMEOUT
from memconform.catalogue import PROFILES, Catalogue, CatalogueError, load_catalogue
from memconform.outcome_log import SessionOutcomes, read_collected, read_outcomes

__all__ = ["EXIT_ADAPTER", "EXIT_KIT", "EXIT_OK", "EXIT_USAGE", "main"]

EXIT_OK = 0
EXIT_NONCONFORMANT = 1
EXIT_ADAPTER = 3
EXIT_KIT = 4
EXIT_USAGE = 5

COVERAGE_HTML = "coverage-html"
"""The folder, beside report.html, of coverage.py's own report with the source."""

COUNTEREXAMPLES = "counterexamples"
"""The folder, beside report.html, where each property failure's shrunk
counterexample is written as a Gherkin scenario that replays it without
Hypothesis (:mod:`memconform.properties.export`); absent when none failed."""


class UsageError(Exception):
    """The command line or a file it names is wrong; exit 5 with one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Help(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's lines and names each option's default where it has one."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "default" in text or default in (None, False, [], argparse.SUPPRESS)
            or not action.option_strings
        ):
            return text
        return f"{text} (default: {default})"


EXIT_CODES = """exit codes:
  0  conformant (every judged MUST rule passed)
  1  non-conformant, or a stale baseline entry
  3  adapter error: the store or runtime broke the contract (crashed, hung, garbage)
  4  kit error: a bug in memconform
  5  usage error: the command line or a file it names is wrong"""


_P = ", ".join(PROFILES)
FORMAT: dict[str, Any] = {
    "choices": ("text", "json"), "default": "text",
    # `table` was the text format's earlier name for `rules`
    "type": lambda value: "text" if value == "table" else value,
    "help": "text for people, json for programs",
}
RUN_DESCRIPTION = """Run the conformance suite against one subject and write the report.

What is judged, and what runs:
  (no --store, no --runtime)  every rule: the reference simulator on a temporary SQLite store;
                              every scenario runs
  --store URL                 every store-subject rule, whichever profile holds it (all of
                              `store` and the store rules of the runtime profiles); only the
                              scenarios tagged with a store rule run, the runtime rules are
                              reported not-scored
  --runtime module:factory    every runtime-subject rule (the runtime on the reference store);
                              only the scenarios tagged with a runtime rule of a profile
                              the runtime declares run, the others' rules are unsupported
  --profile P                 narrows that to the rules of profile P (its rules of the subject
                              judged: --store --profile store is the `store` profile alone)
  --rule ID                   narrows that to rule ID; with --profile, the rules of either
  --certify                   everything, thoroughly; refuses any narrowing

What a runtime declares, as a store declares capabilities: `profiles` (required)
and optionally `policies`, the save policies it implements (message, turn, run),
and `hooks`, the optional hooks it has natively. For example

    class Harness:
        profiles = frozenset({"save-policy"})
        policies = frozenset({"turn"})   # the framework saves once per round
        def execute(self, script, env): ...

Every runtime rule of a profile not declared is `unsupported` (naming the
profile) and its scenarios do not run: the runtime is never called for it. A
`profiles` that is not a set of known profile names is the adapter's error (exit
3). A save-policy scenario of a policy not declared is `unsupported` (naming the
policy), never failed. Runtime conformance classes are per profile and, for
save-policy, per policy (save-policy/turn); a runtime achieves only what it
declared. One that declares no `policies` still runs and is judged on every
save-policy scenario but claims no save-policy class; `policies = frozenset()`
says it implements none (scenarios configuring a policy are unsupported). An
unknown policy name is the adapter's error (exit 3).

On a terminal a progress line counts the scenarios as they end; in a CI log (no
terminal, or CI set) nothing is printed until the summary. pytest's own output is
in pytest.log in the report folder."""


FINGERPRINT_DESCRIPTION = """Run the save-policy failure matrix of document 000 on a runtime and on
the reference simulator under message, turn, run and each known variant, and name
the policy the runtime is nearest to.

At each point (model errors, tool errors, guardrails, run-end hook,
cancellation, suspension and resume, store refusals, crash) the kit compares
what its recording store saw (batches appended, roles stored at the end, error
records), what the caller got (outcome, reply), the tools' effects and what the
model was shown. The distance to a policy is the number of points that differ.

Exit codes: 0 fingerprint taken (and, with --policy, no point differs from it),
or unsupported: the runtime does not declare the save-policy profile, so nothing
is run (as `memconform run` reports such a profile's rules); 1 a point differs
from --policy; 3 the runtime could not be built, its profiles or hooks cannot be
read (missing, not a set of names, or unknown names), or it raised instead of
answering (the fingerprint is still printed then); 5 usage.

A runtime may declare the optional hooks it has natively as ``hooks`` (names:
input_guardrail, output_guardrail, tool_error, run_end, cancel, approval, stream,
retry); a point needing one it lacks is not run and listed as unsupported."""


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memconform",
        description="Conformance kit for the memory that AI agents persist.",
        epilog=EXIT_CODES, formatter_class=_Help,
    )
    parser.add_argument("--version", action="version", version=f"memconform {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub_options: dict[str, Any] = {"epilog": EXIT_CODES, "formatter_class": _Help}

    rules = sub.add_parser("rules", help="print the rule catalogue", **sub_options)
    rules.add_argument("--format", **FORMAT)
    rules.add_argument(
        "--profile", action="append", default=[], help=f"only this profile; repeatable ({_P})"
    )

    run = sub.add_parser(
        "run", help="run the conformance suite and write a report", **sub_options,
        description=RUN_DESCRIPTION,
    )
    run.add_argument(
        "--store",
        help="store under test as a URL; judges every store-subject rule and runs only "
        "their scenarios (default: SQLite, temporary, and every rule)",
    )
    run.add_argument(
        "--runtime",
        help="runtime under test as module:factory or a framework's name (openai-agents, "
        "langgraph, langgraph:async|sync|exit, pydantic-ai, google-adk); "
        "judges every runtime-subject rule and runs only their scenarios",
    )
    run.add_argument("--out", default="memconform-report", help="report folder")
    run.add_argument(
        "--profile", action="append", default=[],
        help=f"only the rules of this profile (of the subject judged); repeatable ({_P})",
    )
    run.add_argument(
        "--rule", action="append", default=[],
        help="only this rule id (any case, e.g. ST-001); repeatable",
    )
    run.add_argument("--baseline", help="TOML file of known failures")
    run.add_argument("--certify", action="store_true", help="run everything; refuse selections")
    run.add_argument(
        "--quick", action="store_true",
        help="leave out the stress-size rows (a batch of 10,000, a 16 MiB text) and the "
        "generated checks, and run the multi-process checks with fewer processes (one "
        "round of writers released at once, one kill during an append): a fast gate for "
        "every commit, never a certification (the report's mode says quick; --certify "
        "refuses it)",
    )
    run.add_argument("--mutant", help="run against a deliberately broken store or runtime")
    run.add_argument(
        "--jobs", type=int, default=1, help="parallel worker processes (pytest-xdist), 1 or more"
    )
    run.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT,
        help=f"seconds one store call may take (default {DEFAULT_TIMEOUT:g})",
    )
    run.add_argument(
        "--max-timeouts", type=int, default=DEFAULT_MAX_TIMEOUTS, metavar="N",
        help="stop calling a store after N timeouts in a row of one method; the rules "
        f"not yet judged get 'error' (default {DEFAULT_MAX_TIMEOUTS}, 0: never stop)",
    )
    run.add_argument(
        "--maxfail", type=int, default=None, metavar="N",
        help="stop after N failing scenarios (failed or error); rules not reached are "
        "reported 'not-run' and the report says why it stopped",
    )
    run.add_argument(
        "-x", "--exitfirst", action="store_true", help="stop at the first failing scenario"
    )
    run.add_argument(
        "--deadline", type=float, default=None, metavar="SECONDS",
        help="stop the whole run after this many seconds; rules not reached are "
        "reported 'not-run' and the report says why it stopped",
    )
    run.add_argument(
        "--measure-unclaimed", action="store_true",
        help="check the promises the store does not claim (durable, atomic-batch, "
        "concurrent-writers) too; their rules are reported informational, never counted",
    )
    run.add_argument(
        "--fingerprint", action="store_true",
        help="also take the runtime's save-policy fingerprint (memconform fingerprint) and "
        "add it to the report",
    )
    run.add_argument(
        "--coverage", metavar="PACKAGE[,PACKAGE...]",
        help="measure line and branch coverage of these packages (your adapter or runtime) "
        "and which rules reached each line",
    )

    report = sub.add_parser(
        "report", help="re-render results, or compare several", **sub_options
    )
    report.add_argument("results", nargs="+", help="results.json files")
    report.add_argument("--out", required=True, help="output folder")

    comply = sub.add_parser(
        "compliance",
        help="judge the certified third-party stores and framework runtimes, each in its own "
        "venv, and write their pages (compliance.md, runtimes.md)",
        **sub_options,
    )
    comply.add_argument(
        "--out", default="docs", help="folder of compliance.md and runtimes.md (default docs)"
    )
    comply.add_argument(
        "--target", action="append", default=[],
        help="only this target (a store's or a runtime's name); repeatable",
    )
    comply.add_argument(
        "--runtimes", action="store_true",
        help="only the framework runtimes (runtimes.md), not the stores",
    )
    comply.add_argument("--venvs", default=".venvs", help="folder of the per-library venvs")
    comply.add_argument("--source", default=".", help="the kit's checkout (default .)")
    comply.add_argument(
        "--from-results", action="store_true", help="rewrite the page from the kept results"
    )
    comply.add_argument("--timeout", type=float, default=1800.0, help="seconds per target")

    mutants = sub.add_parser(
        "mutants", help="list the deliberately broken stores and runtimes", **sub_options
    )
    mutants.add_argument(
        "--rule", action="append", default=[],
        help="only the mutants this rule rejects (any case); repeatable",
    )
    mutants.add_argument("--format", **FORMAT)

    fingerprint = sub.add_parser(
        "fingerprint", help="which save policy a runtime really implements, from its failures",
        description=FINGERPRINT_DESCRIPTION, **sub_options,
    )
    fingerprint.add_argument(
        "--runtime", default="simulator",
        help="simulator, a simulator variant (anvia-main), a framework's name (openai-agents, "
        "langgraph, langgraph:async|sync|exit, pydantic-ai, google-adk) or module:factory "
        "(default: simulator)",
    )
    fingerprint.add_argument(
        "--policy", choices=("message", "turn", "run"),
        help="the save policy the scripts configure (default: none, the runtime's own); "
        "with it, any point differing from that policy exits 1",
    )
    fingerprint.add_argument("--mutant", help="fingerprint a save-policy mutant instead")
    fingerprint.add_argument(
        "--out", help="write the fingerprint as JSON to this file (canonical, sorted keys)"
    )
    fingerprint.add_argument("--format", **FORMAT)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
        if args.command is None:
            _parser().print_help(sys.stderr)
            return EXIT_USAGE
        handler = {"rules": _rules, "run": _run, "report": _report, "mutants": _mutants,
                   "compliance": _compliance, "fingerprint": _fingerprint}
        return handler[args.command](args)
    except UsageError as exc:
        print(f"memconform: usage error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CatalogueError as exc:
        print(f"memconform: the rule catalogue is broken: {exc}", file=sys.stderr)
        return EXIT_KIT
    except KeyboardInterrupt:
        print("memconform: interrupted", file=sys.stderr)
        return EXIT_KIT
    except Exception:
        print("memconform: internal error (a bug in the kit):", file=sys.stderr)
        traceback.print_exc()
        return EXIT_KIT


# -- rules --------------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    """``1 rule``, ``2 rules``, ``0 rules``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _check_profiles(profiles: Sequence[str]) -> None:
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown:
        raise UsageError(f"unknown profile {unknown[0]!r} (known: {', '.join(PROFILES)})")


def _rules(args: argparse.Namespace) -> int:
    _check_profiles(args.profile)
    catalogue = load_catalogue()
    rules = catalogue.select(profiles=args.profile)
    if args.format == "json":
        print(json.dumps([r.to_json() for r in rules], indent=2, ensure_ascii=False))
        return EXIT_OK
    rows = [("ID", "LEVEL", "PROFILE", "SUBJECT", "CAPABILITY", "TEXT")]
    rows += [(r.id, r.level, r.profile, r.subject, r.capability or "-", r.text) for r in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row[:5], widths, strict=True)), row[5])
    print(f"\n{_count(len(rules), 'rule')} (catalogue {catalogue.version}, {catalogue.digest})")
    return EXIT_OK


# -- mutants ------------------------------------------------------------------------


def _mutants(args: argparse.Namespace) -> int:
    from memconform.mutants import all_mutants

    args.rule = _rule_ids(args.rule)
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
    print(f"\n{_count(len(chosen), 'mutant')}")
    return EXIT_OK


# -- fingerprint --------------------------------------------------------------------


def _fingerprint(args: argparse.Namespace) -> int:
    from memconform import fingerprint

    _import_like_python_m()
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
    from memconform.simulator.runtime import ProfileNotDeclared, require_profile

    try:
        require_profile(runtime, fingerprint.PROFILE)  # the gate of memconform run
        result = fingerprint.fingerprint(subject)
    except ProfileNotDeclared as exc:
        print(f"memconform: unsupported: {exc}; nothing was run", file=sys.stderr)
        return EXIT_OK
    except ValueError as exc:  # FingerprintError, or a declaration the kit cannot read
        print(f"memconform: the runtime built by {args.runtime!r}: {exc}", file=sys.stderr)
        return EXIT_ADAPTER
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
    raised = [p for p, seen in result.observed.items() if seen.outcome.startswith("raised ")]
    if raised:
        print(f"memconform: the runtime raised instead of answering at {len(raised)} "
              f"point(s): {', '.join(raised)}", file=sys.stderr)
        return EXIT_ADAPTER
    if args.policy is not None and result.differences(args.policy):
        return EXIT_NONCONFORMANT
    return EXIT_OK


# -- compliance ---------------------------------------------------------------------


def _compliance(args: argparse.Namespace) -> int:
    from memconform import compliance, runtime_compliance

    stores = {t.name: t for t in compliance.TARGETS}
    runtimes = {t.name: t for t in runtime_compliance.RUNTIME_TARGETS}
    unknown = [name for name in args.target if name not in stores | runtimes]
    if unknown:
        raise UsageError(f"unknown target {unknown[0]!r} (known: {', '.join(stores)}; "
                         f"runtimes: {', '.join(runtimes)})")
    if args.target:
        store_targets = [stores[n] for n in args.target if n in stores]
        runtime_targets = [runtimes[n] for n in args.target if n in runtimes]
    else:
        store_targets = [] if args.runtimes else list(compliance.TARGETS)
        runtime_targets = list(runtime_compliance.RUNTIME_TARGETS)
    out = Path(args.out)
    source = Path(args.source).resolve()
    if not (source / "pyproject.toml").is_file():
        raise UsageError(f"{source} is not a checkout of the kit (no pyproject.toml)")
    try:
        findings = compliance.load_findings(
            out / "findings.toml", load_catalogue().ids, set(stores) | set(runtimes)
        )
        decisions = compliance.load_decisions(out / "findings.toml")
    except compliance.ComplianceError as exc:
        raise UsageError(str(exc)) from None
    venvs = Path(args.venvs).resolve()
    runs = compliance.kept_runs(out, compliance.TARGETS)
    runtime_runs = runtime_compliance.kept_runtime_runs(out, runtime_compliance.RUNTIME_TARGETS)
    if not args.from_results:
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
            venv = _compliance_venv(n, total, runtime.name, runtime.extra, venvs, source)
            if isinstance(venv, str):
                runtime_previous[runtime.name] = runtime_compliance.RuntimeRun(runtime, None, venv)
                continue
            done = runtime_previous[runtime.name] = runtime_compliance.run_runtime_target(
                runtime, venv, out / runtime_compliance.KEPT / f"{runtime.name}.json",
                args.timeout,
            )
            _said(done.problem, done.results)
        runs = [previous[t.name] for t in compliance.TARGETS]
        runtime_runs = [runtime_previous[t.name] for t in runtime_compliance.RUNTIME_TARGETS]
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


# -- run ----------------------------------------------------------------------------


def _rule_ids(given: Sequence[str]) -> list[str]:
    """Rule ids as the catalogue spells them: ``st-001`` names ST-001."""
    return [r.strip().upper() for r in given]


def _selection(args: argparse.Namespace, catalogue: Catalogue) -> list[str] | None:
    _check_profiles(args.profile)
    args.rule = _rule_ids(args.rule)
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


def _identity(args: argparse.Namespace) -> dict[str, Any]:
    """What is under test: the redacted store URL and what the store declares.

    Opens the store once (and builds the runtime) before any scenario runs:
    one that cannot be opened raises :class:`_AdapterFailure` with the cause."""
    from memconform.adapters.registry import redact_url

    identity: dict[str, Any] = {"runtime": args.runtime or "memconform.simulator:Simulator"}
    if args.runtime:
        identity["runtime_declares"], identity["runtime_version"] = _probe_runtime(args.runtime)
    if args.store is not None:
        identity["store"] = redact_url(args.store)
        identity.update(_probe(args.store, args.timeout))
        return identity
    identity["store"] = "sqlite:///<temporary file>"
    with tempfile.TemporaryDirectory(prefix="memconform-probe-") as probe_dir:
        identity.update(_probe(f"sqlite:///{Path(probe_dir) / 'probe.db'}", args.timeout))
    return identity


def _probe(url: str, timeout: float) -> dict[str, Any]:
    """Open the store once to read its type, version and declared capabilities,
    waiting at most ``timeout`` seconds for all of it (a hung opening is the
    adapter's failure too)."""
    from concurrent.futures import Future

    done: Future[dict[str, Any]] = Future()

    def work() -> None:
        try:
            done.set_result(_probe_now(url, timeout))
        except Exception as exc:  # handed to the caller, never lost
            done.set_exception(exc)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt... from the store
            what = f"SystemExit({exc.code!r})" if isinstance(exc, SystemExit) else repr(exc)
            done.set_exception(_AdapterFailure(
                f"cannot open the store: it raised {what} while the kit opened it, as if to "
                "end the kit's process"
            ))

    threading.Thread(target=work, name="memconform-probe", daemon=True).start()
    try:
        return done.result(timeout=timeout)
    except TimeoutError:
        raise _AdapterFailure(
            f"cannot open the store: opening it did not finish within {timeout:g} s"
        ) from None


def _probe_now(url: str, timeout: float) -> dict[str, Any]:
    from memconform.adapters.proxy import AdapterContractError, RecordingStore
    from memconform.adapters.registry import StoreURLError, open_store

    try:
        store = open_store(url)
    except StoreURLError as exc:
        raise UsageError(str(exc)) from None
    except AdapterContractError as exc:
        raise _AdapterFailure(f"cannot open the store: {exc.problem}") from None
    except Exception as exc:
        raise _AdapterFailure(f"cannot open the store: {type(exc).__name__}: {exc}") from None
    try:
        proxy = RecordingStore(store, timeout=timeout)
        proxy.close()
    except AdapterContractError as exc:
        raise _AdapterFailure(str(exc)) from None
    except Exception as exc:
        raise _AdapterFailure(
            f"capabilities: raised {type(exc).__name__}: {exc}"
        ) from None
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:
                raise _AdapterFailure(f"close: raised {type(exc).__name__}: {exc}") from None
    return {
        "capabilities": sorted(proxy.capabilities),
        "store_provides": sorted(proxy.provides),
        **_store_identity(store),
    }


def _probe_runtime(target: str) -> tuple[dict[str, Any], str | None]:
    """Build the runtime named ``module:factory`` once, as the suite will, and
    return what it declares (``{"profiles", "policies"}``) and its version: the
    ``version`` text it names itself by (a framework adapter gives the
    framework's distribution versions), ``None`` without one. The version only
    labels the report; no verdict reads it.

    A name that resolves to nothing is a usage error; a module that does not
    import, a factory that raises, an object without ``execute`` and
    ``profiles``, a ``profiles`` declaration that is not a set of known
    profile names, or a ``policies`` declaration naming an unknown save policy
    is the adapter's failure."""
    import importlib

    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--runtime must be module:factory, not {target!r}")
    try:
        factory: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise UsageError(f"cannot import {module_name!r}: {exc}") from None
        raise _AdapterFailure(
            f"the runtime module {module_name!r} does not import: {type(exc).__name__}: {exc}"
        ) from None
    except Exception as exc:
        raise _AdapterFailure(
            f"the runtime module {module_name!r} does not import: {type(exc).__name__}: {exc}"
        ) from None
    for part in attr.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            raise UsageError(f"{module_name!r} has no attribute {attr!r}") from None
    try:
        runtime = factory()
    except Exception as exc:
        raise _AdapterFailure(
            f"the runtime factory {target!r} raised {type(exc).__name__}: {exc}"
        ) from None
    from memconform.simulator.runtime import declared_policies, declared_profiles

    try:
        missing_parts = [n for n in ("execute", "profiles") if not hasattr(runtime, n)]
        if missing_parts:
            raise _AdapterFailure(
                f"the runtime built by {target!r} has no {' and no '.join(missing_parts)}"
            )
        profiles = declared_profiles(runtime)
        policies = declared_policies(runtime)
    except ValueError as exc:
        raise _AdapterFailure(f"the runtime built by {target!r}: {exc}") from None
    except Exception as exc:  # a declaration that raises is the adapter's failure
        raise _AdapterFailure(
            f"the runtime built by {target!r} raised {type(exc).__name__} when asked what "
            f"it declares: {exc}"
        ) from None
    version = getattr(runtime, "version", None)
    return (
        {"profiles": sorted(profiles), "policies": None if policies is None else sorted(policies)},
        version if isinstance(version, str) and version else None,
    )


def _store_identity(store: object) -> dict[str, str]:
    """The type and version a results header names for ``store``.

    A store that names itself (a stdio store's ``hello`` answer: ``name`` and
    ``version``) is shown as it named itself, marked as an out-of-process
    store; otherwise the adapter's Python type. A store without a version of
    its own that ships with the kit is at the kit's version."""
    kind = type(store)
    own_name = getattr(store, "name", None)
    if isinstance(own_name, str) and own_name and kind.__module__ == "memconform.adapters.stdio":
        store_type = f"{own_name} (stdio)"
    else:
        store_type = f"{kind.__module__}.{kind.__qualname__}"
    version = str(getattr(store, "version", "") or "")
    if not version and kind.__module__.startswith("memconform."):
        version = __version__
    return {"store_type": store_type, "store_version": version}


class _AdapterFailure(Exception):
    """The store could not even be opened or announce itself, or the runtime
    could not be built (exit 3, every rule it would judge ``error``)."""


def _scored_rules(
    catalogue: Catalogue, subject: str, selection: list[str] | None
) -> list[str]:
    """The rules this run scores whatever the outcomes (see the reports' scope)."""
    return [
        r.id for r in catalogue
        if (selection is None or r.id in selection)
        and subject in ("both", r.subject)
        and not r.untested
    ]


def _shadowed() -> bool:
    """Whether the working directory holds another copy of the kit (a checkout
    while the kit is installed elsewhere): ``python -m`` would import that copy
    ahead of the installed one, so the working directory stays off the import
    path then, and only then, since a vendor's ``module:factory`` usually lives
    there."""
    import memconform

    here = Path.cwd() / "memconform" / "__init__.py"
    return here.is_file() and here.resolve().parent != Path(memconform.__file__).resolve().parent


def _import_like_python_m() -> None:
    """Put the working directory on the import path, as ``python -m`` does, so
    ``--store mystore:make`` run beside ``mystore.py`` imports it (the
    ``memconform`` script alone would not); the spawned pytest gets it the same
    way (``python -m pytest``)."""
    cwd = os.getcwd()
    if not _shadowed() and cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def _pytest_args(
    args: argparse.Namespace, selection: list[str] | None, outcomes: Path
) -> list[str]:
    from memconform import properties, steps

    suite = Path(steps.__file__).resolve().parent / "suite.py"
    checks = Path(properties.__file__).resolve().parent / "checks.py"
    quick = bool(getattr(args, "quick", False))
    argv = [
        sys.executable, *(["-P"] if _shadowed() else []), "-m", "pytest", str(suite),
        *([] if quick else [str(checks)]),
        "-p", "no:cacheprovider", "-p", "memconform.steps.plugin",
        "--rootdir", str(outcomes.parent), "-c", os.devnull,
        "--strict-markers", "-W", "error",
        # Python's own tracebacks: pytest's long form parses the source of every
        # frame, which costs seconds per failure when a broken store fails hundreds.
        "--tb=native",
        "--memconform-outcomes", str(outcomes), "--memconform-timeout", str(args.timeout),
        "--memconform-max-timeouts", str(args.max_timeouts),
    ]
    argv += ["--memconform-store", args.store or f"sqlite:///{outcomes.parent / 'memconform.db'}"]
    argv += ["--memconform-subject", _subject(args)]
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
    if args.certify:
        argv += ["--memconform-thoroughness", "thorough"]
    if getattr(args, "measure_unclaimed", False):
        argv += ["--memconform-measure-unclaimed"]
    if args.jobs > 1:
        argv += ["-n", str(args.jobs)]
    maxfail = 1 if args.exitfirst else args.maxfail
    if maxfail is not None:
        argv += ["--memconform-maxfail", str(maxfail)]
    return argv


def _stopped_reason(session: SessionOutcomes, args: argparse.Namespace) -> str | None:
    """Why the suite stopped before its end, in the words of the command line."""
    if session.stopped is None:
        return None
    if session.stopped.startswith("stopped after"):
        option = "-x" if args.exitfirst else f"--maxfail {args.maxfail}"
        return f"{option}: {session.stopped}"
    if session.stopped.startswith("the deadline of") and args.deadline is not None:
        return f"the deadline of {args.deadline:g} s passed"  # the suite got what was left
    return session.stopped


PROGRESS_EVERY = 0.25
"""Seconds between two updates of the progress line on a terminal."""


class _Progress:
    """The progress line of a run on a terminal: scenarios ended of those the
    session runs, how many of them failed, and the latest one, rewritten in
    place (``\\r``) as the outcomes file grows; :meth:`close` shows the last
    state and clears the line before the summary is printed."""

    def __init__(self, outcomes: Path, stream: Any) -> None:
        self._path = outcomes
        self._stream = stream
        self._offset = 0
        self._pending = ""
        self._done: set[str] = set()
        self._failing: set[str] = set()
        self._total: int | None = None
        self._latest = ""
        self._shown = ""

    def _read(self) -> None:
        try:
            with self._path.open(encoding="utf-8") as file:
                file.seek(self._offset)
                chunk = file.read()
                self._offset = file.tell()
        except OSError:
            return
        lines = (self._pending + chunk).split("\n")
        self._pending = lines.pop()  # a line not yet written whole
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict) or "session" in record:
                continue
            nodeid = str(record.get("nodeid", ""))
            self._done.add(nodeid)
            self._latest = str(record.get("scenario") or nodeid)
            if record.get("outcome") in ("failed", "error", "crashed"):
                self._failing.add(nodeid)

    def line(self) -> str:
        """``memconform: [ 37/148] 2 failing · <the latest scenario>``."""
        total = "?" if self._total is None else str(self._total)
        count = f"[{len(self._done):>{len(total)}}/{total}]"
        failing = f" {len(self._failing)} failing" if self._failing else ""
        text = f"memconform: {count}{failing}"
        if self._latest:
            text += f" · {self._latest}"
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        return text if len(text) <= width else text[: width - 1] + "…"

    def show(self) -> None:
        self._read()
        if self._total is None:  # written once collection is over
            due = read_collected(self._path)
            if due is not None:
                self._total = len({n for ids in due.values() for n in ids})
        text = self.line()
        if text != self._shown:
            self._stream.write("\r\x1b[K" + text)
            self._stream.flush()
            self._shown = text

    def close(self) -> None:
        self.show()
        self._stream.write("\r\x1b[K")
        self._stream.flush()


class _Suite:
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
        progress: _Progress | None = None,
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


def _subject(args: argparse.Namespace) -> str:
    return "runtime" if args.runtime else "store" if args.store else "both"


def _measured_packages(args: argparse.Namespace) -> tuple[str, ...]:
    if args.coverage is None:
        return ()
    from memconform.measurement import package_names

    try:
        return package_names(args.coverage)
    except ValueError as exc:
        raise UsageError(f"--coverage: {exc}") from None


def _check_run_options(args: argparse.Namespace) -> None:
    """Refuse, before anything runs, the values no run could use."""
    if not args.timeout > 0:  # also refuses nan
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout:g}")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be 1 or more, not {args.jobs}")
    if args.mutant is not None:
        from memconform.mutants import all_mutants

        if args.mutant not in all_mutants():
            raise UsageError(f"unknown mutant {args.mutant!r} (see: memconform mutants)")


def _report_folder(name: str) -> Path:
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


def _run(args: argparse.Namespace) -> int:
    catalogue = load_catalogue()
    selection = _selection(args, catalogue)
    measured = _measured_packages(args)
    if args.store and args.runtime:
        raise UsageError("judge one subject at a time: give --store or --runtime, not both")
    if args.runtime:
        from memconform.adapters.registry import resolve_runtime

        args.runtime = resolve_runtime(args.runtime)
    if args.fingerprint and args.store:
        raise UsageError("--fingerprint judges a runtime: it refuses --store")
    if args.max_timeouts < 0:
        raise UsageError(f"--max-timeouts must be 0 (never stop) or more, not {args.max_timeouts}")
    _check_run_options(args)
    if args.maxfail is not None and args.maxfail < 1:
        raise UsageError(f"--maxfail must be 1 or more, not {args.maxfail}")
    if args.deadline is not None and not args.deadline > 0:
        raise UsageError(f"--deadline must be a positive number of seconds, not {args.deadline:g}")
    clock_started = time.monotonic()
    _import_like_python_m()
    baseline = None
    from memconform import reports
    from memconform.adapters.registry import redact_url

    if args.baseline:
        try:
            baseline = reports.load_baseline(Path(args.baseline))
            reports.check_baseline(baseline, catalogue)
        except (OSError, reports.BaselineError) as exc:
            raise UsageError(f"baseline {args.baseline}: {exc}") from None
    out_dir = _report_folder(args.out)
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        identity = _identity(args)
    except _AdapterFailure as exc:
        # Fail fast: no scenario could judge anything. Every rule the run would
        # score gets `error` with the cause, and the report is written.
        print(f"memconform: adapter error: {exc}", file=sys.stderr)
        identity = {
            "runtime": args.runtime or "memconform.simulator:Simulator",
            "store": redact_url(args.store) if args.store else "sqlite:///<temporary file>",
            "capabilities": [],
            "adapter_error": str(exc),
        }
        failed = {
            "nodeid": "<opening the store>" if not args.runtime else "<building the runtime>",
            "scenario": "opening the store" if not args.runtime else "building the runtime",
            "feature": None,
            "rules": _scored_rules(catalogue, _subject(args), selection),
            "outcome": "error",
            "message": str(exc),
        }
        return _finish(args, catalogue, selection, baseline, identity, [failed], started)
    interactive = sys.stdout.isatty() and not os.environ.get("CI")
    coverage = None
    with tempfile.TemporaryDirectory(prefix="memconform-") as tmp:
        outcomes_path = Path(tmp) / "outcomes.json"
        argv = _pytest_args(args, selection, outcomes_path)
        for stale in (out_dir / COUNTEREXAMPLES).glob("counterexample-*.feature"):
            stale.unlink()  # an earlier run's, into the same folder
        argv += ["--memconform-export-failures", str(out_dir / COUNTEREXAMPLES)]
        log_path = out_dir / "pytest.log"
        env = None
        if measured:
            from memconform import measurement

            data_dir = Path(tmp) / "coverage-data"
            data_dir.mkdir()
            spec = measurement.Measurement(measured, str(data_dir))
            env = {**os.environ, measurement.ENVIRONMENT: spec.to_json()}
        deadline_at = None
        if args.deadline is not None:
            deadline_at = clock_started + args.deadline
            remaining = max(deadline_at - time.monotonic(), 0.0)
            argv += ["--memconform-deadline", f"{remaining:.3f}"]
        argv += ["-q", "--no-header", "-p", "no:warnings"]
        suite = _Suite(argv, env, log_path)
        # On a terminal one progress line; in a CI log (no terminal) nothing until the summary.
        progress = _Progress(outcomes_path, sys.stdout) if interactive else None
        try:
            returncode = suite.wait(
                deadline_at, grace=args.timeout, deadline=args.deadline, progress=progress
            )
        finally:
            if progress is not None:
                progress.close()
        session = read_outcomes(outcomes_path)
        stopped = suite.stopped or _stopped_reason(session, args)
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
            if not session.outcomes:
                return EXIT_KIT
            stopped = f"the suite ended without finishing (pytest exit {returncode})"
        if stopped is not None:
            print(f"memconform: the run stopped early: {stopped}", file=sys.stderr)
        if measured:
            coverage = measurement.summarise(data_dir, measured, out_dir / COVERAGE_HTML)
    code = _finish(
        args, catalogue, selection, baseline, identity, session.outcomes, started, coverage,
        stopped, session.collected,
    )
    if broken:
        code = EXIT_KIT  # the suite's pytest failed on its own: a bug of the kit
    if coverage is not None:
        totals = coverage["totals"]
        print(
            f"  coverage of {', '.join(measured)}: {totals['lines_covered']}/"
            f"{totals['statements']} lines, {totals['branches_covered']}/"
            f"{totals['branches']} branches"
        )
        if coverage["source_html"]:
            print(f"  wrote {out_dir / COVERAGE_HTML} (your source: keep it private)")
    return code


def _finish(
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
    subject = _subject(args)
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
    _print_summary(results, written, code, len(ran))
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


SUMMARY_VERDICTS = ("fail", "error", "stale")
"""The verdicts named rule by rule at the end of a run (as pytest's short summary)."""


def _print_summary(results: Any, written: Sequence[Path], code: int, scenarios: int) -> None:
    data = results.to_json()
    named = [r for r in data.get("rules", []) if r.get("verdict") in SUMMARY_VERDICTS]
    if named:
        print("memconform: short summary")
    for rule in sorted(named, key=lambda r: (SUMMARY_VERDICTS.index(r["verdict"]), r["id"])):
        reason = " ".join(str(rule.get("reason") or "").split())
        if len(reason) > 200:
            reason = reason[:199] + "…"
        print(f"{rule['verdict'].upper():<5} {rule['id']}: {reason}")
        if rule.get("rerun"):
            print(f"      re-run: {rule['rerun']}")
    totals = data.get("footer", {}).get("totals", {})
    shown = ", ".join(f"{k} {v}" for k, v in sorted(totals.items()) if v)
    print(f"memconform: {shown or 'no rules run'} ({_count(scenarios, 'scenario')} run)")
    if data.get("header", {}).get("mode") == "quick":
        print("  quick: stress-size rows and generated checks left out, multi-process checks "
              "lighter (not a certification)")
    runtime_line = _runtime_classes_line(data)
    if runtime_line:
        print(runtime_line)
    for path in written:
        print(f"  wrote {path}")
    print(f"  exit code {code}")


def _runtime_classes_line(data: Mapping[str, Any]) -> str | None:
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


# -- report -------------------------------------------------------------------------


def _report(args: argparse.Namespace) -> int:
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


if __name__ == "__main__":
    raise SystemExit(main())
