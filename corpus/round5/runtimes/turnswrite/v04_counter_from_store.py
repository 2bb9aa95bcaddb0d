"""v04: the default turn-id counter is carried over a restart through the store.

Bug: with the default ``counter`` ids, the runtime seeds its counter from the number of
turn records the thread already holds, so a restarted runtime goes on at T(n+1)
instead of starting again at T1.

Why it ships: colliding ids after a restart look like a bug to anyone who sees them,
and "count what is there" is the one-line fix a team would make; the document however
keeps the default counter per runtime lifetime (unique ids are what the injected
generator is for). In one process nothing changes: the counter and the records agree.

Breaks: TU-027 (a restarted runtime counts from T1 again, so records across a restart
share ids).
"""

from __future__ import annotations

from .base import TurnsEngine, TurnsWriteRuntime


class ContinuingCounterTurnsEngine(TurnsEngine):
    def next_turn_id(self):
        if self.turn_ids == "counter" and not getattr(self, "_seeded", False):
            self._seeded = True
            # --- BUG: continue the count from the records already stored ---
            if self.env.store.has("turn-records"):
                self.counter = len(self.env.store.records(self.thread))
        return super().next_turn_id()


class Runtime(TurnsWriteRuntime):
    turns_engine = ContinuingCounterTurnsEngine


def make() -> Runtime:
    return Runtime()
