"""The traceability lint: the shipped catalogue and features agree, and the lint
catches an untagged rule, an unknown tag, a duplicate name and a long Background;
every rule id the kit's steps, mutants, generated checks and second-conditions
table name exists, and a planted unknown id is reported where it stands."""

from __future__ import annotations

import textwrap
from pathlib import Path

import memconform
from memconform.catalogue import load_catalogue, parse_catalogue
from memconform.lint import lint, rule_id_sources, unknown_rule_ids
from memconform.resources import features_dir, spec_dir
from memconform.second_conditions import (
    CONDITIONS,
    SecondConditions,
    load_second_conditions,
)

PROFILES = ("save-policy", "strict-write", "turns", "candidates", "persisted-state", "store")


def _catalogue(tmp_path: Path, rules: dict[str, list[str]]) -> Path:
    folder = tmp_path / "spec"
    folder.mkdir()
    prefixes = {"save-policy": "SP", "strict-write": "SW", "turns": "TU", "candidates": "CA",
                "persisted-state": "PS", "store": "ST"}
    for profile in PROFILES:
        body = [f'profile = "{profile}"']
        for rule_id in rules.get(profile, []):
            assert rule_id.startswith(prefixes[profile])
            body.append(textwrap.dedent(f"""
                [[rule]]
                id = "{rule_id}"
                level = "MUST"
                subject = "store"
                source = {{ document = "000", section = "s" }}
                text = "A store keeps the rule {rule_id}."
            """))
        (folder / f"{profile}.toml").write_text("\n".join(body), encoding="utf-8")
    return folder


def _feature(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sample.feature"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def test_the_shipped_catalogue_and_features_agree() -> None:
    catalogue = load_catalogue()
    assert lint(catalogue, features_dir(), load_second_conditions()) == []


def test_the_second_conditions_table_lists_every_runtime_rule_once() -> None:
    table = load_second_conditions()
    catalogue = load_catalogue()
    assert set(table.rules) == {r.id for r in catalogue if r.subject == "runtime"}
    assert tuple(table.meanings) == CONDITIONS
    assert table.problems(catalogue) == []


def _runtime_catalogue(tmp_path: Path) -> Path:
    folder = _catalogue(tmp_path, {})
    (folder / "save-policy.toml").write_text(textwrap.dedent("""
        profile = "save-policy"
        [[rule]]
        id = "SP-001"
        level = "MUST"
        subject = "runtime"
        source = { document = "000", section = "s" }
        text = "A runtime keeps the rule SP-001."
    """), encoding="utf-8")
    return folder


def test_lint_reports_a_listed_pair_without_a_row(tmp_path: Path) -> None:
    catalogue = parse_catalogue(_runtime_catalogue(tmp_path))
    meanings = {c: c for c in CONDITIONS}
    table = SecondConditions(meanings, {"SP-001": ("streaming", "restart")})
    features = _feature(tmp_path / "features", """
        Feature: sample
          Scenario Outline: one <x>
            Given something <x>

            @SP-001
            Examples: plain
              | x |
              | 1 |

            @with-restart
            Examples: restarted, but not tagged with the rule
              | x |
              | 2 |

          @SP-001 @with-streaming
          Scenario: streamed
            Given something
    """)
    assert lint(catalogue, features, table) == [
        "SP-001: no row tagged with this rule exercises the second condition restart "
        "(@with-restart)"
    ]


def test_lint_reports_an_incomplete_table_and_unknown_conditions(tmp_path: Path) -> None:
    catalogue = parse_catalogue(_runtime_catalogue(tmp_path))
    meanings = {c: c for c in CONDITIONS}
    table = SecondConditions(meanings, {"SP-002": ("sunshine",)})
    features = _feature(tmp_path / "features", """
        Feature: sample
          @SP-001 @with-moonlight
          Scenario: one
            Given something
    """)
    problems = lint(catalogue, features, table)
    assert any("runtime rule SP-001 is not listed" in p for p in problems)
    assert any("SP-002 is not a runtime rule" in p for p in problems)
    assert any("unknown condition 'sunshine'" in p for p in problems)
    assert any("@with-moonlight names no second condition" in p for p in problems)


def test_every_profile_has_rules_of_both_subjects_overall() -> None:
    catalogue = load_catalogue()
    assert {r.profile for r in catalogue} == set(PROFILES)
    assert {r.subject for r in catalogue} == {"store", "runtime"}
    assert spec_dir().is_dir()


def test_lint_reports_a_rule_that_no_scenario_tags(tmp_path: Path) -> None:
    catalogue = parse_catalogue(_catalogue(tmp_path, {"store": ["ST-001", "ST-002"]}))
    features = _feature(tmp_path / "features", """
        Feature: sample
          @ST-001
          Scenario: one
            Given something
    """)
    assert lint(catalogue, features) == ["ST-002: no scenario is tagged with this rule"]


def test_lint_reports_a_tag_naming_no_rule(tmp_path: Path) -> None:
    catalogue = parse_catalogue(_catalogue(tmp_path, {"store": ["ST-001"]}))
    features = _feature(tmp_path / "features", """
        Feature: sample
          @ST-001 @ST-999
          Scenario: one
            Given something
    """)
    problems = lint(catalogue, features)
    assert len(problems) == 1
    assert "@ST-999 names no rule" in problems[0]


def test_lint_reports_duplicate_names_untagged_scenarios_and_long_backgrounds(
    tmp_path: Path,
) -> None:
    catalogue = parse_catalogue(_catalogue(tmp_path, {"store": ["ST-001"]}))
    features = _feature(tmp_path / "features", """
        @ST-001
        Feature: sample
          Background:
            Given a
            And b
            And c
            And d

          Rule: inherited tags count
            Scenario: same
              Given x

            Scenario: same
              Given y
    """)
    problems = lint(catalogue, features)
    assert any("Background has 4 steps" in p for p in problems)
    assert any("'same' is already used" in p for p in problems)
    untagged = _feature(tmp_path / "other", """
        Feature: other
          Scenario: lonely
            Given x
    """)
    assert any("carries no rule tag" in p for p in lint(catalogue, untagged))


def test_lint_accepts_an_untested_may_rule(tmp_path: Path) -> None:
    folder = _catalogue(tmp_path, {})
    (folder / "store.toml").write_text(textwrap.dedent("""
        profile = "store"
        [[rule]]
        id = "ST-001"
        level = "MAY"
        subject = "store"
        source = { document = "000", section = "s" }
        text = "A store may do something no scenario can observe."
        untested = "nothing outside the store can observe it"
    """), encoding="utf-8")
    catalogue = parse_catalogue(folder)
    assert lint(catalogue, _feature(tmp_path / "features", "Feature: empty\n")) == []


def test_every_rule_id_the_code_names_exists() -> None:
    catalogue = load_catalogue()
    sources = rule_id_sources()
    package = Path(memconform.__file__).resolve().parent
    for part in ("steps", "mutants", "properties"):
        assert set((package / part).rglob("*.py")) <= set(sources), part
    assert package / "second_conditions.py" in sources
    assert spec_dir() / "second-conditions.toml" in sources
    assert unknown_rule_ids(catalogue, sources) == []


def test_the_id_check_reads_the_real_code(tmp_path: Path) -> None:
    """Against a catalogue of store rules only, the save-policy ids of the real
    step modules, mutants and table are reported: the check is not vacuous."""
    catalogue = parse_catalogue(_catalogue(tmp_path, {"store": ["ST-001"]}))
    unknown = unknown_rule_ids(catalogue, rule_id_sources())
    named = {(p.path.parent.name, p.rule_id) for p in unknown}
    for part in ("steps", "mutants", "properties", "spec"):
        assert any(where == part and i.startswith("SP-") for where, i in named), part
    assert "ST-001" not in {p.rule_id for p in unknown}


def test_the_id_check_reports_a_planted_unknown_id(tmp_path: Path) -> None:
    package = tmp_path / "package"
    family = package / "steps" / "new_family"
    family.mkdir(parents=True)
    step = family / "checks.py"
    step.write_text(textwrap.dedent('''\
        """Checks of a new family.

        The docstring cites TU-997, which is no rule.
        """
        from memconform.steps.common import Mismatch, decides


        @decides("SP-001", "SP-999")
        def check(seen: int) -> None:
            if seen:  # see CA-996
                raise Mismatch("wrong", rules=("SW-998",))
            label = f"SP-001 and ST-994 at {seen}"
    '''), encoding="utf-8")
    (package / "mutants").mkdir()
    (package / "mutants" / "split.py").write_text(
        'KILLS = frozenset({"SQ-1"})\n', encoding="utf-8")
    (package / "properties").mkdir()
    (package / "properties" / "broken.py").write_text("def (:\n", encoding="utf-8")
    (package / "simulator").mkdir()
    (package / "simulator" / "elsewhere.py").write_text('"SP-993"\n', encoding="utf-8")
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "second-conditions.toml").write_text(
        '[rules]\nSP-001 = []\nSP-995 = ["restart"]  # not PS-992 either\n', encoding="utf-8")
    catalogue = load_catalogue()
    sources = rule_id_sources(package, spec)
    assert package / "simulator" / "elsewhere.py" not in sources
    problems = unknown_rule_ids(catalogue, sources)
    assert [(p.path.name, p.line, p.rule_id) for p in problems] == [
        ("split.py", 1, "SQ-1"),
        ("broken.py", 1, "(not valid Python)"),
        ("checks.py", 3, "TU-997"),
        ("checks.py", 8, "SP-999"),
        ("checks.py", 10, "CA-996"),
        ("checks.py", 11, "SW-998"),
        ("checks.py", 12, "ST-994"),
        ("second-conditions.toml", 3, "PS-992"),
        ("second-conditions.toml", 3, "SP-995"),
    ]
    assert str(problems[2]) == f"{step}:3: TU-997 names no rule in the catalogue"
