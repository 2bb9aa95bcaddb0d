"""Deliberately broken store adapters, opened as ``tests.bad_store_adapters:NAME``.

Each breaks the Store contract itself (not a rule of it), so the kit must
report the verdict ``error`` naming the method, and go on with other rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memconform.adapters.memory import MemoryStore
from memconform.contract import StoreError
from memconform.harness.faults import HangingStore
from memconform.values import Message


class _NoMessages:
    """Declares nothing and has no ``messages`` method."""

    capabilities: frozenset[str] = frozenset()

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        return None


class _RaisingAppend(MemoryStore):
    """Every non-empty append raises a plain RuntimeError."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        if batch:
            raise RuntimeError("connection reset by peer")


class _WrongShape(MemoryStore):
    """``messages`` answers a list of strings instead of messages."""

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> Any:
        return [m.text for m in super().messages(thread_id, limit, **kw)] or ["not a message"]


class _UnknownThreadRaises(MemoryStore):
    """Reading a thread never written raises ``KeyError`` (a bare dict lookup),
    where the contract asks for an empty list."""

    def __init__(self) -> None:
        super().__init__()
        self._written: set[str] = set()

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        super().append(thread_id, batch)
        self._written.add(thread_id)

    def messages(  # type: ignore[override]
        self, thread_id: str, limit: int | None = None, **kw: Any
    ) -> list[Message]:
        if thread_id not in self._written:
            raise KeyError(thread_id)
        return super().messages(thread_id, limit, **kw)


def unknown_thread_raises() -> object:
    """A store whose ``messages`` raises ``KeyError`` on a thread never written."""
    return _UnknownThreadRaises()


def no_messages() -> object:
    """A store lacking the required ``messages`` method."""
    return _NoMessages()


def raising_append() -> object:
    """A store whose ``append`` raises where rules require success."""
    return _RaisingAppend()


def wrong_shape() -> object:
    """A store whose ``messages`` returns the wrong shape."""
    return _WrongShape()


def hanging_messages() -> object:
    """A store whose ``messages`` never returns."""
    return HangingStore(MemoryStore(), methods=("messages",))


class UnlockedFileStore:
    """A file store that reads, changes and rewrites one JSON file with no lock.

    It keeps every single-process promise, but two processes appending at once
    lose each other's batches. It calls the kit's row point between reading
    the file and writing it back, so the concurrency check can hold it there.
    The file is named by the URL's query: ``…:unlocked_file_store?path=FILE``.
    """

    capabilities = frozenset({"durable", "concurrent-writers", "atomic-batch"})

    def __init__(self, path: str) -> None:
        self.path = path

    def _load(self) -> dict[str, list[dict[str, Any]]]:
        import json
        import os

        if not os.path.exists(self.path):
            return {}
        with open(self.path, encoding="utf-8") as f:
            data: dict[str, list[dict[str, Any]]] = json.load(f)
        return data

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        import json
        import os

        from memconform.contract import DuplicateIdError
        from memconform.harness.faults import batch_row_pause

        data = self._load()
        stored = data.setdefault(thread_id, [])
        ids = {m["id"] for m in stored}
        for message in batch:
            if message.id in ids:
                raise DuplicateIdError(message.id)
            ids.add(message.id)
        for message in batch:
            batch_row_pause()
            stored.append(message.to_json())
        tmp = f"{self.path}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, self.path)

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        if limit is not None and limit < 0:
            raise ValueError("negative limit")
        got = [Message.from_json(m) for m in self._load().get(thread_id, [])]
        if limit is None:
            return got
        return got[len(got) - limit :] if limit else []


def unlocked_file_store(path: str) -> object:
    """The :class:`UnlockedFileStore` in the file ``path``."""
    return UnlockedFileStore(path)


class _CoreOnly(MemoryStore):
    """A correct store that declares no optional capability (like most chat
    histories): its keyed-data rules are unsupported, never errors."""

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset()


def core_only() -> MemoryStore:
    """A working store that declares nothing optional."""
    return _CoreOnly()


class _Moody(MemoryStore):
    """Every fifth read of the messages comes back empty, so the same operations
    replayed give other answers (a store whose reads depend on timing)."""

    def __init__(self) -> None:
        super().__init__()
        self._reads = 0

    def messages(  # type: ignore[override]
        self, thread_id: str, limit: int | None = None, **kw: Any
    ) -> list[Message]:
        found = super().messages(thread_id, limit, **kw)
        self._reads += 1
        return [] if self._reads % 5 == 0 else found


def moody() -> MemoryStore:
    """A store whose answers are not repeatable."""
    return _Moody()


class _RefusingFileStore(UnlockedFileStore):
    """Refuses every non-empty append with ``StoreError`` (as a library whose
    write fails under contention does): a failed promise, not a broken adapter."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        from memconform.contract import StoreError

        if batch:
            raise StoreError("the session changed under this writer")


def refusing_file_store(path: str) -> object:
    """The :class:`_RefusingFileStore` in the file ``path``."""
    return _RefusingFileStore(path)


class _BareCore:
    """Only the two required methods, over a memory store, and ``frozenset()``
    declared: no ``set_committed``, no ``record_error``. ``newest_first_window``
    makes its window answer newest first (ST-003 fails, a core rule)."""

    capabilities: frozenset[str] = frozenset()

    def __init__(self, newest_first_window: bool = False) -> None:
        self._inner = MemoryStore()
        self._reversed = newest_first_window

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        self._inner.append(thread_id, batch)

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        found = self._inner.messages(thread_id, limit)
        return found[::-1] if self._reversed and limit else found


def bare_core() -> object:
    """A correct store with the required methods only, declaring nothing."""
    return _BareCore()


def bare_core_wrong_window() -> object:
    """:func:`bare_core` whose windows come back newest first (ST-003 fails)."""
    return _BareCore(newest_first_window=True)


class _WindowByAdapter(_BareCore):
    """Declares that it takes the window itself (as an adapter over a library
    without one does): its window rules are the adapter's, not a pass."""

    provides = frozenset({"window"})


def window_by_adapter() -> object:
    """A correct core store whose adapter provides the window."""
    return _WindowByAdapter()


class _MisspeltProvides(_BareCore):
    provides = frozenset({"windows"})


def misspelt_provides() -> object:
    """A store naming a provision that does not exist (an adapter error)."""
    return _MisspeltProvides()


class _MisspeltCapability(_BareCore):
    capabilities = frozenset({"commit-flag"})


def misspelt_capability() -> object:
    """A store declaring a capability that does not exist (an adapter error)."""
    return _MisspeltCapability()


class LockedFileStore(UnlockedFileStore):
    """A correct file store that passes no rows through the kit's row point: each
    append takes an exclusive lock, rewrites the whole file and renames it into
    place, so a killed writer leaves the batch wholly there or wholly absent."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        import fcntl
        import json
        import os

        from memconform.contract import DuplicateIdError

        with open(f"{self.path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self._load()
            stored = data.setdefault(thread_id, [])
            ids = [m.id for m in batch]
            if len(set(ids)) != len(ids) or {m["id"] for m in stored} & set(ids):
                raise DuplicateIdError("an id of the batch is repeated or already stored")
            stored.extend(m.to_json() for m in batch)
            scratch = f"{self.path}.{os.getpid()}"
            with open(scratch, "w", encoding="utf-8") as f:
                json.dump(data, f)
            os.replace(scratch, self.path)


def locked_file_store(path: str) -> object:
    """The :class:`LockedFileStore` in the file ``path``."""
    return LockedFileStore(path)


class _Announcing(MemoryStore):
    """A correct store that says when the run is well under way: the 30th
    append its process makes in a named scenario writes ``ready`` into the
    FIFO named by ``$MEMCONFORM_TEST_READY_FIFO`` (waiting for a reader), so a
    test knows that scenarios before it have ended and their outcomes are on
    disk. The appends of the generated checks, which run first and end with no
    outcome until their last example, are not counted."""

    appends = 0
    """Counted appends of every store of this process (a scenario opens its own)."""

    def __init__(self, fifo: str | None) -> None:
        super().__init__()
        self.fifo = fifo

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        if not _in_a_generated_check():
            _Announcing.appends += 1
            if self.fifo and _Announcing.appends == 30:
                with open(self.fifo, "w", encoding="utf-8") as ready:
                    ready.write("ready")
        super().append(thread_id, batch)


def _in_a_generated_check() -> bool:
    """Whether the test pytest is running now is one of the generated checks."""
    import os

    from memconform.steps import generated_checks

    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    name = current.rpartition("::")[2].split(" ")[0].split("[")[0]
    return name.startswith("test_") and hasattr(generated_checks, name)


def announcing() -> MemoryStore:
    """The :class:`_Announcing` store (it announces nothing without the variable)."""
    import os

    return _Announcing(os.environ.get("MEMCONFORM_TEST_READY_FIFO"))


class _ChattyFileStore(LockedFileStore):
    """A correct file store that prints its own debug lines on standard output,
    one of them starting with a brace (as a Python dict's repr does)."""

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        print(f"{{'debug': 'append', 'thread': {thread_id!r}}}", flush=True)
        super().append(thread_id, batch)

    def messages(self, thread_id: str, limit: int | None = None) -> list[Message]:
        print("debug: messages", flush=True)
        return super().messages(thread_id, limit)


def chatty_file_store(path: str) -> object:
    """The :class:`_ChattyFileStore` in the file ``path``."""
    return _ChattyFileStore(path)


class _HollowDamage(MemoryStore):
    """A working store whose damage hook damages nothing: every read after it
    comes back whole, as a store that recovered the row would answer."""

    def damage(self, thread_id: str) -> None:
        if not super().messages(thread_id):
            raise StoreError(f"thread {thread_id!r} holds no message")


def hollow_damage() -> MemoryStore:
    """A store whose damage hook leaves its storage unchanged."""
    return _HollowDamage()
