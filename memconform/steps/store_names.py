"""Step definitions of the ``store`` profile about names
(``features/store/names.feature``): thread ids, message ids and scopes are
exact strings of code points (ST-035).

Each scenario takes one set of *twins* from :data:`TWINS`: names that a store
comparing anything but exact code points would take for one another (one a
prefix of the next, letter-case or trailing-space variants, Unicode
normalisation forms, separators and the wildcards of ``LIKE`` and ``SCAN``).
Every twin gets data of its own; afterwards each must hold exactly its own. A
store may refuse a name it cannot hold (``UnsupportedValueError``, storing
nothing); a refused name must then read as empty (or be refused again).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeVar

from pytest_bdd import parsers, then, when

from memconform import contract
from memconform.harness.proxy import RecordingStore
from memconform.steps.common import expect_equal
from memconform.steps.store import StoreScene, must_succeed
from memconform.values import Fact, Message, StateEntry

__all__ = ["TWINS"]

T = TypeVar("T")

TWINS: dict[str, tuple[str, ...]] = {
    "prefix": ("a", "ab", "abc", "a-b", "a0"),
    "letter case": ("thread", "Thread", "THREAD", "stra\u00dfe", "STRASSE", "strasse"),
    "trailing space": ("pad", "pad ", "pad  ", " pad", "pad\t"),
    "Unicode normalisation": (
        "\u00e9",  # é, composed (NFC)
        "e\u0301",  # e + combining acute (NFD of é)
        "\u00c5",  # Å, composed
        "A\u030a",  # A + combining ring (NFD of Å)
        "\u212b",  # ANGSTROM SIGN (NFC gives Å)
        "\ufb01",  # the ligature fi (NFKC gives fi)
        "fi",
    ),
    "separator": ("a:b", "a/b", "a.b", "a_b", "a%b", "a*b", "a b", "a\\b", "a|b", "a#b", "a'b"),
    "wildcard": ("%", "_", "*", "?", "[a]", "a", "%%", "__"),
}
"""Sets of names no two of which a store may conflate, by the name used in the features.
Each is used after the scenario's namespace and a dash (``<namespace>-<twin>``)."""


def _twins(kind: str) -> tuple[str, ...]:
    if kind not in TWINS:
        raise KeyError(f"unknown twins {kind!r}; known: {', '.join(TWINS)}")
    return TWINS[kind]


def _refused(method: str, call: Callable[[], T]) -> tuple[bool, T | None]:
    """Run a store call that may refuse a name it cannot hold: ``(True, None)``
    when it raised ``UnsupportedValueError``; any other failure is judged as by
    :func:`must_succeed`."""
    refused = False

    def guarded() -> T | None:
        nonlocal refused
        try:
            return call()
        except contract.UnsupportedValueError:
            refused = True
            return None

    result = must_succeed(method, guarded)
    return refused, result


def _refused_or_empty(method: str, call: Callable[[], T], empty: object, what: str) -> None:
    """A read under a refused name: ``empty``, or refused again."""
    refused, got = _refused(method, call)
    if not refused:
        expect_equal(f"{what} (its write was refused as unsupported)", empty, got)


# -- threads --


def _own_message(name: str) -> Message:
    return Message(id="m1", role="user", text=f"the message of thread {name!r}")


@when(parsers.parse('each of the "{kind}" thread ids is appended a message of its own'))
def _append_each(store: RecordingStore, store_scene: StoreScene, kind: str) -> None:
    for name in _twins(kind):
        thread = store_scene.thread(name)
        refused, _ = _refused("append", partial(store.append, thread, [_own_message(name)]))
        if refused:
            store_scene.refused_names.add(name)


@then(parsers.parse('each of the "{kind}" thread ids holds only its own message'))
def _each_holds_own(store: RecordingStore, store_scene: StoreScene, kind: str) -> None:
    for name in _twins(kind):
        thread = store_scene.thread(name)
        if name in store_scene.refused_names:
            _refused_or_empty(
                "messages", partial(store.messages, thread), [], f"the messages of thread {name!r}"
            )
            continue
        expect_equal(
            f"the messages of thread {name!r}",
            [_own_message(name)],
            must_succeed("messages", partial(store.messages, thread)),
        )


# -- message ids --


@when(
    parsers.parse('store thread "{name}" is appended one message for each of the "{kind}" ids')
)
def _append_ids(store: RecordingStore, store_scene: StoreScene, name: str, kind: str) -> None:
    batch = [
        Message(id=twin, role="user", text=f"the message with id {twin!r}") for twin in _twins(kind)
    ]
    refused, _ = _refused("append", lambda: store.append(store_scene.thread(name), batch))
    if refused:
        store_scene.refused_names.add(name)
    else:
        store_scene.appended.setdefault(name, []).extend(batch)


@then(parsers.parse('store thread "{name}" holds those messages, each id exactly as given'))
def _holds_ids(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    thread = store_scene.thread(name)
    got = must_succeed("messages", lambda: store.messages(thread))
    expected = [] if name in store_scene.refused_names else store_scene.appended.get(name, [])
    expect_equal(f"the message ids of thread {name}", [m.id for m in expected], [m.id for m in got])
    expect_equal(f"the messages of thread {name}", expected, got)


# -- working state scopes --


def _job(scene: StoreScene, twin: str) -> str:
    return scene.thread(f"job-{twin}")


def _write_states(
    store: RecordingStore, scene: StoreScene, key: str, scopes: list[tuple[str, str]]
) -> None:
    """Write ``key`` in each ``(name, scope)``, its value naming ``name``; a
    name whose write is refused as unsupported is kept in ``refused_names``."""
    for name, scope in scopes:
        refused, _ = _refused(
            "write_state", partial(store.write_state, scope, key, {"scope": name}, None)
        )
        if refused:
            scene.refused_names.add(name)


def _states_read_own(
    store: RecordingStore, scene: StoreScene, key: str, scopes: list[tuple[str, str, str]]
) -> None:
    """Each ``(name, scope, word)`` reads back the value :func:`_write_states` gave
    ``name`` at version 1 (or is empty, or refused again, when its write was
    refused); ``word`` names the scope in the evidence."""
    for name, scope, word in scopes:
        what = f"state {key!r} of job scope {word}"
        if name in scene.refused_names:
            _refused_or_empty("read_state", partial(store.read_state, scope, key), None, what)
            continue
        entry = must_succeed("read_state", partial(store.read_state, scope, key))
        expect_equal(
            what,
            StateEntry(key, {"scope": name}, 1).to_json(),
            None if entry is None else entry.to_json(),
        )


@when(parsers.parse('state key "{key}" is written in each of the "{kind}" job scopes'))
def _write_each(store: RecordingStore, store_scene: StoreScene, key: str, kind: str) -> None:
    _write_states(store, store_scene, key, [(t, _job(store_scene, t)) for t in _twins(kind)])


@then(parsers.parse('state key "{key}" of each of the "{kind}" job scopes reads its own value'))
def _each_reads_own(store: RecordingStore, store_scene: StoreScene, key: str, kind: str) -> None:
    _states_read_own(
        store, store_scene, key, [(t, _job(store_scene, t), repr(t)) for t in _twins(kind)]
    )


# -- knowledge scopes --


def _kb(scene: StoreScene, twin: str) -> str:
    return scene.thread(f"kb-{twin}")


def _own_fact(subject: str, twin: str) -> Fact:
    return Fact(
        subject=subject,
        statement=f"said in scope {twin!r}",
        writer="run-1",
        source="user message m1",
        evidence="quoted",
        written_at="2026-01-01T12:00:00Z",
    )


def _put_facts(
    store: RecordingStore, scene: StoreScene, subject: str, scopes: list[tuple[str, str]]
) -> None:
    """Store a fact about ``subject`` in each ``(name, scope)``, its statement
    naming ``name``; a refused name is kept in ``refused_names``."""
    for name, scope in scopes:
        refused, _ = _refused("put_fact", partial(store.put_fact, scope, _own_fact(subject, name)))
        if refused:
            scene.refused_names.add(name)


@when(parsers.parse('a fact about "{subject}" is stored in each of the "{kind}" knowledge scopes'))
def _put_each(store: RecordingStore, store_scene: StoreScene, subject: str, kind: str) -> None:
    _put_facts(store, store_scene, subject, [(t, _kb(store_scene, t)) for t in _twins(kind)])


@then(
    parsers.parse(
        'each of the "{kind}" knowledge scopes holds only its own fact about "{subject}"'
    )
)
def _each_holds_fact(
    store: RecordingStore, store_scene: StoreScene, kind: str, subject: str
) -> None:
    for twin in _twins(kind):
        scope = _kb(store_scene, twin)
        what = f"the facts of knowledge scope {twin!r}"
        if twin in store_scene.refused_names:
            _refused_or_empty("facts", partial(store.facts, scope), [], what)
            continue
        own = _own_fact(subject, twin)
        fact = must_succeed("get_fact", partial(store.get_fact, scope, subject))
        expect_equal(
            f"the fact about {subject!r} in knowledge scope {twin!r}",
            own.to_json(),
            None if fact is None else fact.to_json(),
        )
        listed = must_succeed("facts", partial(store.facts, scope))
        expect_equal(what, [own.to_json()], [f.to_json() for f in listed])


# -- the empty name beside a fallback name --
#
# These places are not namespaced: the empty name is the one name a namespace
# cannot hold. The store may already hold data under them (an earlier run on a
# persistent store), so each entry is named by the scenario's namespace and a
# check looks for the scenario's own entries only.


def _places(fallback: str) -> tuple[tuple[str, str], ...]:
    """The two places of a scenario, each with the word that names it in evidence."""
    return (("", "the empty name"), (fallback, repr(fallback)))


def _entry(scene: StoreScene, place: str) -> str:
    """The id, key or subject of the scenario's entry in ``place``."""
    return scene.thread(f"in-{place or 'empty'}")


@when(
    parsers.parse('the empty thread id and "{fallback}" are each appended a message of their own')
)
def _append_empty_and_fallback(
    store: RecordingStore, store_scene: StoreScene, fallback: str
) -> None:
    for place, _ in _places(fallback):
        message = Message(id=_entry(store_scene, place), role="user", text=f"in {place!r}")
        refused, _ = _refused("append", partial(store.append, place, [message]))
        if refused:
            store_scene.refused_names.add(place)


@then(parsers.parse('the empty thread id and "{fallback}" each hold their own message only'))
def _empty_and_fallback_hold_own(
    store: RecordingStore, store_scene: StoreScene, fallback: str
) -> None:
    for place, word in _places(fallback):
        other = next(p for p, _ in _places(fallback) if p != place)
        if place in store_scene.refused_names:
            _refused_or_empty("messages", partial(store.messages, place), [],
                              f"the messages of thread {word}")
            continue
        ids = {m.id for m in must_succeed("messages", partial(store.messages, place))}
        expect_equal(f"whether thread {word} holds its own message",
                     True, _entry(store_scene, place) in ids)
        expect_equal(f"whether thread {word} holds the message of thread {other!r}",
                     False, _entry(store_scene, other) in ids)


@when(parsers.parse('a state key is written in the empty job scope and in "{fallback}"'))
def _write_empty_and_fallback(
    store: RecordingStore, store_scene: StoreScene, fallback: str
) -> None:
    places = [(place, place) for place, _ in _places(fallback)]
    _write_states(store, store_scene, _entry(store_scene, "state"), places)


@then(parsers.parse('that key of the empty job scope and of "{fallback}" reads its own value'))
def _empty_and_fallback_read_own(
    store: RecordingStore, store_scene: StoreScene, fallback: str
) -> None:
    places = [(place, place, word) for place, word in _places(fallback)]
    _states_read_own(store, store_scene, _entry(store_scene, "state"), places)


@when(parsers.parse('a fact is stored in the empty knowledge scope and in "{fallback}"'))
def _put_empty_and_fallback(
    store: RecordingStore, store_scene: StoreScene, fallback: str
) -> None:
    places = [(place, place) for place, _ in _places(fallback)]
    _put_facts(store, store_scene, _entry(store_scene, "fact"), places)


@then(parsers.parse('that fact of the empty knowledge scope and of "{fallback}" is its own'))
def _empty_and_fallback_facts_own(
    store: RecordingStore, store_scene: StoreScene, fallback: str
) -> None:
    subject = _entry(store_scene, "fact")
    for place, word in _places(fallback):
        what = f"the fact about {subject!r} in knowledge scope {word}"
        if place in store_scene.refused_names:
            _refused_or_empty("get_fact", partial(store.get_fact, place, subject), None, what)
            continue
        fact = must_succeed("get_fact", partial(store.get_fact, place, subject))
        expect_equal(what, _own_fact(subject, place).to_json(),
                     None if fact is None else fact.to_json())
