"""v06: a transient failure of a run's first model call retries the whole first round.

The bug: the first round is handled by ``open_round``, which accepts the input
(publishes it) and makes the first model call; the provider retry wraps that
whole coroutine instead of the model call alone. Retrying it accepts the input
again: a second user message, with a fresh id, is published and shown to the
model. Later rounds retry the model call alone, correctly.

Situation that shows it: the first model call of a run fails with a retryable
status (429, 503, ...) and a retry succeeds. Under ``message`` the input is
appended twice (two batches, two ids); under ``turn`` and ``run`` the first
batch holds the input twice; every retry shows the model one more copy. A
transient failure in a later round, or a non-retryable one, behaves correctly.

Why a team would ship it: "retry the round" sounds safer than retrying a bare
call, the round-one path was special-cased to make the input append and the
first call one step, and retry tests usually fail a later call.

Rules broken: SP-021, SP-005, SP-031.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corpus.round6.runtimes.asyncpolicy.base import (
    MODEL,
    RETRYABLE,
    Agent,
    AsyncPolicyRuntime,
    Discarded,
    InputAccepted,
    RunCancelled,
    RunState,
)
from memconform.harness.environment import ScriptedFailure
from memconform.values import JSONValue


class RoundRetryAgent(Agent):
    def __init__(self, script, env, policy):  # type: ignore[no-untyped-def]
        super().__init__(script, env, policy)
        self.opened: dict[str, Mapping[str, Any]] = {}

    async def start(self, run: RunState, text: str) -> dict[str, JSONValue]:
        run.view = self.history()
        try:
            verdict = self.env.hook("input_guardrail", {"run_id": run.id, "text": text})
        except ScriptedFailure:
            await self.bus.publish(Discarded(run, self.new(run, "user", text)))
            raise
        if verdict.get("action") == "block":
            return self.finish(run, "blocked", stage="input", reply=verdict.get("text"))
        attempt = 1
        while True:
            try:
                # --- the bug ---
                # the retry re-runs the whole first round, input acceptance included
                self.opened[run.id] = await self.open_round(run, text, attempt)
            except ScriptedFailure as exc:
                if exc.error.get("status") in RETRYABLE and attempt <= self.max_retries:
                    attempt += 1
                    continue
                raise
            return await self.loop(run)

    async def open_round(self, run: RunState, text: str, attempt: int) -> Mapping[str, Any]:
        """Accept the input and make the run's first model call."""
        user = self.new(run, "user", text)
        self.see(run, user)
        await self.bus.publish(InputAccepted(run, user))
        if attempt == 1:
            run.model_calls += 1
            if run.spec.get("cancel_before_model_call") == run.model_calls:
                raise RunCancelled({"type": "RunCancelledError",
                                    "message": f"cancelled before model call {run.model_calls}"})
        step = self.env.model(MODEL, self.request(run, attempt))
        await self.stream_reply(run, str(step.get("reply") or ""))
        return step

    async def ask_model(self, run: RunState) -> Mapping[str, Any]:
        step = self.opened.pop(run.id, None)
        if step is not None:
            return step
        return await super().ask_model(run)


class RoundRetryRuntime(AsyncPolicyRuntime):
    agent_class = RoundRetryAgent


def make() -> RoundRetryRuntime:
    return RoundRetryRuntime()
