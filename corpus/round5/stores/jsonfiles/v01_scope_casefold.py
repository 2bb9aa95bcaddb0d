"""v01: knowledge scopes are lower-cased before they become file names.

Bug: ``facts/<name>.json`` is derived from ``scope.lower()``, so two knowledge
scopes that differ only in letter case ("Bob@example.com" and
"bob@example.com", "TeamA" and "teama") share one facts file: a fact put,
superseded or forgotten in one shows, or disappears, in the other.

Why a team ships it: knowledge scopes are usually user ids or e-mail
addresses; after a support ticket where one user had two knowledge bases
("Bob@…" from the web app, "bob@…" from the mobile app), and because the same
folder is synced to macOS laptops whose file system ignores case anyway, the
team "normalised" scope names to lower case. Working state was not touched.

Breaks: ST-031 (knowledge isolated by scope), ST-035 (scopes are exact
strings), PS-030 (scopes are isolated).
"""

from __future__ import annotations

from pathlib import Path

from corpus.round5.stores.jsonfiles.base import JsonFilesStore, file_name

__all__ = ["ScopeCasefoldStore", "make"]


class ScopeCasefoldStore(JsonFilesStore):
    """The base store with case-folded knowledge scope file names."""

    def _facts_path(self, scope: str) -> Path:
        # --- BUG: case-insensitive scope names ("e-mail addresses ignore case") ---
        return self.root / "facts" / (file_name(scope.lower()) + ".json")


def make(**kwargs: str) -> ScopeCasefoldStore:
    """``...v01_scope_casefold:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return ScopeCasefoldStore(path)
