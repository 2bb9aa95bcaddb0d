"""v03: long thread names are cut to 120 characters, without the hash.

Bug: a thread file name is the percent-encoded thread id cut at 120
characters; the base appends a SHA-256 of the whole id to a cut name, this
variant does not. Two long thread ids that share their first 120 encoded
characters (path-like ids such as
"org/acme/project/.../run-2024-05-01/step-1" and ".../step-2", or ids that
hold many non-ASCII characters, each of which takes 6 to 12 encoded
characters) name one file: their messages are mixed and their message ids
collide.

Why a team ships it: the first version used the encoded id as it was and
crashed with ``OSError: [Errno 36] File name too long`` on a customer's long
ids; the hot fix cut names at a safe length, tests with short ids stayed green,
and "ids differing only after 120 characters" looked impossible.

Breaks: ST-035 (ids are exact strings; one a prefix of the other names two
threads), ST-009 (threads are isolated).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from corpus.round5.stores.jsonfiles.base import _MAX_NAME, JsonFilesStore

__all__ = ["TruncatedNamesStore", "make"]


def _short_name(ident: str) -> str:
    # --- BUG: ENAMETOOLONG hot fix: cut the name, nothing keeps it unique ---
    return "n-" + quote(ident, safe="", errors="surrogatepass")[:_MAX_NAME]


class TruncatedNamesStore(JsonFilesStore):
    """The base store with thread file names cut at 120 characters."""

    def _thread_path(self, thread_id: str) -> Path:
        return self.root / "threads" / (_short_name(thread_id) + ".jsonl")

    def _errors_path(self, thread_id: str) -> Path:
        return self.root / "errors" / (_short_name(thread_id) + ".jsonl")


def make(**kwargs: str) -> TruncatedNamesStore:
    """``...v03_truncated_names:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return TruncatedNamesStore(path)
