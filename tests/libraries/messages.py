"""Messages the library adapter tests write: numbered batches, and one message
with every field set and text a store may mangle."""

from __future__ import annotations

from memconform.steps.store import full_message
from memconform.values import Message, Role

FULL = full_message("Checking the weather. \u202ertl\u202c e\u0301 😀 \x00")
"""Every field set; bidirectional controls, a combining accent, an emoji and NUL."""


def numbered(prefix: str, count: int, role: Role = "user") -> list[Message]:
    """``count`` messages with ids ``prefix0`` to ``prefix{count-1}``."""
    return [Message(id=f"{prefix}{i}", role=role, text=f"{prefix} {i}") for i in range(count)]


def ids(messages: list[Message]) -> list[str]:
    """The ids of ``messages``, in order."""
    return [m.id for m in messages]
