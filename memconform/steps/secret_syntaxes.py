"""The table of secret syntaxes (``spec/secret-syntaxes.toml``) as data.

Each row is one way of writing a secret in a failed task's error, with the family
of the secret filter it exercises, the rule that judges it and the substrings that
must not survive in the digest. Scenarios name rows in an Examples table and the
steps look them up here, so the rows are written once for every redaction
scenario, in any profile.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any

from memconform.resources import spec_dir
from memconform.simulator.secret_filter import SECRET_FAMILIES, SEED_FAMILIES

__all__ = ["SecretSyntax", "load_secret_syntaxes", "secret_syntax"]

FILE_NAME = "secret-syntaxes.toml"


@dataclass(frozen=True)
class SecretSyntax:
    """One row: ``error`` is what the task fails with; ``secrets`` must be gone."""

    name: str
    family: str
    error: dict[str, Any]
    secrets: tuple[str, ...]

    @property
    def rule(self) -> str:
        """SW-019 for the named filter's families, SW-031 for the kit's."""
        return "SW-019" if self.family in SEED_FAMILIES else "SW-031"


def _row(raw: dict[str, Any], n: int) -> SecretSyntax:
    where = f"{FILE_NAME} row {n}"
    name, family = raw.get("name"), raw.get("family")
    if not isinstance(name, str) or family not in SECRET_FAMILIES:
        raise ValueError(f"{where}: needs a name and a known family, not {family!r}")
    if "error" in raw:
        error = dict(raw["error"])
    elif isinstance(raw.get("message"), str):
        error = {"type": "LifecycleException", "message": raw["message"]}
    else:
        raise ValueError(f"{where}: needs a message or an error")
    secrets = raw.get("secrets")
    if not isinstance(secrets, list) or not secrets or not all(
        isinstance(s, str) and s for s in secrets
    ):
        raise ValueError(f"{where}: needs a non-empty list of secrets")
    return SecretSyntax(name, str(family), error, tuple(secrets))


@cache
def load_secret_syntaxes() -> dict[str, SecretSyntax]:
    """Every row of the table, by name, in the file's order."""
    data = tomllib.loads((spec_dir() / FILE_NAME).read_text(encoding="utf-8"))
    rows: dict[str, SecretSyntax] = {}
    for n, raw in enumerate(data.get("syntax", []), 1):
        row = _row(raw, n)
        if row.name in rows:
            raise ValueError(f"{FILE_NAME}: duplicate syntax {row.name!r}")
        rows[row.name] = row
    return rows


def secret_syntax(name: str) -> SecretSyntax:
    """The row called ``name``; ``KeyError`` lists the known names."""
    rows = load_secret_syntaxes()
    if name not in rows:
        raise KeyError(f"unknown secret syntax {name!r}; known: {', '.join(rows)}")
    return rows[name]
