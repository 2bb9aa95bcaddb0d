"""v03: a tier that failed stays skipped for later turns (a per-instance circuit breaker).

Bug: when a turn falls back from a failing tier, the runtime remembers, on the runtime
instance, the tier that answered for that tier chain and starts every later turn there.
Within a turn the fallback is right; the next turn's first call should go to the first
tier again and goes to the fallback tier instead.

Why it ships: "don't keep hammering a provider that just failed" is a reasonable
optimisation and looks like a circuit breaker; single-turn fallback tests pass, and
only a second turn on the same runtime after a fallback shows it.

Breaks: TU-023 (every turn's first model call goes to the first tier of its chain); also
TU-025 for a turn that continues from one that fell back.
"""

from __future__ import annotations

from .base import TurnsEngine, TurnsWriteRuntime


class StickyTierTurnsEngine(TurnsEngine):
    def _breaker(self) -> dict:
        if not hasattr(self.runtime, "healthy_tier"):
            self.runtime.healthy_tier = {}
        return self.runtime.healthy_tier

    def first_tier(self, turn):
        # --- BUG: start where the last turn on this chain ended up ---
        return self._breaker().get(turn.tiers, 0)

    def on_tier_answered(self, turn):
        self._breaker()[turn.tiers] = turn.tier_index


class Runtime(TurnsWriteRuntime):
    turns_engine = StickyTierTurnsEngine


def make() -> Runtime:
    return Runtime()
