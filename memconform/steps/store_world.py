"""What the steps of the ``store`` profile (``features/store``) share: the
scenario state (:class:`StoreScene`, the ``store_scene`` fixture), the calls
that must succeed or may be refused (:func:`must_succeed`, :func:`attempt`)
and the message helpers.

Every phrase names a store thread, job or scope by a short letter; the steps
prefix it with the scenario's namespace, so scenarios never share data. A
store call that raises where the rule requires success becomes
:class:`~memconform.harness.proxy.AdapterContractError` (verdict ``error``);
a call the scenario expects to be refused is attempted through the
``... is attempted`` / ``... is requested`` phrases, which keep the exception
for a ``Then the store call is refused with ...`` step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from memconform import contract
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.steps.common import Mismatch, require_capability
from memconform.steps.contract_checks import CheckResult
from memconform.values import ErrorRecord, Fact, JSONValue, Message, TurnRecord

__all__ = [
    "TEXT_SAMPLES", "StoreScene", "attempt", "full_message", "must_succeed", "read_thread",
    "store_scene",
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


def numbered(thread: str, start: int, count: int) -> list[Message]:
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


def append_batch(store: RecordingStore, scene: StoreScene, name: str, batch: list[Message]) -> None:
    thread = scene.thread(name)
    must_succeed("append", lambda: store.append(thread, batch))
    scene.appended.setdefault(name, []).extend(batch)


def id_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def read_thread(
    store: RecordingStore, thread: str, limit: int | None = None, **kw: Any
) -> list[Message]:
    return must_succeed("messages", lambda: store.messages(thread, limit, **kw))


def expect_ids(what: str, expected: list[str], messages: list[Message]) -> None:
    observed = [m.id for m in messages]
    if observed != expected:
        raise Mismatch(what, ", ".join(expected) or "(nothing)", ", ".join(observed) or "(nothing)")


def with_capability(store: RecordingStore, name: str) -> None:
    require_capability(store.capabilities, name)


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
