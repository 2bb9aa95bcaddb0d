"""v10: under ``run`` each message keeps the round it was made in.

The bug: ``RunPolicy`` appends the run's one batch with every message stamped
with the round it was created in (the input with 1, the first tool round with
1, the answer with the last round), instead of the round the batch is appended
in, the run's last.

Situation that shows it: a ``run``-policy run with at least one tool round
(two or more model calls): the stored input and tool messages carry round 1
(2, ...) while the batch is appended in the last round. A run answered by its
first model call stores round 1 everywhere, which is right.

Why a team would ship it: keeping each message's own round looks more
informative, and ``message``/``turn`` do store each message with the round it
was made in.

Rules broken: SP-030.
"""

from __future__ import annotations

from collections.abc import Sequence

from corpus.round6.runtimes.asyncpolicy.base import (
    POLICY_CLASSES,
    Agent,
    AsyncPolicyRuntime,
    Persistence,
    RunPolicy,
)
from memconform.values import Message


class OwnRoundsRunPolicy(RunPolicy):
    def stamp(self, messages: Sequence[Message], round_: int) -> list[Message]:
        # --- the bug ---
        # each message keeps the round it was made in, not the batch's round
        return list(messages)


class OwnRoundsPersistence(Persistence):
    def __init__(self, env, thread, policy):  # type: ignore[no-untyped-def]
        super().__init__(env, thread, policy, {**POLICY_CLASSES, "run": OwnRoundsRunPolicy})


class OwnRoundsAgent(Agent):
    persistence_class = OwnRoundsPersistence


class OwnRoundsRuntime(AsyncPolicyRuntime):
    agent_class = OwnRoundsAgent


def make() -> OwnRoundsRuntime:
    return OwnRoundsRuntime()
