"""The catalogue loader accepts the shipped spec and rejects malformed rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.catalogue import (
    DOCUMENTS,
    LEVELS,
    PROFILES,
    CatalogueError,
    load_catalogue,
    parse_catalogue,
)
from memconform.resources import spec_dir


def test_the_shipped_catalogue_is_well_formed() -> None:
    catalogue = load_catalogue()
    assert len(catalogue) == len(catalogue.ids)
    for rule in catalogue:
        assert rule.level in LEVELS
        assert rule.profile in PROFILES
        assert all(d.strip() in DOCUMENTS for d in rule.source_document.split(","))
        assert rule.text.endswith((".", ")")), rule.id


def _write(tmp_path: Path, rule: str) -> Path:
    folder = tmp_path / "spec"
    folder.mkdir(parents=True)
    for profile in PROFILES:
        (folder / f"{profile}.toml").write_text(f'profile = "{profile}"\n', encoding="utf-8")
    (folder / "store.toml").write_text('profile = "store"\n' + rule, encoding="utf-8")
    return folder


GOOD = """
[[rule]]
id = "ST-001"
level = "MUST"
subject = "store"
source = { document = "000, 002", section = "s" }
text = "A store keeps order."
"""


def test_a_good_rule_loads(tmp_path: Path) -> None:
    catalogue = parse_catalogue(_write(tmp_path, GOOD))
    assert catalogue["ST-001"].source_document == "000, 002"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('id = "ST-001"', 'id = "SP-001"'), "id must look like ST-001"),
        (('level = "MUST"', 'level = "MUSTN\'T"'), "level must be one of"),
        (('subject = "store"', 'subject = "model"'), "subject must be one of"),
        (('document = "000, 002"', 'document = "007"'), "source.document"),
        (('text = "A store keeps order."', 'text = ""'), "'text' is missing"),
        (("subject", 'capability = "teleport"\nsubject'), "unknown capability"),
        (("subject", 'untested = "hard"\nsubject'), "only a MAY rule"),
    ],
)
def test_a_malformed_rule_is_rejected_with_its_id(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    with pytest.raises(CatalogueError, match=message):
        parse_catalogue(_write(tmp_path, GOOD.replace(*change, 1)))


def test_a_duplicate_id_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="duplicate rule id ST-001"):
        parse_catalogue(_write(tmp_path, GOOD + GOOD))


def test_the_digest_changes_with_the_content(tmp_path: Path) -> None:
    first = parse_catalogue(_write(tmp_path, GOOD)).digest
    second = parse_catalogue(_write(tmp_path / "b", GOOD.replace("order", "its order"))).digest
    assert first != second
    assert spec_dir().is_dir()
