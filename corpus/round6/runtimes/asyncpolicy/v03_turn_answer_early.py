"""v03: under ``turn`` the final round is flushed as soon as the answer is ready.

The bug: ``TurnPolicy`` closes the last round when the answer has passed the
output guardrail (``AnswerReady``), the same moment ``message`` appends it,
instead of waiting for ``RunSettled``, the point where the run-end hook has let
the outcome stand.

Situation that shows it: a ``turn`` run whose run-end hook fails or cancels the
run. The answer (and, for a run without tools, the input with it) is already
stored although the round never completed; the run ends failed or cancelled
with its last round in the transcript. Completed runs persist exactly as before.

Why a team would ship it: "a round is done when the model has answered" reads
naturally, the answer batch and the round batch look identical in every happy
test, and run-end hooks that cancel are rare.

Rules broken: SP-009, SP-032.
"""

from __future__ import annotations

from corpus.round6.runtimes.asyncpolicy.base import (
    POLICY_CLASSES,
    Agent,
    AnswerReady,
    AsyncPolicyRuntime,
    Persistence,
    RunSettled,
    TurnPolicy,
)


class EagerTurnPolicy(TurnPolicy):
    def on_AnswerReady(self, event: AnswerReady) -> None:
        # --- the bug ---
        # the answer closes the round before the run-end hook has had its say
        self.close_round([event.message])

    def on_RunSettled(self, event: RunSettled) -> None:
        self.close_round()


class EagerTurnPersistence(Persistence):
    def __init__(self, env, thread, policy):  # type: ignore[no-untyped-def]
        super().__init__(env, thread, policy, {**POLICY_CLASSES, "turn": EagerTurnPolicy})


class EagerTurnAgent(Agent):
    persistence_class = EagerTurnPersistence


class EagerTurnRuntime(AsyncPolicyRuntime):
    agent_class = EagerTurnAgent


def make() -> EagerTurnRuntime:
    return EagerTurnRuntime()
