"""v03: a commander coaching aimed at candidate 0 coaches every candidate.

The bug: ``coaching_for`` skips an entry for another candidate with
``if entry.get("candidate") and entry["candidate"] != candidate``. Candidate
``0`` is falsy, so an entry for candidate 0 reads as "no candidate given" and
applies to all candidates of the input. Entries for candidate 1, 2, ... work.

The situation that shows it: an input with two or more candidates where the
script coaches the commander for candidate 0 only: candidate 1 is not sent to
the model either, gets candidate 0's coached output and records it with
origin ``coaching``.

Why a team would ship it: the coaching tests coached candidate 1 of two (the
"second opinion" case the trainers asked for) or a single-candidate input, and
both pass.

Rules broken: CA-020, CA-018.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corpus.round6.runtimes.graphstate.base import CandidateGraph, GraphStateRuntime


class TruthyCoachingGraph(CandidateGraph):
    def coaching_for(self, spec: Mapping[str, Any], component: str,
                     candidate: int | None) -> str | None:
        for entry in spec.get("coaching") or []:
            if entry.get("component") != component:
                continue
            if component == "summarizer":
                return str(entry["output"])
            # --- the bug ---
            if entry.get("candidate") and entry["candidate"] != candidate:
                continue
            return str(entry["output"])
        return None


class Runtime(GraphStateRuntime):
    candidate_graph = TruthyCoachingGraph


def make() -> Runtime:
    return Runtime()
