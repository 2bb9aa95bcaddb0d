"""Collection: the scenario markers, which scenarios a run keeps, and in what order.

:func:`register_markers` declares the markers of the suite (every rule id, the
scenario tags, the second conditions, the store capabilities). The hooks
deselect the scenarios a run of one subject does not score and those of
runtime profiles the runtime under test does not declare, put the generated
checks first and stress-size scenarios last, say which scenarios are due for
each rule beside the outcomes file, and end at once a scenario that needs a
store the kit stopped calling. Registered through
:mod:`memconform.steps.plugin`, which re-exports every hook.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.contract import Capability
from memconform.harness.proxy import AdapterTimeoutError
from memconform.outcome_log import write_collected
from memconform.second_conditions import CONDITIONS, TAG_PREFIX
from memconform.steps._fixtures import undeclared_rules
from memconform.steps._session import SESSION, hang_guard, rules_of, subject_of

__all__ = [
    "pytest_collection_finish",
    "pytest_collection_modifyitems",
    "pytest_runtest_setup",
    "register_markers",
]

_STORE_FIXTURES = frozenset({"store", "raw_store", "store_url"})


def register_markers(config: pytest.Config) -> None:
    """Declare the suite's markers: rule ids, scenario tags, second conditions
    and store capabilities."""
    for rule in load_catalogue():
        config.addinivalue_line("markers", f"{rule.id}: {rule.level} {rule.text[:80]}")
    for tag in ("golden", "variant", "property", "slow"):
        config.addinivalue_line("markers", f"{tag}: memconform scenario tag")
    config.addinivalue_line("markers", "stress: a stress-size scenario, run after the others")
    for condition in CONDITIONS:
        config.addinivalue_line(
            "markers", f"{TAG_PREFIX}{condition}: the row exercises this second condition"
        )
    for capability in Capability:
        config.addinivalue_line("markers", f"{capability.value}: needs this store capability")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A run of one subject runs only the scenarios that score a rule of it: a
    scenario whose rules all belong to the other subject is deselected (a store
    run does not spend its time on runtime rules it reports ``not-scored``).
    Tests without rule tags (a vendor's own, beside the suite) are left alone.

    The generated checks run first, unless the run stops at its first failures
    (``--memconform-maxfail``): then the named scenarios, quick and each a
    short counterexample, come before them. Stress-size scenarios (``@stress``: a batch
    of 10,000, a 16 MiB text) run after every other one, in their order. A store
    call the kit gives up waiting for keeps running in a thread no one can
    stop; run last, it cannot slow the calls, and so change the verdicts, of
    the rules judged after it.

    A scenario whose rules are all runtime rules of profiles the runtime under
    test does not declare is deselected too: those rules are ``unsupported``
    (see :mod:`memconform.reports.verdict`) and the runtime is never called
    for a profile it does not declare. A runtime that cannot be built, or
    whose declaration cannot be read, deselects nothing here: its scenarios
    end with the adapter's ``error``."""
    judged = SESSION.judged
    if subject_of(config) != "store":
        # a runtime rule of a profile the runtime does not declare is reported
        # unsupported without running: its scenarios never call the runtime
        judged = judged - undeclared_rules(config)
    if judged != frozenset(load_catalogue().ids):
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            rules = set(rules_of(item))
            (kept if not rules or rules & judged else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    generated_first = config.getoption("--memconform-maxfail") is None
    items.sort(key=lambda item: _order(item, generated_first))


def _order(item: pytest.Item, generated_first: bool) -> tuple[bool, bool]:
    """Where ``item`` runs: stress-size scenarios last; before them, with
    ``generated_first``, the generated checks first (each takes seconds, the
    scenarios milliseconds, so on several workers they are shared out at the
    start instead of making one worker's tail), else in their place."""
    generated = generated_first and item.path.name == "generated_checks.py"
    return item.get_closest_marker("stress") is not None, not generated


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Once the kit has stopped calling a hung store, a scenario that needs the
    store ends with ``error`` before any of it runs."""
    stopped = hang_guard(item.config).stopped
    if stopped is not None and _STORE_FIXTURES & set(getattr(item, "fixturenames", ())):
        raise AdapterTimeoutError("store", f"not called: {stopped}")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Say which scenarios are due for each rule, beside the outcomes file: a
    run that stops early can then tell which rules it judged whole."""
    path = session.config.getoption("--memconform-outcomes")
    if not path:
        return
    write_collected(
        Path(path),
        (
            (item.nodeid, sorted(set(rules_of(item))))
            for item in session.items
        ),
    )
