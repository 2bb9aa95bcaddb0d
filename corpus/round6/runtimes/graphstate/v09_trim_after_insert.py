"""v09: the knowledge cap is enforced by inserting first and trimming afterwards.

The bug: ``store_fact`` puts the new fact, then, while the store holds more
than ``cap`` facts, forgets the first fact of the eviction order. The store
briefly holds ``cap + 1`` facts, and the new fact itself is a candidate for
the trim: when it ties with the others on time (the clock did not move) and
its subject sorts first, or its kind's lifetime is 0 so it is already due for
recheck, the fact just remembered is the one forgotten.

The situation that shows it: a full knowledge base (``knowledge.cap``
reached) and a new subject remembered: the timeline shows ``put_fact`` before
``forget``; remembered at the same instant as the stored facts with a subject
sorting before theirs (``a-...`` after ``m-...`` and ``z-...``), the new fact is
evicted and a recall does not find it.

Why a team would ship it: "insert then trim to size" is how the team's cache
layer worked, and the cap tests remembered subjects in alphabetical order
with the clock advancing between writes.

Rules broken: PS-016.
"""

from __future__ import annotations

from corpus.round6.runtimes.graphstate.base import GraphStateRuntime, JobMachine
from memconform.values import Fact


class TrimmingMachine(JobMachine):
    def store_fact(self, fact: Fact) -> list[str]:
        # --- the bug ---
        self.env.store.put_fact(self.kb, fact)
        evicted: list[str] = []
        if self.cap is None:
            return evicted
        stored = list(self.env.store.facts(self.kb))
        for victim in self.victims(stored):
            if len(stored) - len(evicted) <= int(self.cap):
                break
            if self.env.store.forget(self.kb, victim.subject):
                evicted.append(victim.subject)
        return evicted


class Runtime(GraphStateRuntime):
    job_machine = TrimmingMachine


def make() -> Runtime:
    return Runtime()
