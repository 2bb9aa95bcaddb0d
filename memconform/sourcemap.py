"""Sentence-level traceability from the five source documents to the rules.

A document is cut into *units*: each sentence of running text, each table row
and each code block. Headings are not units; they name the section a unit is
in. A unit is located by its document, its section and a short hash of its
normalised text, so the map never quotes the documents.

The source map (``spec/sources/<document-prefix>.toml``) accounts for every
unit: either ``rules = [IDs]`` (the rules that encode it) or ``status =
"informative"`` / ``"out-of-scope"`` with a ``reason``. :func:`check` reports
unmapped units, entries that match no unit, and unknown rule IDs.

Each map also keeps the SHA-256 of the document it was written for, so a
different copy of a document fails the check instead of passing by chance.

The documents are not part of the kit: :data:`SOURCES_ENV` names the folder
holding the five of them (in the kit's CI, ``../shared/seeds`` beside the
clone; ``.ci/run`` sets and checks it).

``python -m memconform.sourcemap check [FOLDER]`` checks the map against the
documents (FOLDER defaults to ``$MEMCONFORM_SOURCES``); ``show DOCUMENT`` prints
a document's units with their section and hash, to help write the map (that
output is not committed).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tomllib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SOURCES_ENV", "STATUSES", "MapEntry", "Unit", "check", "load_map", "normalise",
    "sources_folder", "units",
]

SOURCES_ENV = "MEMCONFORM_SOURCES"
"""The environment variable naming the folder of the five source documents."""

STATUSES = ("informative", "out-of-scope")

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*]*\s+(?=[\"'(\[*`]?[A-Z0-9])")
_LIST_ITEM = re.compile(r"^\s*(?:[•*\-]|\d+\.)\s+")
_HEADING_END = (".", ":", ";", ",", "?", "!", "{", "(", "[")


def normalise(text: str) -> str:
    """NFKC, typographic quotes and dashes made plain, whitespace collapsed, lowercased."""
    text = unicodedata.normalize("NFKC", text)
    plain: dict[str, str | int | None] = {
        "’": "'", "‘": "'", "“": '"', "”": '"', "—": "-", "–": "-",
    }
    text = text.translate(str.maketrans(plain))
    return " ".join(text.split()).lower()


def _digest(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:10]


@dataclass(frozen=True)
class Unit:
    """One sentence, table row or code block of a document."""

    section: str
    hash: str
    text: str


def _is_heading(line: str, prev_blank: bool, next_blank: bool) -> bool:
    stripped = line.strip()
    if stripped.startswith("#"):
        return True
    if not stripped or len(stripped) > 70 or "\t" in stripped or "|" in stripped:
        return False
    if stripped.endswith(_HEADING_END) or stripped.startswith(("`", ">", "{", "}", "[", "\"")):
        return False
    if _LIST_ITEM.match(stripped) and not re.match(r"^\d+\.\s", stripped):
        return False
    return prev_blank or next_blank


def _sentences(paragraph: str) -> list[str]:
    text = " ".join(paragraph.split())
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def units(text: str) -> list[Unit]:
    """Cut a document into units, in document order."""
    lines = text.splitlines()
    out: list[Unit] = []
    section = ""
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            for sentence in _sentences(" ".join(paragraph)):
                out.append(Unit(section, _digest(sentence), sentence))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            block = [line]
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            block.append(lines[i] if i < len(lines) else "")
            joined = "\n".join(block)
            out.append(Unit(section, _digest(joined), joined))
            i += 1
            continue
        prev_blank = i == 0 or not lines[i - 1].strip()
        next_blank = i + 1 >= len(lines) or not lines[i + 1].strip()
        if not stripped:
            flush()
        elif "\t" in stripped or (stripped.startswith("|") and stripped.endswith("|")):
            flush()
            if not re.fullmatch(r"[|\s:\-]+", stripped):
                out.append(Unit(section, _digest(stripped), stripped))
        elif _is_heading(line, prev_blank, next_blank):
            flush()
            section = stripped.lstrip("#").strip()
        elif _LIST_ITEM.match(stripped):
            flush()
            paragraph.append(stripped)
        else:
            paragraph.append(stripped)
        i += 1
    flush()
    return out


@dataclass(frozen=True)
class MapEntry:
    """One line of the source map: a unit and what accounts for it."""

    section: str
    hash: str
    rules: tuple[str, ...]
    status: str | None
    reason: str | None


def load_map(path: Path) -> tuple[str, list[MapEntry]]:
    """Read one map file: ``(document file name, entries)``.

    Raises ``ValueError`` naming the entry when an entry is malformed.
    """
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    document = data.get("document")
    if not isinstance(document, str):
        raise ValueError(f"{path.name}: 'document' must name the source file")
    entries: list[MapEntry] = []
    for n, raw in enumerate(data.get("unit", []), 1):
        where = f"{path.name}: unit {n}"
        rules = tuple(raw.get("rules", ()))
        status = raw.get("status")
        reason = raw.get("reason")
        if not isinstance(raw.get("hash"), str) or not isinstance(raw.get("section"), str):
            raise ValueError(f"{where}: needs 'section' and 'hash'")
        if bool(rules) == bool(status):
            raise ValueError(f"{where}: give either 'rules' or 'status', not both or neither")
        if status is not None and (status not in STATUSES or not reason):
            raise ValueError(f"{where}: status must be one of {STATUSES} with a 'reason'")
        entries.append(MapEntry(raw["section"], raw["hash"], rules, status, reason))
    return document, entries


def sources_folder() -> Path | None:
    """The folder named by :data:`SOURCES_ENV`, or ``None`` when it is not set."""
    given = os.environ.get(SOURCES_ENV, "").strip()
    return Path(given) if given else None


def _expected_digest(map_path: Path) -> str | None:
    value = tomllib.loads(map_path.read_text(encoding="utf-8")).get("sha256")
    return value if isinstance(value, str) else None


def check(
    documents: Path, maps: Path, rule_ids: Iterable[str]
) -> list[str]:
    """Every problem found, as one line each; an empty list means the map is whole.

    ``documents`` holds the source files; ``maps`` holds one TOML map per document.
    """
    known = set(rule_ids)
    problems: list[str] = []
    mapped_documents: set[str] = set()
    for map_path in sorted(maps.glob("*.toml")):
        document, entries = load_map(map_path)
        mapped_documents.add(document)
        doc_path = documents / document
        if not doc_path.exists():
            problems.append(f"{map_path.name}: document {document} not found in {documents}")
            continue
        expected = _expected_digest(map_path)
        actual = hashlib.sha256(doc_path.read_bytes()).hexdigest()
        if expected is None:
            problems.append(f"{map_path.name}: keeps no 'sha256' of {document}")
        elif actual != expected:
            problems.append(
                f"{document}: not the copy this map was written for "
                f"(sha256 {actual[:12]}…, expected {expected[:12]}…)"
            )
        found = {(u.section, u.hash): u for u in units(doc_path.read_text(encoding="utf-8"))}
        keys = {(e.section, e.hash) for e in entries}
        for key, unit in found.items():
            if key not in keys:
                problems.append(
                    f"{document}: unmapped unit in section {unit.section!r} hash {unit.hash}"
                )
        for entry in entries:
            if (entry.section, entry.hash) not in found:
                problems.append(
                    f"{map_path.name}: entry {entry.section!r}/{entry.hash} matches no unit"
                )
            for rule in entry.rules:
                if rule not in known:
                    problems.append(f"{map_path.name}: unknown rule {rule} at {entry.hash}")
    for doc_path in sorted(documents.glob("*.txt")):
        if doc_path.name not in mapped_documents:
            problems.append(f"{doc_path.name}: no source map")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``check [FOLDER]``: check the map against the documents (exit 0 whole, 1 not,
    5 when no folder is named); ``show DOCUMENT``: print each unit as
    ``section | hash | text``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["check"] and len(args) <= 2:
        folder = Path(args[1]) if len(args) == 2 else sources_folder()
        if folder is None or not folder.is_dir():
            print(f"memconform sourcemap: the source documents are not found: set {SOURCES_ENV} "
                  f"to the folder holding the five of them (now: {folder})", file=sys.stderr)
            return 5
        from memconform.catalogue import load_catalogue
        from memconform.resources import spec_dir

        problems = check(folder, spec_dir() / "sources", load_catalogue().ids)
        for problem in problems:
            print(problem)
        print(f"memconform sourcemap: {folder}: "
              + (f"{len(problems)} problem(s)" if problems else "every sentence accounted for"))
        return 1 if problems else 0
    if len(args) != 2 or args[0] != "show":
        print("usage: python -m memconform.sourcemap check [FOLDER] | show DOCUMENT",
              file=sys.stderr)
        return 5
    for unit in units(Path(args[1]).read_text(encoding="utf-8")):
        print(f"{unit.section} | {unit.hash} | {unit.text[:110]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
