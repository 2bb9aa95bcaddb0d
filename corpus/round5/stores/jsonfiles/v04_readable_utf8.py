"""v04: transcripts written as readable UTF-8, with ``errors="replace"``.

Bug: message lines are encoded with ``json.dumps(..., ensure_ascii=False)`` so
that a transcript opened in an editor or ``grep``-ed shows "Grüße" and emoji
instead of ``\\u00fc`` escapes, and the atomic writer opens its temporary file
with ``encoding="utf-8", errors="replace"``. A lone surrogate (from a tool
output cut in the middle of a UTF-16 pair, or a JSON payload holding
``"\\ud83d"``) is no longer escaped by the encoder; the file writer silently
turns it into ``?``. The append succeeds and the message comes back altered:
in its text, its parts or its metadata.

Why a team ships it: the first switch to ``ensure_ascii=False`` crashed one
append with ``UnicodeEncodeError`` on such a surrogate; "a single odd
character must never lose a user's whole turn", so the writer was told to
replace what it cannot encode. Every realistic test text is valid Unicode.

Breaks: ST-015 (text the store cannot hold is refused, never kept altered),
ST-013 and ST-014 (every field and every code point comes back exactly).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

from corpus.round5.stores.jsonfiles.base import JsonFilesStore, _fsync_dir
from memconform.contract import DuplicateIdError, UnsupportedValueError
from memconform.values import Message

__all__ = ["ReadableUtf8Store", "make"]


class ReadableUtf8Store(JsonFilesStore):
    """The base store writing transcripts as readable UTF-8."""

    def _encode_batch(self, batch: Sequence[Message]) -> tuple[list[str], list[str]]:
        ids: list[str] = []
        lines: list[str] = []
        seen: set[str] = set()
        for message in batch:
            if message.id in seen:
                raise DuplicateIdError(f"message id {message.id!r} repeats within the batch")
            seen.add(message.id)
            ids.append(message.id)
            try:
                # --- BUG (1/2): readable transcripts: no \\u escapes ---
                lines.append(
                    json.dumps(
                        message.to_json(), ensure_ascii=False, allow_nan=False,
                        separators=(",", ":"),
                    )
                )
            except ValueError as exc:
                raise UnsupportedValueError(f"message {message.id!r}: {exc}") from None
        return ids, lines

    def _write_text(self, path: Path, text: str) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        try:
            # --- BUG (2/2): "never lose a turn over one odd character" ---
            with open(tmp, "w", encoding="utf-8", errors="replace", newline="\n") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            raise
        _fsync_dir(path.parent)


def make(**kwargs: str) -> ReadableUtf8Store:
    """``...v04_readable_utf8:make?path=FOLDER``."""
    path = kwargs.pop("path", None)
    if not path or kwargs:
        raise ValueError("the jsonfiles store takes exactly ?path=FOLDER")
    return ReadableUtf8Store(path)
