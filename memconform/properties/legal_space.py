"""The legal space of the Store contract: a value catalogue for every field and a
ladder for every count.

A store vendor certifies to learn whether the store is right on every value the
contract allows, not on the values a test happens to send. Each catalogue holds
the legal values that real backends and encoders alter or confuse (SQL type
affinity and collations, pattern operators, case folding, whitespace trimming,
Unicode and path normalisation, JSON round trips, float precision, time-zone
conversion) beside the smallest and the largest. Each ladder crosses the
thresholds implementations clamp at: powers of two and of ten, page and chunk
sizes, common caps.

:mod:`memconform.properties.sweep` walks every value and every step once, in a
deterministic pass; the generated checks draw from the same catalogues.
``tests/properties/test_legal_space.py`` fails when a field of the contract's
values or a count the contract speaks of has no entry here.
"""

from __future__ import annotations

from memconform.values import JSONValue

__all__ = [
    "COUNTS", "FIELDS", "IDENTIFIERS", "NUMBERS", "SEPARATORS", "TEXTS", "TIMESTAMPS",
    "TWINS", "VALUES",
]

_MIB = 1 << 20

TEXTS: tuple[str, ...] = (
    "", " ", "  ", "\t", "\n", "lead space", " lead", "trail ", "trail\t", "both  ",
    "line\nbreak", "line\r\nbreak", "cr\ronly", "MiXeD", "mixed", "\u00e9t\u00e9",
    "e\u0301te\u0301", "\ufb01le", "\u212b", "\u00c5", "I\u0307", "stra\u00dfe", "STRASSE",
    "0", "00", "0.0", "-0", "1e3", "null", "None", "true", "NaN", "[]", "{}",
    "'", '"', "\\", "%", "_", "*", "?",
    "a/b", "a\\b", "a:b", "{{x}}", "${x}", "<b>x</b>", "'; DROP TABLE t; --",
    "\u202eright to left", "zero\u200bwidth", "\u2028sep", "\U0001f469\u200d\U0001f467",
    "\U0010ffff", "\x7f\x01", "x" * 255, "x" * 256, "x" * 4095, "x" * 4096, "x" * 4097,
    "\u00e9" * 32_767 + "a", "\u00e9" * 32_768, "\u00e9" * 32_768 + "a", "\u20ac" * 21_846,
    "y" * _MIB,
)
"""Texts a store must keep code point for code point (ST-014): empties and
whitespace (trimmed), line ends (normalised), case and Unicode twins (folded or
normalised), strings a parser reads as something else (numbers, null, JSON),
pattern and path characters, invisible and non-BMP characters, and lengths at
the column sizes backends use (255, 4096, 65,535 bytes in UTF-8, one MiB)."""

IDENTIFIERS: tuple[str, ...] = (
    "k", "K", "k ", " k", "k\t", "k.", "k:x", "k/x", "k%", "k_", "k*", "k?", "k\\x",
    "k[ab]", "ka", "\u00e9", "e\u0301", "\u212b", "\u00c5", "\uff4b", "0", "00", "1", "01",
    "1.0", "null", "true", "default",
    "\U0001f600", "\u202ek", "k x", "k+x", "k%20x", "k%2Fx", "k%252Fx", "%6B", "k&x=y", "k#x",
    "k" * 63, "k" * 64, "k" * 255, "k" * 256, "k" * 1000,
)
"""Names a store keys on (thread ids, message ids, state keys, scopes, fact
subjects, run and turn ids): each differs from the others in a code point, so
each names something of its own (ST-035). Case and trailing-space twins, the
three spellings of \u00c5, numbers that parse alike, separator and wildcard
characters (a bracket class beside a name it matches), names a URL encoder or
decoder takes for others (a space and a plus, percent escapes decoded once or
twice, query characters), a fallback name (``default``), a full-width letter
(folded by NFKC, and between U+E000 and U+FFFF, where UTF-16 order and code
point order part from the emoji), and lengths at common key-column sizes."""


NUMBERS: tuple[JSONValue, ...] = (
    0, 1, -1, 2**31 - 1, 2**31, 2**32, 2**53, 2**53 + 1, 2**63 - 1, -(2**63), 10**20,
    0.1, 0.5, 1.0, 1.5, -2.5, 1e-7, 2.5e-5, 1e16, 1.7976931348623157e308, 5e-324,
    123456789.12345679, 0.30000000000000004, True, False, None,
)
"""Numbers in JSON fields: integers at the 32, 53 and 64-bit edges and beyond,
floats a REAL column or a decimal encoder rounds, whole floats a JSON round trip
turns into integers (``1.0`` is not ``1``), and booleans and null, which a store
must not read back as ``1``, ``0`` or a missing key."""

TIMESTAMPS: tuple[str, ...] = (
    "2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T05:30:00+05:30",
    "2026-06-30T12:00:00-07:00", "2026-03-29T01:30:00+01:00", "2026-01-01T00:00:00.123456Z",
    "2026-01-01 00:00:00", "2026-01-01", "1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
)
"""Time stamps are text: every offset, precision and form comes back as written,
never converted to the server's zone, to UTC or to another format."""

_NESTED: JSONValue = "leaf"
for _ in range(64):
    _NESTED = {"n": _NESTED}

VALUES: tuple[JSONValue, ...] = (
    *NUMBERS, "", " ", "0", "1", "true", "null", "x" * 4097, [], {}, [None], [[]], {"": None},
    {"b": 1, "a": 2}, {"a": 1, "A": 2, "a ": 3}, {"\u00e9": 1, "e\u0301": 2},
    [1, "1", 1.0, True], {"k": [1.0, {"x": [2**53 + 1]}]}, _NESTED,
)
"""Any JSON value (metadata values, parts, usage, timing, grants, error details,
state): the numbers above, strings that parse as something else, empty
containers, keys a store sorts, folds or normalises, mixed kinds in one list,
and nesting 64 levels deep."""

FIELDS: dict[str, tuple[object, ...]] = {
    "Message.id": IDENTIFIERS,
    "Message.role": ("user", "assistant", "system", "tool"),
    "Message.text": TEXTS,
    "Message.parts": tuple((v,) for v in VALUES),
    "Message.run_id": (None, "", *IDENTIFIERS),
    "Message.round": (None, 0, 1, 2, 9, 10, 2**31, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64),
    "Message.turn_id": (None, "", *IDENTIFIERS),
    "Message.committed": (True, False),
    "Message.metadata": (*({"v": v} for v in VALUES), *({k: 1} for k in IDENTIFIERS)),
    "ErrorRecord.run_id": IDENTIFIERS,
    "ErrorRecord.error": tuple({"type": "Boom", "detail": v} for v in VALUES),
    "ErrorRecord.messages": ((),),
    "ErrorRecord.scope": (None, "", *IDENTIFIERS),
    "ErrorRecord.recorded_at": (None, "", *TIMESTAMPS),
    "TurnRecord.turn_id": IDENTIFIERS,
    "TurnRecord.thread_id": IDENTIFIERS,
    "TurnRecord.outcome": ("completed", "failed", "refused"),
    "TurnRecord.parent_turn_id": (None, "", *IDENTIFIERS),
    "TurnRecord.continues_from": (None, "", *IDENTIFIERS),
    "TurnRecord.grant": tuple({"v": v} for v in VALUES),
    "TurnRecord.steps_used": (0, 1, 9, 10, 2**31, 2**53 + 1, 2**63 - 1, 2**63),
    "TurnRecord.tier": (None, *TEXTS[:20]),
    "TurnRecord.fallbacks": tuple((v,) for v in VALUES),
    "TurnRecord.usage": tuple({"tokens": v} for v in NUMBERS),
    "TurnRecord.timing": tuple({"seconds": v} for v in NUMBERS),
    "TurnRecord.metadata": tuple({"v": v} for v in VALUES),
    "StateEntry.key": IDENTIFIERS,
    "StateEntry.value": VALUES,
    "StateEntry.version": (1, 2, 9, 10, 11, 99, 100, 101, 127, 128, 255, 256, 257),
    "Fact.subject": IDENTIFIERS,
    "Fact.statement": TEXTS,
    "Fact.writer": IDENTIFIERS,
    "Fact.source": TEXTS,
    "Fact.evidence": TEXTS,
    "Fact.written_at": TIMESTAMPS,
    "Fact.kind": ("preference", "inference", "observation", "decision"),
    "Fact.trust": ("trusted", "untrusted"),
    "Fact.origin": ("concluded", "copied"),
    "Fact.recheck_at": (None, "", *TIMESTAMPS),
    "Fact.metadata": tuple({"v": v} for v in VALUES),
    "thread_id": IDENTIFIERS,
    "scope": IDENTIFIERS,
    "limit": (0, 1, 2, 3, 10, 100, 1000, 1001),
    "expected_version": (None, 0, 1, 2, 9, 10, 100, 256),
    "message_ids": (IDENTIFIERS[:3], IDENTIFIERS),
}
"""Every field of the contract's values and every argument of its methods, with
the values the sweep and the generated checks try for it."""

COUNTS: dict[str, tuple[int, ...]] = {
    "window": (
        0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 15, 16, 17, 20, 25, 31, 32, 33, 49, 50, 51, 63, 64, 65,
        99, 100, 101, 127, 128, 129, 255, 256, 257, 500, 999, 1000, 1001, 1023, 1024, 1025,
    ),
    "thread length": (1, 3, 13, 63, 163, 264, 392, 521, 777, 1034),
    "batch": (1, 2, 10, 50, 100, 101, 128, 129, 256, 257, 1001),
    "threads": (1, 2, 10, 32, 64, 65),
    "error records per thread": (
        1, 2, 5, 10, 11, 20, 32, 50, 64, 65, 100, 101, 128, 129, 256, 257, 1000, 1001),
    "turn records per thread": (
        1, 2, 5, 10, 11, 20, 32, 50, 64, 65, 100, 101, 128, 129, 256, 257, 1000, 1001),
    "keys per scope": (1, 2, 10, 11, 20, 32, 50, 64, 65, 100, 101),
    "writes of one key": (1, 2, 9, 10, 11, 99, 100, 101, 127, 128, 129, 255, 256, 257),
    "facts per scope": (1, 2, 10, 11, 20, 21, 32, 50, 64, 65, 100, 101, 128, 129, 256, 257),
    "scopes": (1, 2, 10, 32),
    "ids per flag change": (1, 2, 50, 100),
    "nesting depth": (1, 2, 10, 32, 64),
    "text length": (0, 1, 255, 256, 4095, 4096, 4097, 32_768, 65_536, _MIB),
    "repeated ids in a batch": (2, 3, 101),
}
"""Every count the contract speaks of, with the steps the sweep crosses; the
thread-length ladder is the running total of the first ten batch sizes."""

TWINS: tuple[str, ...] = (
    "same", "same ", " same", "same\n", "Same", "SAME", "s\u00e1me", "sa\u0301me", "same",
)
"""One value written again and again in forms a store may take for the same (a
trailing or leading space, a line end, letter case, two Unicode spellings), and
last the first form again: each write replaces the one before, none is skipped
as unchanged."""

SEPARATORS: tuple[str, ...] = (":", "/", "|", ".", "#", "-", "_", " ")
"""Characters a store may put between two names to make one key (a scope and a
key, a scope and a subject): ``("a:b", "c")`` and ``("a", "b:c")`` must stay two
entries, whatever the store joins them with."""
