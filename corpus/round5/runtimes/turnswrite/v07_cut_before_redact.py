"""v07: the digest is cut to 200 characters before the secret filter runs.

Bug: the digest text (URLs, frames and class names cleaned) is capped first and
redacted afterwards. A key that straddles the cut is shortened below the length the
filter recognises (``sk-`` keys need 20 characters), so its first characters stay in
the digest; a secret just before the cut can also push the redacted text past 200.

Why it ships: "truncate, then sanitise what is left" reads naturally and is cheaper on
huge error bodies; short errors, which most tests use, are unaffected.

Breaks: SW-023 (redaction happens before the cut; no fragment left); also SW-019 for the
fragment and SW-022 when the marker makes the text longer than 200.
"""

from __future__ import annotations

from . import digest
from .base import StrictWriteEngine, TurnsWriteRuntime


class CutFirstEngine(StrictWriteEngine):
    def digest_text(self, task_id, error):
        reason = digest.failure_reason(error, redact=False)
        text = digest.cut(f"Task '{digest.task_uri(task_id)}' failed: {reason}")
        # --- BUG: redaction after the cut ---
        return digest.redact_secrets(text)


class Runtime(TurnsWriteRuntime):
    strict_engine = CutFirstEngine


def make() -> Runtime:
    return Runtime()
