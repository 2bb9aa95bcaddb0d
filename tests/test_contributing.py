"""CONTRIBUTING.md stays true to the tree: every path and module it names in
backticks exists, and its fast-subset command is the README's.

A backticked span counts as a path when it holds a ``/`` and no space, no
``://`` and no leading ``-`` or ``@``. ``<placeholder>`` parts match any name
(``spec/<profile>.toml`` is ``spec/*.toml``) and glob characters are allowed,
so a path must match at least one file or folder; one ending in ``/`` must
match a folder. A span of dotted ``memconform.`` names must name a module of
the package, or a module and a name that module's source defines or imports.
Fenced code blocks (commands) and bare file names (``results.json``, which a
run writes) are not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "CONTRIBUTING.md"

_FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`([^`\n]+)`")
_PLACEHOLDER = re.compile(r"<[^<>/]+>")
_DOTTED = re.compile(r"^memconform(\.[A-Za-z_]\w*)+$")


def _spans(text: str) -> list[str]:
    return _SPAN.findall(_FENCE.sub("", text))


def _is_path(span: str) -> bool:
    return ("/" in span and not any(c.isspace() for c in span) and "://" not in span
            and not span.startswith(("-", "@")))


def _exists(span: str, root: Path) -> bool:
    pattern = "/".join(
        part if part == "**" else re.sub(r"\*+", "*", part)
        for part in _PLACEHOLDER.sub("*", span.rstrip("/")).split("/"))
    try:
        matches = list(root.glob(pattern)) if any(c in pattern for c in "*?[") else (
            [root / pattern] if (root / pattern).exists() else [])
    except ValueError:  # not a pattern pathlib accepts ("a**b")
        return False
    if span.endswith("/"):
        matches = [m for m in matches if m.is_dir()]
    return bool(matches)


def _module_source(parts: list[str], root: Path) -> Path | None:
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _names_something(dotted: str, root: Path) -> bool:
    parts = dotted.split(".")
    if _module_source(parts, root) is not None:
        return True
    source = _module_source(parts[:-1], root)
    return source is not None and re.search(
        rf"\b{re.escape(parts[-1])}\b", source.read_text(encoding="utf-8")) is not None


def missing_names(text: str, root: Path) -> list[str]:
    """The backticked paths and ``memconform.`` names of ``text`` that nothing
    under ``root`` answers to, in order of appearance."""
    missing: list[str] = []
    for span in _spans(text):
        if _is_path(span):
            if not _exists(span, root):
                missing.append(span)
        elif _DOTTED.match(span) and not _names_something(span, root):
            missing.append(span)
    return missing


def test_every_path_the_guide_names_exists() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    assert sum(_is_path(s) for s in _spans(text)) > 50
    assert missing_names(text, ROOT) == []


def test_the_guides_fast_subset_is_the_readmes() -> None:
    def fast(path: Path) -> list[str]:
        return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                if "-m \"not slow and not libraries" in line]

    guide = fast(GUIDE)
    assert guide
    assert set(guide) <= set(fast(ROOT / "README.md"))


def test_the_readme_links_the_guide() -> None:
    assert "(CONTRIBUTING.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("span", "found"), [
    ("`memconform/steps/` and `memconform/nowhere.py`", ["memconform/nowhere.py"]),
    ("`spec/<profile>.toml`, `spec/<profile>.yaml`", ["spec/<profile>.yaml"]),
    ("`memconform/steps/turns*.py`, `memconform/steps/vanished*.py`",
     ["memconform/steps/vanished*.py"]),
    ("`memconform/lint.py/`", ["memconform/lint.py/"]),
    ("`memconform.lint.unknown_rule_ids`, `memconform.lint.no_such_function`",
     ["memconform.lint.no_such_function"]),
    ("`memconform.nowhere`, `sqlite:///tmp/x.db`, `--store a/b`, `results.json`",
     ["memconform.nowhere"]),
    ("```sh\ncat memconform/nowhere.py `memconform/nowhere.py`\n```\n", []),
    ("- item:\n\n  ```sh\n  cat `memconform/nowhere.py`\n  ```\n", []),
    ("`memconform/no**where/`", ["memconform/no**where/"]),
])
def test_a_name_that_went_away_is_reported(span: str, found: list[str]) -> None:
    assert missing_names(span, ROOT) == found
