"""v05: a cancelled run leaves its held-back messages in the policy's buffer.

The bug: ``Persistence.scope`` drops the policy's buffer in an
``except Exception`` block. Cancellations in this runtime are asyncio-style
(``RunCancelled`` derives from ``asyncio.CancelledError``, a ``BaseException``),
so a cancelled run leaves the scope without the buffer being dropped. The
persistence subscriber lives for the whole ``execute``, so the next run of the
same script starts with the cancelled run's messages already in its batch.

Situation that shows it: under ``turn`` or ``run``, a cancelled run (a
cancellation before a model call, a run-end hook that cancels, a tool-error
hook that terminates) followed by another run in the same script: the next
run's first batch (``turn``) or its one batch (``run``) also carries the
cancelled run's input (and answer, tool call, ...), so the cancelled run ends
up in the transcript and in every later model context. Failed runs, and the
``message`` policy, are unaffected.

Why a team would ship it: ``except Exception`` is the reflex; the difference
between ``Exception`` and ``CancelledError`` only matters on the cancellation
path, and a single-run cancellation test shows nothing stored.

Rules broken: SP-032, SP-011, SP-008.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from corpus.round6.runtimes.asyncpolicy.base import (
    Agent,
    AsyncPolicyRuntime,
    Persistence,
    RunState,
)


class LeakyScopePersistence(Persistence):
    @contextlib.asynccontextmanager
    async def scope(self, run: RunState) -> AsyncIterator[None]:
        try:
            yield
        # --- the bug ---
        # CancelledError is a BaseException: a cancelled run keeps its buffer
        except Exception:
            self.policy.discard()
            raise


class LeakyScopeAgent(Agent):
    persistence_class = LeakyScopePersistence


class LeakyScopeRuntime(AsyncPolicyRuntime):
    agent_class = LeakyScopeAgent


def make() -> LeakyScopeRuntime:
    return LeakyScopeRuntime()
