"""Store mutants whose bug shows only beyond the values and counts a lazy test
sends: past version 9, past 50 facts, past 99 rows in a batch, past 500 rows
of a thread holding hidden ones, on a boolean or a whole float. Each is a
realistic bug of an SQL or key-value store; the sweep of the legal space
(:mod:`memconform.properties.sweep`) kills every one of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memconform.contract import ConflictError
from memconform.harness.wrapper import StoreWrapper
from memconform.mutants import Mutant, store_mutant
from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = ["MUTANTS"]


class ErrorsByRecordedAt(StoreWrapper):
    """Error records come back sorted by the caller's ``recorded_at`` (missing
    ones first), not in the order they were recorded."""

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        every = list(self.inner.errors(thread_id))
        return sorted(every, key=lambda r: (r.recorded_at is not None, r.recorded_at or ""))


class VersionsComparedAsText(StoreWrapper):
    """State versions are kept in a text column: the newest entry of a key is the
    one whose version sorts last as text, so after version 9 a key is stuck there
    (``"9" > "10"``) and a write naming version 10 is refused."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._log: dict[tuple[str, str], list[StateEntry]] = {}

    def _newest(self, scope: str, key: str) -> StateEntry | None:
        entries = self._log.get((scope, key), [])
        return max(entries, key=lambda e: str(e.version)) if entries else None

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        return self._newest(scope, key)

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        newest = self._newest(scope, key)
        if (newest.version if newest else None) != expected_version:
            raise ConflictError(f"{key!r} in {scope!r} is not at version {expected_version}")
        entry = StateEntry(key, value, (newest.version if newest else 0) + 1)
        self._log.setdefault((scope, key), []).append(entry)
        return entry


class ForgetNewestOnly(StoreWrapper):
    """Facts are an append-only log and ``forget`` deletes the newest row only:
    a fact that was superseded comes back when its successor is forgotten."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._older: dict[tuple[str, str], list[Fact]] = {}

    def put_fact(self, scope: str, fact: Fact) -> None:
        current = self.inner.get_fact(scope, fact.subject)
        if current is not None:
            self._older.setdefault((scope, fact.subject), []).append(current)
        self.inner.put_fact(scope, fact)

    def forget(self, scope: str, subject: str) -> bool:
        found: bool = self.inner.forget(scope, subject)
        older = self._older.get((scope, subject))
        if found and older:
            self.inner.put_fact(scope, older.pop())
        return found


def _whole_floats_as_ints(value: JSONValue) -> JSONValue:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_floats_as_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_floats_as_ints(v) for v in value]
    return value


class StateNumericAffinity(StoreWrapper):
    """State values go through a column of numeric affinity: a whole float comes
    back as an integer (``1.0`` as ``1``) and a boolean as ``1`` or ``0``."""

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        entry: StateEntry | None = self.inner.read_state(scope, key)
        if entry is None:
            return None
        value = int(entry.value) if isinstance(entry.value, bool) else entry.value
        return StateEntry(entry.key, _whole_floats_as_ints(value), entry.version)


class ChunkedCommits(StoreWrapper):
    """A batch is inserted in chunks of 99 rows (999 SQL variables), each committed
    on its own: a refusal in a later chunk (a repeated id) leaves the earlier
    chunks stored."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        rows = list(batch)
        if len(rows) <= 99:
            self.inner.append(thread_id, rows)
            return
        for start in range(0, len(rows), 99):
            self.inner.append(thread_id, rows[start : start + 99])


class FactsFirstPage(StoreWrapper):
    """Listing a scope returns its first page of 50 facts and drops the rest."""

    def facts(self, scope: str) -> list[Fact]:
        return list(self.inner.facts(scope))[:50]


def _recoded(value: Any) -> Any:
    """``value`` as a script runtime's JSON codec gives it back: every number a
    double printed with 14 significant digits, an empty list an empty object."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        shown = float(f"{float(value):.14g}")
        return int(shown) if shown.is_integer() and abs(shown) < 2**53 else shown
    if isinstance(value, Mapping):
        return {k: _recoded(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_recoded(v) for v in value] if value else {}
    return value


class FlagChangeRecodes(StoreWrapper):
    """Changing a commit flag rewrites each named message through a scripting
    runtime's JSON codec (a Lua script on the server): its numbers come back
    rounded to 14 digits and its empty lists as empty objects."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._rewritten: set[tuple[str, str]] = set()

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        self.inner.set_committed(thread_id, message_ids, committed)
        self._rewritten |= {(thread_id, i) for i in message_ids}

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        found = self.inner.messages(thread_id, limit, include_uncommitted=include_uncommitted)
        return [m if (thread_id, m.id) not in self._rewritten else replace(
            m, parts=tuple(_recoded(list(m.parts))) if m.parts else (),
            metadata=_recoded(dict(m.metadata)) or {},
            round=None if m.round is None else _recoded(m.round)) for m in found]


class ErrorMessagesByReference(StoreWrapper):
    """An error record keeps its messages by id and fills them in from the thread
    when read (a message the thread holds is stored once): the record then shows
    the thread's version of each message, not the one recorded."""

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        held = {m.id: m for m in self.inner.messages(thread_id, None, include_uncommitted=True)}
        return [replace(r, messages=tuple(held.get(m.id, m) for m in r.messages))
                for r in self.inner.errors(thread_id)]


class RecordsGroupedByThread(StoreWrapper):
    """Turn records are kept in one list per thread, and ``records()`` with no
    thread joins the lists thread after thread, not in append order."""

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        every = list(self.inner.records(thread_id))
        if thread_id is not None:
            return every
        order = list(dict.fromkeys(r.thread_id for r in every))
        return sorted(every, key=lambda r: order.index(r.thread_id))


class ForgetByTombstone(StoreWrapper):
    """``forget`` writes a tombstone and answers whether one could be written, so
    forgetting a subject already forgotten answers ``True`` again."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._tombstones: set[tuple[str, str]] = set()

    def put_fact(self, scope: str, fact: Fact) -> None:
        self.inner.put_fact(scope, fact)
        self._tombstones.discard((scope, fact.subject))

    def forget(self, scope: str, subject: str) -> bool:
        found = bool(self.inner.forget(scope, subject))
        if found:
            self._tombstones.add((scope, subject))
        return found or (scope, subject) in self._tombstones


class PagesDropHidden(StoreWrapper):
    """A read without a limit fetches the thread in pages of 500 rows, drops the
    uncommitted ones after fetching, and takes a page that comes back short as
    the last: one hidden message among the first 500 cuts off every later one."""

    PAGE = 500

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        if limit is not None or include_uncommitted:
            return list(self.inner.messages(thread_id, limit,
                                            include_uncommitted=include_uncommitted))
        every = list(self.inner.messages(thread_id, None, include_uncommitted=True))
        found: list[Message] = []
        for start in range(0, len(every), self.PAGE):
            page = [m for m in every[start:start + self.PAGE] if m.committed]
            found += page
            if len(page) < self.PAGE:
                break
        return found


class StateKeysJoined(StoreWrapper):
    """Working state is kept in one flat key space, each entry under
    ``"<scope>:<key>"``: scope ``a:b`` with key ``c`` and scope ``a`` with key
    ``b:c`` are one entry."""

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        found = self.inner.read_state("", f"{scope}:{key}")
        return None if found is None else replace(found, key=key)

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        written = self.inner.write_state("", f"{scope}:{key}", value, expected)
        return replace(written, key=key)


class FactsInUtf16Order(StoreWrapper):
    """Facts are listed in the order of their subjects' UTF-16 code units (the
    order of Java's, JavaScript's and SQL Server's string comparison): a
    subject beyond U+FFFF sorts before one between U+E000 and U+FFFF."""

    def facts(self, scope: str) -> list[Fact]:
        every = list(self.inner.facts(scope))
        return sorted(every, key=lambda f: f.subject.encode("utf-16-be"))


MUTANTS: list[Mutant] = [
    store_mutant("store-errors-by-recorded-at", ErrorsByRecordedAt, "ST-022"),
    store_mutant("store-versions-compared-as-text", VersionsComparedAsText, "ST-025 ST-026"),
    store_mutant("store-forget-newest-only", ForgetNewestOnly, "ST-030"),
    store_mutant("store-state-numeric-affinity", StateNumericAffinity, "ST-025"),
    store_mutant("store-chunked-commits", ChunkedCommits, "ST-010 ST-016"),
    store_mutant("store-facts-first-page", FactsFirstPage, "ST-028"),
    store_mutant("store-flag-change-recodes", FlagChangeRecodes, "ST-013 ST-017"),
    store_mutant("store-error-messages-by-reference", ErrorMessagesByReference, "ST-022"),
    store_mutant("store-records-grouped-by-thread", RecordsGroupedByThread, "ST-024"),
    store_mutant("store-forget-by-tombstone", ForgetByTombstone, "ST-030"),
    store_mutant("store-pages-drop-hidden", PagesDropHidden, "ST-019"),
    store_mutant("store-state-keys-joined", StateKeysJoined, "ST-027 ST-035"),
    store_mutant("store-facts-in-utf16-order", FactsInUtf16Order, "ST-028"),
]
"""Every legal-space store mutant; ``kills`` lists the rules the sweep charges."""
