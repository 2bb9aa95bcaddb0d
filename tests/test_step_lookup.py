"""The step-lookup memo gives each test the step definitions pytest-bdd alone
would give it: a step overridden in a sub-folder's conftest or in a module
keeps its override there and its original elsewhere, and a step defined only
in one module is unknown in another."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

FEATURE = """\
Feature: lookup
  Scenario: says
    Given a word
    Then the word is "{word}"
"""

BASE = """\
from pytest_bdd import given, then, parsers

@given("a word", target_fixture="word")
def a_word():
    return "base"

@then(parsers.parse('the word is "{expected}"'))
def the_word_is(word, expected):
    assert word == expected
"""

OVERRIDE = """\
from pytest_bdd import given

@given("a word", target_fixture="word")
def a_word():
    return "{word}"
"""

TEST = """\
from pytest_bdd import scenarios
{extra}
scenarios("lookup.feature")
"""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def _suite(root: Path) -> None:
    _write(root, "conftest.py", "pytest_plugins = ['memconform_memo_probe']\n" + BASE)
    _write(root, "memconform_memo_probe.py", (
        "from memconform.steps._step_lookup import install\n"
        "def pytest_configure(config):\n    install()\n"
        "def pytest_sessionfinish(session):\n"
        "    memo = getattr(session._fixturemanager, '_memconform_step_memo', {})\n"
        "    open('memo.txt', 'w').write(str(len(memo)))\n"
    ))
    _write(root, "a/lookup.feature", FEATURE.format(word="base"))
    _write(root, "a/test_a.py", TEST.format(extra=""))
    _write(root, "b/conftest.py", OVERRIDE.format(word="from b"))
    _write(root, "b/lookup.feature", FEATURE.format(word="from b"))
    _write(root, "b/test_b.py", TEST.format(extra=""))
    _write(root, "c/lookup.feature", FEATURE.format(word="from c"))
    _write(root, "c/test_c.py", TEST.format(extra=OVERRIDE.format(word="from c")))
    _write(root, "d/lookup.feature", FEATURE.format(word="base"))
    _write(root, "d/test_d.py", TEST.format(extra=""))


def test_overrides_keep_their_place(tmp_path: Path) -> None:
    _suite(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "-o", "addopts=", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout
    assert int((tmp_path / "memo.txt").read_text()) >= 8  # the memo answered the lookups
