"""Where the language-neutral data lives: ``spec/`` and ``features/``.

From a wheel they are package data under ``memconform/_data``; from a source
checkout or an editable install they are the top-level folders beside the
package. Both are real directories on disk (pytest-bdd needs file paths).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_root", "features_dir", "spec_dir"]

_PACKAGE = Path(__file__).resolve().parent


def data_root() -> Path:
    """The folder holding ``spec/`` and ``features/``."""
    bundled = _PACKAGE / "_data"
    if (bundled / "spec").is_dir():
        return bundled
    checkout = _PACKAGE.parent
    if (checkout / "spec").is_dir():
        return checkout
    raise FileNotFoundError(
        f"memconform data not found: neither {bundled}/spec nor {checkout}/spec exists; "
        "reinstall the package"
    )


def spec_dir() -> Path:
    """The rule catalogue folder."""
    return data_root() / "spec"


def features_dir() -> Path:
    """The Gherkin features folder."""
    return data_root() / "features"
