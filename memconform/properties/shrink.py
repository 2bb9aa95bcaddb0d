"""Make a divergence of the store model as small as it will go: the fewest
operations, and the shortest texts, that still give the same divergence.

Hypothesis shrinks values well but cannot always delete a step (removing one
moves the choices of those after it), and a strategy that draws a text of a
fixed size (just past 64 KiB, say) shrinks to the smallest of those sizes, not
to the length the divergence needs. The replays here do both.
"""

from __future__ import annotations

import copy
from typing import Any

from memconform.harness.proxy import RecordingStore
from memconform.properties.store_model import Divergence, replayed
from memconform.properties.sweep import Sweep

__all__ = ["minimise"]

_SHORT = 64
"""Texts up to this length are left as they are."""

BUDGET = 5_000
"""Operations all the replays of one minimisation may run in total: every
replay goes through the recording proxy, whose timeline keeps each call, so a
long counterexample is minimised as far as this allows and no further."""


class _Budget:
    def __init__(self) -> None:
        self.left = BUDGET


def minimise(store: RecordingStore, found: Divergence) -> Divergence:
    """Drop every operation of ``found`` that the divergence does not need, then
    cut every long message text to the shortest prefix that still diverges.

    Each operation is left out in turn and kept out when the replay still
    diverges the same way (the same check, the same rules); each text longer
    than :data:`_SHORT` characters is then cut, by halving the difference, to
    the shortest prefix with which the replay still diverges the same way."""
    best, budget = found, _Budget()
    changed, passes = True, 0
    while changed and passes < 3:  # each pass replays every step once; three suffice
        changed, passes = False, passes + 1
        index = len(best.steps) - 1
        while index >= 0:
            again = _same(store, found, best.steps[:index] + best.steps[index + 1 :], budget)
            if again is not None:
                best, changed = again, True
            index = min(index, len(best.steps)) - 1
    return _shorter_texts(store, found, best, budget)


def _same(
    store: RecordingStore, found: Divergence, steps: list[Any], budget: _Budget
) -> Divergence | None:
    """The replay of ``steps`` when it diverges as ``found`` did, else ``None``
    (also when the budget is spent)."""
    if budget.left < len(steps):
        return None
    budget.left -= len(steps)
    try:
        again = replayed(store, steps, Sweep)  # it replays every operation of the models
    except Exception:  # a replay that crashes does not reproduce the divergence
        return None
    if again is not None and (again.what, again.rules) == (found.what, found.rules):
        return again
    return None


def _shorter_texts(
    store: RecordingStore, found: Divergence, best: Divergence, budget: _Budget
) -> Divergence:
    for s, step in enumerate(best.steps):
        for m, message in enumerate(step.get("batch") or []):
            text = message.get("text") if isinstance(message, dict) else None
            if not isinstance(text, str) or len(text) <= _SHORT:
                continue
            low, high = _SHORT, len(text)  # high always diverges; find the least that does
            while low < high:
                middle = (low + high) // 2
                steps = copy.deepcopy(best.steps)
                steps[s]["batch"][m]["text"] = text[:middle]
                again = _same(store, found, steps, budget)
                if again is not None:
                    high, best = middle, again
                else:
                    low = middle + 1
    return best
