"""Second conditions: under which further conditions each runtime rule must be shown to hold.

Bugs hide where two conditions meet (a refused append while streaming, a
failure followed by a second run). ``spec/second-conditions.toml`` lists, for
every runtime rule of the catalogue, the second conditions that apply to it;
an empty list says explicitly that none does, so the table is total.

The vocabulary is small (:data:`CONDITIONS`): ``streaming``, ``second-run``,
``guardrail``, ``approval``, ``store-refusal`` and ``restart``; the table's
``[conditions]`` section describes each one and must name exactly these.

A scenario row exercises a condition when it carries the tag
``@with-<condition>`` (on its Scenario or on its Examples block, or inherited
from its Rule or Feature). The tag is an explicit claim made by whoever wrote
the row, never guessed from step text; :mod:`memconform.lint` requires, for
every listed (rule, condition) pair, at least one row tagged with both the rule
and ``@with-<condition>``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from memconform.catalogue import Catalogue
from memconform.resources import spec_dir

__all__ = [
    "CONDITIONS",
    "TAG_PREFIX",
    "SecondConditions",
    "condition_of_tag",
    "load_second_conditions",
    "parse_second_conditions",
]

CONDITIONS = ("streaming", "second-run", "guardrail", "approval", "store-refusal", "restart")
"""Every second condition the table may name, in the table's order."""

TAG_PREFIX = "with-"
"""A row's tag ``@with-<condition>`` says the row exercises ``<condition>``."""

FILE_NAME = "second-conditions.toml"


def condition_of_tag(tag: str) -> str | None:
    """The condition a tag (with or without ``@``) names, or ``None`` when the
    tag is not a ``with-`` tag. An unknown name is returned as it is, so the
    lint can report it."""
    name = tag.lstrip("@")
    return name[len(TAG_PREFIX):] if name.startswith(TAG_PREFIX) else None


@dataclass(frozen=True)
class SecondConditions:
    """The table: what each condition means and which apply to each rule."""

    meanings: Mapping[str, str]
    rules: Mapping[str, tuple[str, ...]]

    def pairs(self) -> Iterator[tuple[str, str]]:
        """Every listed (rule id, condition), rules in table order."""
        for rule, conditions in self.rules.items():
            for condition in conditions:
                yield rule, condition

    def problems(self, catalogue: Catalogue) -> list[str]:
        """Where the table and the catalogue disagree: a runtime rule missing, an
        id that is not a runtime rule, an unknown condition, a condition listed
        twice, or a ``[conditions]`` section naming other conditions."""
        found: list[str] = []
        if tuple(self.meanings) != CONDITIONS:
            found.append(
                f"{FILE_NAME}: [conditions] names {', '.join(self.meanings) or 'nothing'}; "
                f"expected {', '.join(CONDITIONS)}"
            )
        runtime = {r.id for r in catalogue if r.subject == "runtime"}
        for rule in sorted(runtime - set(self.rules)):
            found.append(f"{FILE_NAME}: runtime rule {rule} is not listed")
        for rule, conditions in self.rules.items():
            if rule not in runtime:
                found.append(f"{FILE_NAME}: {rule} is not a runtime rule of the catalogue")
            for condition in conditions:
                if condition not in CONDITIONS:
                    found.append(f"{FILE_NAME}: {rule} names the unknown condition {condition!r}")
            if len(set(conditions)) != len(conditions):
                found.append(f"{FILE_NAME}: {rule} lists a condition twice")
        return found


def parse_second_conditions(path: Path) -> SecondConditions:
    """Read the table at ``path``; ``ValueError`` when a value has the wrong shape."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    meanings = data.get("conditions", {})
    rules = data.get("rules", {})
    if not isinstance(meanings, dict) or not isinstance(rules, dict):
        raise ValueError(f"{path}: [conditions] and [rules] must be tables")
    table: dict[str, tuple[str, ...]] = {}
    for rule, conditions in rules.items():
        if not isinstance(conditions, list) or not all(isinstance(c, str) for c in conditions):
            raise ValueError(f"{path}: {rule} must list condition names")
        table[rule] = tuple(conditions)
    return SecondConditions({str(k): str(v) for k, v in meanings.items()}, table)


def load_second_conditions(folder: Path | None = None) -> SecondConditions:
    """The shipped table (or the one in ``folder``)."""
    return parse_second_conditions((folder or spec_dir()) / FILE_NAME)
