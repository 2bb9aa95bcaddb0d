"""The source map accounts for every sentence of the five documents."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memconform.catalogue import load_catalogue
from memconform.resources import spec_dir
from memconform.sourcemap import check, normalise, units

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
needs_seeds = pytest.mark.skipif(
    not SEEDS.is_dir(),
    reason=f"the source documents are not at {SEEDS} (they are in CI); the map cannot be checked",
)


@needs_seeds
def test_every_sentence_of_every_document_is_accounted_for() -> None:
    problems = check(SEEDS, spec_dir() / "sources", load_catalogue().ids)
    assert problems == []


@needs_seeds
def test_an_unmapped_sentence_is_reported(tmp_path: Path) -> None:
    documents = tmp_path / "seeds"
    shutil.copytree(SEEDS, documents)
    target = sorted(documents.glob("000_*.txt"))[0]
    target.write_text(
        target.read_text(encoding="utf-8") + "\n\nA store must now also sing.\n", encoding="utf-8"
    )
    problems = check(documents, spec_dir() / "sources", load_catalogue().ids)
    assert any("unmapped unit" in p for p in problems)


@needs_seeds
def test_an_entry_for_a_removed_sentence_and_an_unknown_rule_are_reported(tmp_path: Path) -> None:
    maps = tmp_path / "sources"
    shutil.copytree(spec_dir() / "sources", maps)
    first = sorted(maps.glob("*.toml"))[0]
    first.write_text(
        first.read_text(encoding="utf-8")
        + '\n[[unit]]\nsection = "Nowhere"\nhash = "0000000000"\nrules = ["ST-998"]\n',
        encoding="utf-8",
    )
    problems = check(SEEDS, maps, load_catalogue().ids)
    assert any("matches no unit" in p for p in problems)
    assert any("unknown rule ST-998" in p for p in problems)


def test_units_split_sentences_rows_and_code_blocks() -> None:
    text = (
        "Title\n\nOne sentence. Another one!\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n"
        "```\ncode\n```\n"
    )
    found = units(text)
    assert [u.text for u in found] == ["One sentence.", "Another one!", "| a | b |", "| 1 | 2 |",
                                       "```\ncode\n```"]
    assert {u.section for u in found} == {"Title"}


def test_normalise_ignores_typography_and_spacing() -> None:
    assert normalise("It’s  a — test") == normalise("it's a - test")
