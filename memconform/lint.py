"""Traceability lint: the catalogue and the features must agree (``python -m memconform.lint``).

:func:`lint` returns one line per problem (an empty list is clean):

- every rule is tagged by at least one scenario (a MAY rule may carry an
  ``untested`` reason instead);
- every rule tag in the features names an existing rule;
- every scenario carries at least one rule tag;
- scenario names are unique across the suite;
- a Background has at most three steps;
- every ``@with-<condition>`` tag names a condition of
  :data:`~memconform.second_conditions.CONDITIONS`;
- given the second-conditions table (:mod:`memconform.second_conditions`), the
  table agrees with the catalogue (every runtime rule listed, nothing else) and
  every listed (rule, condition) pair has a row tagged with the rule and with
  ``@with-<condition>``.

Tags on a Feature, a Rule or an Examples block apply to the scenarios inside.
For the second-condition pairs a *row* is one Examples block (its tags, its
scenario's and the inherited ones) or one Scenario without Examples: the tags
of a scenario's other Examples blocks do not count for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from memconform.catalogue import Catalogue
from memconform.second_conditions import CONDITIONS, SecondConditions, condition_of_tag

__all__ = ["ScenarioInfo", "lint", "main", "scenarios_in"]

RULE_TAG = re.compile(r"^@?(SP|SW|TU|CA|PS|ST)-\d+$")
_LOOKS_LIKE_RULE = re.compile(r"^@?[A-Z]{2}-\d+$")


@dataclass(frozen=True)
class ScenarioInfo:
    """A scenario as the lint sees it: where it is, its name and all its tags."""

    path: Path
    line: int
    name: str
    tags: frozenset[str]
    row_tags: tuple[frozenset[str], ...] = ()
    """The tags of each row (one per Examples block; the scenario's own tags
    when it has no Examples)."""

    @property
    def rules(self) -> frozenset[str]:
        """The rule ids among the tags."""
        return frozenset(t for t in self.tags if RULE_TAG.match(t))


def _tags(node: dict[str, Any]) -> set[str]:
    return {t["name"].lstrip("@") for t in node.get("tags", [])}


def _walk(
    path: Path, children: Iterable[dict[str, Any]], inherited: set[str], problems: list[str]
) -> Iterator[ScenarioInfo]:
    for child in children:
        if "background" in child:
            steps = child["background"].get("steps", [])
            if len(steps) > 3:
                line = child["background"]["location"]["line"]
                problems.append(f"{path}:{line}: a Background has {len(steps)} steps (at most 3)")
        elif "rule" in child:
            rule = child["rule"]
            yield from _walk(path, rule.get("children", []), inherited | _tags(rule), problems)
        elif "scenario" in child:
            scenario = child["scenario"]
            own = inherited | _tags(scenario)
            rows = tuple(frozenset(own | _tags(e)) for e in scenario.get("examples", []))
            tags = own.union(*rows)
            yield ScenarioInfo(
                path, scenario["location"]["line"], scenario["name"], frozenset(tags),
                rows or (frozenset(own),),
            )


def scenarios_in(folder: Path, problems: list[str] | None = None) -> list[ScenarioInfo]:
    """Every scenario of every ``.feature`` file under ``folder``, in path order.

    A file Gherkin cannot parse adds a problem (when ``problems`` is given) and
    contributes no scenarios.
    """
    sink: list[str] = [] if problems is None else problems
    found: list[ScenarioInfo] = []
    for path in sorted(folder.rglob("*.feature")):
        try:
            document = Parser().parse(TokenScanner(path.read_text(encoding="utf-8")))
        except Exception as exc:  # the parser raises several error types
            sink.append(f"{path}: not valid Gherkin: {exc}")
            continue
        feature = cast(dict[str, Any] | None, document.get("feature"))
        if not feature:
            continue
        found.extend(_walk(path, feature.get("children", []), _tags(feature), sink))
    return found


def _condition_problems(
    table: SecondConditions, catalogue: Catalogue, scenarios: list[ScenarioInfo]
) -> list[str]:
    problems = table.problems(catalogue)
    covered: set[tuple[str, str]] = set()
    for scenario in scenarios:
        for tags in scenario.row_tags:
            conditions = {condition_of_tag(t) for t in tags} - {None}
            rules = {t for t in tags if RULE_TAG.match(t)}
            covered |= {(r, str(c)) for r in rules for c in conditions}
    for rule, condition in table.pairs():
        if (rule, condition) not in covered:
            problems.append(
                f"{rule}: no row tagged with this rule exercises the second condition "
                f"{condition} (@with-{condition})"
            )
    return problems


def lint(
    catalogue: Catalogue, features: Path, second_conditions: SecondConditions | None = None
) -> list[str]:
    """Every traceability problem between ``catalogue`` and the ``features`` folder
    (and, when given, the ``second_conditions`` table)."""
    problems: list[str] = []
    scenarios = scenarios_in(features, problems)
    tagged: set[str] = set()
    names: dict[str, ScenarioInfo] = {}
    for scenario in scenarios:
        where = f"{scenario.path}:{scenario.line}"
        if not scenario.rules:
            problems.append(f"{where}: scenario {scenario.name!r} carries no rule tag")
        for tag in scenario.tags:
            if _LOOKS_LIKE_RULE.match(tag) and tag not in catalogue.ids:
                problems.append(f"{where}: tag @{tag} names no rule in the catalogue")
            condition = condition_of_tag(tag)
            if condition is not None and condition not in CONDITIONS:
                problems.append(f"{where}: tag @{tag} names no second condition")
        tagged |= scenario.rules
        if scenario.name in names:
            first = names[scenario.name]
            problems.append(
                f"{where}: scenario name {scenario.name!r} is already used at "
                f"{first.path}:{first.line}"
            )
        names.setdefault(scenario.name, scenario)
    for rule in catalogue:
        if rule.id not in tagged and not rule.untested:
            problems.append(f"{rule.id}: no scenario is tagged with this rule")
    if second_conditions is not None:
        problems.extend(_condition_problems(second_conditions, catalogue, scenarios))
    return problems


def main() -> int:
    """``python -m memconform.lint``: print each problem of the installed catalogue,
    features and second-conditions table; exit 0 when clean, 1 otherwise."""
    from memconform.catalogue import load_catalogue
    from memconform.resources import features_dir
    from memconform.second_conditions import load_second_conditions

    problems = lint(load_catalogue(), features_dir(), load_second_conditions())
    for problem in problems:
        print(problem)
    print(f"memconform lint: {len(problems) or 'no'} problem{'' if len(problems) == 1 else 's'}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
