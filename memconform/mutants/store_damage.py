"""Store mutants that break ST-037: each keeps a damage hook of its own, so the
message the hook damages stays stored, and reads it back some silent way
(skipped, emptied, moved to the end) instead of raising. Registered in
:data:`memconform.mutants.store.MUTANTS`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memconform.contract import damage_index
from memconform.harness.wrapper import StoreWrapper
from memconform.values import Message

__all__ = ["DamagedDefaulted", "DamagedLast", "DamagedSkipped"]


class _DamageReads(StoreWrapper):
    """Keeps its own damage hook: the message the hook damages (the thread's middle
    one) stays stored, and each read hands it to :meth:`_mangle` instead of
    raising as the working store would."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._damaged: dict[str, str] = {}

    def _messages(
        self, thread_id: str, limit: int | None = None, include_uncommitted: bool = False
    ) -> list[Message]:
        if include_uncommitted:
            return list(self.inner.messages(thread_id, limit, include_uncommitted=True))
        return list(self.inner.messages(thread_id, limit))

    def damage(self, thread_id: str) -> None:
        stored = self._messages(thread_id, None, include_uncommitted=True)
        self._damaged[thread_id] = stored[damage_index(len(stored))].id

    def _mangle(self, messages: list[Message], damaged: str) -> list[Message]:
        raise NotImplementedError

    def messages(self, thread_id: str, limit: int | None = None, **kw: Any) -> list[Message]:
        got = self._messages(thread_id, limit, **kw)
        damaged = self._damaged.get(thread_id)
        if damaged is None or damaged not in {m.id for m in got}:
            return got
        return self._mangle(got, damaged)


class DamagedSkipped(_DamageReads):
    """A read silently skips a stored message it cannot decode (the others come back)."""

    def _mangle(self, messages: list[Message], damaged: str) -> list[Message]:
        return [m for m in messages if m.id != damaged]


class DamagedDefaulted(_DamageReads):
    """A read returns a stored message it cannot decode with empty text, parts and
    metadata in place of what was stored."""

    def _mangle(self, messages: list[Message], damaged: str) -> list[Message]:
        return [
            replace(m, text="", parts=(), metadata={}) if m.id == damaged else m
            for m in messages
        ]


class DamagedLast(_DamageReads):
    """A read returns a stored message it had to decode a second way after all the
    others, at the end of the thread."""

    def _mangle(self, messages: list[Message], damaged: str) -> list[Message]:
        return [m for m in messages if m.id != damaged] + [
            m for m in messages if m.id == damaged
        ]
