"""What the kit's own test session sets for every process it starts.

``PYTHONDONTWRITEBYTECODE`` is dropped from the environment as soon as pytest
reads this file, before the xdist workers start: every child pytest the suite
runs (each mutant, each property search and replay, each ``memconform run``,
each library's quick run) then keeps the assertion-rewritten modules pytest
compiles for its plugins (Hypothesis, Faker, pytest-bdd, the kit) in
``__pycache__`` and reads them back, instead of rewriting and compiling them
again in each of its hundreds of processes (about 2 CPU-seconds each). Fresh
processes (``python -I``) never read the variable, so nothing they do changes.
"""

from __future__ import annotations

import os

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

pytest_plugins = ["tests.interruption"]
