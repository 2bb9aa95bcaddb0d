"""v09: at the cap, re-remembering a known subject still evicts another fact.

The bug: before every durable write the agent counts the stored facts and,
when the count has reached the cap, evicts until there is room, without asking
whether the subject is already stored. A confirmation of a known subject
(which replaces its fact and adds nothing) at the cap throws away an unrelated
fact.

Why a team ships it: "make room, then put" is the obvious shape, and it is
right for every new subject; supersession at exactly the cap is rare in tests.

Breaks PS-016 (superseding a known subject evicts nothing).
"""

from __future__ import annotations

from corpus.round5.runtimes.statecands.base import StateAgent, StateCandsRuntime


class EagerEvictionAgent(StateAgent):
    def make_room(self, fact):
        if self.cap is None:
            return []
        # BUG: no check whether fact.subject is already stored (a supersede adds nothing)
        stored = list(self.env.store.facts(self.kb))
        evicted: list[str] = []
        for victim in self.eviction_order(stored):
            if len(stored) - len(evicted) < int(self.cap):
                break
            self.env.store.forget(self.kb, victim.subject)
            evicted.append(victim.subject)
        return evicted


class EvictsOnSupersedeRuntime(StateCandsRuntime):
    agent_class = EagerEvictionAgent


def make() -> EvictsOnSupersedeRuntime:
    return EvictsOnSupersedeRuntime()
