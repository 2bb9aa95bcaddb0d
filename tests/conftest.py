"""What the kit's own test session sets for every process it starts.

``PYTHONDONTWRITEBYTECODE`` is dropped from the environment as soon as pytest
reads this file, before the xdist workers start: every child pytest the suite
runs (each mutant, each property search and replay, each ``memconform run``,
each library's quick run) then keeps the assertion-rewritten modules pytest
compiles for its plugins (Hypothesis, Faker, pytest-bdd, the kit) in
``__pycache__`` and reads them back, instead of rewriting and compiling them
again in each of its hundreds of processes (about 2 CPU-seconds each). Fresh
processes (``python -I``) never read the variable, so nothing they do changes.

``MEMCONFORM_JOBS`` is set to 1 unless the caller set it: the suite already
runs on every core (``pytest -n auto``), so each ``memconform run`` it starts
runs its scenarios in one process instead of starting workers of its own on
cores that are taken. The tests that are about ``--jobs`` name it.
"""

from __future__ import annotations

import os

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault("MEMCONFORM_JOBS", "1")

pytest_plugins = ["tests.interruption"]
