"""v09: the run's final flush is published in the background.

The bug: to answer the caller sooner, ``settle`` publishes ``RunSettled`` (the
event on which ``turn`` stores the last round and ``run`` stores the whole run)
as a background task and reports the outcome at once; ``execute`` drains the
pending tasks before it returns, with ``return_exceptions=True`` so a slow or
failing write "cannot break a finished run".

Situation that shows it: under ``turn`` or ``run``, a completed or output-blocked
run: its outcome event comes before its final append. A refused final append is
swallowed and the run is still reported completed. A next run in the same
script reads the thread before the previous run's final batch lands, so its
model does not see the previous answer (under ``run``: the whole previous run).
Under ``message`` the answer was appended earlier and nothing changes;
suspended runs store their batch synchronously.

Why a team would ship it: in-process tests read the store after ``execute``
returns, when everything has been drained, so every transcript looks right.

Rules broken: SP-019, SP-020, SP-031.
"""

from __future__ import annotations

import asyncio

from corpus.round6.runtimes.asyncpolicy.base import (
    Agent,
    AsyncPolicyRuntime,
    RunSettled,
    RunState,
)


class BackgroundSettleAgent(Agent):
    def __init__(self, script, env, policy):  # type: ignore[no-untyped-def]
        super().__init__(script, env, policy)
        self.in_flight: set[asyncio.Task[None]] = set()

    async def settle(self, run: RunState, outcome: str) -> None:
        # --- the bug ---
        # the final flush is fired and forgotten; the outcome is reported before it lands
        task = asyncio.get_running_loop().create_task(self.bus.publish(RunSettled(run, outcome)))
        self.in_flight.add(task)
        task.add_done_callback(self.in_flight.discard)

    async def drain(self) -> None:
        await asyncio.gather(*self.in_flight, return_exceptions=True)


class BackgroundSettleRuntime(AsyncPolicyRuntime):
    agent_class = BackgroundSettleAgent


def make() -> BackgroundSettleRuntime:
    return BackgroundSettleRuntime()
