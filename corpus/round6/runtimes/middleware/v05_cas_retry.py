"""v05: a compare-and-set conflict on a state block is retried with the fresh version.

The bug: the state writer wraps ``write_state`` in an optimistic-concurrency retry: on
``ConflictError`` it re-reads the block and writes again with the version it just read.
An update that named a stale ``expected_version`` therefore overwrites the newer value
instead of being rejected, and the version moves on.

The situation that shows it: a model's ``update_block`` call carrying an
``expected_version`` older than the stored one (another writer, or an earlier update of
the same turn, moved the block on). Updates without an explicit version, or with the
current one, behave as in the base.

Why a team would ship it: the retry was added after flaky conflicts between two of their
own workers, and it is the textbook fix for lost updates when the caller re-applies its
change to the fresh value; here the caller never sees the fresh value.

Rules broken: TU-008.
"""

from __future__ import annotations

from typing import Any

from memconform.contract import ConflictError

from .base import MiddlewareRuntime, Tools, TurnsApp


class RetryingTools(Tools):
    def write(self, block: str, value: Any, expected: int | None) -> Any:
        scope = self.app.settings.scope
        try:
            return self.app.env.store.write_state(scope, block, value, expected)
        except ConflictError:
            # --- the bug ---
            # retry once with the version now stored: the stale update wins
            current = self.app.env.store.read_state(scope, block)
            fresh = None if current is None else current.version
            return self.app.env.store.write_state(scope, block, value, fresh)


class RetryingApp(TurnsApp):
    tools_class = RetryingTools


class Runtime(MiddlewareRuntime):
    turns_app = RetryingApp


def make() -> Runtime:
    return Runtime()
