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


@when(parsers.parse('state key "{key}" is written in each of the "{kind}" job scopes'))
def _write_each(store: RecordingStore, store_scene: StoreScene, key: str, kind: str) -> None:
    for twin in _twins(kind):
        scope = _job(store_scene, twin)
        refused, _ = _refused(
            "write_state", partial(store.write_state, scope, key, {"scope": twin}, None)
        )
        if refused:
            store_scene.refused_names.add(twin)


@then(parsers.parse('state key "{key}" of each of the "{kind}" job scopes reads its own value'))
def _each_reads_own(store: RecordingStore, store_scene: StoreScene, key: str, kind: str) -> None:
    for twin in _twins(kind):
        scope = _job(store_scene, twin)
        what = f"state {key!r} of job scope {twin!r}"
        if twin in store_scene.refused_names:
            _refused_or_empty("read_state", partial(store.read_state, scope, key), None, what)
            continue
        entry = must_succeed("read_state", partial(store.read_state, scope, key))
        expect_equal(
            what,
            StateEntry(key, {"scope": twin}, 1).to_json(),
            None if entry is None else entry.to_json(),
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


@when(parsers.parse('a fact about "{subject}" is stored in each of the "{kind}" knowledge scopes'))
def _put_each(store: RecordingStore, store_scene: StoreScene, subject: str, kind: str) -> None:
    for twin in _twins(kind):
        scope = _kb(store_scene, twin)
        fact = _own_fact(subject, twin)
        refused, _ = _refused("put_fact", partial(store.put_fact, scope, fact))
        if refused:
            store_scene.refused_names.add(twin)


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
