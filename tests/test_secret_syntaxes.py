"""The table of secret syntaxes: every family has rows, every row is removed by the
reference digest and let through when only its family is missing, and the
strict-write redaction scenarios name exactly the table's rows under their rules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memconform.mutants.strict_write import MUTANTS
from memconform.resources import features_dir
from memconform.simulator.digest import SEED_RULES, digest_text
from memconform.simulator.secret_filter import KIT_FAMILIES, SECRET_FAMILIES, SEED_FAMILIES
from memconform.steps.secret_syntaxes import SecretSyntax, load_secret_syntaxes, secret_syntax

ROWS = list(load_secret_syntaxes().values())
TASK = "ai.labs.llm"


def test_every_family_has_a_row_and_its_rule() -> None:
    assert {r.family for r in ROWS} == SECRET_FAMILIES
    assert all(r.rule == "SW-019" for r in ROWS if r.family in SEED_FAMILIES)
    assert all(r.rule == "SW-031" for r in ROWS if r.family in KIT_FAMILIES)


def test_an_unknown_row_is_named_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match="bearer"):
        secret_syntax("no-such-row")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_the_reference_removes_the_row_and_only_its_family_lets_it_through(
    row: SecretSyntax,
) -> None:
    text = digest_text(TASK, row.error)
    assert text.startswith(f"Task 'eddi://{TASK}' failed: ")
    assert not [s for s in row.secrets if s in text], text
    gap = replace(SEED_RULES, secret_families=SECRET_FAMILIES - {row.family})
    assert [s for s in row.secrets if s in digest_text(TASK, row.error, gap)]


def _examples(rule: str) -> list[str]:
    """The rows named in the Examples of the outline tagged ``rule``."""
    lines = (features_dir() / "strict-write" / "digest_secrets.feature").read_text(
        encoding="utf-8").splitlines()
    names: list[str] = []
    inside = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("@"):
            inside = f"@{rule}" in stripped.split()
        elif inside and stripped.startswith("|") and stripped != "| syntax |":
            name = stripped.strip("|").strip()
            if name != "syntax":
                names.append(name)
    return names


@pytest.mark.parametrize("rule", ["SW-019", "SW-031"])
def test_the_redaction_scenarios_name_every_row_under_its_rule(rule: str) -> None:
    assert _examples(rule) == [r.name for r in ROWS if r.rule == rule]


def test_every_family_has_a_mutant_claiming_its_rule() -> None:
    claims = {m.name: m.kills for m in MUTANTS}
    for family in SECRET_FAMILIES:
        name = "sw-digest-keeps-bearer" if family == "bearer" else f"sw-filter-misses-{family}"
        rule = "SW-019" if family in SEED_FAMILIES else "SW-031"
        assert rule in claims[name], name
