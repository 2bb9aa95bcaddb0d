"""Step definitions of the ``store`` profile (``features/store``): the scenario
state, the shared helpers, and the steps about messages (appends, reads,
round trips, commit flags). Records, state and knowledge steps live in
:mod:`memconform.steps.store_records`, multi-process steps in
:mod:`memconform.steps.store_processes`.

Every phrase names a store thread, job or scope by a short letter; the steps
prefix it with the scenario's namespace, so scenarios never share data. A
store call that raises where the rule requires success becomes
:class:`~memconform.adapters.proxy.AdapterContractError` (verdict ``error``);
a call the scenario expects to be refused is attempted through the
``... is attempted`` / ``... is requested`` phrases, which keep the exception
for a ``Then the store call is refused with ...`` step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from pytest_bdd import given, parsers, then, when

from memconform.adapters import contract
from memconform.adapters.contract_checks import (
    CheckResult,
)
from memconform.adapters.faults import arm_row_fault, disarm_row_fault, row_points_passed
from memconform.adapters.proxy import AdapterContractError, RecordingStore
from memconform.steps.common import (
    Mismatch,
    expect_equal,
    inconclusive,
    measures_unclaimed,
    require_capability,
)
from memconform.values import ErrorRecord, Fact, JSONValue, Message, TurnRecord

__all__ = [
    "JSON_VALUES", "TEXT_SAMPLES", "StoreScene", "attempt", "full_message", "must_succeed",
    "read_thread", "sized_text", "store_scene",
]

T = TypeVar("T")

TEXT_SAMPLES: dict[str, str] = {
    "right-to-left": "שלום, עולם \u200f— مرحبا بالعالم \u202ereversed\u202c",
    "emoji": "family 👨‍👩‍👧‍👦, flags 🇳🇱🇯🇵, skin tone 👍🏽, astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "combining marks": (
        "e\u0301 vs \u00e9, A\u030a vs \u00c5, Zalgo: Z\u0351\u0352\u0353a\u0300\u0301"
    ),
    "leading and trailing whitespace": "  \t leading and trailing \n\r\n \u00a0\u2003",
    "SQL fragment": "'); DROP TABLE messages; -- \" OR 1=1; $1 :name ? %s \\x00",
    "markup": "<script>alert('x')</script> &amp; <b>bold</b> {{ template }} ${expr}",
    "one megabyte": ("0123456789abcdef" * 8 + "é—😀\n") * 7700,
    "NUL": "before\x00after\x00",
    "lone surrogate": "broken \ud800 pair",
}
"""Hard texts for the round-trip scenarios, by the name used in the features."""

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


@dataclass
class StoreScene:
    """What one store scenario has done so far."""

    namespace: str
    appended: dict[str, list[Message]] = field(default_factory=dict)
    read: list[Message] | None = None
    raised: BaseException | None = None
    attempted: bool = False
    expected_text: str | None = None
    expected_message: Message | None = None
    errors: dict[str, list[ErrorRecord]] = field(default_factory=dict)
    records: list[TurnRecord] = field(default_factory=list)
    state_values: dict[tuple[str, str], JSONValue] = field(default_factory=dict)
    facts: dict[tuple[str, str], Fact] = field(default_factory=dict)
    forgot: bool | None = None
    fault_row: int = 0
    fault_mode: str = "row point"
    check: CheckResult | None = None
    refused_names: set[str] = field(default_factory=set)

    def thread(self, name: str) -> str:
        """The thread id of the short name ``name`` in this scenario."""
        return f"{self.namespace}-{name}"


@pytest.fixture
def store_scene(namespace: str) -> StoreScene:
    """Fresh per scenario."""
    return StoreScene(namespace)


# -- helpers --


def must_succeed(method: str, call: Callable[[], T]) -> T:
    """Run a store call the rule requires to succeed.

    A ``StoreError`` is the store refusing the call: the rule fails
    (:class:`Mismatch`). Any other exception means the adapter broke the
    contract itself (:class:`AdapterContractError`, verdict ``error``).
    """
    try:
        return call()
    except AdapterContractError:
        raise
    except contract.StoreError as exc:
        raise Mismatch(
            f"the store call {method}()",
            "success, as the rule requires",
            f"refused with {type(exc).__name__}: {exc}",
        ) from exc
    except Exception as exc:
        raise AdapterContractError(
            method, f"raised {type(exc).__name__}: {exc} where the rule requires success"
        ) from exc


def attempt(scene: StoreScene, call: Callable[[], object]) -> None:
    """Run a store call the rule may require to be refused; keep its exception."""
    scene.attempted = True
    scene.raised = None
    try:
        call()
    except AdapterContractError:
        raise
    except Exception as exc:
        scene.raised = exc


def _numbered(thread: str, start: int, count: int) -> list[Message]:
    roles = ("user", "assistant", "tool", "assistant")
    return [
        Message(
            id=f"m{i}",
            role=roles[(i - 1) % 4],  # type: ignore[arg-type]
            text=f"{thread} message {i}",
            run_id=f"run-{(i - 1) // 4 + 1}",
            round=i,
            metadata={"n": i},
        )
        for i in range(start, start + count)
    ]


def _append(store: RecordingStore, scene: StoreScene, name: str, batch: list[Message]) -> None:
    thread = scene.thread(name)
    must_succeed("append", lambda: store.append(thread, batch))
    scene.appended.setdefault(name, []).extend(batch)


def _ids(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def read_thread(
    store: RecordingStore, thread: str, limit: int | None = None, **kw: Any
) -> list[Message]:
    return must_succeed("messages", lambda: store.messages(thread, limit, **kw))


def _expect_ids(what: str, expected: list[str], messages: list[Message]) -> None:
    observed = [m.id for m in messages]
    if observed != expected:
        raise Mismatch(what, ", ".join(expected) or "(nothing)", ", ".join(observed) or "(nothing)")


def _with_capability(store: RecordingStore, name: str) -> None:
    require_capability(store.capabilities, name)


# -- givens --


@given(parsers.parse('the store claims the "{capability}" capability'))
def _claims(request: pytest.FixtureRequest, store: RecordingStore, capability: str) -> None:
    if not measures_unclaimed(request.config, capability):
        _with_capability(store, capability)


@given(parsers.parse('store thread "{name}" holds {count:d} messages'))
def _holds(store: RecordingStore, store_scene: StoreScene, name: str, count: int) -> None:
    if count:
        _append(store, store_scene, name, _numbered(name, 1, count))


@given(
    parsers.parse('store thread "{name}" holds {count:d} messages appended in batches of {size:d}')
)
def _holds_batched(
    store: RecordingStore, store_scene: StoreScene, name: str, count: int, size: int
) -> None:
    messages = _numbered(name, 1, count)
    for start in range(0, count, size):
        _append(store, store_scene, name, messages[start : start + size])


@given(parsers.parse("the store will fail before row {row:d} of its next batch"))
def _arm_fault(store: RecordingStore, store_scene: StoreScene, row: int) -> None:
    # Probe whether the store passes its rows through the kit's row point (it
    # must run in this process). If not, the fault is a value the store must
    # refuse, placed at the same row: weaker (the store may check up front), but
    # it still shows a failed append leaves nothing behind.
    arm_row_fault(1_000_000)
    try:
        probe = [Message(id="probe", role="user", text="probe")]
        must_succeed("append", lambda: store.append(store_scene.thread("fault-probe"), probe))
    finally:
        passed = row_points_passed()
        disarm_row_fault()
    store_scene.fault_row = row
    store_scene.fault_mode = "row point" if passed else "refused value"


# -- appends --


def _table_messages(datatable: list[list[str]]) -> list[Message]:
    header, *rows = datatable
    out = []
    for row in rows:
        cells = dict(zip(header, row, strict=True))
        out.append(
            Message(
                id=cells["id"],
                role=cells.get("role", "user"),  # type: ignore[arg-type]
                text=cells.get("text", ""),
                committed=cells.get("committed", "yes") == "yes",
            )
        )
    return out


@when(parsers.parse('store thread "{name}" is appended the batch:'))
def _append_table(
    store: RecordingStore, store_scene: StoreScene, name: str, datatable: list[list[str]]
) -> None:
    _append(store, store_scene, name, _table_messages(datatable))


@when(parsers.parse('store thread "{name}" is appended an empty batch'))
def _append_empty(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    _append(store, store_scene, name, [])


@when(
    parsers.parse(
        'a batch of {count:d} messages is appended to store thread "{name}" despite the fault'
    )
)
def _append_faulted(store: RecordingStore, store_scene: StoreScene, name: str, count: int) -> None:
    batch = [Message(id=f"f{i}", role="assistant", text=f"doomed {i}") for i in range(1, count + 1)]
    row = store_scene.fault_row
    if store_scene.fault_mode == "refused value":
        batch[row] = Message(
            id=f"f{row + 1}", role="assistant", text=TEXT_SAMPLES["lone surrogate"]
        )
        attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))
        if store_scene.raised is None:
            inconclusive(
                "the store passes no rows through the kit's row point and kept the value "
                "planted to fail the batch, so no failure could be injected in the middle of "
                "its batch (the SIGKILL check of ST-034 judges that across processes)",
                rules=["ST-016"],
            )
        planted = {m.id for m in batch}
        left = [m for m in read_thread(store, store_scene.thread(name)) if m.id in planted]
        if not left:
            # a partial batch fails in the steps that follow; an empty one proves nothing
            inconclusive(
                f"the store passes no rows through the kit's row point; it refused the value "
                f"planted at row {row} and kept nothing of the batch, but it may have refused "
                "before writing any row, so no failure was injected in the middle of its batch "
                "(the SIGKILL check of ST-034 judges that across processes)",
                rules=["ST-016"],
            )
        return
    arm_row_fault(row)
    try:
        attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))
    finally:
        fired = disarm_row_fault()
    if not fired and store_scene.raised is None:
        raise Mismatch(
            "the fault injected at the row point",
            f"the append to fail before row {row}",
            "the store passed fewer rows through its row point than the batch holds",
        )


def _stamped(prefix: str, hour: int) -> list[Message]:
    # ids, rounds and every caller timestamp run against the append order
    return [
        Message(
            id=f"{prefix}{i}",
            role="user",
            text=f"stamped {prefix}{i}",
            round=i,
            metadata={
                "timestamp": f"2026-01-01T{hour:02d}:0{i}:00Z",
                "created_at": f"2026-01-01T{hour:02d}:0{i}:00Z",
                "ts": hour * 100 + i,
                "seq": i,
            },
        )
        for i in (3, 2, 1)
    ]


@when(
    parsers.parse(
        'store thread "{name}" is appended 3 messages stamped with decreasing caller timestamps'
    )
)
def _append_stamped(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    _append(store, store_scene, name, _stamped("t", 12))


@when(
    parsers.parse(
        'store thread "{name}" is appended 3 more messages stamped with earlier caller timestamps'
    )
)
def _append_stamped_earlier(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    _append(store, store_scene, name, _stamped("u", 8))


@when(
    parsers.parse(
        'store thread "{name}" is appended a batch of new ids'
        ' with the stored id "{dup}" in the middle'
    )
)
def _append_dup_stored(store: RecordingStore, store_scene: StoreScene, name: str, dup: str) -> None:
    batch = [
        Message(id="n1", role="user", text="new 1"),
        Message(id=dup, role="user", text="a retry of a stored message"),
        Message(id="n2", role="user", text="new 2"),
    ]
    attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))


@when(
    parsers.parse(
        'store thread "{name}" is appended a batch repeating the id "{dup}" within itself'
    )
)
def _append_dup_inner(store: RecordingStore, store_scene: StoreScene, name: str, dup: str) -> None:
    batch = [
        Message(id=dup, role="user", text="first"),
        Message(id="d-other", role="user", text="other"),
        Message(id=dup, role="assistant", text="second with the same id"),
    ]
    attempt(store_scene, lambda: store.append(store_scene.thread(name), batch))


def full_message(text: str = "Checking the weather.") -> Message:
    """A new message with every field set (``text`` as given): the round-trip
    scenarios' sample, and the adapters' tests' too."""
    return Message(
        id="full-1",
        role="assistant",
        text=text,
        parts=(
            {"type": "tool-call", "id": "call-1", "name": "weather", "args": {"city": "Oslo"}},
            {"type": "payload", "data": [1, -2, 3.25, 1e-7, 12345678901234567, True, None]},
            {"nested": {"deep": {"list": [[], {}, ""]}}},
        ),
        run_id="run-42",
        round=7,
        turn_id="T3",
        committed=True,
        metadata={"source": "kit", "score": 0.1, "flags": [False, None], "n": -0.5},
    )


@when(parsers.parse('store thread "{name}" is appended a message with every field set'))
def _append_full(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    message = full_message()
    store_scene.expected_message = message
    _append(store, store_scene, name, [message])


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
        _append(store, store_scene, name, [message])


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
    _append(store, store_scene, name, [Message(id="s1", role="user", text=text)])


@when(parsers.parse('store thread "{name}" is appended a batch of {count:d} messages'))
def _append_count(store: RecordingStore, store_scene: StoreScene, name: str, count: int) -> None:
    batch = [
        Message(id=f"b{i}", role="user", text=f"batch message {i}", round=i)
        for i in range(1, count + 1)
    ]
    _append(store, store_scene, name, batch)


@then(parsers.parse('store thread "{name}" holds every message appended, in order'))
def _holds_appended(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    expected = store_scene.appended.get(name, [])
    got = read_thread(store, store_scene.thread(name))
    _expect_ids(f"the messages of thread {name}", [m.id for m in expected], got)
    expect_equal(f"the messages of thread {name}, field for field", expected, got)


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


# -- reads --


@when(parsers.parse('the newest {size:d} messages of store thread "{name}" are read'))
def _read_window(store: RecordingStore, store_scene: StoreScene, name: str, size: int) -> None:
    store_scene.read = read_thread(store, store_scene.thread(name), size)


@when(parsers.parse('every message of store thread "{name}" is read'))
def _read_all(store: RecordingStore, store_scene: StoreScene, name: str) -> None:
    store_scene.read = read_thread(store, store_scene.thread(name))


@when(parsers.parse('a window of {size:d} messages of store thread "{name}" is requested'))
def _request_window(store: RecordingStore, store_scene: StoreScene, name: str, size: int) -> None:
    attempt(store_scene, lambda: store.messages(store_scene.thread(name), size))


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
    _expect_ids(
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


@then(
    parsers.parse('store thread "{name}" keeps "{kept}" exactly, or only "{refused}" once refused')
)
def _holds_kept_or_refused(
    store: RecordingStore, store_scene: StoreScene, name: str, kept: str, refused: str
) -> None:
    if store_scene.raised is None:
        _holds_exactly(store, store_scene, name, kept)
        return
    _refused(store_scene, "UnsupportedValueError")
    _holds_exactly(store, store_scene, name, refused)


@then(parsers.parse('store thread "{name}" holds exactly "{ids}"'))
def _holds_exactly(store: RecordingStore, store_scene: StoreScene, name: str, ids: str) -> None:
    thread = store_scene.thread(name)
    messages = read_thread(store, thread)
    _expect_ids(f"the messages of thread {name}", _ids(ids), messages)
    by_id = {m.id: m for m in store_scene.appended.get(name, [])}
    expected = [by_id.get(m.id, m) for m in messages]
    expect_equal(f"the messages of thread {name}, field for field", expected, messages)
    if "commit-flags" in store.capabilities:
        everything = read_thread(store, thread, include_uncommitted=True)
        _expect_ids(f"the messages of thread {name} including uncommitted", _ids(ids), everything)


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
    _expect_ids(
        f"the newest {size} messages of thread {name}",
        _ids(ids),
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
    _expect_ids(
        f"the newest {size} messages of thread {name} including uncommitted",
        _ids(ids),
        read_thread(store, store_scene.thread(name), size, include_uncommitted=True),
    )


# -- outcomes of attempts --

_REFUSALS: dict[str, type[BaseException]] = {
    "ValueError": ValueError,
    "KeyError": KeyError,
    "DuplicateIdError": contract.DuplicateIdError,
    "UnsupportedValueError": contract.UnsupportedValueError,
    "ConflictError": contract.ConflictError,
}


@then(parsers.parse("the store call is refused with {name}"))
def _refused(store_scene: StoreScene, name: str) -> None:
    kind = _REFUSALS[name]
    raised = store_scene.raised
    if raised is None:
        raise Mismatch("the store call", f"refused with {name}", "it succeeded")
    if not isinstance(raised, kind):
        raise Mismatch(
            "the store call", f"refused with {name}", f"{type(raised).__name__}: {raised}"
        )


@then("the store append raised")
def _append_raised(store_scene: StoreScene) -> None:
    if store_scene.raised is None:
        raise Mismatch("the append hit by the fault", "an exception", "it succeeded")


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


# -- commit flags --


@when(parsers.parse('the committed flag of messages "{ids}" in store thread "{name}" is cleared'))
def _clear_flag(store: RecordingStore, store_scene: StoreScene, ids: str, name: str) -> None:
    must_succeed(
        "set_committed", lambda: store.set_committed(store_scene.thread(name), _ids(ids), False)
    )


@when(parsers.parse('the committed flag of messages "{ids}" in store thread "{name}" is set'))
def _set_flag(store: RecordingStore, store_scene: StoreScene, ids: str, name: str) -> None:
    must_succeed(
        "set_committed", lambda: store.set_committed(store_scene.thread(name), _ids(ids), True)
    )


@when(
    parsers.parse(
        'clearing the committed flag of messages "{ids}" in store thread "{name}" is attempted'
    )
)
def _clear_flag_attempt(
    store: RecordingStore, store_scene: StoreScene, ids: str, name: str
) -> None:
    attempt(store_scene, lambda: store.set_committed(store_scene.thread(name), _ids(ids), False))


@then(parsers.parse('plain reads of store thread "{name}" return "{ids}"'))
def _plain_reads(store: RecordingStore, store_scene: StoreScene, name: str, ids: str) -> None:
    messages = read_thread(store, store_scene.thread(name))
    _expect_ids(f"plain reads of thread {name}", _ids(ids), messages)
    hidden = [m.id for m in messages if not m.committed]
    expect_equal("uncommitted messages in a plain read", [], hidden)


@then(
    parsers.parse(
        'reads of store thread "{name}" including uncommitted'
        ' return "{ids}" with "{hidden}" uncommitted'
    )
)
def _all_reads(
    store: RecordingStore, store_scene: StoreScene, name: str, ids: str, hidden: str
) -> None:
    messages = read_thread(store, store_scene.thread(name), include_uncommitted=True)
    _expect_ids(f"reads of thread {name} including uncommitted", _ids(ids), messages)
    expect_equal(
        "which messages carry a cleared committed flag",
        _ids(hidden),
        [m.id for m in messages if not m.committed],
    )
    by_id = {m.id: m for m in store_scene.appended.get(name, [])}
    for m in messages:
        if m.id in by_id:
            expect_equal(
                f"message {m.id} apart from its flag",
                by_id[m.id].to_json() | {"committed": None},
                m.to_json() | {"committed": None},
            )
