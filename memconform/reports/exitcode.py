"""Exit codes, mapped from verdicts (never passed through from pytest).

======  =====================================================================
code    meaning
======  =====================================================================
0       conformant: nothing failed (``warn``, ``xfail``, ``unsupported``,
        ``informational`` and ``not-scored`` rules are shown in the report
        but do not fail the gate)
1       non-conformant: a ``fail``, a ``stale`` baseline entry, a MUST rule
        ``inconclusive`` (claimed, but the kit could not exercise it) or
        ``adapter-provided`` (only the adapter kept it), either of which
        leaves its class not achieved, or an incomplete report (a scored
        rule that did not run proves nothing; so a run stopped early by
        ``--maxfail``, ``--deadline`` or an interrupt is never 0)
3       adapter error: a rule's verdict is ``error`` (the store or runtime
        broke the contract itself)
4       kit error: the kit crashed in a scenario, or outcomes name rules the
        catalogue does not hold
5       usage error (decided by the command line, never here)
======  =====================================================================

When several apply, the highest-ranked wins in the order 4, 3, 1: a kit bug
makes every other verdict of the run suspect, and an adapter error makes the
failures around it suspect.

Why ``inconclusive`` and ``adapter-provided`` exit 1 and have no code of
their own: the gate answers "are the claimed classes achieved?", and a claimed
class holding a MUST rule that the kit could not exercise, or that only the
adapter kept, is not; exit 0 would publish "conformant" for a promise the
library judged was never shown to keep. It is the same reasoning that makes a
``not-run`` rule exit 1, and a CI job needs no new number to stay safe. The
report, the JUnit ``type`` and the console name the verdict, so they are told
apart there. On a SHOULD or MAY rule neither changes the code: at worst it
hides a ``warn``, which does not fail the gate either. ``informational`` (a
promise the store does not claim, measured anyway) never changes it.
"""

from __future__ import annotations

from collections.abc import Iterable

from memconform.reports.results import Results, RuleResult

__all__ = [
    "EXIT_ADAPTER",
    "EXIT_KIT",
    "EXIT_NONCONFORMANT",
    "EXIT_OK",
    "EXIT_USAGE",
    "NOT_SHOWN_TO_HOLD",
    "code_for",
    "exit_code",
]

EXIT_OK = 0
EXIT_NONCONFORMANT = 1
EXIT_ADAPTER = 3
EXIT_KIT = 4
EXIT_USAGE = 5

NOT_SHOWN_TO_HOLD = frozenset({"inconclusive", "adapter-provided"})
"""Verdicts of a claimed rule the run could not show to hold: on a MUST rule they
fail the gate as a ``fail`` does (see the module text)."""


def code_for(rules: Iterable[RuleResult], kit_error: bool, complete: bool) -> int:
    """The exit code for these rule verdicts."""
    verdicts = set()
    unproven = False
    for rule in rules:
        kit_error = kit_error or rule.kit_error
        verdicts.add(rule.verdict)
        unproven = unproven or (rule.verdict in NOT_SHOWN_TO_HOLD and rule.level == "MUST")
    if kit_error:
        return EXIT_KIT
    if "error" in verdicts:
        return EXIT_ADAPTER
    if verdicts & {"fail", "stale"} or unproven or not complete:
        return EXIT_NONCONFORMANT
    return EXIT_OK


def exit_code(results: Results) -> int:
    """The exit code of ``results``, recomputed from the rule verdicts (a loaded
    file's recorded code is not trusted)."""
    return code_for(results.rules, results.kit_error, results.complete)
