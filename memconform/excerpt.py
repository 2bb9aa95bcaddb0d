"""Evidence excerpts: what a report shows of a value too long to show whole.

A rule's evidence (a check's expected and observed values, the store calls of
a scenario, a message) is read by people, in a browser or a CI log. A store
that cuts a 16 MiB text must not make a 16 MiB report: the evidence says the
lengths, where the two values first differ, and a short excerpt around that
place, and every text it carries is bounded.

- :func:`clip`: a text as it is when short enough, else its head and its length;
- :func:`first_difference`: the first position at which two texts (or two
  sequences) differ;
- :func:`contrast`: two renderings (expected, observed) as their lengths, the
  first differing position and an excerpt of each around it;
- :func:`difference`: the same for two values, reached through the lists,
  tuples, mappings and dataclasses holding them, naming the path to the first
  differing part (``[0].text``);
- :func:`bounded`: JSON data with every text clipped and every long list cut.

Every function is pure and total: it never raises on an odd value (a ``repr``
that raises is rendered as the type's name), and its results hold only
printable characters where the input was text (excerpts are ``repr``-quoted,
so control characters, newlines and lone surrogates come out escaped).
Markup is not escaped here: each renderer escapes for its own format.
Deciding whether two values are equal is not done here either: the caller has
decided that they differ, and these functions only say where.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CONTEXT",
    "ITEMS",
    "LIMIT",
    "bounded",
    "clip",
    "contrast",
    "difference",
    "first_difference",
    "shown",
    "window",
]

LIMIT = 4000
"""Characters a rendering of an expected or observed value may have before it is
replaced by its excerpt (a transcript table of a few dozen messages fits)."""

CONTEXT = 32
"""Characters an excerpt shows on each side of the first difference."""

ITEMS = 50
"""Items of a list :func:`bounded` keeps."""

_CHUNK = 4096
_LEAF = 200
"""Characters of a non-text part shown where two values differ."""


def clip(text: str, limit: int = LIMIT) -> str:
    """``text`` itself when it has at most ``limit`` characters; otherwise its
    head followed by ``… [N characters]``, together at most ``max(limit, 40)``
    characters long."""
    if len(text) <= limit:
        return text
    marker = f"… [{len(text):,} characters]"
    return text[: max(0, limit - len(marker))] + marker


def first_difference(a: Sequence[Any], b: Sequence[Any]) -> int | None:
    """The first index at which ``a`` and ``b`` differ; the length of the shorter
    when it is a prefix of the other; ``None`` when they are equal. Texts are
    compared a chunk at a time, so a 16 MiB text costs milliseconds; other
    items are equal only when of the same type and ``==`` (``1`` is not
    ``True``, and an ``==`` that raises counts as a difference)."""
    shorter = min(len(a), len(b))
    if not (isinstance(a, str) and isinstance(b, str)):
        return next((i for i in range(shorter) if not _same(a[i], b[i])),
                    None if len(a) == len(b) else shorter)
    start = 0
    while start < shorter:
        end = min(start + _CHUNK, shorter)
        if a[start:end] != b[start:end]:
            return next(i for i in range(start, end) if a[i] != b[i])
        start = end
    return None if len(a) == len(b) else shorter


def window(text: str, at: int, context: int = CONTEXT) -> str:
    """The part of ``text`` around index ``at`` (``context`` characters on each
    side), ``repr``-quoted, with ``…`` where text was left out. The part after
    ``at`` is empty when ``at`` is the end of ``text`` (``…'aaaa' + ''``)."""
    start = max(0, at - context)
    end = min(len(text), at + context)
    before = "…" if start > 0 else ""
    after = "…" if end < len(text) else ""
    return f"{before}{text[start:at]!r} + {text[at:end]!r}{after}"


def contrast(expected: str, observed: str) -> tuple[str, str]:
    """Two texts as evidence: each becomes its length, the first position at
    which the two differ and :func:`window` around it, e.g.
    ``1,048,576 characters; first difference at 1,000: …'aaaa' + 'aaaa'…``."""
    at = first_difference(expected, observed)
    if at is None:
        same = f"{len(expected):,} characters, the same on both sides: {window(expected, 0)}"
        return same, same
    return (
        f"{len(expected):,} characters; first difference at {at:,}: {window(expected, at)}",
        f"{len(observed):,} characters; first difference at {at:,}: {window(observed, at)}",
    )


def difference(expected: Any, observed: Any) -> tuple[str, str]:
    """Two values as evidence: the path to their first differing part (through
    lists, tuples, mappings and dataclasses), then that part on each side. Two
    texts there are shown as by :func:`contrast`; two sequences of which one
    is a prefix of the other by their lengths and the first item one lacks;
    anything else by its ``repr``, clipped. Each side is a few hundred
    characters at most."""
    path, exp, obs = _locate(expected, observed, "")
    where = f"at {path}: " if path else ""
    if isinstance(exp, str) and isinstance(obs, str):
        e, o = contrast(exp, obs)
    elif _sequence(exp) and _sequence(obs) and (at := first_difference(exp, obs)) is not None:
        e, o = _items(exp, at), _items(obs, at)
    else:
        e, o = clip(_repr(exp), _LEAF), clip(_repr(obs), _LEAF)
    return where + e, where + o


def shown(expected: Any, observed: Any, limit: int = LIMIT) -> tuple[str, str]:
    """Two values as an assertion shows them: their ``repr`` when both fit in
    ``limit`` characters, otherwise their :func:`difference`."""
    e, o = repr(expected), repr(observed)
    if len(e) <= limit and len(o) <= limit:
        return e, o
    return difference(expected, observed)


def bounded(value: Any, text: int = 500, items: int = ITEMS) -> Any:
    """JSON data ``value`` with every text (keys too) :func:`clip`-ped to ``text``
    characters and every list cut to its first ``items`` items and a last text
    saying how many more there were; anything else is left as it is."""
    if isinstance(value, str):
        return clip(value, text)
    if isinstance(value, Mapping):
        return {clip(str(k), text): bounded(v, text, items) for k, v in value.items()}
    if isinstance(value, list | tuple):
        kept = [bounded(v, text, items) for v in value[:items]]
        if len(value) > items:
            kept.append(f"… {len(value) - items:,} more items")
        return kept
    return value


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _sequence(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _locate(expected: Any, observed: Any, path: str) -> tuple[str, Any, Any]:
    """The path to the first part where ``expected`` and ``observed`` differ,
    and the two parts there (the values themselves when they differ in kind)."""
    if _sequence(expected) and _sequence(observed) and type(expected) is type(observed):
        at = first_difference(expected, observed)
        if at is not None and at < min(len(expected), len(observed)):
            return _locate(expected[at], observed[at], f"{path}[{at}]")
        return path, expected, observed
    if isinstance(expected, Mapping) and isinstance(observed, Mapping):
        for key in _keys(expected, observed):
            if key in expected and key in observed and not _same(expected[key], observed[key]):
                return _locate(expected[key], observed[key], f"{path}[{_key(key)}]")
        return path, expected, observed
    if (dataclasses.is_dataclass(expected) and not isinstance(expected, type)
            and type(expected) is type(observed)):
        for f in dataclasses.fields(expected):
            e, o = getattr(expected, f.name, None), getattr(observed, f.name, None)
            if not _same(e, o):
                return _locate(e, o, f"{path}.{f.name}")
    return path, expected, observed


def _keys(expected: Mapping[Any, Any], observed: Mapping[Any, Any]) -> list[Any]:
    keys = list(expected)
    keys += [k for k in observed if k not in expected]
    return keys


def _key(key: Any) -> str:
    return clip(_repr(key), 40)


def _items(value: Sequence[Any], at: int) -> str:
    count = f"{len(value):,} items"
    if at >= len(value):
        return f"{count}; first difference at item {at:,}: none here"
    return f"{count}; first difference at item {at:,}: {clip(_repr(value[at]), _LEAF)}"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = _LEAF
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 8


def _repr(value: Any) -> str:
    """A short ``repr``: long texts and containers are abbreviated before they
    are rendered (a 16 MiB text is never copied into a ``repr``)."""
    try:
        if isinstance(value, str | list | tuple | dict | set | frozenset | int):
            return _REPR.repr(value)
        return clip(repr(value), _LEAF)
    except Exception:
        return f"<{type(value).__name__}>"
