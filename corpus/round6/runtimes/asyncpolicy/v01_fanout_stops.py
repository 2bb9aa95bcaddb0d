"""v01: the event bus stops fanning an event out at the first subscriber that raises.

The bug: ``EventBus.publish`` delivers the event to each subscriber in turn and
simply lets the first exception propagate. The persistence subscriber comes
first, so when the store refuses an append, the recorder (the subscriber that
collects the run's messages for the error record) never sees the event that
carried the refused messages.

Situation that shows it: a store with the ``errors`` capability refuses an
append (the input, a tool round or the final answer). The run fails correctly
and calls ``record_error`` once, but the record lacks exactly the messages whose
append was refused (under ``message`` a refused input append leaves an empty
record; a refused tool round leaves its tool message out).

Why a team would ship it: "stop on first error" is the default shape of a
for-loop with ``await``; every test of the happy path and of model failures
passes, and the record still looks plausible, just shorter.

Rules broken: SP-014.
"""

from __future__ import annotations

from corpus.round6.runtimes.asyncpolicy.base import Agent, AsyncPolicyRuntime, Event, EventBus


class FailFastBus(EventBus):
    async def publish(self, event: Event) -> None:
        for sub in self.subscriptions:
            # --- the bug ---
            # a refused append in the first subscriber ends the fan-out: the
            # subscribers after it never hear of the event
            await sub.deliver(event)


class FailFastAgent(Agent):
    bus_class = FailFastBus


class FailFastRuntime(AsyncPolicyRuntime):
    agent_class = FailFastAgent


def make() -> FailFastRuntime:
    return FailFastRuntime()
