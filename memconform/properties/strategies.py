"""Hypothesis strategies for what agents write into memory.

Content strategies cover any Unicode (right-to-left text, emoji, combining
marks), very long texts, hostile strings (SQL, markup, format strings, control
characters) and realistic text from Faker (names, emails, URLs), seeded from
Hypothesis so every example is reproducible.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from memconform.values import ROLES, Fact, JSONValue, Message, Role

__all__ = [
    "HOSTILE",
    "facts",
    "faker_text",
    "json_values",
    "message_batches",
    "message_texts",
    "messages",
]

HOSTILE: tuple[str, ...] = (
    "'; DROP TABLE messages; --",
    "\" OR 1=1 --",
    "<script>alert(1)</script>",
    "]]><![CDATA[",
    "{{ 7*7 }} ${jndi:ldap://x} %s%n",
    "\u202eevil\u202c",
    "\u0000nul inside",
    "line\r\nbreak\ttab\x1b[31mansi",
    "مرحبا بالعالم",
    "👩‍👩‍👧‍👦🏳️‍🌈",
    "e\u0301 vs \u00e9",
    "\ufeffbom",
)
"""Strings that break naive stores, renderers and parsers."""

_SAFE_CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")


@functools.cache
def _faker() -> Any:
    from faker import Faker

    return Faker()


@st.composite
def faker_text(draw: st.DrawFn) -> str:
    """Realistic text (a name, an email, a URL, a sentence) from a seeded Faker."""
    fake = _faker()
    fake.seed_instance(draw(st.integers(0, 2**31 - 1)))
    kind = draw(st.sampled_from(("name", "email", "url", "sentence", "address")))
    value: str = getattr(fake, kind)()
    return value


@functools.cache
def message_texts(
    *, allow_nul: bool = True, max_size: int = 200, lone_surrogates: bool = False
) -> SearchStrategy[str]:
    """Any text a store must keep exactly: Unicode, hostile strings, Faker text,
    and now and then a long text (a few kilobytes) or one just past 64 KiB in UTF-8
    (the size of a TEXT column). With ``lone_surrogates``, now
    and then a text no store can hold exactly, which every store must refuse.

    Built once per set of arguments: a strategy built anew for every draw is
    validated anew too, which costs more than the draw itself."""
    chars = (
        st.characters(exclude_categories=["Cs"])
        if allow_nul
        else _SAFE_CHARS
    )
    hostile = st.sampled_from(HOSTILE if allow_nul else tuple(h for h in HOSTILE if "\0" not in h))
    plain = st.text(chars, max_size=max_size)
    long = st.builds(
        lambda s, n: s * n, st.text(chars, min_size=1, max_size=8), st.integers(200, 1000)
    )
    past_64k = st.builds(
        lambda unit, size: unit * (size // len(unit.encode("utf-8"))),
        st.sampled_from(("a", "\u00e9", "\u20ac", "\U0001f600")),
        st.sampled_from((65_536, 65_540, 70_000)),
    )
    branches = [plain, plain, plain, hostile, faker_text(), long, past_64k]
    if lone_surrogates:
        branches.append(st.sampled_from(("broken \ud800 pair", "\udfff")))
    return st.one_of(*branches)


_FLOATS = st.one_of(
    st.sampled_from((0.0, 1.0, -1.0, 0.1, 1e300, 5e-324, 2.0**53, 1.5e-7)),
    st.floats(allow_nan=False, allow_infinity=False),
).map(lambda f: f or 0.0)
"""Any finite float, whole ones and the limits often; never -0.0, which a store may
refuse (a round-trip scenario of ST-013 and ST-015 checks it)."""

json_values: SearchStrategy[JSONValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.integers()
    | _FLOATS
    | st.text(_SAFE_CHARS, max_size=20),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(_SAFE_CHARS, max_size=8), children, max_size=3),
    max_leaves=8,
)
"""Plain JSON data of every kind: null, booleans, integers of any size, finite floats,
strings, lists and objects; compared by kind as well as by value (``True`` is not
``1``, ``1.0`` is not ``1``)."""


_TIMESTAMPS = st.sampled_from(("2026-05-01T00:00:00Z", "2025-01-01T00:00:00Z", "2027-12-31"))
"""Caller timestamps in no particular order: they must never reorder a thread."""


_METADATA = st.dictionaries(st.text(_SAFE_CHARS, max_size=6), json_values, max_size=2)
_PARTS = st.lists(
    st.dictionaries(st.sampled_from(("type", "id", "args")), json_values, max_size=3), max_size=2
)
_ROLES: SearchStrategy[Role] = st.sampled_from(ROLES)
_COMMITTED = st.sampled_from((True, True, False))
_RUN_IDS = st.none() | st.just("run-1")
_ROUNDS = st.none() | st.integers(1, 9)
_TURN_IDS = st.none() | st.just("T1")


@st.composite
def messages(
    draw: st.DrawFn, message_id: str, *, allow_nul: bool = True, lone_surrogates: bool = False,
    hidden: bool = False,
) -> Message:
    """One message with the given id and arbitrary content (sometimes a caller
    timestamp in its metadata). With ``hidden``, about one message in three is
    appended with its committed flag cleared."""
    metadata = draw(_METADATA)
    if draw(st.booleans()):
        metadata["timestamp"] = draw(_TIMESTAMPS)
    committed = draw(_COMMITTED) if hidden else True
    return Message(
        id=message_id,
        role=draw(_ROLES),
        text=draw(message_texts(allow_nul=allow_nul, lone_surrogates=lone_surrogates)),
        parts=tuple(draw(_PARTS)),
        run_id=draw(_RUN_IDS),
        round=draw(_ROUNDS),
        turn_id=draw(_TURN_IDS),
        committed=committed,
        metadata=metadata,
    )


@functools.cache
def _contents(allow_nul: bool, lone_surrogates: bool, hidden: bool) -> SearchStrategy[Message]:
    """Messages without their id, built once per set of arguments."""
    return messages("", allow_nul=allow_nul, lone_surrogates=lone_surrogates, hidden=hidden)


@st.composite
def message_batches(
    draw: st.DrawFn, ids: SearchStrategy[str], *, allow_nul: bool = True, min_size: int = 0,
    max_size: int = 4, lone_surrogates: bool = False, hidden: bool = False,
) -> list[Message]:
    """A batch of messages with distinct ids drawn from ``ids`` (with ``hidden``,
    some of them uncommitted)."""
    chosen = draw(st.lists(ids, min_size=min_size, max_size=max_size, unique=True))
    content = _contents(allow_nul, lone_surrogates, hidden)
    return [replace(draw(content), id=i) for i in chosen]


@st.composite
def facts(draw: st.DrawFn, subject: str) -> Fact:
    """A fact about ``subject`` with arbitrary provenance."""
    return Fact(
        subject=subject,
        statement=draw(message_texts(allow_nul=False, max_size=60)),
        writer=draw(st.sampled_from(("agent", "user", "tool:web"))),
        source=draw(faker_text()),
        evidence=draw(st.text(_SAFE_CHARS, max_size=30)),
        written_at=draw(st.sampled_from(("2026-01-01T00:00:00Z", "2026-06-30T12:00:00Z"))),
        kind=draw(st.sampled_from(("preference", "inference", "observation"))),
        trust=draw(st.sampled_from(("trusted", "untrusted"))),
        origin=draw(st.sampled_from(("concluded", "copied"))),
        recheck_at=draw(st.none() | st.just("2027-01-01T00:00:00Z")),
    )
