"""Regular expressions that run in time linear in their input, whatever it is.

Every pattern of the error digest and the secret filter is compiled here, by RE2
(the ``google-re2`` bindings): an automaton engine that never backtracks, so a
search costs time proportional to the text it reads, for every pattern and every
input. Python's ``re`` backtracks: even with possessive quantifiers it retries a
pattern at every start position, so a pattern such as a dotted class name takes
time quadratic in a run like ``a.a.a.…`` (10,000 characters took 0.36 s with a
possessive ``re`` pattern; RE2 reads 1,000,000 in 0.02 s).

Patterns work on UTF-8 bytes: the bindings re-encode a ``str`` on every call,
which would make a loop of searches quadratic. :func:`utf8` turns text into
bytes once (a lone surrogate becomes U+FFFD, since UTF-8 cannot carry it), and
:func:`text` turns the result back. RE2 matches whole UTF-8 characters, so every
span it reports starts and ends on a character boundary.

:data:`COMPILED` lists every pattern compiled through :func:`linear`; the kit's
tests check that the digest's modules hold no other kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import re2

__all__ = ["COMPILED", "Found", "LinearPattern", "linear", "text", "utf8"]


_UNANCHORED: Any = re2._Anchor.UNANCHORED
_ANCHOR_START: Any = re2._Anchor.ANCHOR_START
_ANCHOR_BOTH: Any = re2._Anchor.ANCHOR_BOTH


class Found:
    """One match: the byte spans of the whole match (group 0) and of each group
    (``(-1, -1)`` for a group that took no part)."""

    __slots__ = ("data", "spans")

    def __init__(self, data: bytes, spans: list[tuple[int, int]]) -> None:
        self.data = data
        self.spans = spans

    def start(self, group: int = 0) -> int:
        return self.spans[group][0]

    def end(self, group: int = 0) -> int:
        return self.spans[group][1]

    def span(self, group: int = 0) -> tuple[int, int]:
        return self.spans[group]

    def group(self, group: int = 0) -> bytes | None:
        """The bytes of ``group``, or ``None`` when it took no part."""
        start, end = self.spans[group]
        return None if start < 0 else self.data[start:end]

    def text(self, group: int = 0) -> bytes:
        """The bytes of ``group``, empty when it took no part."""
        return self.group(group) or b""


class LinearPattern:
    """One RE2 pattern over UTF-8 bytes.

    The calls go straight to RE2's matcher (the bindings' ``re``-like layer costs
    tens of microseconds a match): ``search`` and ``match`` take a start offset
    without copying or re-encoding the text, so a scanner can resume anywhere at
    the cost of what it reads.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.engine: Any = re2.compile(source.encode("utf-8"))
        self._matcher: Any = self.engine._regexp

    def _run(self, anchor: Any, data: bytes, pos: int, end: int | None = None) -> Found | None:
        limit = len(data) if end is None else end
        spans: list[tuple[int, int]] = self._matcher.Match(anchor, data, pos, limit)
        if spans[0][0] < 0:
            return None
        return Found(data, spans)

    def search(self, data: bytes, pos: int = 0, end: int | None = None) -> Found | None:
        """The leftmost match starting at or after ``pos`` (and ending by ``end``, when
        given: the search then reads nothing past it), or ``None``."""
        return self._run(_UNANCHORED, data, pos, end)

    def match(self, data: bytes, pos: int = 0) -> Found | None:
        """The match that starts exactly at ``pos``, or ``None``."""
        return self._run(_ANCHOR_START, data, pos)

    def fullmatch(self, data: bytes) -> bool:
        """Whether the whole of ``data`` matches."""
        return self._run(_ANCHOR_BOTH, data, 0) is not None

    def finditer(self, data: bytes) -> Iterator[Found]:
        """Every non-overlapping match, left to right (an empty match moves on by one
        byte, which can split a character: no pattern of the digest matches empty)."""
        position = 0
        while position <= len(data):
            found = self.search(data, position)
            if found is None:
                return
            yield found
            start, end = found.spans[0]
            position = end if end > start else end + 1

    def sub(self, replacement: bytes | Callable[[Found], bytes], data: bytes) -> bytes:
        """``data`` with every match replaced by ``replacement`` (bytes, or a
        function of the match); the bytes between matches are copied as they are."""
        pieces: list[bytes] = []
        copied = 0
        for found in self.finditer(data):
            start, end = found.spans[0]
            pieces.append(data[copied:start])
            pieces.append(replacement(found) if callable(replacement) else replacement)
            copied = end
        if not pieces:
            return data
        pieces.append(data[copied:])
        return b"".join(pieces)

    def replace(self, replacement: bytes | Callable[[Found], bytes], value: str) -> str:
        """:meth:`sub` on text: encoded once, decoded once."""
        return text(self.sub(replacement, utf8(value)))


COMPILED: list[LinearPattern] = []
"""Every pattern compiled through :func:`linear`, in the order compiled."""


def linear(source: str) -> LinearPattern:
    """Compile ``source`` with RE2 (it raises on syntax RE2 lacks, such as
    look-around and back-references) and remember it in :data:`COMPILED`."""
    pattern = LinearPattern(source)
    COMPILED.append(pattern)
    return pattern


def utf8(value: str) -> bytes:
    """``value`` as UTF-8; lone surrogates (which UTF-8 cannot carry) become U+FFFD
    and a valid surrogate pair becomes the character it encodes."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        repaired = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return repaired.encode("utf-8")


def text(data: bytes) -> str:
    """UTF-8 bytes back as text (the patterns never split a character)."""
    return data.decode("utf-8", "replace")
