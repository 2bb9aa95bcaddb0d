"""Baselines: the known failures a run is allowed to have.

A baseline is a TOML file of entries::

    [[entry]]
    rule = "SP-004"                 # the rule id
    reason = "why it fails today"   # required, shown in every report
    expires = 2027-01-31            # optional TOML date (or "YYYY-MM-DD")
    issue = "https://…"             # optional link to the tracking issue

A listed rule that fails is ``xfail`` instead of ``fail`` or ``warn``; a listed
rule that passes is ``stale`` (the entry must go, and the gate fails). An
entry whose ``expires`` date lies before the run's start date counts as not
listed. Expiry is judged against the start time in the results header, never
against the clock, so re-rendering old results gives the same verdicts.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from memconform.catalogue import Catalogue

__all__ = [
    "Baseline",
    "BaselineEntry",
    "BaselineError",
    "check_baseline",
    "load_baseline",
    "parse_baseline",
]

_RULE_ID = re.compile(r"^(SP|SW|TU|CA|PS|ST)-\d{3}$")
_KEYS = {"rule", "reason", "expires", "issue"}


class BaselineError(ValueError):
    """The baseline file is malformed; the message names the file and the entry."""


@dataclass(frozen=True)
class BaselineEntry:
    """One known failure."""

    rule: str
    reason: str
    expires: date | None = None
    issue: str | None = None

    def expired_on(self, day: date | None) -> bool:
        """Whether the entry no longer counts on ``day`` (it is valid through
        ``expires`` itself). Without a day to judge by, an expiring entry counts
        as expired: a baseline never hides a failure by accident."""
        if self.expires is None:
            return False
        return day is None or day > self.expires

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form (``expires`` as ``YYYY-MM-DD`` or null)."""
        return {
            "rule": self.rule,
            "reason": self.reason,
            "expires": None if self.expires is None else self.expires.isoformat(),
            "issue": self.issue,
        }


@dataclass(frozen=True)
class Baseline:
    """The entries of one baseline file, in file order, one per rule."""

    entries: tuple[BaselineEntry, ...]
    source: str = "<baseline>"

    def get(self, rule_id: str) -> BaselineEntry | None:
        """The entry for ``rule_id``, if listed."""
        return self._index.get(rule_id)

    @cached_property
    def _index(self) -> dict[str, BaselineEntry]:
        return {entry.rule: entry for entry in self.entries}


def _date(value: Any, where: str) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise BaselineError(f"{where}: 'expires' must be a date such as 2027-01-31")


def parse_baseline(text: str, source: str = "<baseline>") -> Baseline:
    """Parse baseline TOML; raises :class:`BaselineError` naming what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BaselineError(f"{source}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"entry"})
    if unknown:
        raise BaselineError(f"{source}: unknown top-level key {unknown[0]!r} (use [[entry]])")
    raw_entries = data.get("entry", [])
    if not isinstance(raw_entries, list):
        raise BaselineError(f"{source}: 'entry' must be an array of tables ([[entry]])")
    entries: list[BaselineEntry] = []
    seen: set[str] = set()
    for n, raw in enumerate(raw_entries, 1):
        where = f"{source} entry {n}"
        if not isinstance(raw, dict):
            raise BaselineError(f"{where}: must be a table")
        extra = sorted(set(raw) - _KEYS)
        if extra:
            raise BaselineError(f"{where}: unknown key {extra[0]!r}")
        rule = raw.get("rule")
        if not isinstance(rule, str) or not _RULE_ID.match(rule):
            raise BaselineError(f"{where}: 'rule' must be a rule id such as SP-004")
        if rule in seen:
            raise BaselineError(f"{where}: rule {rule} is listed twice")
        seen.add(rule)
        reason = raw.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise BaselineError(f"{where} ({rule}): 'reason' is required and must be text")
        issue = raw.get("issue")
        if issue is not None and not isinstance(issue, str):
            raise BaselineError(f"{where} ({rule}): 'issue' must be text")
        expires = None if "expires" not in raw else _date(raw["expires"], f"{where} ({rule})")
        entries.append(BaselineEntry(rule, reason.strip(), expires, issue))
    return Baseline(tuple(entries), source)


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file; raises :class:`BaselineError` when it is malformed
    (and ``OSError`` when it cannot be read)."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path.name}: not UTF-8 text ({exc.reason})") from None
    return parse_baseline(text, path.name)


def check_baseline(baseline: Baseline, catalogue: Catalogue) -> None:
    """Raise :class:`BaselineError` when the baseline names a rule the catalogue
    does not hold (a typo would otherwise excuse nothing and say nothing).
    Call it right after :func:`load_baseline`; :func:`build_results` calls it
    too."""
    ids = catalogue.ids
    for entry in baseline.entries:
        if entry.rule not in ids:
            raise BaselineError(
                f"{baseline.source}: rule {entry.rule} is not in catalogue {catalogue.version}"
            )
