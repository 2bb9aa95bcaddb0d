"""The reference simulator behind an adapter that lies in every claim field.

Each observation schema (``spec/schemas/observation-*.schema.json``) marks its
fields as the caller's view (outcomes, replies, errors, stream events,
``taskErrors``, returned memories, exports), as claims about internals (listed
in ``x-claims``: what the model was sent, which messages the run made, the
internal steps, evictions, steps run) or as added by the kit (``x-kit``: the
ledger and the timeline). A claim never decides a verdict: the kit reads the
same facts from its own timeline (its fake model's requests, its recording
store, its tools). This adapter keeps every caller's field as the simulator
gave it, deletes (``deleting_runtime``) or falsifies (``lying_runtime``) every
claim, and tampers with the environment's ``ledger``; the suite must judge it
exactly as it judges the simulator.

Document 003 also makes a candidate's ``internal_steps`` part of the answer, so
the rules about that record (CA-017 to CA-020) compare it with the timeline: a
lie there fails those rules and no other (``steps_lying_runtime``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memconform.simulator.runtime import Simulator
from memconform.values import JSONValue

__all__ = [
    "CLAIMS", "RECORD_CLAIMS", "LyingRuntime", "deleting_runtime", "lying_runtime",
    "steps_lying_runtime",
]

SCHEMAS = Path(__file__).resolve().parent.parent / "spec" / "schemas"

CLAIMS: dict[str, list[str]] = {
    path.name.removeprefix("observation-").removesuffix(".schema.json"):
        list(json.loads(path.read_text("utf-8")).get("x-claims", []))
    for path in sorted(SCHEMAS.glob("observation-*.schema.json"))
}
"""Each profile's claim fields, as its observation schema lists them
(``runs[].model_calls``: the ``model_calls`` of every item of ``runs``)."""

RECORD_CLAIMS = frozenset({"responses[].inputs[].candidates[].internal_steps"})
"""Claims a document also makes part of the answer: lied about only by
``steps_lying_runtime``."""

_FAKE_EFFECT: dict[str, JSONValue] = {"tool": "lie", "call_id": "lie-1", "effect": "lie"}


def plausible_lie(value: Any) -> Any:
    """A value of the same kind that is wrong: a list loses its last item and is
    reversed, a flag flips, a number grows, a text changes."""
    if isinstance(value, list):
        return [plausible_lie(v) if isinstance(v, dict) else v for v in reversed(value[:-1])]
    if isinstance(value, dict):
        return {k: plausible_lie(v) for k, v in value.items()}
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + " (lie)"
    return value


def _rewrite(node: Any, path: list[str], lie: bool) -> None:
    if not isinstance(node, dict) or not path:
        return
    head, rest = path[0], path[1:]
    many = head.endswith("[]")
    key = head.removesuffix("[]")
    if key not in node:
        return
    if not rest and not many:
        if lie:
            node[key] = plausible_lie(node[key])
        else:
            del node[key]
        return
    children = node[key] if many and isinstance(node[key], list) else [node[key]]
    for child in children:
        _rewrite(child, rest, lie)


class LyingRuntime:
    """The simulator, with every claim deleted (``lie=False``) or falsified."""

    def __init__(self, *, lie: bool, records_too: bool = False) -> None:
        self.inner = Simulator()
        self.lie = lie
        self.records_too = records_too

    @property
    def profiles(self) -> frozenset[str]:
        """The simulator's profiles."""
        return self.inner.profiles

    def execute(self, script: Mapping[str, Any], env: Any) -> Mapping[str, JSONValue]:
        """Run the simulator, then rewrite the claims of its answer and the ledger."""
        answer: dict[str, Any] = copy.deepcopy(dict(self.inner.execute(script, env)))
        if self.lie:
            env.ledger.append(dict(_FAKE_EFFECT))
        else:
            env.ledger.clear()
        for claim in CLAIMS.get(str(script.get("profile")), []):
            if claim in RECORD_CLAIMS and not self.records_too:
                continue
            _rewrite(answer, claim.split("."), self.lie)
        answer["ledger"] = [dict(_FAKE_EFFECT)]
        answer["timeline"] = []
        return answer


def lying_runtime() -> LyingRuntime:
    """The simulator with every claim falsified."""
    return LyingRuntime(lie=True)


def deleting_runtime() -> LyingRuntime:
    """The simulator with every claim deleted."""
    return LyingRuntime(lie=False)


def steps_lying_runtime() -> LyingRuntime:
    """The simulator with every claim falsified, the candidates' internal steps too."""
    return LyingRuntime(lie=True, records_too=True)
