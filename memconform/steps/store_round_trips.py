"""Steps of the ``store`` profile on round trips: hard texts, sized texts, JSON
values of every kind and full messages must come back exactly, or be refused
the way the contract allows (``features/store/round_trip.feature``).
"""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from memconform import contract
from memconform.harness.proxy import RecordingStore
from memconform.steps.common import Mismatch, expect_equal
from memconform.steps.store_world import (
    TEXT_SAMPLES,
    StoreScene,
    append_batch,
    attempt,
    full_message,
    read_thread,
)
from memconform.values import JSONValue, Message

__all__ = ["JSON_VALUES", "sized_text"]

_UNITS = {"ASCII": "a", "2-byte": "\u00e9", "3-byte": "\u20ac", "4-byte": "\U0001f600"}


def sized_text(size: int, characters: str) -> str:
    """A text of exactly ``size`` bytes in UTF-8, made of ``characters`` (``ASCII``,
    ``2-byte``, ``3-byte`` or ``4-byte`` ones) and padded with ASCII to the exact size."""
    unit = _UNITS[characters]
    whole, rest = divmod(size, len(unit.encode("utf-8")))
    return unit * whole + "z" * rest


def _nested(depth: int, leaf: JSONValue) -> JSONValue:
    """``leaf`` inside ``depth`` levels of objects holding lists."""
    value = leaf
    for _ in range(depth):
        value = {"d": [value]}
    return value


JSON_VALUES: dict[str, JSONValue] = {
    "true": True,
    "false": False,
    "null": None,
    "zero": 0,
    "negative integer": -42,
    "integer beyond 2**53": 2**53 + 1,
    "integer beyond 64 bits": -(2**70) - 3,
    "whole float": 1.0,
    "float zero": 0.0,
    "decimal fraction": 0.1,
    "smallest float": 5e-324,
    "largest float": 1.7976931348623157e308,
    "float with exponent": 1.5e-7,
    "empty string": "",
    "string of digits": "1",
    "string true": "true",
    "empty list": [],
    "empty object": {},
    "list of every kind": [True, 1, 1.0, "1", None, [], {}, False, 0, 0.0, ""],
    "deep nesting": _nested(40, 1.0),
    "look-alike keys": {"a": 1, "A": True, "a ": 1.0, "\u00e9": "1", "e\u0301": None, "": []},
    "negative zero": -0.0,
}
"""One value of each JSON kind, with the boundaries stores get wrong (integers past
what a double or a 64-bit column holds, floats at their limits, whole floats that a
JSON layer prints as integers, booleans a column keeps as 0 and 1), by the name used
in the features. Each must come back of the same kind and value."""


@when(parsers.parse('store thread "{name}" is appended a message with every field set'))
def _append_full(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    message = full_message()
    store_scene.expected_message = message
    append_batch(store, store_scene, name, [message])


@when(
    parsers.parse('store thread "{name}" is appended a message whose text is the "{sample}" sample')
)
def _append_sample(store: RecordingStore, store_scene: StoreScene, name: str, sample: str) -> None:
    text = TEXT_SAMPLES[sample]
    store_scene.expected_text = text
    message = Message(id="s1", role="user", text=text)
    if sample in ("NUL", "lone surrogate"):
        attempt(store_scene, lambda: store.append(store_scene.thread(name), [message]))
        if store_scene.raised is None:
            store_scene.appended.setdefault(name, []).append(message)
    else:
        append_batch(store, store_scene, name, [message])


@when(
    parsers.parse(
        'store thread "{name}" is appended a message whose text is {size:d} bytes'
        " of {characters} characters"
    )
)
def _append_sized(
    store: RecordingStore, store_scene: StoreScene, name: str, size: int, characters: str
) -> None:
    text = sized_text(size, characters)
    store_scene.expected_text = text
    append_batch(store, store_scene, name, [Message(id="s1", role="user", text=text)])


@when(
    parsers.parse(
        'store thread "{name}" is appended a message'
        ' whose metadata and parts hold the "{sample}" sample'
    )
)
def _append_json_sample(
    store: RecordingStore, store_scene: StoreScene, name: str, sample: str
) -> None:
    value = TEXT_SAMPLES[sample]
    message = Message(
        id="j1",
        role="tool",
        text="json sample",
        parts=({"type": "tool-result", "output": value},),
        metadata={"note": value, "list": [value]},
    )
    store_scene.expected_message = message
    attempt(store_scene, lambda: store.append(store_scene.thread(name), [message]))
    if store_scene.raised is None:
        store_scene.appended.setdefault(name, []).append(message)


@when(
    parsers.parse(
        'store thread "{name}" is appended a message whose metadata and parts hold'
        ' the "{kind}" JSON value'
    )
)
def _append_json_value(
    store: RecordingStore, store_scene: StoreScene, name: str, kind: str
) -> None:
    value = JSON_VALUES[kind]
    message = Message(
        id="j1",
        role="tool",
        text="json value",
        parts=({"type": "tool-result", "output": value}, {"list": [value, value]}),
        metadata={"value": value, "kind": kind, "nested": {"list": [value]}},
    )
    store_scene.expected_message = message
    attempt(store_scene, lambda: store.append(store_scene.thread(name), [message]))
    if store_scene.raised is None:
        store_scene.appended.setdefault(name, []).append(message)


@when(
    parsers.parse(
        'store thread "{name}" is appended a batch whose second message text holds a lone surrogate'
    )
)
def _append_surrogate(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    batch = [
        Message(id="v1", role="user", text="valid"),
        Message(id="v2", role="assistant", text=TEXT_SAMPLES["lone surrogate"]),
        Message(id="v3", role="user", text="valid again"),
    ]
    attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))
    if store_scene.raised is None:
        store_scene.appended.setdefault(name, []).extend(batch)


@then(parsers.parse('store thread "{name}" gives that text back exactly'))
def _text_back(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    messages = read_thread(store, store_scene.thread(name))
    expect_equal(
        "the text read back",
        [store_scene.expected_text],
        [m.text for m in messages],
    )


@then(
    parsers.parse('store thread "{name}" gave that text back exactly or refused it as unsupported')
)
def _text_back_or_refused(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    messages = read_thread(store, store_scene.thread(name))
    if not _refused_as_unsupported(store_scene, messages, "text"):
        expect_equal(
            "the text read back", [store_scene.expected_text], [m.text for m in messages]
        )


def _refused_as_unsupported(scene: StoreScene, messages: list[Message], what: str) -> bool:
    """Whether the append was refused; a refusal must be ``UnsupportedValueError``
    and leave the thread empty (raises :class:`Mismatch` otherwise)."""
    if scene.raised is None:
        return False
    if not isinstance(scene.raised, contract.UnsupportedValueError):
        raise Mismatch(
            f"the append of {what} the store may not hold",
            "stored exactly or refused with UnsupportedValueError",
            f"{type(scene.raised).__name__}: {scene.raised}",
        )
    expect_equal("what the refused append left in the thread", [], messages)
    return True


@then(parsers.parse('store thread "{name}" gives that message back field for field'))
def _message_back(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    messages = read_thread(store, store_scene.thread(name))
    expected = store_scene.expected_message
    assert expected is not None
    expect_equal("the message read back", [expected.to_json()], [m.to_json() for m in messages])
    expect_equal("the message read back", [expected], messages)


@then(
    parsers.parse(
        'store thread "{name}" gave that message back exactly or refused it as unsupported'
    )
)
def _message_back_or_refused(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    messages = read_thread(store, store_scene.thread(name))
    if _refused_as_unsupported(store_scene, messages, "a value"):
        return
    expected = store_scene.expected_message
    assert expected is not None
    expect_equal("the message read back", [expected.to_json()], [m.to_json() for m in messages])
