"""v08: a streaming turn's ``task_failed`` event carries the raw error message.

Bug: the digest stored in memory and the caller's ``taskErrors`` entry are cleaned and
redacted, but the stream event's ``reason`` is filled from the error's own message, so
a streaming client receives the unredacted text (keys, URLs, provider bodies).

Why it ships: the stream publisher sits in another layer and takes "the exception's
message" as UIs usually do; redaction was added where the digest is built, so only the
copy in memory and in the entry got it. Non-streaming tests never see the event.

Breaks: SW-024 (the stream event carries the same cleaned reason as the caller's entry);
SW-019 (the digest's text, wherever it goes, the stream included, passed the secret
filter).
"""

from __future__ import annotations

from .base import StrictWriteEngine, TurnsWriteRuntime


class RawStreamEngine(StrictWriteEngine):
    def stream_reason(self, error):
        # --- BUG: the raw message goes to the stream ---
        return str(error.get("message") or "")


class Runtime(TurnsWriteRuntime):
    strict_engine = RawStreamEngine


def make() -> Runtime:
    return Runtime()
