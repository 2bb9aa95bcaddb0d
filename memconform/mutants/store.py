"""Store mutants: each wraps a working store and breaks one promise of the
``store`` profile, so that every check of that profile is shown able to fail.

Every wrapper delegates what it does not break. The multi-process mutants
(``process-scoped-threads``, ``split-batch``) are killed by the scenarios of
``features/store/processes.feature`` when the suite runs on a store other
processes can open (SQLite); their child processes apply the same mutant.
"""

from __future__ import annotations

import contextlib
import copy
import os
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from memconform.contract import DuplicateIdError
from memconform.harness.wrapper import StoreWrapper
from memconform.mutants import Mutant, store_mutant
from memconform.mutants.store_damage import DamagedDefaulted, DamagedLast, DamagedSkipped
from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = ["MUTANTS"]


class _Wrapper(StoreWrapper):
    """A store wrapper with a helper that reads a thread as a list."""

    def _messages(
        self, thread_id: str, limit: int | None = None, include_uncommitted: bool = False
    ) -> list[Message]:
        if include_uncommitted:
            return list(self.inner.messages(thread_id, limit, include_uncommitted=True))
        return list(self.inner.messages(thread_id, limit))


class WindowOldest(_Wrapper):
    """A window returns the oldest N messages instead of the newest N."""

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        every = self._messages(thread_id, None, **kw)
        if limit is not None and limit < 0:
            raise ValueError("negative limit")
        return every if limit is None else every[:limit]


class SplitBatch(_Wrapper):
    """Writes a batch one message at a time, so a failure or a kill in the middle
    leaves the earlier messages stored."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        for message in batch:
            self.inner.append(thread_id, [message])


def _caller_time(message: Message) -> str:
    meta = message.metadata
    for key in ("timestamp", "created_at", "ts"):
        if key in meta:
            return str(meta[key])
    return ""


class CallerTimestampOrder(_Wrapper):
    """Orders messages by the caller's timestamp metadata instead of append order."""

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        if limit is not None and limit < 0:
            raise ValueError("negative limit")
        every = sorted(self._messages(thread_id, None, **kw), key=_caller_time)
        if limit is None:
            return every
        return every[len(every) - limit :] if limit else []


class CappedAt100(_Wrapper):
    """An unlimited read silently returns at most the first 100 messages."""

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        got = self._messages(thread_id, limit, **kw)
        return got[:100] if limit is None else got


class LiveList(_Wrapper):
    """Reads hand out the store's own cached list and message objects."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._cache: dict[tuple[str, int | None, bool], list[Message]] = {}

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(thread_id, batch)
        self._cache = {k: v for k, v in self._cache.items() if k[0] != thread_id}

    def set_committed(self, thread_id: str, ids: Sequence[str], committed: bool) -> None:
        self.inner.set_committed(thread_id, ids, committed)
        self._cache = {k: v for k, v in self._cache.items() if k[0] != thread_id}

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        key = (thread_id, limit, include_uncommitted)
        if key not in self._cache:
            self._cache[key] = self._messages(thread_id, limit, include_uncommitted)
        return self._cache[key]


class KeepsCallerObjects(_Wrapper):
    """Keeps the caller's own objects (messages' metadata and parts, error records,
    turn records, state values, facts) instead of copies, as an in-memory store
    holding what it was given does: the caller changing them later changes what
    is stored."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._kept_messages: dict[tuple[str, str], Message] = {}
        self._kept_errors: dict[str, list[ErrorRecord]] = {}
        self._kept_records: dict[str, TurnRecord] = {}
        self._kept_state: dict[tuple[str, str], JSONValue] = {}
        self._kept_facts: dict[tuple[str, str], Fact] = {}

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(thread_id, batch)
        for message in batch:
            self._kept_messages[(thread_id, message.id)] = message

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        out = []
        for stored in self._messages(thread_id, limit, **kw):
            kept = self._kept_messages.get((thread_id, stored.id), stored)
            out.append(
                replace(
                    stored, parts=copy.deepcopy(kept.parts), metadata=copy.deepcopy(kept.metadata)
                )
            )
        return out

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        self.inner.record_error(thread_id, record)
        self._kept_errors.setdefault(thread_id, []).append(record)

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        stored = list(self.inner.errors(thread_id))
        kept = self._kept_errors.get(thread_id, [])
        return copy.deepcopy(kept) if len(kept) == len(stored) else stored

    def append_record(self, record: TurnRecord) -> None:
        self.inner.append_record(record)
        self._kept_records[record.turn_id + "@" + record.thread_id] = record

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        return [
            copy.deepcopy(self._kept_records.get(r.turn_id + "@" + r.thread_id, r))
            for r in self.inner.records(thread_id)
        ]

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        entry = self.inner.write_state(scope, key, value, expected)
        self._kept_state[(scope, key)] = value
        return entry

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        entry: StateEntry | None = self.inner.read_state(scope, key)
        if entry is None or (scope, key) not in self._kept_state:
            return entry
        return replace(entry, value=copy.deepcopy(self._kept_state[(scope, key)]))

    def put_fact(self, scope: str, fact: Fact) -> None:
        self.inner.put_fact(scope, fact)
        self._kept_facts[(scope, fact.subject)] = fact

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        fact: Fact | None = self.inner.get_fact(scope, subject)
        return None if fact is None else copy.deepcopy(self._kept_facts.get((scope, subject), fact))

    def facts(self, scope: str) -> list[Fact]:
        return [
            copy.deepcopy(self._kept_facts.get((scope, f.subject), f))
            for f in self.inner.facts(scope)
        ]


class SharedReads(_Wrapper):
    """Error records, turn records, state entries and facts are served from a cache
    of the store's own objects, so a caller changing what it read changes what the
    next read returns (messages are left alone: ``store-live-list`` breaks those)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._cache: dict[tuple[Any, ...], Any] = {}

    def _cached(self, key: tuple[Any, ...], read: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = read()
        return self._cache[key]

    def _written(self, *args: Any) -> None:
        self._cache.clear()

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        self.inner.record_error(thread_id, record)
        self._written()

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        return self._cached(  # type: ignore[no-any-return]
            ("errors", thread_id), lambda: list(self.inner.errors(thread_id))
        )

    def append_record(self, record: TurnRecord) -> None:
        self.inner.append_record(record)
        self._written()

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        return self._cached(  # type: ignore[no-any-return]
            ("records", thread_id), lambda: list(self.inner.records(thread_id))
        )

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        entry = self.inner.write_state(scope, key, value, expected)
        self._written()
        return entry

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        return self._cached(  # type: ignore[no-any-return]
            ("state", scope, key), lambda: self.inner.read_state(scope, key)
        )

    def put_fact(self, scope: str, fact: Fact) -> None:
        self.inner.put_fact(scope, fact)
        self._written()

    def forget(self, scope: str, subject: str) -> bool:
        self._written()
        return bool(self.inner.forget(scope, subject))

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        return self._cached(  # type: ignore[no-any-return]
            ("fact", scope, subject), lambda: self.inner.get_fact(scope, subject)
        )

    def facts(self, scope: str) -> list[Fact]:
        return self._cached(  # type: ignore[no-any-return]
            ("facts", scope), lambda: list(self.inner.facts(scope))
        )


class DuplicatesAccepted(_Wrapper):
    """A batch repeating an id is accepted: the repeats are dropped silently."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        stored = {
            m.id for m in self._messages(thread_id, None, "commit-flags" in self.capabilities)
        }
        fresh: list[Message] = []
        for message in batch:
            if message.id not in stored:
                stored.add(message.id)
                fresh.append(message)
        with contextlib.suppress(DuplicateIdError):
            self.inner.append(thread_id, fresh)


class HiddenIdsReused(_Wrapper):
    """The duplicate check looks at committed messages only: a batch repeating
    the id of an uncommitted message (a failed run's, retried) is accepted, the
    repeat folded into the hidden message."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        if "commit-flags" not in self.capabilities:
            self.inner.append(thread_id, batch)
            return
        visible = {m.id for m in self._messages(thread_id)}
        hidden = {m.id for m in self._messages(thread_id, None, True)} - visible
        seen: set[str] = set()
        for message in batch:
            if message.id in visible or message.id in seen:
                raise DuplicateIdError(f"message id {message.id!r} is already stored")
            seen.add(message.id)
        self.inner.append(thread_id, [m for m in batch if m.id not in hidden])


class NegativeLimitAccepted(_Wrapper):
    """A negative limit is taken as a Python slice instead of being refused."""

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        if limit is not None and limit < 0:
            return self._messages(thread_id, None, **kw)[-limit:]
        return self._messages(thread_id, limit, **kw)


class ZeroMeansAll(_Wrapper):
    """A window of zero returns every message."""

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        return self._messages(thread_id, None if limit == 0 else limit, **kw)


class UnknownThreadRaises(_Wrapper):
    """Reading a thread never written raises KeyError."""

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        got = self._messages(thread_id, limit, **kw)
        if not got and not self._messages(thread_id, None, bool(kw)):
            raise KeyError(f"no thread {thread_id!r}")
        return got


class EmptyBatchRefused(_Wrapper):
    """An empty batch is refused with ValueError."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        if not batch:
            raise ValueError("empty batch")
        self.inner.append(thread_id, batch)


class DropsStructure(_Wrapper):
    """Parts, metadata and turn ids are dropped on write."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(
            thread_id, [replace(m, parts=(), metadata={}, turn_id=None) for m in batch]
        )


class TextNormalised(_Wrapper):
    """Text is NFC-normalised and stripped on write."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(
            thread_id,
            [replace(m, text=unicodedata.normalize("NFC", m.text).strip()) for m in batch],
        )


class SurrogatesReplaced(_Wrapper):
    """Text the store cannot hold is silently altered (lone surrogates become '?')."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        def clean(text: str) -> str:
            return text.encode("utf-8", "replace").decode("utf-8")

        self.inner.append(thread_id, [replace(m, text=clean(m.text)) for m in batch])


def _coerced(value: JSONValue) -> JSONValue:
    """``value`` with booleans as 0 and 1 and whole floats as integers."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _coerced(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_coerced(v) for v in value]
    return value


class TypeCoerced(_Wrapper):
    """JSON values in parts and metadata are coerced on write: booleans become 0 and
    1 and whole floats integers (a column of tinyint, a JSON layer printing 1.0 as 1);
    they still compare equal with Python's ``==``."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(
            thread_id,
            [
                replace(
                    m,
                    parts=tuple(_coerced(p) for p in m.parts),
                    metadata=_coerced(dict(m.metadata)),
                )
                for m in batch
            ],
        )


class TextCapped(_Wrapper):
    """Text is kept in a column of 65,535 bytes and cut silently to fit (MySQL's
    TEXT outside strict mode), at a character boundary."""

    LIMIT = 65_535

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        def cut(text: str) -> str:
            data = text.encode("utf-8", "surrogatepass")
            if len(data) <= self.LIMIT:
                return text
            return data[: self.LIMIT].decode("utf-8", "ignore")

        self.inner.append(thread_id, [replace(m, text=cut(m.text)) for m in batch])


class BatchTruncated(_Wrapper):
    """A batch longer than 100 messages is cut silently to its first 100 (an API's
    limit on one write, such as a transactional batch of 100 operations)."""

    LIMIT = 100

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(thread_id, list(batch)[: self.LIMIT])


class ErrorsLeak(_Wrapper):
    """Recording an error also writes it into the transcript."""

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        self.inner.record_error(thread_id, record)
        text = f"{record.error.get('type')}: {record.error.get('message')}"
        self.inner.append(
            thread_id, [Message(id=f"error-{record.run_id}", role="system", text=text)]
        )


class ErrorsReversed(_Wrapper):
    """Error records come back newest first."""

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        return list(reversed(self.inner.errors(thread_id)))


class UncommittedVisible(_Wrapper):
    """Uncommitted messages show up in plain reads."""

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        return self._messages(thread_id, limit, True)


class WindowCountsHidden(_Wrapper):
    """The window is cut before hidden messages are removed, so it shrinks."""

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        got = self._messages(thread_id, limit, True)
        return got if include_uncommitted else [m for m in got if m.committed]


class FlagsPartial(_Wrapper):
    """Unknown ids in a commit-flag change are ignored; the known ones change."""

    def set_committed(self, thread_id: str, ids: Sequence[str], committed: bool) -> None:
        known = {m.id for m in self._messages(thread_id, None, True)}
        self.inner.set_committed(thread_id, [i for i in ids if i in known], committed)


class ThreadLeak(_Wrapper):
    """Threads of one scenario share storage (the last '-part' of the id is ignored)."""

    @staticmethod
    def _key(thread_id: str) -> str:
        return thread_id.rsplit("-", 1)[0]

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(self._key(thread_id), batch)

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        return self._messages(self._key(thread_id), limit, **kw)

    def set_committed(self, thread_id: str, ids: Sequence[str], committed: bool) -> None:
        self.inner.set_committed(self._key(thread_id), ids, committed)

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        self.inner.record_error(self._key(thread_id), record)

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        return list(self.inner.errors(self._key(thread_id)))

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        return list(self.inner.records(None))


class ScopeLeak(_Wrapper):
    """Jobs and knowledge scopes of one scenario share storage."""

    @staticmethod
    def _key(scope: str) -> str:
        return scope.rsplit("-", 1)[0]

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        return self.inner.read_state(self._key(scope), key)  # type: ignore[no-any-return]

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        return self.inner.write_state(self._key(scope), key, value, expected)

    def put_fact(self, scope: str, fact: Fact) -> None:
        self.inner.put_fact(self._key(scope), fact)

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        return self.inner.get_fact(self._key(scope), subject)  # type: ignore[no-any-return]

    def facts(self, scope: str) -> list[Fact]:
        return list(self.inner.facts(self._key(scope)))

    def forget(self, scope: str, subject: str) -> bool:
        return bool(self.inner.forget(self._key(scope), subject))


class UsageFolded(_Wrapper):
    """A parent's turn record comes back with its children's usage added in."""

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        got = list(self.inner.records(thread_id))
        out = []
        for record in got:
            usage = dict(record.usage)
            for child in got:
                if child.parent_turn_id == record.turn_id:
                    for k, v in child.usage.items():
                        if isinstance(v, int) and isinstance(usage.get(k), int):
                            usage[k] = usage[k] + v
            out.append(replace(record, usage=usage))
        return out


class CasIgnoresVersion(_Wrapper):
    """A state write succeeds whatever version it expected."""

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        current = self.inner.read_state(scope, key)
        return self.inner.write_state(
            scope, key, value, None if current is None else current.version
        )


class VersionsFromZero(_Wrapper):
    """State versions are reported one lower: the first write is version 0."""

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        entry = self.inner.read_state(scope, key)
        return None if entry is None else replace(entry, version=entry.version - 1)

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        entry = self.inner.write_state(
            scope, key, value, None if expected is None else expected + 1
        )
        return replace(entry, version=entry.version - 1)


class FactsAccumulate(_Wrapper):
    """Facts about one subject pile up instead of superseding each other."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._all: dict[str, list[Fact]] = {}

    def put_fact(self, scope: str, fact: Fact) -> None:
        self._all.setdefault(scope, []).append(fact)
        if self.inner.get_fact(scope, fact.subject) is None:
            self.inner.put_fact(scope, fact)

    def facts(self, scope: str) -> list[Fact]:
        kept = [f for f in self._all.get(scope, []) if self.inner.get_fact(scope, f.subject)]
        return sorted(kept, key=lambda f: f.subject)


class ProvenanceLaundered(_Wrapper):
    """Facts are stored as trusted conclusions, whatever their provenance said."""

    def put_fact(self, scope: str, fact: Fact) -> None:
        self.inner.put_fact(scope, replace(fact, trust="trusted", origin="concluded"))


class ForgetNoop(_Wrapper):
    """Forgetting answers true but deletes nothing."""

    def forget(self, scope: str, subject: str) -> bool:
        return self.inner.get_fact(scope, subject) is not None


class ProcessScopedThreads(_Wrapper):
    """Each process sees only the threads it wrote itself, as a process-local
    cache would: nothing survives into a fresh process."""

    @staticmethod
    def _key(thread_id: str) -> str:
        return f"{thread_id}@{os.getpid()}"

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(self._key(thread_id), batch)

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        return self._messages(self._key(thread_id), limit, **kw)

    def set_committed(self, thread_id: str, ids: Sequence[str], committed: bool) -> None:
        self.inner.set_committed(self._key(thread_id), ids, committed)


class _RenamedNames(_Wrapper):
    """Keeps every thread and scope under ``name(id)`` instead of the id itself, and
    checks message ids for repeats after ``name`` too: a store whose names pass
    through a lossy step (a collation, a normalisation) on the way in."""

    @staticmethod
    def name(value: str) -> str:
        return value

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        key = self.name(thread_id)
        seen = {self.name(m.id) for m in self._messages(key, None, self._flags)}
        for message in batch:
            folded = self.name(message.id)
            if folded in seen:
                raise DuplicateIdError(f"message id {message.id!r} is already stored")
            seen.add(folded)
        self.inner.append(key, batch)

    @property
    def _flags(self) -> bool:
        return "commit-flags" in self.capabilities

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        return self._messages(self.name(thread_id), limit, **kw)

    def set_committed(self, thread_id: str, ids: Sequence[str], committed: bool) -> None:
        self.inner.set_committed(self.name(thread_id), ids, committed)

    def damage(self, thread_id: str) -> None:
        self.inner.damage(self.name(thread_id))

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        self.inner.record_error(self.name(thread_id), record)

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        return list(self.inner.errors(self.name(thread_id)))

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        return self.inner.read_state(self.name(scope), key)  # type: ignore[no-any-return]

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        return self.inner.write_state(self.name(scope), key, value, expected)

    def put_fact(self, scope: str, fact: Fact) -> None:
        self.inner.put_fact(self.name(scope), fact)

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        return self.inner.get_fact(self.name(scope), subject)  # type: ignore[no-any-return]

    def facts(self, scope: str) -> list[Fact]:
        return list(self.inner.facts(self.name(scope)))

    def forget(self, scope: str, subject: str) -> bool:
        return bool(self.inner.forget(self.name(scope), subject))


class CaseFoldedNames(_RenamedNames):
    """Thread ids, message ids and scopes compare ignoring letter case and trailing
    spaces, as in a column with the default collation of SQL Server (or MySQL's
    older ones)."""

    @staticmethod
    def name(value: str) -> str:
        return value.rstrip(" ").casefold()


class NormalisedNames(_RenamedNames):
    """Thread ids, message ids and scopes are NFC-normalised on the way in, so two
    ids differing only in Unicode normalisation name one thread."""

    @staticmethod
    def name(value: str) -> str:
        return unicodedata.normalize("NFC", value)

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        super().append(thread_id, [replace(m, id=self.name(m.id)) for m in batch])


class EmptyNameDefaulted(_RenamedNames):
    """An empty thread id or scope is taken as ``"default"`` (``thread_id or
    "default"``, a fallback for callers that pass none), so the empty id and
    ``"default"`` name one thread."""

    @staticmethod
    def name(value: str) -> str:
        return value or "default"


class LimitCoerced(_Wrapper):
    """A window size is passed through ``int()``: ``2.5`` reads as 2 (and
    ``True`` as 1), where the contract refuses a fractional size."""

    def messages(self, thread_id: str, limit: Any = None, **kw: Any) -> list[Message]:
        return self._messages(thread_id, None if limit is None else int(limit), **kw)


class PrefixMatchedNames(_Wrapper):
    """Reading a thread or listing a knowledge scope matches by prefix (``LIKE 'id%'``,
    ``SCAN id*``): it also returns what is stored under every longer id it begins."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._threads: dict[str, None] = {}
        self._scopes: dict[str, None] = {}

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self.inner.append(thread_id, batch)
        self._threads[thread_id] = None

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        if limit is not None and limit < 0:
            raise ValueError("negative limit")
        matched = [t for t in self._threads if t.startswith(thread_id)] or [thread_id]
        every = [m for t in matched for m in self._messages(t, None, **kw)]
        if limit is None:
            return every
        return every[max(len(every) - limit, 0) :] if limit else []

    def put_fact(self, scope: str, fact: Fact) -> None:
        self.inner.put_fact(scope, fact)
        self._scopes[scope] = None

    def facts(self, scope: str) -> list[Fact]:
        matched = [s for s in self._scopes if s.startswith(scope)] or [scope]
        every = [f for s in matched for f in self.inner.facts(s)]
        return sorted(every, key=lambda f: f.subject)


MUTANTS: list[Mutant] = [
    store_mutant("store-window-oldest", WindowOldest, "ST-003"),
    store_mutant("store-split-batch", SplitBatch, "ST-001 ST-016 ST-034"),
    store_mutant("store-caller-timestamp-order", CallerTimestampOrder, "ST-002"),
    store_mutant("store-capped-at-100", CappedAt100, "ST-006"),
    store_mutant("store-live-list", LiveList, "ST-007"),
    store_mutant("store-keeps-caller-objects", KeepsCallerObjects, "ST-007"),
    store_mutant("store-shared-reads", SharedReads, "ST-007"),
    store_mutant("store-duplicates-accepted", DuplicatesAccepted, "ST-010 ST-011"),
    store_mutant("store-hidden-ids-reused", HiddenIdsReused, "ST-010"),
    store_mutant("store-negative-limit-accepted", NegativeLimitAccepted, "ST-005"),
    store_mutant("store-zero-means-all", ZeroMeansAll, "ST-004"),
    store_mutant("store-unknown-thread-raises", UnknownThreadRaises, "ST-008"),
    store_mutant("store-empty-batch-refused", EmptyBatchRefused, "ST-012"),
    store_mutant("store-drops-structure", DropsStructure, "ST-013"),
    store_mutant("store-text-normalised", TextNormalised, "ST-014"),
    store_mutant("store-surrogates-replaced", SurrogatesReplaced, "ST-015"),
    store_mutant("store-type-coerced", TypeCoerced, "ST-013"),
    store_mutant("store-text-capped", TextCapped, "ST-014"),
    store_mutant("store-batch-truncated", BatchTruncated, "ST-001"),
    store_mutant("store-errors-leak", ErrorsLeak, "ST-021"),
    store_mutant("store-errors-reversed", ErrorsReversed, "ST-022"),
    store_mutant("store-uncommitted-visible", UncommittedVisible, "ST-017 ST-018"),
    store_mutant("store-window-counts-hidden", WindowCountsHidden, "ST-019"),
    store_mutant("store-flags-partial", FlagsPartial, "ST-020"),
    store_mutant("store-thread-leak", ThreadLeak, "ST-009 ST-022 ST-024"),
    store_mutant("store-usage-folded", UsageFolded, "ST-023"),
    store_mutant("store-cas-ignores-version", CasIgnoresVersion, "ST-026"),
    store_mutant("store-versions-from-zero", VersionsFromZero, "ST-025"),
    store_mutant("store-scope-leak", ScopeLeak, "ST-027 ST-031"),
    store_mutant("store-facts-accumulate", FactsAccumulate, "ST-028"),
    store_mutant("store-provenance-laundered", ProvenanceLaundered, "ST-029"),
    store_mutant("store-forget-noop", ForgetNoop, "ST-030"),
    store_mutant("store-process-scoped-threads", ProcessScopedThreads, "ST-032 ST-033"),
    store_mutant("store-prefix-matched-names", PrefixMatchedNames, "ST-035"),
    store_mutant("store-case-folded-names", CaseFoldedNames, "ST-035"),
    store_mutant("store-normalised-names", NormalisedNames, "ST-035"),
    store_mutant("store-empty-name-defaulted", EmptyNameDefaulted, "ST-035"),
    store_mutant("store-limit-coerced", LimitCoerced, "ST-005"),
    store_mutant("store-damaged-skipped", DamagedSkipped, "ST-037"),
    store_mutant("store-damaged-defaulted", DamagedDefaulted, "ST-037"),
    store_mutant("store-damaged-last", DamagedLast, "ST-037"),
]
"""Every store mutant; ``kills`` lists the rules whose scenarios reject it."""

MULTI_PROCESS_MUTANTS = frozenset({"store-split-batch", "store-process-scoped-threads"})
"""Mutants whose kills include rules checked with several processes: run them on SQLite."""
