"""Write a shrunk counterexample as a Gherkin scenario that needs no Hypothesis.

The scenario replays the recorded operations on the store under test and on
the reference store (steps in ``memconform.steps.replay``) and fails where they
answer differently. Operations are written as ASCII-only JSON, so any
non-printable or non-ASCII text in a counterexample is escaped, never lost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["export_counterexample", "feature_text"]


def feature_text(
    name: str, rules: Sequence[str], steps: Sequence[dict[str, Any]], origin: str
) -> str:
    """The ``.feature`` text for one counterexample."""
    body = json.dumps(list(steps), ensure_ascii=True, sort_keys=True, indent=2)
    indented = "\n".join("      " + line for line in body.splitlines())
    tags = " ".join(f"@{r}" for r in sorted(set(rules)))
    digest = hashlib.sha256(body.encode("ascii")).hexdigest()[:8]
    return (
        f"Feature: Counterexample {digest} found by the store properties\n"
        f"  Found by {origin}; it replays the shrunk operations on the store under\n"
        f"  test and on the reference store and fails where their answers differ.\n"
        f"  Keep it as a regression once the store is fixed.\n\n"
        f"  {tags}\n"
        f"  Scenario: Replayed counterexample {digest} of {name}\n"
        f"    Given a replay of recorded store operations\n"
        f"    When the recorded operations are replayed on the store and the reference:\n"
        f'      """\n{indented}\n      """\n'
        f"    Then the store answered every replayed operation like the reference\n"
    )


def export_counterexample(
    folder: Path, name: str, rules: Sequence[str], steps: Sequence[dict[str, Any]], origin: str
) -> Path:
    """Write the scenario into ``folder`` and return its path (named by content)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = feature_text(name, rules, steps, origin)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    path = folder / f"counterexample-{digest}.feature"
    path.write_text(text, encoding="utf-8")
    return path
