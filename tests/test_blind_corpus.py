"""The blind corpus stays what ``bench/blind_corpus.py`` can run and judge.

The corpus (``corpus/round<N>/``) is not the kit's mutants: its authors never
read the kit's features, steps, generated checks or mutants, and the kit's
suite never tunes a check to it. What the suite keeps is its shape: every
family declares how it is opened, holds a base and its variants, each variant
opens with the factory the family names, says in its docstring which rules its
bug breaks (ids the catalogue knows), and is listed in the family's BUGS.md.
Whether the kit catches each variant is measured by the benchmark and written
in the README; the demos that show each bug live against its base run by hand
(``python -m corpus.round5.stores.kvredis.demos``), as some race real processes.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = sorted(
    p for p in (ROOT / "corpus").glob("round*/*/*/") if (p / "__init__.py").exists()
)
RULE_ID = re.compile(r"\b[A-Z]{2}-\d{3}\b")


def _package(folder: Path) -> str:
    return ".".join(folder.relative_to(ROOT).parts)


def test_the_corpus_holds_families() -> None:
    assert len(FAMILIES) >= 6, [p.name for p in FAMILIES]


@pytest.mark.parametrize("folder", FAMILIES, ids=lambda p: p.name)
def test_each_family_declares_how_it_opens_and_names_the_rules_its_bugs_break(
    folder: Path,
) -> None:
    family = importlib.import_module(_package(folder))
    assert family.KIND in ("store", "runtime")
    assert family.TARGETS, "a family names its factories"
    if family.KIND == "store":
        assert "{tmp}" in family.QUERY, "each run gets data of its own"
    variants = sorted(p.stem for p in folder.glob("v[0-9]*.py"))
    assert len(variants) >= 10, variants
    known = set(load_catalogue().ids)
    bugs = (folder / "BUGS.md").read_text(encoding="utf-8")
    for name in ["base", *variants]:
        module = importlib.import_module(f"{_package(folder)}.{name}")
        assert any(hasattr(module, factory) for factory in family.TARGETS), name
        if name == "base":
            continue
        assert module.__doc__, f"{name} says what its bug is"
        cited = set(RULE_ID.findall(module.__doc__))
        assert cited, f"{name} names the rules its bug breaks"
        assert cited <= known, f"{name} cites unknown rules {sorted(cited - known)}"
        assert name in bugs, f"{name} is listed in {folder.name}/BUGS.md"
