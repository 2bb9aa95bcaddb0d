"""Exit codes, mapped from verdicts (never passed through from pytest).

======  =====================================================================
code    meaning
======  =====================================================================
0       conformant: nothing failed (``warn``, ``xfail``, ``unsupported`` and
        ``not-scored`` rules are shown in the report but do not fail the gate)
1       non-conformant: a ``fail``, a ``stale`` baseline entry, or an
        incomplete report (a scored rule that did not run proves nothing)
3       adapter error: a rule's verdict is ``error`` (the store or runtime
        broke the contract itself)
4       kit error: the kit crashed in a scenario, or outcomes name rules the
        catalogue does not hold
5       usage error (decided by the command line, never here)
======  =====================================================================

When several apply, the highest-ranked wins in the order 4, 3, 1: a kit bug
makes every other verdict of the run suspect, and an adapter error makes the
failures around it suspect.
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
    "code_for",
    "exit_code",
]

EXIT_OK = 0
EXIT_NONCONFORMANT = 1
EXIT_ADAPTER = 3
EXIT_KIT = 4
EXIT_USAGE = 5


def code_for(rules: Iterable[RuleResult], kit_error: bool, complete: bool) -> int:
    """The exit code for these rule verdicts."""
    verdicts = set()
    for rule in rules:
        kit_error = kit_error or rule.kit_error
        verdicts.add(rule.verdict)
    if kit_error:
        return EXIT_KIT
    if "error" in verdicts:
        return EXIT_ADAPTER
    if verdicts & {"fail", "stale"} or not complete:
        return EXIT_NONCONFORMANT
    return EXIT_OK


def exit_code(results: Results) -> int:
    """The exit code of ``results``, recomputed from the rule verdicts (a loaded
    file's recorded code is not trusted)."""
    return code_for(results.rules, results.kit_error, results.complete)
