"""v04: a streamed answer is stored as the text the stream delivered.

The bug: the persistence subscriber keeps the model deltas of the current
round, and when a streamed run's answer is ready it stores the streamed text
(the deltas joined with spaces) instead of the final answer message, "so the
transcript holds exactly what the user watched arrive".

Situation that shows it: a streamed run whose answer is not a plain sequence of
single-spaced words: a multi-line answer, one with double spaces or a trailing
newline, or an answer the output guardrail replaced or blocked (the stored
answer is then the model's own words, not the guardrail's text the caller got).
The same run buffered stores the right text; a one-line streamed answer of
single-spaced words is stored identically.

Why a team would ship it: the streaming path was written first, the deltas are
already at hand, and a one-line test reply compares equal.

Rules broken: SP-029, SP-026.
"""

from __future__ import annotations

import dataclasses

from corpus.round6.runtimes.asyncpolicy.base import (
    Agent,
    AnswerReady,
    AsyncPolicyRuntime,
    Event,
    ModelDelta,
    Persistence,
)


class StreamedTextPersistence(Persistence):
    def __init__(self, env, thread, policy):  # type: ignore[no-untyped-def]
        super().__init__(env, thread, policy)
        self.deltas: dict[tuple[str, int], list[str]] = {}

    def handle(self, event: Event) -> None:
        if isinstance(event, ModelDelta):
            self.deltas.setdefault((event.run.id, event.round), []).append(event.text)
            return
        if isinstance(event, AnswerReady) and event.run.stream:
            # --- the bug ---
            # the stored answer is rebuilt from what was streamed, not the answer itself
            streamed = " ".join(self.deltas.pop((event.run.id, event.message.round or 0), []))
            event = AnswerReady(event.run, dataclasses.replace(event.message, text=streamed))
        self.policy.handle(event)


class StreamedTextAgent(Agent):
    persistence_class = StreamedTextPersistence


class StreamedTextRuntime(AsyncPolicyRuntime):
    agent_class = StreamedTextAgent


def make() -> StreamedTextRuntime:
    return StreamedTextRuntime()
