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

:func:`unknown_rule_ids` checks the code against the catalogue: every rule id
that a step module, a mutant, a generated check or the second-conditions table
names must exist (see its docstring for what counts as naming one).
:func:`main` runs both.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from memconform.catalogue import Catalogue
from memconform.second_conditions import CONDITIONS, SecondConditions, condition_of_tag

__all__ = [
    "RULE_ID_SOURCES",
    "ScenarioInfo",
    "UnknownRuleId",
    "lint",
    "main",
    "rule_id_sources",
    "scenarios_in",
    "unknown_rule_ids",
]

RULE_TAG = re.compile(r"^@?(SP|SW|TU|CA|PS|ST)-\d+$")
_LOOKS_LIKE_RULE = re.compile(r"^@?[A-Z]{2}-\d+$")
_RULE_ID_IN_TEXT = re.compile(r"(?<![A-Za-z0-9-])[A-Z]{2}-\d+(?![0-9])")


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


RULE_ID_SOURCES: tuple[str, ...] = ("steps", "mutants", "properties", "second_conditions.py")
"""The parts of the package whose rule ids :func:`unknown_rule_ids` checks, as
paths under the package folder: a folder is walked for every ``.py`` file at any
depth, so a module split or added later is checked without being listed."""

SECOND_CONDITIONS_DATA = "second-conditions.toml"
"""The second-conditions table in ``spec/``, checked line by line with the code."""


@dataclass(frozen=True)
class UnknownRuleId:
    """A rule id named in the kit's code or data that the catalogue does not hold."""

    path: Path
    line: int
    rule_id: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule_id} names no rule in the catalogue"


def rule_id_sources(package: Path | None = None, spec: Path | None = None) -> list[Path]:
    """Every file whose rule ids must exist: each ``.py`` file under the
    :data:`RULE_ID_SOURCES` of ``package`` (default: the installed ``memconform``
    folder), found by walking, and the second-conditions table of ``spec``
    (default: :func:`~memconform.resources.spec_dir`), in path order. A listed
    part or the table that does not exist is left out."""
    if package is None:
        import memconform

        package = Path(memconform.__file__).resolve().parent
    if spec is None:
        from memconform.resources import spec_dir

        spec = spec_dir()
    found: set[Path] = set()
    for part in RULE_ID_SOURCES:
        where = package / part
        if where.is_dir():
            found.update(where.rglob("*.py"))
        elif where.is_file():
            found.add(where)
    data = spec / SECOND_CONDITIONS_DATA
    if data.is_file():
        found.add(data)
    return sorted(found)


def _ids_in(text: str) -> set[str]:
    return {m.group(0) for m in _RULE_ID_IN_TEXT.finditer(text)}


def _lines_naming(lines: list[str], first: int, last: int, rule_id: str) -> list[int]:
    """The 1-based lines in ``first..last`` whose raw text holds ``rule_id``."""
    return [n for n in range(first, last + 1)
            if n <= len(lines) and rule_id in _ids_in(lines[n - 1])]


def _python_mentions(source: str) -> Iterator[tuple[int, str]]:
    """(line, id) for each rule id in a string constant (docstrings, f-string
    parts and implicitly joined literals included) or a comment of ``source``."""
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            first = node.lineno
            last = node.end_lineno or first
            for rule_id in _ids_in(node.value):
                # a literal spanning lines: the lines of its source that hold the id
                for line in _lines_naming(lines, first, last, rule_id) or [first]:
                    yield line, rule_id
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            for rule_id in _ids_in(token.string):
                yield token.start[0], rule_id


def unknown_rule_ids(catalogue: Catalogue, files: Iterable[Path]) -> list[UnknownRuleId]:
    """Every rule id named in ``files`` that ``catalogue`` does not hold, in file
    and line order, once per (file, line, id).

    A rule id is two capitals, a hyphen and digits (``SP-001``; ``SQ-1`` counts
    too, so a mistyped prefix is caught). In a ``.py`` file the ids are read with
    :mod:`ast` from every string constant, so ``@decides("SP-001")``,
    ``Mismatch(..., rules=...)``, ``inconclusive(..., rules=[...])``, a mutant's
    ``kills`` and a generated check's rules all count however they are spelled;
    docstrings count deliberately, since a docstring citing a rule that does not
    exist misleads its reader as much as code does; comments, which :mod:`ast`
    drops, are read with :mod:`tokenize`. Any other file (the second-conditions
    TOML table) is read line by line, comments included. A ``.py`` file that does
    not parse is reported with the id ``(not valid Python)``.
    """
    found: set[UnknownRuleId] = set()
    for path in files:
        text = path.read_text(encoding="utf-8")
        mentions: Iterable[tuple[int, str]]
        if path.suffix == ".py":
            try:
                mentions = list(_python_mentions(text))
            except (SyntaxError, tokenize.TokenError) as exc:
                found.add(UnknownRuleId(path, getattr(exc, "lineno", None) or 0,
                                        "(not valid Python)"))
                continue
        else:
            mentions = ((n, i) for n, line in enumerate(text.splitlines(), 1)
                        for i in _ids_in(line))
        found.update(UnknownRuleId(path, n, i) for n, i in mentions if i not in catalogue.ids)
    return sorted(found, key=lambda p: (str(p.path), p.line, p.rule_id))


def main() -> int:
    """``python -m memconform.lint``: print each problem of the installed catalogue,
    features and second-conditions table, and each rule id the kit's code names
    that the catalogue lacks (:func:`unknown_rule_ids`); exit 0 when clean, 1
    otherwise."""
    from memconform.catalogue import load_catalogue
    from memconform.resources import features_dir
    from memconform.second_conditions import load_second_conditions

    catalogue = load_catalogue()
    problems = lint(catalogue, features_dir(), load_second_conditions())
    problems.extend(str(p) for p in unknown_rule_ids(catalogue, rule_id_sources()))
    for problem in problems:
        print(problem)
    print(f"memconform lint: {len(problems) or 'no'} problem{'' if len(problems) == 1 else 's'}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
