"""The library-only reproduction scripts of the compliance page's findings
(docs/reproduce/): each imports nothing from the kit, so a library's maintainer
can run it as it is, and each is named after a compliance target (a store's or a
runtime's). The library tests (tests/test_library_stores.py,
tests/test_library_runtimes.py) run them in the library's environment."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from memconform.compliance import TARGETS, reproduction_scripts
from memconform.runtime_compliance import RUNTIME_TARGETS, runtime_scripts

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "docs" / "reproduce").glob("*.py"))


def _imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
            names.add("__import__")
    return names


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_a_reproduction_script_imports_nothing_from_the_kit(script: Path) -> None:
    imported = _imported(ast.parse(script.read_text(encoding="utf-8")))
    assert "memconform" not in imported
    assert "tests" not in imported
    assert "__import__" not in imported
    assert "importlib" not in imported


def test_every_script_is_named_after_a_target() -> None:
    """A store target's script is ``store_<target>.py``, a runtime target's
    ``runtime_<script>.py`` (``.mjs`` for a framework in Node.js; durability
    modes of one framework share one)."""
    assert SCRIPTS, "no reproduction script"
    found = reproduction_scripts(ROOT / "docs")
    runtimes = runtime_scripts(ROOT / "docs")
    named = set(found.values()) | set(runtimes.values())
    node = sorted((ROOT / "docs" / "reproduce").glob("*.mjs"))  # the TypeScript frameworks'
    assert sorted(named) == sorted(f"reproduce/{s.name}" for s in [*SCRIPTS, *node])
    assert set(found) <= {t.name for t in TARGETS}
    assert set(runtimes) <= {t.name for t in RUNTIME_TARGETS}


def test_every_store_finding_is_checked_by_its_targets_script() -> None:
    """Each finding of a store target is one of its script's checks (the rule id
    the script prints; tests/test_library_stores.py runs the script and requires
    ``<rule> reproduced:`` for each)."""
    import tomllib

    with (ROOT / "docs" / "findings.toml").open("rb") as handle:
        findings = tomllib.load(handle).get("finding", [])
    scripts = reproduction_scripts(ROOT / "docs")
    stores = {t.name for t in TARGETS}
    missing = [
        f"{f['target']} {f['rule']}" for f in findings if f["target"] in stores
        and (f["target"] not in scripts
             or f'"{f["rule"]}"' not in (ROOT / "docs" / scripts[f["target"]]).read_text())
    ]
    assert missing == [], f"findings without a check in the library-only script: {missing}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_a_script_is_not_named_like_a_module_it_imports(script: Path) -> None:
    """Run as ``python script.py``, a script's own folder comes first on the
    import path: named like a package it imports, it would import itself."""
    imported = _imported(ast.parse(script.read_text(encoding="utf-8")))
    assert script.stem not in imported
    assert not {p.stem for p in SCRIPTS} & imported, "a script imports a sibling script"
