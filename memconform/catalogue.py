"""The rule catalogue: one TOML file per profile in ``spec/``.

Each file holds ``profile``, ``title``, ``documents`` and a list of
``[[rule]]`` tables with ``id``, ``level``, ``subject``, ``capability``
(optional), ``source`` (``document`` and ``section``), ``text`` and, where the
documents are silent, contradict themselves or differ from the real
implementations, ``decision``. A MAY rule may carry ``untested`` (a reason)
instead of a scenario. ``rests_on`` (optional) lists what the rule's checks
rest on that an adapter might supply itself instead of the library it wraps
(:class:`~memconform.contract.Provision` names: ``window``,
``timestamps``, ``ids``, ``run-ids``, ``rounds``, ``turn-ids``); when the
adapter under test provides one of them, a passing rule is judged
``adapter-provided`` instead.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from memconform.contract import Capability, Provision
from memconform.resources import spec_dir

__all__ = [
    "DOCUMENTS",
    "LEVELS",
    "PROFILES",
    "PROFILE_PREFIXES",
    "SUBJECTS",
    "Catalogue",
    "CatalogueError",
    "Rule",
    "load_catalogue",
]

PROFILES = ("save-policy", "strict-write", "turns", "candidates", "persisted-state", "store")
PROFILE_PREFIXES = {
    "save-policy": "SP",
    "strict-write": "SW",
    "turns": "TU",
    "candidates": "CA",
    "persisted-state": "PS",
    "store": "ST",
}
LEVELS = ("MUST", "SHOULD", "MAY")
SUBJECTS = ("store", "runtime")
DOCUMENTS = {
    "000": "Save policies",
    "001": "Memory Policy (Commit Flags)",
    "002": "History and records",
    "003": "Manage Memory and Multiple Models",
    "004": "What an Agent Should Persist Between Steps and Runs",
}
"""The five source documents by file prefix (``spec/sources`` maps their sentences)."""

_ID = re.compile(r"^(SP|SW|TU|CA|PS|ST)-\d{3}$")
_CAPABILITIES = {c.value for c in Capability}
_PROVISIONS = {p.value for p in Provision}


class CatalogueError(ValueError):
    """The catalogue is malformed; the message names the file and the rule."""


@dataclass(frozen=True)
class Rule:
    """One testable rule."""

    id: str
    level: str
    profile: str
    subject: str
    capability: str | None
    source_document: str
    source_section: str
    text: str
    decision: str | None = None
    untested: str | None = None
    rests_on: tuple[str, ...] = ()
    """What the rule's checks rest on that an adapter may supply itself
    (:class:`~memconform.contract.Provision` names)."""

    @property
    def source(self) -> str:
        """``000 · 1. Save each completed message batch``."""
        return f"{self.source_document} · {self.source_section}"

    @property
    def source_title(self) -> str:
        """The title of each source document (a rule may cite several: ``000, 003``)."""
        return ", ".join(
            DOCUMENTS.get(d.strip(), d.strip()) for d in self.source_document.split(",")
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON form printed by ``memconform rules --format json``."""
        return {
            "id": self.id,
            "level": self.level,
            "profile": self.profile,
            "subject": self.subject,
            "capability": self.capability,
            "source": {
                "document": self.source_document,
                "title": self.source_title,
                "section": self.source_section,
            },
            "text": self.text,
            "decision": self.decision,
            "untested": self.untested,
            "rests_on": list(self.rests_on),
        }


def _rule(raw: Mapping[str, Any], profile: str, where: str) -> Rule:
    def field(name: str, required: bool = True) -> Any:
        value = raw.get(name)
        if required and (not isinstance(value, str) or not value.strip()):
            raise CatalogueError(f"{where}: field {name!r} is missing or empty")
        if value is not None and not isinstance(value, str):
            raise CatalogueError(f"{where}: field {name!r} must be text")
        return value

    rule_id = field("id")
    where = f"{where} ({rule_id})"
    if not _ID.match(rule_id) or not rule_id.startswith(PROFILE_PREFIXES[profile] + "-"):
        raise CatalogueError(
            f"{where}: id must look like {PROFILE_PREFIXES[profile]}-001 in profile {profile}"
        )
    level = field("level")
    if level not in LEVELS:
        raise CatalogueError(f"{where}: level must be one of {', '.join(LEVELS)}")
    subject = field("subject")
    if subject not in SUBJECTS:
        raise CatalogueError(f"{where}: subject must be one of {', '.join(SUBJECTS)}")
    capability = field("capability", required=False) or None
    if capability is not None and capability not in _CAPABILITIES:
        raise CatalogueError(f"{where}: unknown capability {capability!r}")
    source = raw.get("source")
    if not isinstance(source, Mapping):
        raise CatalogueError(f"{where}: 'source' must be a table with document and section")
    document = source.get("document")
    if profile == "store":
        valid = isinstance(document, str) and all(
            d.strip() in DOCUMENTS for d in document.split(",")
        )
    else:
        valid = document in DOCUMENTS
    if not valid or not isinstance(source.get("section"), str):
        raise CatalogueError(f"{where}: source.document must name one of {', '.join(DOCUMENTS)}")
    untested = field("untested", required=False)
    if untested and level != "MAY":
        raise CatalogueError(f"{where}: only a MAY rule may be 'untested'")
    rests_on = raw.get("rests_on", [])
    if not isinstance(rests_on, list) or not all(isinstance(x, str) for x in rests_on):
        raise CatalogueError(f"{where}: 'rests_on' must be a list of provision names")
    unknown = sorted(set(rests_on) - _PROVISIONS)
    if unknown:
        raise CatalogueError(
            f"{where}: 'rests_on' names unknown provision {unknown[0]!r} "
            f"(known: {', '.join(p.value for p in Provision)})"
        )
    return Rule(
        id=rule_id,
        level=level,
        profile=profile,
        subject=subject,
        capability=capability,
        source_document=str(document),
        source_section=str(source["section"]),
        text=" ".join(field("text").split()),
        decision=field("decision", required=False),
        untested=untested,
        rests_on=tuple(dict.fromkeys(rests_on)),
    )


@dataclass(frozen=True)
class Catalogue:
    """All rules, in file order (profiles in :data:`PROFILES` order)."""

    rules: tuple[Rule, ...]
    version: str
    digest: str

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __getitem__(self, rule_id: str) -> Rule:
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise KeyError(rule_id)

    @property
    def ids(self) -> frozenset[str]:
        """Every rule id."""
        return frozenset(r.id for r in self.rules)

    def select(
        self,
        profiles: Iterable[str] = (),
        subjects: Iterable[str] = (),
        ids: Iterable[str] = (),
    ) -> tuple[Rule, ...]:
        """Rules matching every non-empty filter."""
        p, s, i = set(profiles), set(subjects), set(ids)
        return tuple(
            r
            for r in self.rules
            if (not p or r.profile in p) and (not s or r.subject in s) and (not i or r.id in i)
        )


def parse_catalogue(folder: Path) -> Catalogue:
    """Read and validate every profile file of ``folder``.

    Raises :class:`CatalogueError` for a missing profile, a malformed rule or a
    duplicate id.
    """
    rules: list[Rule] = []
    seen: set[str] = set()
    hasher = hashlib.sha256()
    version = "0"
    meta = folder / "catalogue.toml"
    if meta.exists():
        hasher.update(meta.read_bytes())
        version = str(tomllib.loads(meta.read_text(encoding="utf-8")).get("version", "0"))
    for profile in PROFILES:
        path = folder / f"{profile}.toml"
        if not path.exists():
            raise CatalogueError(f"{path}: profile file missing")
        raw_bytes = path.read_bytes()
        hasher.update(raw_bytes)
        try:
            data = tomllib.loads(raw_bytes.decode("utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise CatalogueError(f"{path.name}: {exc}") from None
        if data.get("profile") != profile:
            raise CatalogueError(f"{path.name}: 'profile' must be {profile!r}")
        for n, raw in enumerate(data.get("rule", []), 1):
            rule = _rule(raw, profile, f"{path.name} rule {n}")
            if rule.id in seen:
                raise CatalogueError(f"{path.name}: duplicate rule id {rule.id}")
            seen.add(rule.id)
            rules.append(rule)
    return Catalogue(tuple(rules), version, hasher.hexdigest()[:16])


@cache
def load_catalogue() -> Catalogue:
    """The installed catalogue (read once per process)."""
    return parse_catalogue(spec_dir())
