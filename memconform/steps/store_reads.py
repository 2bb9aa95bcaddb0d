"""Steps of the ``store`` profile that read a thread: windows, ranges, reads by
a fresh store, and what a read returns (``features/store/window.feature``).
"""

from __future__ import annotations

import contextlib
import json

from pytest_bdd import parsers, then, when

from memconform.harness.proxy import RecordingStore
from memconform.steps.common import Mismatch, expect_equal
from memconform.steps.store_world import StoreScene, attempt, expect_ids, id_list, read_thread
from memconform.values import Message


@when(parsers.parse('the newest {size:d} messages of store thread "{name}" are read'))
def _read_window(store: RecordingStore, store_scene: StoreScene, name: str, size: int) -> None:
    store_scene.read = read_thread(store, store_scene.thread(name), size)


@when(parsers.parse('every message of store thread "{name}" is read'))
def _read_all(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    store_scene.read = read_thread(store, store_scene.thread(name))


@when(parsers.parse('a window of {size} messages of store thread "{name}" is requested'))
def _request_window(store: RecordingStore, store_scene: StoreScene, name: str, size: str) -> None:
    """``size`` is a JSON value: ``-1``, ``2.5``, ``"2"``. What an accepted call
    returns is kept as the read."""
    limit = json.loads(size)

    def read() -> None:
        store_scene.read = list(store.messages(store_scene.thread(name), limit))

    store_scene.read = None
    attempt(store_scene, read)


@then(parsers.parse("the store call is refused or returns messages {first:d} to {last:d}"))
def _refused_or_read(store_scene: StoreScene, first: int, last: int) -> None:
    """Either answer is legal; any other window is the size read as another."""
    if store_scene.raised is None:
        _read_range(store_scene, first, last)


@when("the store reader changes the returned list and the metadata and parts of a returned message")
def _mutate_read(store: RecordingStore, store_scene: StoreScene) -> None:
    name = next(iter(store_scene.appended))
    got = read_thread(store, store_scene.thread(name))
    if not got:
        raise Mismatch("the read to change was empty", "3 messages", "(nothing)")
    first = got[0]
    for change in (
        lambda: first.metadata.__setitem__("changed-by-caller", True),  # type: ignore[index]
        first.metadata.clear,  # type: ignore[attr-defined]
        lambda: first.parts[0].__setitem__("changed", 1) if first.parts else None,
    ):
        with contextlib.suppress(TypeError, AttributeError):
            change()  # an immutable value cannot be changed, which is fine
    got.reverse()
    got.append(Message(id="intruder", role="user", text="added by the caller"))
    del got[0]


@then(parsers.parse('a fresh read of store thread "{name}" returns what was appended'))
def _fresh_read(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    expect_equal(
        "a later read after the caller changed an earlier result",
        store_scene.appended.get(name, []),
        read_thread(store, store_scene.thread(name)),
    )


@then(parsers.parse("the store read returns messages {first:d} to {last:d} in append order"))
def _read_range(store_scene: StoreScene, first: int, last: int) -> None:
    expect_ids(
        "the messages read", [f"m{i}" for i in range(first, last + 1)], store_scene.read or []
    )


@then(
    parsers.parse(
        'the store read returns messages {first:d} to {last:d} of thread "{name}" in append order'
    )
)
def _read_range_of(store_scene: StoreScene, first: int, last: int, name: str) -> None:
    expected = store_scene.appended.get(name, [])[first - 1 : last]
    expect_equal("the messages read", expected, store_scene.read or [])


@then("the store read is empty")
def _read_empty(store_scene: StoreScene) -> None:
    expect_equal("the messages read", [], store_scene.read)


@then(parsers.parse('store thread "{name}" holds {count:d} messages'))
def _holds_count(store: RecordingStore, store_scene: StoreScene, name: str, count: int) -> None:
    expect_equal(
        f"how many messages thread {name} holds",
        count,
        len(read_thread(store, store_scene.thread(name))),
    )


@then(parsers.parse('the newest {size:d} messages of store thread "{name}" are "{ids}"'))
def _window_is(
    store: RecordingStore, store_scene: StoreScene, size: int, name: str, ids: str
) -> None:
    expect_ids(
        f"the newest {size} messages of thread {name}",
        id_list(ids),
        read_thread(store, store_scene.thread(name), size),
    )


@then(
    parsers.parse(
        'the newest {size:d} messages of store thread "{name}" including uncommitted are "{ids}"'
    )
)
def _window_all_is(
    store: RecordingStore, store_scene: StoreScene, size: int, name: str, ids: str
) -> None:
    expect_ids(
        f"the newest {size} messages of thread {name} including uncommitted",
        id_list(ids),
        read_thread(store, store_scene.thread(name), size, include_uncommitted=True),
    )
