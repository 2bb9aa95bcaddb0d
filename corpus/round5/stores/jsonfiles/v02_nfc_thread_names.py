"""v02: thread ids are NFC-normalised before they become file names.

Bug: ``threads/<name>.jsonl`` (and the thread's error log) is derived from
``unicodedata.normalize("NFC", thread_id)``, so two thread ids that differ only
in Unicode normalisation ("café" with a precomposed "é" and "café" with "e"
plus a combining accent) share one file: each sees the other's messages, and
the same message id in both is refused as a duplicate.

Why a team ships it: the store folder is synced between Linux servers and
macOS laptops; macOS file systems hand back names in a decomposed form, so a
thread written on one machine was "missing" on the other. Normalising every
name to NFC before building the path made the files line up everywhere, and
nobody thought of two different ids that normalise to the same one.

Breaks: ST-035 (ids are exact strings of code points, normalisation included),
ST-009 (threads are isolated; the same message id may be used in two threads).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from corpus.round5.stores.jsonfiles.base import JsonFilesStore, file_name

__all__ = ["NfcThreadNamesStore", "make"]


def _portable(ident: str) -> str:
    # --- BUG: one spelling per name, whatever the file system does ---
    return unicodedata.normalize("NFC", ident)


class NfcThreadNamesStore(JsonFilesStore):
    """The base store with NFC-normalised thread file names."""

    def _thread_path(self, thread_id: str) -> Path:
        return self.root / "threads" / (file_name(_portable(thread_id)) + ".jsonl")

    def _errors_path(self, thread_id: str) -> Path:
        return self.root / "errors" / (file_name(_portable(thread_id)) + ".jsonl")


def make(**kwargs: str) -> NfcThreadNamesStore:
    """``...v02_nfc_thread_names:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return NfcThreadNamesStore(path)
