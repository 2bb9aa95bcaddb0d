"""The Store contract: what a store implements to be certified.

A store is any object with the methods below; nothing is inherited. Each method
may be plain or ``async def``; the kit awaits what needs awaiting. Every sentence
of a method's docstring is a rule that a scenario of the ``store`` profile checks.

The required part is :class:`Store`. Each optional capability is its own small
Protocol; a store declares in ``capabilities`` the names it implements and keeps.

An adapter translates and never fixes. Where the library it wraps lacks an
operation a rule rests on (a window, a timestamp, an id) and the adapter does
it itself, the adapter says so in an optional ``provides`` attribute, a set of
:class:`Provision` names; a store adapter and a runtime adapter declare it the
same way. A rule whose checks rest on something the adapter provides is judged
``adapter-provided``, never ``pass``: the behaviour came from the adapter, not
from the library judged.

One optional hook is no capability and no promise: ``damage(thread_id)``
(:class:`DamageHook`) lets the kit damage a stored message in the store's own
storage, so that ST-037 can see what a read does with a row the store cannot
decode. A store without it is ``unsupported`` for that rule and nothing else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = [
    "CAPABILITY_METHODS",
    "Capability",
    "CommitFlagsStore",
    "ConflictError",
    "DamageHook",
    "DuplicateIdError",
    "ErrorsStore",
    "KnowledgeStore",
    "Provision",
    "StateStore",
    "Store",
    "StoreError",
    "TurnRecordsStore",
    "UnsupportedValueError",
    "check_limit",
    "damage_index",
    "provisions_of",
]


class Capability(StrEnum):
    """Names a store may declare. ``core`` is implied and never declared."""

    COMMIT_FLAGS = "commit-flags"
    ERRORS = "errors"
    TURN_RECORDS = "turn-records"
    STATE = "state"
    KNOWLEDGE = "knowledge"
    DURABLE = "durable"
    ATOMIC_BATCH = "atomic-batch"
    CONCURRENT_WRITERS = "concurrent-writers"


class Provision(StrEnum):
    """What an adapter may supply itself where its library lacks it. A rule's
    catalogue entry lists in ``rests_on`` the provisions its checks rest on.

    - ``window``: the adapter selects the newest N messages itself (the library
      has no window, or one the adapter does not use);
    - ``timestamps``: the adapter stamps each message's time itself, so the
      library never sees a caller's timestamp or round;
    - ``ids``: the adapter assigns, keeps or checks message ids itself
      (uniqueness, duplicate refusal, the id coming back);
    - ``run-ids``: a runtime adapter stamps the run id on what is stored;
    - ``rounds``: a runtime adapter counts and stamps the rounds itself;
    - ``turn-ids``: a runtime adapter makes the turn ids itself.
    """

    WINDOW = "window"
    TIMESTAMPS = "timestamps"
    IDS = "ids"
    RUN_IDS = "run-ids"
    ROUNDS = "rounds"
    TURN_IDS = "turn-ids"


def provisions_of(adapter: object) -> frozenset[Provision]:
    """The :class:`Provision` names ``adapter`` declares in ``provides`` (none when
    it has no such attribute).

    Raises ``ValueError`` naming the known provisions when ``provides`` is not a
    set of names or holds a name that is not one: a misspelt provision would
    otherwise let a rule pass that the adapter itself made true.
    """
    declared = getattr(adapter, "provides", None)
    if declared is None:
        return frozenset()
    if isinstance(declared, str | bytes) or not isinstance(
        declared, set | frozenset | list | tuple
    ):
        raise ValueError(
            f"provides is {type(declared).__name__}, expected a set of names"
        )
    known = {p.value for p in Provision}
    unknown = sorted(str(name) for name in declared if name not in known)
    if unknown:
        raise ValueError(
            f"provides names unknown provision{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(u) for u in unknown)}; the known ones are "
            f"{', '.join(p.value for p in Provision)}"
        )
    return frozenset(Provision(str(name)) for name in declared)


CAPABILITY_METHODS: dict[Capability, tuple[str, ...]] = {
    Capability.COMMIT_FLAGS: ("set_committed",),
    Capability.ERRORS: ("record_error", "errors"),
    Capability.TURN_RECORDS: ("append_record", "records"),
    Capability.STATE: ("read_state", "write_state"),
    Capability.KNOWLEDGE: ("put_fact", "get_fact", "facts", "forget"),
    Capability.DURABLE: (),
    Capability.ATOMIC_BATCH: (),
    Capability.CONCURRENT_WRITERS: (),
}
"""Methods a store must have when it declares each capability."""


class StoreError(Exception):
    """A store refused a write. Raising it (or a subclass) where a rule requires a
    rejection is conformant; raising it where a rule requires success is not."""


class DuplicateIdError(StoreError):
    """An append repeated a message id already stored in the thread (or inside the batch)."""


class ConflictError(StoreError):
    """A compare-and-set write named a version that is not the stored one."""


class UnsupportedValueError(StoreError):
    """The store cannot hold a value exactly (for example NUL in PostgreSQL text,
    or a lone surrogate) and refuses it rather than altering it."""



def check_limit(limit: int | None) -> None:
    """Raise ``ValueError`` unless ``limit`` is ``None`` or an int >= 0 (the window
    argument of ``messages``); adapters that take the window themselves call it."""
    if limit is None:
        return
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ValueError(f"limit must be an int or None, got {type(limit).__name__}")
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")


def damage_index(count: int) -> int:
    """The index (0-based, in append order) of the message a ``damage`` hook
    damages in a thread of ``count`` messages: the middle one, so that it is
    neither the first nor the last when there are three or more. Raises
    :class:`StoreError` when ``count`` is 0."""
    if count <= 0:
        raise StoreError("the thread holds no message to damage")
    return count // 2


@runtime_checkable
class Store(Protocol):
    """The required part of every store (class ``core``)."""

    @property
    def capabilities(self) -> frozenset[str]:
        """The capability names this store declares (see :class:`Capability`)."""
        ...

    def append(self, thread_id: str, batch: Sequence[Message]) -> Awaitable[None] | None:
        """Store one ordered batch of messages atomically: all of it or none of it.

        Order within and across batches is append order, never a caller timestamp.
        An empty batch stores nothing and succeeds. A batch that repeats an id
        already stored in the thread, or repeats an id within itself, raises
        ``DuplicateIdError`` and stores nothing. Text the store cannot hold
        exactly raises ``UnsupportedValueError`` and stores nothing. A failed
        append raises; it never silently drops or half-writes.
        """
        ...

    def messages(
        self, thread_id: str, limit: int | None = None
    ) -> list[Message] | Awaitable[list[Message]]:
        """Return the thread's stored committed messages, oldest first.

        ``limit=N`` gives the newest N, still oldest first; ``0`` gives ``[]``; a
        negative limit raises ``ValueError``; ``None`` gives all, never silently
        capped. An unknown thread gives ``[]``. Threads never see each other's
        messages. The result is a copy: changing it changes nothing stored.
        """
        ...


class DamageHook(Protocol):
    """Optional hook ``damage``: no capability, and no promise of its own.

    It is how the kit makes a stored message unreadable, so that ST-037 can
    check that a read never silently omits, alters or reorders what the store
    acknowledged. A store without it is ``unsupported`` for ST-037.
    """

    def damage(self, thread_id: str) -> Awaitable[None] | None:
        """Make one stored message of the thread unreadable by the store's own
        decoder, in the store's own storage and with the store's own means (for
        example an ``UPDATE`` that writes text that is not JSON into the row's
        JSON column), as a damaged disk, a hand edit or a half-finished
        migration would. Choose a message that is neither the thread's first
        nor its last when it holds three or more. Nothing else changes; the
        store's reads are then judged as they are, with no hint from the hook.
        Raise ``StoreError`` when the thread holds no message."""
        ...


class CommitFlagsStore(Protocol):
    """Capability ``commit-flags``: document 001's visibility flag."""

    def set_committed(
        self, thread_id: str, message_ids: Sequence[str], committed: bool
    ) -> Awaitable[None] | None:
        """Set the committed flag of the named messages; unknown ids raise ``KeyError``.

        Uncommitted messages keep their place in the order and are left out of
        ``messages()`` unless ``include_uncommitted=True`` is passed.
        """
        ...

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message] | Awaitable[list[Message]]:
        """As :meth:`Store.messages`; with ``include_uncommitted`` the window counts
        uncommitted messages too, otherwise it is taken over committed ones only."""
        ...


class ErrorsStore(Protocol):
    """Capability ``errors``: failure records kept apart from the transcript."""

    def record_error(self, thread_id: str, record: ErrorRecord) -> Awaitable[None] | None:
        """Keep one error record for the thread. It never appears in ``messages()``
        and never changes what ``messages()`` returns."""
        ...

    def errors(self, thread_id: str) -> list[ErrorRecord] | Awaitable[list[ErrorRecord]]:
        """The thread's error records in the order they were recorded."""
        ...


class TurnRecordsStore(Protocol):
    """Capability ``turn-records``: document 002's execution records."""

    def append_record(self, record: TurnRecord) -> Awaitable[None] | None:
        """Keep one turn record exactly as given, child usage included unchanged."""
        ...

    def records(
        self, thread_id: str | None = None
    ) -> list[TurnRecord] | Awaitable[list[TurnRecord]]:
        """All records in append order, or only the named thread's."""
        ...


class StateStore(Protocol):
    """Capability ``state``: working state with compare-and-set versions."""

    def read_state(
        self, scope: str, key: str
    ) -> StateEntry | Awaitable[StateEntry | None] | None:
        """The current entry of ``key`` in ``scope`` (one job's working state), or
        ``None`` when the key was never written there."""
        ...

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry | Awaitable[StateEntry]:
        """Write ``value`` if the stored version equals ``expected_version``
        (``None`` means the key must not exist yet) and return the new entry with
        its version one higher. A stale version raises ``ConflictError`` and
        changes nothing."""
        ...


class KnowledgeStore(Protocol):
    """Capability ``knowledge``: durable facts keyed by subject, with provenance."""

    def put_fact(self, scope: str, fact: Fact) -> Awaitable[None] | None:
        """Store ``fact`` in ``scope`` (one knowledge base, e.g. one user's); it
        supersedes (replaces) any fact there with the same subject. Every
        provenance field is kept exactly."""
        ...

    def get_fact(self, scope: str, subject: str) -> Fact | Awaitable[Fact | None] | None:
        """The current fact for ``subject`` in ``scope``, or ``None``."""
        ...

    def facts(self, scope: str) -> list[Fact] | Awaitable[list[Fact]]:
        """Every current fact of ``scope``, one per subject, ordered by subject."""
        ...

    def forget(self, scope: str, subject: str) -> bool | Awaitable[bool]:
        """Delete the fact for ``subject`` in ``scope``; ``True`` if one was there."""
        ...
