"""The import path of the command and of the suite it spawns: the working
directory on it, as ``python -m`` puts it, unless it holds another copy of the kit."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["import_like_python_m", "shadowed"]


def shadowed(folder: Path | None = None) -> bool:
    """Whether ``folder`` (the working directory by default) holds another copy
    of the kit (a checkout while the kit is installed elsewhere): ``python -m``
    would import that copy ahead of the installed one, so the folder stays off
    the import path then, and only then, since a vendor's ``module:factory``
    usually lives there."""
    import memconform

    here = (folder or Path.cwd()) / "memconform" / "__init__.py"
    return here.is_file() and here.resolve().parent != Path(memconform.__file__).resolve().parent


def import_like_python_m(folder: Path | None = None) -> None:
    """Put ``folder`` (the working directory by default) on the import path, as
    ``python -m`` does, so ``--store mystore:make`` run beside ``mystore.py``
    imports it (the ``memconform`` and ``pytest`` scripts alone would not); the
    processes the kit spawns inherit the path (``kit_import_path``)."""
    where = str(folder or os.getcwd())
    if not shadowed(folder) and where not in sys.path and "" not in sys.path:
        sys.path.insert(0, where)
