"""The results model: what one run established, rule by rule.

``results.json`` is the single source of every report; HTML, JUnit XML, the
badge and the comparison page are renderings of a :class:`Results`. The file
has four parts:

- ``header``: what was judged and how (kit, catalogue, store or runtime
  identity, declared capabilities, seed, environment, start and finish times,
  selection, mode);
- ``rules``: one entry per catalogue rule, in catalogue order, with its
  verdict, the reason for it, and the evidence (scenarios with their outcome,
  failing step, expected vs observed, the store calls made, and a one-line
  command re-running just that rule);
- ``classes`` and ``conformance``: the conformance classes claimed and achieved;
- ``footer``: totals per verdict and whether the report is complete;
- ``coverage`` (only when the run measured code coverage, ``memconform run
  --coverage``): per file of the code under test, lines and branches executed,
  the lines no rule reached and the rules that reached the others (line
  numbers only, never the source).

Every catalogue rule has an entry, so totals always add up to the catalogue
size: a rule the run does not judge has the verdict ``not-scored`` with the
reason (another subject, not selected, untested by design). A scored rule that
no scenario exercised has the verdict ``not-run`` and makes the report
incomplete. A file without a footer, or with fewer rules than its catalogue
held and no stated selection, loads as incomplete.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memconform.catalogue import Rule
from memconform.reports.escaping import redact_identity
from memconform.reports.reader import Reader, ResultsError, coverage_of, fingerprint_of, names
from memconform.reports.vocabulary import (
    BASELINE_STATUSES,
    CLASS_STATUSES,
    EVIDENCE_OUTCOMES,
    MEASURED,
    OUTCOMES,
    VERDICTS,
    Outcome,
    Verdict,
)

__all__ = [
    "CLASS_STATUSES",
    "EVIDENCE_OUTCOMES",
    "FORMAT",
    "MEASURED",
    "OUTCOMES",
    "READABLE_FORMATS",
    "VERDICTS",
    "BaselineUse",
    "ClassResult",
    "Footer",
    "Results",
    "ResultsError",
    "RuleResult",
    "ScenarioEvidence",
    "json_safe",
    "load_results",
    "totals_of",
]

FORMAT = "memconform-results/2"
"""The value of ``format`` in every results file this kit writes."""

READABLE_FORMATS = ("memconform-results/1", FORMAT)
"""Formats this kit reads: version 1 files hold a subset of version 2's verdicts
and outcomes and are read as they are (writing them again writes version 2)."""

def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data: mappings with text keys, lists, text,
    finite numbers, booleans and null; anything else becomes its ``repr``."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return repr(value)


@dataclass(frozen=True)
class ScenarioEvidence:
    """One scenario that exercised a rule, and what it saw.

    ``store_calls`` holds the timeline entries (store calls, model calls, tool
    runs, hooks) of a scenario that did not pass (``failed``, ``error``,
    ``crashed``); for the others it is empty and only ``store_call_count``
    says how many there were, which keeps results files small without losing
    any evidence of a broken rule. Long texts in the evidence are kept as their
    head and length (:mod:`memconform.excerpt`; the limits are in
    :mod:`memconform.reports.verdict`), so no file grows with what a store
    hands back.
    """

    nodeid: str
    scenario: str
    feature: str | None
    outcome: Outcome
    message: str = ""
    failing_step: str | None = None
    expected: str | None = None
    observed: str | None = None
    store_calls: tuple[Any, ...] = ()
    store_call_count: int = 0
    gherkin: tuple[str, ...] = ()
    """The scenario as Gherkin lines (title, then its steps with the outline's
    values filled in), kept like ``store_calls``; empty for a generated check."""

    @property
    def generated(self) -> bool:
        """Whether this is a generated (property) check rather than a Gherkin scenario."""
        return self.feature is None

    @property
    def what(self) -> str:
        """The message without the expected and observed values it ends with when
        they are recorded apart (they are shown once, beside each other)."""
        if self.expected is None and self.observed is None:
            return self.message
        head, found, _ = self.message.partition("\nexpected:\n")
        return head if found else self.message

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "gherkin": list(self.gherkin),
            "nodeid": self.nodeid,
            "scenario": self.scenario,
            "feature": self.feature,
            "outcome": self.outcome,
            "message": self.message,
            "failing_step": self.failing_step,
            "expected": self.expected,
            "observed": self.observed,
            "store_calls": list(self.store_calls),
            "store_call_count": self.store_call_count,
        }


@dataclass(frozen=True)
class BaselineUse:
    """How one baseline entry was used: ``applied`` (a failure became
    ``xfail``), ``stale`` (the rule passes now), ``expired`` (counted as not
    listed) or ``not-applied`` (the rule neither failed nor passed)."""

    rule: str
    reason: str
    expires: str | None
    issue: str | None
    status: str

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "rule": self.rule,
            "reason": self.reason,
            "expires": self.expires,
            "issue": self.issue,
            "status": self.status,
        }


@dataclass(frozen=True, kw_only=True)
class RuleResult(Rule):
    """The verdict on one rule with its evidence: the rule's own fields (see
    :class:`memconform.catalogue.Rule`) and what the run found."""

    verdict: Verdict
    reason: str
    kit_error: bool = False
    baseline: BaselineUse | None = None
    scenarios: tuple[ScenarioEvidence, ...] = ()
    rerun: str | None = None
    mutants: tuple[str, ...] = ()
    """The mutants this rule's scenarios reject (see ``memconform mutants``)."""
    measured: Verdict | None = None
    """For an ``informational`` rule (a promise the store does not claim), what
    its scenarios showed anyway: one of :data:`MEASURED`; ``None`` otherwise."""

    @property
    def conformance_class(self) -> str:
        """``core`` or the capability the rule needs."""
        return self.capability or "core"

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form: the rule's catalogue entry, then the verdict and evidence."""
        return {
            **super().to_json(),
            "class": self.conformance_class,
            "verdict": self.verdict,
            "reason": self.reason,
            "kit_error": self.kit_error,
            "baseline": None if self.baseline is None else self.baseline.to_json(),
            "scenarios": [s.to_json() for s in self.scenarios],
            "rerun": self.rerun,
            "mutants": list(self.mutants),
            "measured": self.measured,
        }


@dataclass(frozen=True)
class ClassResult:
    """One conformance class: ``core`` or a capability (a store class), or a
    runtime profile, per save policy for ``save-policy`` (``save-policy/turn``).

    ``status`` is ``achieved`` (claimed, scored, every scored MUST rule passes),
    ``partial`` (the same, but a stated selection left some of the class's
    rules out, so nothing is claimed), ``not-achieved``, ``not-claimed`` (the
    capability is declared absent; never shown as passed) or ``not-scored``
    (claimed, but this run judged none of its rules). ``must_total`` counts
    the scored MUST rules that ran (not those the store could not support),
    ``must_passed`` those that pass (a stale baseline entry does not change
    that the rule passes) and ``must_xfail`` those excused by the baseline
    (counted as not passed, shown apart).
    """

    name: str
    claimed: bool
    status: str
    scored: int
    must_total: int
    must_passed: int
    must_xfail: int

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "name": self.name,
            "claimed": self.claimed,
            "status": self.status,
            "scored": self.scored,
            "must_total": self.must_total,
            "must_passed": self.must_passed,
            "must_xfail": self.must_xfail,
        }


@dataclass(frozen=True)
class Footer:
    """Totals per verdict and the completeness of the report.

    ``rules`` equals the number of rule entries and the sum of ``totals``.
    ``complete`` is false when a scored rule has no outcome, when outcomes name
    rules the catalogue does not hold, or when the run stopped early;
    ``reason`` then says which.
    """

    totals: dict[str, int]
    rules: int
    scored: int
    complete: bool
    reason: str | None
    kit_error: bool
    unknown_rules: tuple[str, ...]
    exit_code: int

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "totals": dict(self.totals),
            "rules": self.rules,
            "scored": self.scored,
            "complete": self.complete,
            "reason": self.reason,
            "kit_error": self.kit_error,
            "unknown_rules": list(self.unknown_rules),
            "exit_code": self.exit_code,
        }


def totals_of(rules: Sequence[RuleResult]) -> dict[str, int]:
    """Count of rules per verdict, every verdict present (zeros included)."""
    totals: dict[str, int] = dict.fromkeys(VERDICTS, 0)
    for rule in rules:
        totals[rule.verdict] = totals.get(rule.verdict, 0) + 1
    return totals


@dataclass(frozen=True)
class Results:
    """One run's results. ``problems`` are integrity problems found when a file
    was loaded (they are not written back; the footer is kept as read)."""

    header: dict[str, Any]
    rules: tuple[RuleResult, ...]
    classes: tuple[ClassResult, ...]
    baseline: dict[str, Any] | None
    footer: Footer | None
    problems: tuple[str, ...] = field(default=())
    coverage: dict[str, Any] | None = None
    fingerprint: dict[str, Any] | None = None
    runtime_classes: tuple[ClassResult, ...] = ()
    """The runtime conformance classes (empty when no runtime declared anything
    the kit read, as in a store run); claimed only for what the runtime declared."""

    @property
    def runtime_achieved(self) -> list[str]:
        """The runtime conformance classes achieved, in class order."""
        return [c.name for c in self.runtime_classes if c.status == "achieved"]

    @property
    def of_runtime(self) -> bool:
        """Whether these are a runtime's results (the subject is the runtime and
        the kit read what it declared): their classes are the runtime classes."""
        return self.header.get("subject") == "runtime" and bool(self.runtime_classes)

    @property
    def subject_classes(self) -> tuple[ClassResult, ...]:
        """The classes these results judge: the runtime classes for a runtime's
        results (:attr:`of_runtime`), the store classes otherwise."""
        return self.runtime_classes if self.of_runtime else self.classes

    @property
    def subject_achieved(self) -> list[str]:
        """The classes of :attr:`subject_classes` achieved, in class order."""
        return [c.name for c in self.subject_classes if c.status == "achieved"]

    @property
    def complete(self) -> bool:
        """Whether the report covers what it claims to cover."""
        return self.footer is not None and self.footer.complete and not self.problems

    @property
    def incomplete_reason(self) -> str | None:
        """Why the report is incomplete (``None`` when it is complete)."""
        reasons = list(self.problems)
        if self.footer is not None and not self.footer.complete and self.footer.reason:
            reasons.insert(0, self.footer.reason)
        if not reasons and not self.complete:
            reasons.append("the footer marks the report incomplete")
        return "; ".join(reasons) or None

    @property
    def kit_error(self) -> bool:
        """Whether a bug in the kit itself showed in this run."""
        footer_flag = self.footer is not None and self.footer.kit_error
        return footer_flag or any(r.kit_error for r in self.rules)

    @property
    def totals(self) -> dict[str, int]:
        """Count of rules per verdict, recomputed from the rule entries."""
        return totals_of(self.rules)

    @property
    def claimed(self) -> list[str]:
        """The conformance classes claimed, in class order."""
        return [c.name for c in self.classes if c.claimed]

    @property
    def achieved(self) -> list[str]:
        """The conformance classes achieved, in class order."""
        return [c.name for c in self.classes if c.status == "achieved"]

    @property
    def must_share(self) -> tuple[int, int]:
        """(MUST rules passed, MUST rules judged) within the claimed classes."""
        claimed = [c for c in self.classes if c.claimed]
        return sum(c.must_passed for c in claimed), sum(c.must_total for c in claimed)

    @property
    def baseline_honoured(self) -> list[dict[str, Any]]:
        """Baseline entries that turned a failure into ``xfail``."""
        if self.baseline is None:
            return []
        return [e for e in self.baseline["entries"] if e["status"] == "applied"]

    def identity(self) -> str:
        """One line naming what was judged (store URL or runtime)."""
        store = self.header.get("store") or {}
        runtime = self.header.get("runtime") or {}
        subject = self.header.get("subject")
        if subject == "runtime" and runtime.get("identity"):
            return str(runtime["identity"])
        return str(store.get("url") or runtime.get("identity") or "unknown")

    def to_json(self) -> dict[str, Any]:
        """The canonical JSON data of ``results.json``."""
        passed, total = self.must_share
        data: dict[str, Any] = {
            "format": FORMAT,
            "header": self.header,
            "rules": [r.to_json() for r in self.rules],
            "classes": [c.to_json() for c in self.classes],
            "conformance": {
                "claimed": self.claimed,
                "achieved": self.achieved,
                "must_passed": passed,
                "must_total": total,
            },
            "baseline": self.baseline,
        }
        if self.footer is not None:
            data["footer"] = self.footer.to_json()
        if self.coverage is not None:
            data["coverage"] = self.coverage
        if self.fingerprint is not None:
            data["fingerprint"] = self.fingerprint
        if self.runtime_classes:
            data["runtime_classes"] = [c.to_json() for c in self.runtime_classes]
        return data

    @classmethod
    def from_json(cls, data: Any) -> Results:
        """Rebuild results from their JSON data, checking the shape and noting
        integrity problems. Raises :class:`ResultsError` for a wrong shape."""
        return _parse(data)


# -- reading ------------------------------------------------------------------------


_SCENARIO_KEYS = (
    "nodeid", "scenario", "feature", "outcome", "message", "failing_step", "expected",
    "observed", "store_calls", "store_call_count",
)
_SCENARIO_KEYS_2 = ("gherkin",)
_BASELINE_KEYS = ("rule", "reason", "expires", "issue", "status")
_RULE_KEYS = (
    "id", "level", "profile", "subject", "capability", "class", "source", "text", "decision",
    "untested", "verdict", "reason", "kit_error", "baseline", "scenarios", "rerun", "mutants",
)
_RULE_KEYS_2 = ("rests_on", "measured")
"""Rule members added in format 2 (absent from version 1 files)."""
_CLASS_KEYS = (
    "name", "claimed", "status", "scored", "must_total", "must_passed", "must_xfail",
)
_FOOTER_KEYS = (
    "totals", "rules", "scored", "complete", "reason", "kit_error", "unknown_rules", "exit_code",
)
_HEADER_KEYS = (
    "kit", "catalogue", "subject", "store", "runtime", "mutant", "seed", "environment",
    "started", "finished", "selection", "mode", "stopped_early", "extra",
)
_TOP_KEYS = ("format", "header", "rules", "classes", "conformance", "baseline")


def _scenario(data: Any, path: str, version_1: bool = False) -> ScenarioEvidence:
    added = _added(_SCENARIO_KEYS_2, version_1)
    r = Reader(data, path, (*_SCENARIO_KEYS, *added["required"]), added["also"])
    gherkin = r.get("gherkin", list) or []
    if not all(isinstance(line, str) for line in gherkin):
        raise ResultsError(f"{path}.gherkin: expected lines of text")
    return ScenarioEvidence(
        nodeid=r.text("nodeid"),
        scenario=r.text("scenario"),
        feature=r.text("feature", nullable=True),
        outcome=Outcome(r.choice("outcome", OUTCOMES)),
        message=r.text("message"),
        failing_step=r.text("failing_step", nullable=True),
        expected=r.text("expected", nullable=True),
        observed=r.text("observed", nullable=True),
        store_calls=tuple(r.get("store_calls", list)),
        store_call_count=r.get("store_call_count", int),
        gherkin=tuple(gherkin),
    )


def _baseline_use(data: Any, path: str) -> BaselineUse:
    r = Reader(data, path, _BASELINE_KEYS)
    return BaselineUse(
        rule=r.text("rule"),
        reason=r.text("reason"),
        expires=r.text("expires", nullable=True),
        issue=r.text("issue", nullable=True),
        status=r.choice("status", BASELINE_STATUSES),
    )


def _added(keys: Sequence[str], version_1: bool) -> dict[str, Sequence[str]]:
    """Reader arguments for members added in format 2: required in it, absent
    from (and not allowed in) version 1 files."""
    return {"required": (), "also": keys} if version_1 else {"required": keys, "also": ()}


def _rule(data: Any, path: str, version_1: bool = False) -> RuleResult:
    added = _added(_RULE_KEYS_2, version_1)
    r = Reader(data, path, (*_RULE_KEYS, *added["required"]), also=added["also"])
    source = Reader(r.get("source", dict), f"{path}.source", ("document", "title", "section"))
    source.text("title")  # derived from the document numbers; checked, not kept
    raw_baseline = r.get("baseline", dict, nullable=True)
    return RuleResult(
        id=r.text("id"),
        level=r.choice("level", ("MUST", "SHOULD", "MAY")),
        profile=r.text("profile"),
        subject=r.choice("subject", ("store", "runtime")),
        capability=r.text("capability", nullable=True),
        source_document=source.text("document"),
        source_section=source.text("section"),
        text=r.text("text"),
        decision=r.text("decision", nullable=True),
        untested=r.text("untested", nullable=True),
        verdict=Verdict(r.choice("verdict", VERDICTS)),
        reason=r.text("reason"),
        kit_error=r.get("kit_error", bool),
        baseline=None if raw_baseline is None else _baseline_use(raw_baseline, f"{path}.baseline"),
        scenarios=tuple(
            _scenario(s, f"{path}.scenarios[{i}]", version_1)
            for i, s in enumerate(r.get("scenarios", list))
        ),
        rerun=r.text("rerun", nullable=True),
        mutants=names(r.get("mutants", list), f"{path}.mutants"),
        rests_on=names(r.get("rests_on", list) or [], f"{path}.rests_on"),
        measured=None if r.get("measured", str, nullable=True) is None
        else Verdict(r.choice("measured", MEASURED)),
    )


def _class(data: Any, path: str) -> ClassResult:
    r = Reader(data, path, _CLASS_KEYS)
    return ClassResult(
        name=r.text("name"),
        claimed=r.get("claimed", bool),
        status=r.choice("status", CLASS_STATUSES),
        scored=r.get("scored", int),
        must_total=r.get("must_total", int),
        must_passed=r.get("must_passed", int),
        must_xfail=r.get("must_xfail", int),
    )


def _footer(data: Any) -> Footer:
    r = Reader(data, "footer", _FOOTER_KEYS)
    totals = r.get("totals", dict)
    for key, value in totals.items():
        if key not in VERDICTS or not isinstance(value, int) or isinstance(value, bool):
            raise ResultsError(f"footer.totals.{key}: not a verdict count")
    unknown = r.get("unknown_rules", list)
    if not all(isinstance(u, str) for u in unknown):
        raise ResultsError("footer.unknown_rules: expected rule ids")
    return Footer(
        totals={v: int(totals.get(v, 0)) for v in VERDICTS},
        rules=r.get("rules", int),
        scored=r.get("scored", int),
        complete=r.get("complete", bool),
        reason=r.text("reason", nullable=True),
        kit_error=r.get("kit_error", bool),
        unknown_rules=tuple(unknown),
        exit_code=r.get("exit_code", int),
    )


def _header(data: Any, version_1: bool = False) -> dict[str, Any]:
    h = Reader(data, "header", _HEADER_KEYS)
    kit = Reader(h.get("kit", dict), "header.kit", ("name", "version"))
    kit.text("version", nullable=True)
    catalogue = Reader(h.get("catalogue", dict), "header.catalogue", ("version", "hash", "rules"))
    catalogue.text("version")
    catalogue.text("hash")
    catalogue.get("rules", int)
    h.choice("subject", ("store", "runtime", "both"))
    store_keys = ("url", "type", "version", "capabilities")
    added = _added(("provides",), version_1)
    store = Reader(
        h.get("store", dict), "header.store", (*store_keys, *added["required"]), added["also"]
    )
    for key in ("url", "type", "version"):
        store.text(key, nullable=True)
    if not all(isinstance(c, str) for c in store.get("capabilities", list)):
        raise ResultsError("header.store.capabilities: expected names")
    runtime = Reader(
        h.get("runtime", dict), "header.runtime", ("identity", "version", *added["required"]),
        (*added["also"], "declares"),
    )
    runtime.text("identity", nullable=True)
    declares = runtime.get("declares", dict)
    if declares is not None:
        said = Reader(declares, "header.runtime.declares", ("profiles", "policies"))
        for key in ("profiles", "policies"):
            names = said.get(key, list, nullable=key == "policies")
            if names is not None and not all(isinstance(n, str) for n in names):
                raise ResultsError(f"header.runtime.declares.{key}: expected names")
    runtime.text("version", nullable=True)
    for part, reader in (("store", store), ("runtime", runtime)):
        if not all(isinstance(p, str) for p in reader.get("provides", list) or []):
            raise ResultsError(f"header.{part}.provides: expected names")
    environment = Reader(h.get("environment", dict), "header.environment", ("python", "os"))
    environment.text("python", nullable=True)
    environment.text("os", nullable=True)
    for key in ("mutant", "started", "finished", "stopped_early"):
        h.text(key, nullable=True)
    h.get("seed", (int, str), nullable=True)
    selection = h.get("selection", dict, nullable=True)
    if selection is not None:
        chosen = Reader(selection, "header.selection", ("profiles", "rules"))
        for key in ("profiles", "rules"):
            if not all(isinstance(x, str) for x in chosen.get(key, list)):
                raise ResultsError(f"header.selection.{key}: expected names")
    h.choice("mode", ("run", "certify", "quick"))
    h.get("extra", dict)
    header = dict(data)
    header["store"] = {"provides": [], **data["store"]}  # version 1: nothing provided
    header["runtime"] = {"provides": [], **data["runtime"]}
    url = data["store"]["url"]
    if url is not None:
        header["store"]["url"] = redact_identity(url)
    return header


def _parse(data: Any) -> Results:
    if isinstance(data, dict) and data.get("format") not in READABLE_FORMATS:
        raise ResultsError(
            f"results.format: {data.get('format')!r} is not one of {', '.join(READABLE_FORMATS)}"
        )
    top = Reader(data, "results", _TOP_KEYS,
                  also=("footer", "coverage", "fingerprint", "runtime_classes"))
    version_1 = data["format"] == "memconform-results/1"
    header = _header(data["header"], version_1)
    catalogue_size = header["catalogue"]["rules"]
    selection = header["selection"]
    rules = tuple(
        _rule(x, f"rules[{i}]", version_1) for i, x in enumerate(top.get("rules", list))
    )
    classes = tuple(_class(x, f"classes[{i}]") for i, x in enumerate(top.get("classes", list)))
    runtime_classes = tuple(_class(x, f"runtime_classes[{i}]")
                            for i, x in enumerate(top.get("runtime_classes", list) or []))
    top.get("conformance", dict)
    baseline = top.get("baseline", dict, nullable=True)
    if baseline is not None:
        entries = Reader(baseline, "baseline", ("source", "entries")).get("entries", list)
        for i, entry in enumerate(entries):
            _baseline_use(entry, f"baseline.entries[{i}]")
    raw_footer = top.get("footer", dict)
    footer = None if raw_footer is None else _footer(raw_footer)
    raw_coverage = top.get("coverage", dict)
    coverage = None if raw_coverage is None else coverage_of(raw_coverage)
    raw_fingerprint = top.get("fingerprint", dict)
    fingerprint = None if raw_fingerprint is None else fingerprint_of(raw_fingerprint)

    problems: list[str] = []
    if footer is None:
        problems.append("no footer: the results were cut short before the run finished")
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        problems.append("a rule appears more than once")
    if len(rules) < catalogue_size and selection is None:
        problems.append(
            f"holds {len(rules)} of the {catalogue_size} catalogue rules and states no selection"
        )
    if footer is not None and (
        footer.rules != len(rules) or footer.totals != totals_of(rules)
    ):
        problems.append("the footer totals disagree with the rule entries")
    return Results(
        header, rules, classes, baseline, footer, tuple(problems), coverage, fingerprint,
        runtime_classes,
    )


def load_results(path: Path) -> Results:
    """Read and check a ``results.json``.

    Raises :class:`ResultsError` (a ``ValueError``) when the file is not UTF-8
    JSON of the results shape, and ``OSError`` when it cannot be read. A file of
    the right shape that lacks its footer, whose footer disagrees with its
    rules, or that holds fewer rules than its catalogue without a stated
    selection, loads with ``complete`` false and the reason in
    ``incomplete_reason``.
    """
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path.name}: not UTF-8 ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path.name}: not JSON, perhaps cut short ({exc})") from None
    try:
        return _parse(data)
    except ResultsError as exc:
        raise ResultsError(f"{path.name}: {exc}") from None
