"""Canonical JSON: the one byte form of a results file.

Sorted keys, UTF-8, non-ASCII letters kept as they are, and every
non-printable character (control characters, separators other than the
space, format characters, lone surrogates) written as a ``\\u`` escape. The
layout is fixed: the top-level object and the objects and arrays directly in
it are spread one member per line (so a diff shows which rule changed);
everything deeper is written compactly on that member's line. Two equal values
always give the same bytes, and the bytes always decode as UTF-8 (a lone
surrogate cannot be encoded, so it is escaped).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["canonical_json", "escape_nonprintable"]

# json.dumps(ensure_ascii=False) already escapes quotes, backslashes and C0
# controls inside strings; everything it leaves outside strings is ASCII
# punctuation, digits, letters, spaces and the newlines of the layout. So any
# other non-printable character in its output sits inside a string.
_NONPRINTABLE = re.compile(r"[^\n -~]")
_SPREAD_DEPTH = 2


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char.isprintable():
        return char
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def escape_nonprintable(encoded: str) -> str:
    """Escape the non-printable characters of JSON text made by ``json.dumps``."""
    if encoded.replace("\n", "").isprintable():
        return encoded
    return _NONPRINTABLE.sub(_escape, encoded)


def _compact(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )


def _layout(value: Any, depth: int, out: list[str]) -> None:
    if depth >= _SPREAD_DEPTH or not isinstance(value, dict | list) or not value:
        out.append(_compact(value))
        return
    pad = " " * (depth + 1)
    if isinstance(value, dict):
        out.append("{")
        for n, key in enumerate(sorted(value)):
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be str, got {type(key).__name__}")
            out.append(("\n" if n == 0 else ",\n") + pad + _compact(key) + ":")
            _layout(value[key], depth + 1, out)
        out.append("\n" + " " * depth + "}")
    else:
        out.append("[")
        for n, item in enumerate(value):
            out.append(("\n" if n == 0 else ",\n") + pad)
            _layout(item, depth + 1, out)
        out.append("\n" + " " * depth + "]")


def canonical_json(data: Any) -> bytes:
    """The canonical bytes of ``data`` (JSON data only), ending with a newline."""
    out: list[str] = []
    _layout(data, 0, out)
    return (escape_nonprintable("".join(out)) + "\n").encode("utf-8")
