"""v06: the digest is written to conversation memory before the redactor runs.

The bug: the failure policy was split into two middlewares, a digest recorder and a
redactor, and the recorder sits first: it stores the digest in memory (stripped of stack
frames and URLs, capped at 200 characters) and only afterwards the redactor replaces the
secrets in the entry the caller gets. The caller's ``taskErrors`` entry and the stream
are clean, but the committed digest in memory, which every later model call is shown,
still holds the API key, token or password of the failure's message.

The situation that shows it: a task failing in ``digest`` mode with a secret in its
error (``api_key=...``, a ``Bearer`` token, a JSON body with a ``password``), read back
from memory or from a later model call's view. The caller's entry, which most tests
look at, is redacted as it should be.

Why a team would ship it: the redaction tests asserted on the API response, and the
memory write was considered internal.

Rules broken: SW-019.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import TASK_ERRORS, FailurePolicy, MiddlewareRuntime, StrictWriteApp, TaskRun


class RecordThenRedact(FailurePolicy):
    def store_digest(self, run: TaskRun, entry: dict[str, Any], error: Mapping[str, Any]) -> None:
        digester = self.app.digester
        reason = digester.squeeze(digester.strip_urls(digester.strip_frames(
            digester.reason(error))))
        # --- the bug ---
        # the recorder persists the digest it built before the redactor saw it
        unredacted = dict(entry, text=digester.cap(
            digester.prefix.format(task=entry["taskId"]) + reason))
        self.app.journal.write(run.turn.step, None, "output", TASK_ERRORS, "append", unredacted)


class RecordThenRedactApp(StrictWriteApp):
    task_middlewares = (RecordThenRedact, *StrictWriteApp.task_middlewares[1:])


class Runtime(MiddlewareRuntime):
    strict_app = RecordThenRedactApp


def make() -> Runtime:
    return Runtime()
