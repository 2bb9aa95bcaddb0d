"""The source map accounts for every sentence of the five documents."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memconform.catalogue import load_catalogue
from memconform.resources import spec_dir
from memconform.sourcemap import SOURCES_ENV, check, normalise, sources_folder, units
from tests.adapters_support import in_ci

ROOT = Path(__file__).resolve().parent.parent
SEEDS = sources_folder() or Path(f"${SOURCES_ENV}")
_MISSING = (
    f"the source documents are not found ({SOURCES_ENV}={os.environ.get(SOURCES_ENV, '')!r}): "
    f"set it to the folder of the five documents; the map cannot be checked"
)


def needs_seeds(test: Callable[..., None]) -> Callable[..., None]:
    """Run ``test`` with the documents; without them skip, or fail under CI=true."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        if not SEEDS.is_dir():
            if in_ci():
                pytest.fail(f"{_MISSING} (CI=true: the documents must be there)", pytrace=False)
            pytest.skip(_MISSING)
        test(*args, **kwargs)

    return run


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


def _tiny(tmp_path: Path, text: str, digest_of: str) -> tuple[Path, Path]:
    documents, maps = tmp_path / "docs", tmp_path / "maps"
    documents.mkdir()
    maps.mkdir()
    (documents / "000_x.txt").write_text(text, encoding="utf-8")
    unit = units(digest_of)[0]
    digest = hashlib.sha256(digest_of.encode("utf-8")).hexdigest()
    (maps / "000.toml").write_text(
        f'document = "000_x.txt"\nsha256 = "{digest}"\n\n[[unit]]\nsection = "{unit.section}"\n'
        f'hash = "{unit.hash}"\nstatus = "informative"\nreason = "a test"\n',
        encoding="utf-8",
    )
    return documents, maps


def test_a_copy_of_a_document_with_other_bytes_fails_the_check(tmp_path: Path) -> None:
    written_for = "Title\n\nA store keeps messages.\n"
    documents, maps = _tiny(tmp_path, written_for, written_for)
    assert check(documents, maps, set()) == []
    (documents / "000_x.txt").write_text(written_for + "\n", encoding="utf-8")
    problems = check(documents, maps, set())
    assert len(problems) == 1
    assert problems[0].startswith("000_x.txt: not the copy this map was written for")


def _check_command(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memconform.sourcemap", "check", *args],
        capture_output=True, text=True, check=False, timeout=120, cwd=ROOT,
        env={**os.environ, **env},
    )


def test_the_check_command_names_the_variable_when_the_documents_are_missing(
    tmp_path: Path,
) -> None:
    done = _check_command({SOURCES_ENV: str(tmp_path / "nowhere")})
    assert done.returncode == 5
    assert f"set {SOURCES_ENV} to the folder holding the five of them" in done.stderr


def test_under_ci_a_missing_document_fails_instead_of_skipping(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
         "tests/test_sourcemap.py", "-k", "accounted_for"],
        capture_output=True, text=True, check=False, timeout=300, cwd=ROOT,
        env={**env, "CI": "true", SOURCES_ENV: str(tmp_path / "nowhere")},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CI=true: the documents must be there" in done.stdout
