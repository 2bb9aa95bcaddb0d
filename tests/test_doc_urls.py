"""Every example store URL in the README and spec/ names the file it seems to.

``sqlite:///tmp/m.db`` is the relative path ``tmp/m.db``; ``/tmp/m.db`` needs
four slashes. An example whose path starts with a folder that only makes sense
at the root (``tmp/``, ``var/``, ``home/``...) but is written with three slashes
would create a stray folder beside the reader's working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from memconform.adapters.sqlite import sqlite_path

ROOT = Path(__file__).resolve().parent.parent
FILE_URL = re.compile(r"\b([a-z][a-z0-9+.-]*):(//+)([^\s`'\")\]|]+)")
ROOT_FOLDERS = ("tmp/", "var/", "home/", "Users/", "srv/", "opt/", "etc/", "data/")


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "spec").rglob("*.md"))]


def _file_urls() -> list[tuple[str, str]]:
    found = []
    for document in _documents():
        for match in FILE_URL.finditer(document.read_text(encoding="utf-8")):
            scheme, slashes = match[1], match[2]
            if len(slashes) >= 3 and (
                scheme.endswith(("sqlite", "sql", "sqlalchemy", "file"))
            ):
                found.append((document.relative_to(ROOT).as_posix(), match[0]))
    return found


def _claimed(url: str) -> str:
    """The path a reader takes the URL to name: after ``:///``, and absolute
    when a fourth slash follows."""
    rest = url.split(":", 1)[1][2:]  # drop '//'
    return rest[1:].split("?", 1)[0]


def test_the_examples_are_found() -> None:
    urls = {url for _, url in _file_urls()}
    assert "sqlite:////tmp/m.db" in urls
    assert "langgraph+sqlite:////tmp/lg/store.db" in urls


def test_every_example_url_resolves_to_the_path_it_claims() -> None:
    wrong = []
    for where, url in _file_urls():
        resolved = sqlite_path("sqlite:" + url.split(":", 1)[1])
        if resolved != _claimed(url):
            wrong.append(f"{where}: {url} opens {resolved!r}, not {_claimed(url)!r}")
        if resolved.startswith(ROOT_FOLDERS):
            wrong.append(
                f"{where}: {url} opens the relative path {resolved!r}; "
                f"write {url.replace(':///', ':////', 1)} for /{resolved}"
            )
    assert wrong == []


def test_the_url_table_says_an_absolute_path_needs_four_slashes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "an absolute path needs four slashes: `sqlite:////tmp/m.db` is `/tmp/m.db`" in readme
