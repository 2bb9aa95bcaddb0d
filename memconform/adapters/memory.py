"""``memory://``: the in-process reference store.

It keeps every promise that makes sense inside one process and declares every
capability except ``durable`` and ``concurrent-writers``. All values are copied
on the way in and out (deep copies: a returned message's ``metadata`` or
``parts`` can be changed freely), so callers can never change what is stored.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from copy import deepcopy

from memconform.contract import (
    Capability,
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
    check_limit,
    damage_index,
)
from memconform.harness.faults import batch_row_pause
from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = ["MemoryStore", "check_text"]


def _copied(value: object) -> object:
    """A deep copy of plain JSON data (dicts, lists, tuples and scalars), made
    without :func:`copy.deepcopy`'s bookkeeping; anything else is deep-copied."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    if type(value) is list:
        return [_copied(v) for v in value]
    if type(value) is tuple:
        return tuple(_copied(v) for v in value)
    return deepcopy(value)


def _copies(messages: Sequence[Message]) -> list[Message]:
    """Copies of ``messages`` that share nothing mutable with them."""
    copies = []
    for message in messages:
        twin = copy.copy(message)
        object.__setattr__(twin, "parts", _copied(message.parts))
        object.__setattr__(twin, "metadata", _copied(message.metadata))
        copies.append(twin)
    return copies


def check_text(text: str) -> None:
    """Raise ``UnsupportedValueError`` for text no store can keep exactly
    (lone surrogates cannot be encoded as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnsupportedValueError(
            f"text holds a lone surrogate at index {exc.start}; it cannot be stored exactly"
        ) from None


def _check_batch(batch: Sequence[Message], stored_ids: set[str], *, text: bool = True) -> None:
    seen: set[str] = set()
    for message in batch:
        if message.id in stored_ids or message.id in seen:
            raise DuplicateIdError(f"message id {message.id!r} is already in the thread")
        seen.add(message.id)
        if text:
            check_text(message.text)


class MemoryStore:
    """A thread-safe in-process store; see the Store contract for each method.

    It refuses message text holding a lone surrogate, as a UTF-8 store must.
    With ``keep_lone_surrogates`` it keeps such text exactly instead, as a store
    of JSON text can (the rule accepts either); the properties use that form as
    the reference when the store under test kept one.
    """

    def __init__(self, *, keep_lone_surrogates: bool = False) -> None:
        self._keep_lone_surrogates = keep_lone_surrogates
        self._lock = threading.Lock()
        self._messages: dict[str, list[Message]] = {}
        self._errors: dict[str, list[ErrorRecord]] = {}
        self._records: list[TurnRecord] = []
        self._state: dict[tuple[str, str], StateEntry] = {}
        self._facts: dict[tuple[str, str], Fact] = {}
        self._damaged: dict[str, set[str]] = {}

    @property
    def capabilities(self) -> frozenset[str]:
        """Everything but ``durable``, ``concurrent-writers`` and ``atomic-batch``:
        nothing outlives the process, so there is no batch a killed writer could
        leave half-written for another process to find (ST-034). A batch that
        fails in the middle still leaves nothing (ST-016, owed by every store)."""
        return frozenset(
            {
                Capability.COMMIT_FLAGS,
                Capability.ERRORS,
                Capability.TURN_RECORDS,
                Capability.STATE,
                Capability.KNOWLEDGE,
            }
        )

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        """See :meth:`memconform.contract.Store.append`."""
        batch = _copies(list(batch))
        with self._lock:
            stored = self._messages.setdefault(thread_id, [])
            _check_batch(batch, {m.id for m in stored}, text=not self._keep_lone_surrogates)
            staged = list(stored)
            for message in batch:
                batch_row_pause()  # the kit's fault point: a failure here stores nothing
                staged.append(message)
            stored[:] = staged

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """See :meth:`memconform.contract.CommitFlagsStore.messages`."""
        check_limit(limit)
        with self._lock:
            visible = [
                m for m in self._messages.get(thread_id, []) if include_uncommitted or m.committed
            ]
        if limit is not None:
            visible = visible[max(0, len(visible) - limit) :] if limit else []
        damaged = [m.id for m in visible if m.id in self._damaged.get(thread_id, ())]
        if damaged:
            raise StoreError(
                f"message {damaged[0]!r} of thread {thread_id!r} is damaged and cannot be read"
            )
        return _copies(visible)

    def damage(self, thread_id: str) -> None:
        """The optional hook (see :class:`memconform.contract.DamageHook`):
        the middle message of the thread is marked unreadable; a read that
        reaches it raises ``StoreError``, as a store failing to decode a row does."""
        with self._lock:
            stored = self._messages.get(thread_id, [])
            target = stored[damage_index(len(stored))].id
            self._damaged.setdefault(thread_id, set()).add(target)

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """See :meth:`memconform.contract.CommitFlagsStore.set_committed`."""
        with self._lock:
            stored = self._messages.get(thread_id, [])
            index = {m.id: i for i, m in enumerate(stored)}
            missing = [i for i in message_ids if i not in index]
            if missing:
                raise KeyError(f"unknown message ids in thread {thread_id!r}: {missing}")
            for message_id in message_ids:
                i = index[message_id]
                old = stored[i]
                stored[i] = Message(**{**old.__dict__, "committed": committed})

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """See :meth:`memconform.contract.ErrorsStore.record_error`."""
        with self._lock:
            self._errors.setdefault(thread_id, []).append(deepcopy(record))

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        """See :meth:`memconform.contract.ErrorsStore.errors`."""
        with self._lock:
            return deepcopy(self._errors.get(thread_id, []))

    def append_record(self, record: TurnRecord) -> None:
        """See :meth:`memconform.contract.TurnRecordsStore.append_record`."""
        with self._lock:
            self._records.append(deepcopy(record))

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        """See :meth:`memconform.contract.TurnRecordsStore.records`."""
        with self._lock:
            return deepcopy(
                [r for r in self._records if thread_id is None or r.thread_id == thread_id]
            )

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        """See :meth:`memconform.contract.StateStore.read_state`."""
        with self._lock:
            return deepcopy(self._state.get((scope, key)))

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        """See :meth:`memconform.contract.StateStore.write_state`."""
        with self._lock:
            current = self._state.get((scope, key))
            current_version = current.version if current else None
            if current_version != expected_version:
                raise ConflictError(
                    f"state {scope}/{key}: expected version {expected_version}, "
                    f"stored version is {current_version}"
                )
            entry = StateEntry(key, deepcopy(value), (current_version or 0) + 1)
            self._state[(scope, key)] = entry
            return deepcopy(entry)

    def put_fact(self, scope: str, fact: Fact) -> None:
        """See :meth:`memconform.contract.KnowledgeStore.put_fact`."""
        check_text(fact.statement)
        with self._lock:
            self._facts[(scope, fact.subject)] = deepcopy(fact)

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        """See :meth:`memconform.contract.KnowledgeStore.get_fact`."""
        with self._lock:
            return deepcopy(self._facts.get((scope, subject)))

    def facts(self, scope: str) -> list[Fact]:
        """See :meth:`memconform.contract.KnowledgeStore.facts`."""
        with self._lock:
            return deepcopy(
                sorted(
                    (f for (s, _), f in self._facts.items() if s == scope),
                    key=lambda f: f.subject,
                )
            )

    def forget(self, scope: str, subject: str) -> bool:
        """See :meth:`memconform.contract.KnowledgeStore.forget`."""
        with self._lock:
            return self._facts.pop((scope, subject), None) is not None


def open_memory(url: str) -> MemoryStore:
    """``memory://`` (anything after the scheme is ignored): a new empty store."""
    return MemoryStore()
