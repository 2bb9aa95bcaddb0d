"""What the steps of the ``save-policy`` profile (document 000) share: the case
being built (:class:`SavePolicyCase`), the store presented without error
records (:class:`StoreWithoutErrors`), the ``sp_proxies`` fixture and the
readers of an observation.

Batching and ordering checks read the recording proxy's timeline, never the
runtime's own report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from memconform.approvals import compared_text, denied_calls, shown_to_model
from memconform.contract import StoreError
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.harness.runtime import SAVE_POLICIES
from memconform.steps._save_policy_scripts import (
    ANSWER,
    PROMPT,
    batches_text,
    refusing_store,
    store_refusals,
)
from memconform.steps.common import Mismatch
from memconform.timeline import Timeline
from memconform.values import ErrorRecord, Message

__all__ = ["POLICIES", "SavePolicyCase", "StoreWithoutErrors", "appended_batches", "sp_proxies"]

POLICIES = SAVE_POLICIES


@dataclass
class SavePolicyCase:
    """A scenario's script and how the store is shown to the runtime."""

    script: dict[str, Any]
    without_errors: bool = False
    extra_threads: list[str] = field(default_factory=list)
    fresh_later: bool = False
    """Every run after the first runs on a fresh runtime instance (in a fresh
    process on a durable store): the kit's choice, not the script's."""
    point: str = "none"
    """The failure point: a store refusal is injected through the store handed
    to the runtime, never written into the script."""

    def store_for(self, raw_store: object, policy: str | None) -> object:
        """The store the runtime gets: errors hidden if asked, refusals injected."""
        inner = StoreWithoutErrors(raw_store) if self.without_errors else raw_store
        return refusing_store(inner, store_refusals(self.point, policy))


class StoreWithoutErrors:
    """The store under test offering only the required part of the contract (so
    no ``errors`` capability); ``record_error`` exists only to show on the
    timeline a runtime that calls it anyway."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    @property
    def capabilities(self) -> frozenset[str]:
        """No optional capability at all."""
        return frozenset()

    def append(self, thread_id: str, batch: Sequence[Message]) -> object:
        """Delegates to the inner store."""
        return self._inner.append(thread_id, batch)  # type: ignore[attr-defined]

    def messages(self, thread_id: str, limit: int | None = None) -> object:
        """Delegates to the inner store."""
        return self._inner.messages(thread_id, limit)  # type: ignore[attr-defined]

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """Not offered: a runtime that calls it anyway is seen on the timeline."""
        raise StoreError("this store does not keep error records")


# -- reading an observation -----------------------------------------------------------


def store_calls(observation: Mapping[str, Any], name: str, thread: str) -> list[dict[str, Any]]:
    return [
        e for e in observation["timeline"]
        if e["kind"] == "store" and e["name"] == name and e.get("args", [None])[0] == thread
    ]


def appended_batches(observation: Mapping[str, Any], thread: str) -> list[list[dict[str, Any]]]:
    """The batches the store accepted for ``thread``, in order (from the timeline)."""
    return [
        list(e["args"][1]) for e in store_calls(observation, "append", thread)
        if "raised" not in e
    ]


def appended_messages(observation: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every message appended to the scenario's thread, in append order."""
    return [m for b in appended_batches(observation, thread_of(observation)) for m in b]


def roles_of(batches: list[list[dict[str, Any]]]) -> str:
    return batches_text([[m["role"] for m in batch] for batch in batches])


def run_of(observation: Mapping[str, Any], number: int) -> dict[str, Any]:
    runs = observation.get("runs") or []
    if len(runs) < number:
        raise Mismatch(f"save-policy run {number}", f"at least {number} runs", f"{len(runs)} runs")
    run: dict[str, Any] = runs[number - 1]
    return run


def run_entries(observation: Mapping[str, Any], number: int) -> list[dict[str, Any]]:
    """The timeline entries of run ``number``, as the kit observed them: the runs
    are executed one after another and each ends with its ``outcome`` event (what
    its caller is told), so run n spans the entries after run n-1's outcome up to
    its own. The runtime's own account of its runs is never read."""
    entries = list(observation["timeline"])[int(observation.get("runtime_from", 0)):]
    ends = [i for i, e in enumerate(entries) if e["kind"] == "event" and e["name"] == "outcome"]
    start = ends[number - 2] + 1 if 1 < number <= len(ends) + 1 else 0
    end = ends[number - 1] + 1 if number <= len(ends) else len(entries)
    if number > len(ends) + 1:
        return []
    return entries[start:end]


def model_requests(observation: Mapping[str, Any], number: int) -> list[Any]:
    """What the kit's fake model was sent at each call of run ``number`` (retries
    included), from the timeline."""
    return [e.get("request") for e in run_entries(observation, number) if e["kind"] == "model"]


def sent_messages(request: Any) -> list[tuple[str, str]]:
    """The (role, text) pairs of a model request's ``messages``, approval answers
    left out and a denied call's result read by its parts
    (:mod:`memconform.approvals`)."""
    messages = request.get("messages") if isinstance(request, Mapping) else None
    if not isinstance(messages, list):
        raise Mismatch("what the model was sent", "a request with a list of messages",
                       repr(request)[:300])
    shown = [m for m in messages if isinstance(m, Mapping)]
    denied = denied_calls(shown)
    return [(str(m.get("role")), compared_text(m, denied)) for m in shown_to_model(shown)]


CANCELLATION = "cancellation"
"""How the scenarios name the error of a cancelled run: document 000 names no
cancellation error, and each runtime throws its own (``RunCancelledError`` in
the reference, ``AgentRunCancelledError`` in Anvia 1.0, ``PromptCancelledError``
on its ``main`` line)."""


def error_kind(run: Mapping[str, Any], error: Any) -> str | None:
    """``error``'s type as the scenarios compare it, :data:`CANCELLATION` for any
    named error of a run the caller was told was cancelled."""
    if not isinstance(error, Mapping):
        return None
    if run.get("outcome") == "cancelled" and error.get("type"):
        return CANCELLATION
    kind = error.get("type")
    return None if kind is None else str(kind)


def thread_of(observation: Mapping[str, Any]) -> str:
    return str(observation["thread_under_test"])


def has_tool_call(message: Mapping[str, Any]) -> bool:
    return any(
        isinstance(p, Mapping) and p.get("type") == "tool_call" for p in message.get("parts", [])
    )


def error_records(observation: Mapping[str, Any]) -> list[dict[str, Any]]:
    return store_calls(observation, "record_error", thread_of(observation))


@pytest.fixture
def sp_proxies(raw_store: object, store: RecordingStore) -> Iterator[Callable[..., RecordingStore]]:
    """Makes extra recording proxies (fresh timelines) and closes them at the end."""
    made: list[RecordingStore] = []

    def make(inner: object | None = None) -> RecordingStore:
        proxy = RecordingStore(raw_store if inner is None else inner, Timeline(),
                               timeout=store.timeout, hangs=store.hangs)
        made.append(proxy)
        return proxy

    yield make
    for proxy in made:
        proxy.close()


def expand(text: str) -> str:
    return {"<prompt>": PROMPT, "<answer>": ANSWER}.get(text, text)


def read_thread(store: RecordingStore, thread: str) -> list[Message]:
    try:
        return store.messages(thread)
    except AdapterContractError:
        raise
    except Exception as exc:
        raise AdapterContractError("messages", f"raised where success is required: {exc}") from exc
