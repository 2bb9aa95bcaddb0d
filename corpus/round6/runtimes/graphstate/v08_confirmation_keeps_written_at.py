"""v08: remembering an unchanged statement again keeps the first write's dates.

The bug: when a remembered subject is already stored with the same statement,
the promotion pipeline treats the request as a duplicate and keeps the stored
fact's ``written_at`` and ``recheck_at`` ("when we first learned it"), only
refreshing the other provenance fields. A confirmation therefore never moves
the recheck date, and the fact's write time is not the time it was written.

The situation that shows it: a fact remembered, the clock advanced (past its
recheck date, or just some days), the same statement remembered again as a
confirmation, then recalled: it is still ``unverified`` (or its recheck date
is the old one) and the put's ``written_at`` is the first write's time.

Why a team would ship it: the team wanted the knowledge export to show when a
fact was first learned and found that re-confirmations made "new" facts of
months-old knowledge; a changed statement is handled correctly.

Rules broken: PS-013, PS-012.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from corpus.round6.runtimes.graphstate.base import GraphStateRuntime, JobMachine
from memconform.values import Fact


class FirstLearnedMachine(JobMachine):
    def provenance(self, request: Mapping[str, Any]) -> Fact:
        fact = super().provenance(request)
        known = self.env.store.get_fact(self.kb, fact.subject)
        # --- the bug ---
        if known is not None and known.statement == fact.statement:
            fact = dataclasses.replace(fact, written_at=known.written_at,
                                       recheck_at=known.recheck_at)
        return fact


class Runtime(GraphStateRuntime):
    job_machine = FirstLearnedMachine


def make() -> Runtime:
    return Runtime()
