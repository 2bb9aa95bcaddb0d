"""The pytest plugin: fixtures, markers and outcome capture.

Loaded only when a session asks for it (see :mod:`memconform.pytest_entry`,
which declares the options and is the always-loaded entry point). Options:

- ``--memconform-store URL``: the store under test (default: SQLite in a temporary folder).
- ``--memconform-runtime module:factory``: the runtime under test (default: the simulator).
- ``--memconform-mutant NAME``: replace the store or runtime with a deliberately broken one.
- ``--memconform-subject``: ``store``, ``runtime`` or ``both`` (default: inferred).
  A run of one subject runs only the scenarios tagged with a rule of that
  subject; the others are deselected.
- ``--memconform-outcomes PATH``: write each scenario outcome as it ends, then
  how the session ended (see :mod:`memconform.outcome_log`).
- ``--memconform-timeout SECONDS``: how long one store call may take.
- ``--memconform-measure-unclaimed``: check the promises the store does not
  claim too (their rules are reported ``informational``, never counted).
- ``--memconform-max-timeouts N``: after N timeouts in a row of one store
  method the kit stops calling the store; every later scenario that needs it
  ends with ``error`` at once (``0``: never stop).
- ``--memconform-thoroughness``: ``fast`` (default) or ``thorough`` property search.
- ``--memconform-export-failures DIR``: write property counterexamples as features.
- ``--memconform-maxfail N``: stop after N scenarios failed or ended in
  ``error`` (those of rules the run judges: a store run does not stop for a
  runtime rule it does not score).
- ``--memconform-deadline SECONDS``: start no scenario once this many seconds
  have passed since the session began; the session stops early and says so.

Step modules (``memconform.steps.<profile>``) are loaded as plugins, so their
step definitions are visible to every feature.

This is the module pytest loads; what it does is split by kind and registered
with it (it re-exports every hook and fixture, so each is registered once):
the fixtures (:mod:`memconform.steps._fixtures`), collection: markers,
deselection, order (:mod:`memconform.steps._collection`), outcome capture:
the per-scenario records handed to :mod:`memconform.reports.judgement`
(:mod:`memconform.steps._capture`), and the session's shared state, deadline,
``maxfail`` and ending (:mod:`memconform.steps._session`).
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Generator
from pathlib import Path

import pytest

from memconform import measurement
from memconform.catalogue import load_catalogue
from memconform.harness.answers import limit_execute
from memconform.harness.import_path import import_like_python_m
from memconform.outcome_log import OutcomeLog
from memconform.pytest_entry import add_options
from memconform.steps._capture import (
    pytest_bdd_before_scenario,
    pytest_bdd_before_step_call,
    pytest_bdd_step_error,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
)
from memconform.steps._collection import (
    pytest_collection_finish,
    pytest_collection_modifyitems,
    pytest_runtest_setup,
    register_markers,
)
from memconform.steps._fixtures import (
    check_recorder,
    namespace,
    raw_store,
    runtime,
    runtime_factory,
    store,
    store_url,
    subject,
)
from memconform.steps._session import (
    DEADLINE,
    RULE_TAG,
    SESSION,
    call_timeout,
    hang_guard,
    pytest_keyboard_interrupt,
    pytest_runtest_protocol,
    pytest_sessionfinish,
    pytest_sessionstart,
    pytest_unconfigure,
    rules_of,
    subject_of,
)
from memconform.steps._step_lookup import install as install_step_memo

__all__ = [
    "EXECUTE_TIMEOUTS",
    "RULE_TAG",
    "call_timeout",
    "check_recorder",
    "hang_guard",
    "namespace",
    "pytest_addoption",
    "pytest_bdd_before_scenario",
    "pytest_bdd_before_step_call",
    "pytest_bdd_step_error",
    "pytest_collection_finish",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_keyboard_interrupt",
    "pytest_runtest_call",
    "pytest_runtest_logreport",
    "pytest_runtest_makereport",
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_unconfigure",
    "raw_store",
    "runtime",
    "runtime_factory",
    "step_modules",
    "store",
    "store_url",
    "subject",
]

_NOT_STEP_MODULES = {"plugin", "common", "suite"}


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def step_modules() -> list[str]:
    """The profile step modules shipped with the kit."""
    import memconform.steps as package

    return [
        f"memconform.steps.{info.name}"
        for info in pkgutil.iter_modules(package.__path__)
        if info.name not in _NOT_STEP_MODULES and not info.name.startswith("_")
    ]


EXECUTE_TIMEOUTS = 15
"""A runtime's ``execute`` may take this many store-call timeouts."""


def pytest_configure(config: pytest.Config) -> None:
    install_step_memo()
    if config.getoption("--memconform-store") or config.getoption("--memconform-runtime"):
        # a vendor's module:factory beside the project, with the bare `pytest` script too
        import_like_python_m(config.invocation_params.dir)
    SESSION.stopped = None
    limit_execute(EXECUTE_TIMEOUTS * call_timeout(config))
    deadline = config.getoption("--memconform-deadline")
    if deadline is not None:
        config.stash[DEADLINE] = (time.monotonic() + float(deadline), float(deadline))
    path = config.getoption("--memconform-outcomes")
    if path and not hasattr(config, "workerinput"):
        SESSION.log = OutcomeLog(Path(path))
    SESSION.failures = 0
    # counted where every outcome arrives: not in an xdist worker
    worker = hasattr(config, "workerinput")
    SESSION.maxfail = None if worker else config.getoption("--memconform-maxfail")
    subject = subject_of(config)
    SESSION.judged = frozenset(
        r.id for r in load_catalogue() if subject in ("both", r.subject)
    )
    register_markers(config)
    for module in step_modules():
        if not config.pluginmanager.has_plugin(module):
            config.pluginmanager.register(importlib.import_module(module), module)


# -- code coverage ----------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """While a scenario runs, what it reaches is recorded under its rules
    (only when the run measures code coverage; see :mod:`memconform.measurement`)."""
    rules = rules_of(item)
    if not rules or not measurement.active():
        return (yield)
    measurement.switch(measurement.scenario_context(rules, item.nodeid))
    try:
        return (yield)
    finally:
        measurement.switch("")
