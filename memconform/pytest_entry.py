"""The pytest entry point: memconform's options, and the switch that wakes the plugin.

Installing memconform registers this module (``pytest11`` entry point
``memconform``) in every pytest session of that environment, so it stays
tiny: it declares the ``--memconform-*`` options and the ini key
``memconform``, imports nothing else, and loads the conformance plugin
(``memconform.steps.plugin``: catalogue, markers, step modules, fixtures)
only when asked, by

- any ``--memconform-*`` option on the command line,
- ``memconform = true`` in the pytest configuration, or
- ``-p memconform.steps.plugin`` (or ``pytest_plugins`` naming it).

Otherwise the session is left exactly as it would be without memconform.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

if os.environ.get("MEMCONFORM_COVERAGE"):  # measurement.ENVIRONMENT, set by `run --coverage`
    # Measuring starts here, before any code it may measure is imported (the steps
    # package starts it too, for a session that loads the plugin by name; once only).
    from memconform.measurement import start_from_environment

    start_from_environment()

PLUGIN = "memconform.steps.plugin"
INI = "memconform"
OPTIONS: dict[str, dict[str, Any]] = {
    "--memconform-store": {
        "help": "store under test, as a URL (default: SQLite in a temporary folder)",
    },
    "--memconform-runtime": {
        "help": "runtime under test, as module:factory (default: the simulator)",
    },
    "--memconform-mutant": {"help": "run against the named mutant of the kit"},
    "--memconform-subject": {
        "choices": ("store", "runtime", "both"),
        "help": "what the run judges (default: from --memconform-store / --memconform-runtime); "
        "store or runtime runs only the scenarios tagged with a rule of that subject",
    },
    "--memconform-outcomes": {
        "help": "write each scenario outcome here as it ends, then how the session ended",
    },
    "--memconform-maxfail": {
        "type": int,
        "help": "stop after this many failing scenarios of the rules the run judges",
    },
    "--memconform-deadline": {
        "type": float,
        "help": "start no scenario after this many seconds; the session stops early, saying so",
    },
    "--memconform-timeout": {
        "type": float, "help": "seconds one store call may take (default: 20)",
    },
    "--memconform-max-timeouts": {
        "type": int,
        "help": "stop calling a store after this many timeouts in a row of one method "
        "(default: 3; 0: never)",
    },
    "--memconform-measure-unclaimed": {
        "action": "store_true",
        "help": "also check the promises the store does not claim (durable, atomic-batch, "
        "concurrent-writers); their rules are reported informational, never counted",
    },
    "--memconform-quick": {
        "action": "store_true",
        "help": "run the multi-process checks lighter: one round of writers released at "
        "once (ST-033) and one kill during an append (ST-034) instead of three",
    },
    "--memconform-thoroughness": {
        "choices": ("fast", "thorough"),
        "help": "how hard the property checks search (default: fast; thorough to certify)",
    },
    "--memconform-export-failures": {
        "help": "write each property counterexample as a .feature file into this folder",
    },
}
"""Every option defaults to None, so a value tells that it was given."""


def add_options(parser: pytest.Parser) -> None:
    """Declare the options and the ini key once, whichever module gets here first."""
    group = parser.getgroup("memconform", "memconform conformance (wakes the plugin)")
    if any("--memconform-store" in option.names() for option in group.options):
        return
    for name, spec in OPTIONS.items():
        group.addoption(name, default=None, **spec)
    parser.addini(INI, "run memconform's conformance plugin in this session", type="bool",
                  default=False)


def wanted(config: pytest.Config) -> bool:
    """Whether this session asked for the conformance plugin."""
    if config.pluginmanager.has_plugin(PLUGIN) or config.getini(INI) is True:
        return True
    return any(config.getoption(name) is not None for name in OPTIONS)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    if wanted(config) and not config.pluginmanager.has_plugin(PLUGIN):
        config.pluginmanager.import_plugin(PLUGIN)
