"""v01: the package memoises summaries by input id, so a reused id gets another branch's summary.

The bug: to save summarizer calls the package keeps a cache in the runtime
instance, keyed by ``(input_id, previous summary)``: "this episode, from this
starting summary, was already summarized". When the same input id comes back
in a later request or on another branch with a different (but again over-long)
history, the package takes the cached summary instead of summarizing the
history it was given, so the commander's prompt and the returned memory hold
another trajectory's summary.

Why a team ships it: summarizer calls are the expensive part; input ids look
like conversation ids, and in every test the id is used for one trajectory
only, so the cache only ever hits on a genuine repeat.

Breaks CA-004 (a reused input id gets a prompt built from something other than
its own supplied memory), and with it CA-005 (a fresh instance, with an empty
cache, summarizes and answers differently).
"""

from __future__ import annotations

import copy
from typing import Any

from corpus.round5.runtimes.statecands.base import CandidatesPackage, StateCandsRuntime


class CachingPackage(CandidatesPackage):
    cache: dict[tuple[str, Any], tuple[dict[str, Any], str | None]]

    def summarize(self, ctx, memory):
        # BUG: keyed by the input id, not by the memory being summarized
        key = (str(ctx["input_id"]), memory.get("summary"))
        if key in self.cache:
            step, output = self.cache[key]
            return copy.deepcopy(step), output
        step, output = super().summarize(ctx, memory)
        if output is not None:
            self.cache[key] = (copy.deepcopy(step), output)
        return step, output


class SummaryCacheRuntime(StateCandsRuntime):
    package_class = CachingPackage

    def __init__(self) -> None:
        self._summaries: dict[tuple[str, Any], tuple[dict[str, Any], str | None]] = {}

    def execute(self, script, env):
        if script.get("profile") == "candidates":
            package = CachingPackage(script, env)
            package.cache = self._summaries  # shared by every request this instance serves
            return package.run()
        return super().execute(script, env)


def make() -> SummaryCacheRuntime:
    return SummaryCacheRuntime()
