"""The command line of ``memconform``: its commands, their options and help
texts, and the exit codes each help page ends with (those its command can return).

:func:`parser` builds the whole command line; a command line it refuses raises
:class:`~memconform.cli.exits.UsageError` (exit 5), never argparse's own exit.
Building it imports nothing heavy: no steps, pytest or Hypothesis.
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from memconform import __version__
from memconform.catalogue import PROFILES
from memconform.cli.exits import UsageError
from memconform.harness.proxy import DEFAULT_MAX_TIMEOUTS, DEFAULT_TIMEOUT

__all__ = [
    "COMMAND_EXIT_CODES", "EXIT_CODES", "FINGERPRINT_DESCRIPTION", "FORMAT", "RUN_DESCRIPTION",
    "exit_codes", "parser",
]


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


_MEANINGS = {
    0: "conformant (every judged MUST rule passed)",
    1: "non-conformant, or a stale baseline entry",
    3: "adapter error: the store or runtime broke the contract (crashed, hung, garbage)",
    4: "kit error: a bug in memconform",
    5: "usage error: the command line or a file it names is wrong",
}


def exit_codes(meanings: dict[int, str]) -> str:
    """An ``exit codes:`` block of the codes given, each with its meaning there
    (the kit's general meaning where the text given is empty), in order."""
    lines = ["exit codes:"]
    lines += [f"  {code}  {meanings[code] or _MEANINGS[code]}" for code in sorted(meanings)]
    return "\n".join(lines)


EXIT_CODES = exit_codes({0: "", 1: "", 3: "", 4: "", 5: ""})
"""Every code the kit returns: the top-level help's and ``run``'s block."""

COMMAND_EXIT_CODES: dict[str, str] = {
    "run": EXIT_CODES,
    "rules": exit_codes({0: "the catalogue printed", 4: "", 5: ""}),
    "mutants": exit_codes({0: "the mutants printed", 4: "", 5: ""}),
    "report": exit_codes({0: "the reports written", 4: "", 5: ""}),
    "compliance": exit_codes({
        0: "the pages written", 3: "a chosen target has no results (its run broke)",
        4: "", 5: "",
    }),
    "fingerprint": exit_codes({
        0: "fingerprint taken (and no point differs from --policy), or unsupported",
        1: "a point differs from --policy",
        3: "the runtime could not be built, its declarations read, or it raised",
        4: "", 5: "",
    }),
}
"""Each command's help ends with the codes it can return, and only those."""


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


def parser() -> argparse.ArgumentParser:
    """The ``memconform`` command line, each command with its options."""
    top = _Parser(
        prog="memconform",
        description="Conformance kit for the memory that AI agents persist.",
        epilog=EXIT_CODES, formatter_class=_Help,
    )
    top.add_argument("--version", action="version", version=f"memconform {__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add in (_rules, _run, _report, _compliance, _mutants, _fingerprint):
        add(sub)
    return top


def _command(sub: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    """A command's parser, its help page ending with the exit codes it can return."""
    command: argparse.ArgumentParser = sub.add_parser(
        name, epilog=COMMAND_EXIT_CODES[name], formatter_class=_Help, **options
    )
    return command


def _rules(sub: Any) -> None:
    rules = _command(sub, "rules", help="print the rule catalogue")
    rules.add_argument("--format", **FORMAT)
    rules.add_argument(
        "--profile", action="append", default=[], help=f"only this profile; repeatable ({_P})"
    )


def _run(sub: Any) -> None:
    run = _command(
        sub, "run", help="run the conformance suite and write a report",
        description=RUN_DESCRIPTION,
    )
    _run_subject(run)
    _run_selection(run)
    _run_limits(run)
    _run_measures(run)


def _run_subject(run: argparse.ArgumentParser) -> None:
    """What ``run`` judges, and where the report goes."""
    run.add_argument(
        "--store",
        help="store under test as a URL; judges every store-subject rule and runs only "
        "their scenarios (default: SQLite, temporary, and every rule)",
    )
    run.add_argument(
        "--runtime",
        help="runtime under test: simulator, a simulator variant (anvia-main, eddi-snapshot), "
        "a framework's name (openai-agents, langgraph, langgraph:async|sync|exit, pydantic-ai, "
        "google-adk) or module:factory, as `memconform fingerprint` accepts; "
        "judges every runtime-subject rule and runs only their scenarios",
    )
    run.add_argument("--out", default="memconform-report", help="report folder")


def _run_selection(run: argparse.ArgumentParser) -> None:
    """Which rules ``run`` judges, and how thoroughly."""
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


def _jobs(text: str) -> int | str:
    """``--jobs``: a whole number (checked later, with the other values) or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number or auto: {text!r}") from None


def _run_limits(run: argparse.ArgumentParser) -> None:
    """How ``run`` runs the suite, and when it stops early."""
    run.add_argument(
        "--jobs", type=_jobs, default=None, metavar="N|auto",
        help="parallel worker processes (pytest-xdist): 1 or more, or auto, one per usable core "
        "(the default; MEMCONFORM_JOBS in the environment, when set, replaces it)",
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


def _run_measures(run: argparse.ArgumentParser) -> None:
    """What ``run`` measures besides the verdicts."""
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


def _report(sub: Any) -> None:
    report = _command(sub, "report", help="re-render results, or compare several")
    report.add_argument("results", nargs="+", help="results.json files")
    report.add_argument("--out", required=True, help="output folder")


def _compliance(sub: Any) -> None:
    comply = _command(
        sub, "compliance",
        help="judge the certified third-party stores and framework runtimes, each in its own "
        "venv, and write their pages (compliance.md, runtimes.md)",
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


def _mutants(sub: Any) -> None:
    mutants = _command(sub, "mutants", help="list the deliberately broken stores and runtimes")
    mutants.add_argument(
        "--rule", action="append", default=[],
        help="only the mutants this rule rejects (any case); repeatable",
    )
    mutants.add_argument("--format", **FORMAT)


def _fingerprint(sub: Any) -> None:
    fingerprint = _command(
        sub, "fingerprint", help="which save policy a runtime really implements, from its failures",
        description=FINGERPRINT_DESCRIPTION,
    )
    fingerprint.add_argument(
        "--runtime", default="simulator",
        help="simulator, a simulator variant (anvia-main, eddi-snapshot), a framework's name "
        "(openai-agents, "
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
