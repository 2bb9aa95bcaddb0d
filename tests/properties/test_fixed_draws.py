"""The property checks draw the same examples whatever the process has imported.

Hypothesis takes part of what it draws from the literals of the project modules
the process has imported; :func:`fixed_draws` empties that pool, so a store meets
the same examples in every process (and a mutant found once is found every time).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memconform.properties.settings import fixed_draws

_SEARCH = settings(max_examples=300, derandomize=True, database=None, deadline=None)
_MARKER = "zqlate"


def _draws() -> list[str]:
    """Every text a small derandomized search draws, in order."""
    seen: list[str] = []

    @_SEARCH
    @given(st.lists(st.text(max_size=40), max_size=4))
    def each(texts: list[str]) -> None:
        seen.extend(texts)

    each()
    return seen


def test_the_draws_do_not_change_with_an_import() -> None:
    with fixed_draws():
        before = _draws()
    with _late_module(), fixed_draws():
        after = _draws()
    assert before == after
    assert not any(_MARKER in text for text in after)


def test_the_pool_it_empties_holds_the_literals_of_a_late_import() -> None:
    """The pool :func:`fixed_draws` empties is real: outside the block, the
    literals of a module imported late join what Hypothesis draws from."""
    providers = pytest.importorskip("hypothesis.internal.conjecture.providers")
    pool = getattr(providers, "_get_local_constants", None)
    if pool is None:
        pytest.skip("this Hypothesis draws no literals from the project's modules")
    with _late_module():
        outside = {str(c) for c in pool().set_for_type("string")}
        with fixed_draws():
            inside = {str(c) for c in providers._get_local_constants().set_for_type("string")}
    assert f"{_MARKER}-7" in outside
    assert not inside


@contextmanager
def _late_module() -> Iterator[None]:
    """Imports, in the middle of a test, a project module full of literals."""
    with tempfile.TemporaryDirectory() as folder:
        literals = ", ".join(repr(f"{_MARKER}-{n}") for n in range(200))
        (Path(folder) / "late_literals.py").write_text(f"WORDS = ({literals},)\n", encoding="utf-8")
        sys.path.insert(0, folder)
        try:
            importlib.import_module("late_literals")
            yield
        finally:
            sys.path.remove(folder)
            sys.modules.pop("late_literals", None)
