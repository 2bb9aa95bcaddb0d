"""JUnit XML: one ``testcase`` per rule, for CI systems that read JUnit.

Each profile is a ``testsuite``; each rule a ``testcase`` named by its id and
text, with ``classname`` the profile. ``fail`` and ``stale`` are
``<failure>``, ``error`` is ``<error>``, ``not-run`` is a ``<failure>`` (the
report is incomplete, and the exit code says so too), ``unsupported``,
``xfail`` and ``not-scored`` are ``<skipped>`` with the reason; ``warn`` is a
passing testcase whose ``verdict`` property and output say what was broken.
``inconclusive`` and ``adapter-provided`` follow the exit code: on a MUST
rule a ``<failure>`` whose ``type`` is the verdict (the rule was claimed and
not shown to hold for the library judged), on a SHOULD or MAY rule a
``<skipped>`` naming it. ``informational`` (a promise the store does not
claim, measured anyway) is a ``<skipped>`` whose message says what was
measured. Every ``<failure>`` carries the verdict as its ``type``.
Passing rules carry only their properties (the evidence is in results.json),
and a ``<system-out>`` saying how they passed where a check said so (where a
kill landed, how many writers ran, best effort or not).
Every text is escaped with ``xml.sax.saxutils`` (``escape`` for element text,
``quoteattr`` for attributes), then the whole document goes
through :func:`~memconform.reports.escaping.display_document`, which makes
characters illegal in XML 1.0 (and other non-printable ones) visible escapes,
so no stored text can break the document.
"""

from __future__ import annotations

import json
from xml.sax.saxutils import escape, quoteattr

from memconform.reports.escaping import display_document
from memconform.reports.exitcode import NOT_SHOWN_TO_HOLD
from memconform.reports.results import Results, RuleResult

__all__ = ["render_junit"]

_FAILURE = {"fail", "stale", "not-run"}
_SKIPPED = {"unsupported", "informational", "xfail", "not-scored"}


def _attrs(**attrs: str) -> str:
    return "".join(f" {name}={quoteattr(value)}" for name, value in attrs.items())


def _element(tag: str, text: str | None = None, indent: str = "", **attrs: str) -> str:
    if text is None:
        return f"{indent}<{tag}{_attrs(**attrs)} />"
    return f"{indent}<{tag}{_attrs(**attrs)}>{escape(text)}</{tag}>"


def _details(rule: RuleResult) -> str:
    lines = [f"{rule.id} [{rule.level}] {rule.text}", f"verdict: {rule.verdict}: {rule.reason}"]
    if rule.rerun:
        lines.append(f"re-run: {rule.rerun}")
    for s in rule.scenarios:
        where = s.feature or "generated check"
        lines.append(f"- {s.outcome}: {s.scenario} ({where}; {s.nodeid})")
        for line in s.gherkin:
            lines.append("  | " + line)
        if s.failing_step:
            lines.append(f"  failing step: {s.failing_step}")
        if s.what and s.outcome != "passed":
            lines.append("  " + s.what.replace("\n", "\n  "))
        elif s.message and s.outcome == "passed":
            lines.append("  how: " + s.message.replace("\n", "\n  "))
        if s.expected is not None:
            lines.append("  expected: " + s.expected.replace("\n", "\n  "))
        if s.observed is not None:
            lines.append("  observed: " + s.observed.replace("\n", "\n  "))
        for call in s.store_calls:
            lines.append("  call: " + json.dumps(call, sort_keys=True, ensure_ascii=False))
    return "\n".join(lines)


def _unproven_must(rule: RuleResult) -> bool:
    return rule.verdict in NOT_SHOWN_TO_HOLD and rule.level == "MUST"


def _failed(rule: RuleResult) -> bool:
    return rule.verdict in _FAILURE or _unproven_must(rule)


def _skipped(rule: RuleResult) -> bool:
    return not _failed(rule) and (rule.verdict in _SKIPPED or rule.verdict in NOT_SHOWN_TO_HOLD)


def _testcase(rule: RuleResult) -> list[str]:
    lines = [
        "    <testcase"
        + _attrs(name=f"{rule.id} {rule.text}", classname=rule.profile, time="0")
        + ">",
        "      <properties>",
        _element("property", indent="        ", name="verdict", value=rule.verdict),
        _element("property", indent="        ", name="level", value=rule.level),
        "      </properties>",
    ]
    message = f"{rule.verdict}: {rule.reason}"
    pad = "      "
    if _failed(rule):
        lines.append(_element("failure", _details(rule), pad, message=message, type=rule.verdict))
    elif rule.verdict == "error":
        kind = "kit-error" if rule.kit_error else "adapter-error"
        lines.append(_element("error", _details(rule), pad, message=message, type=kind))
    elif _skipped(rule):
        lines.append(_element("skipped", None, pad, message=message))
    elif rule.verdict == "warn" or any(sc.message for sc in rule.scenarios):
        lines.append(_element("system-out", _details(rule), pad))
    lines.append("    </testcase>")
    return lines


def render_junit(results: Results) -> bytes:
    """The JUnit XML bytes of ``results`` (UTF-8, deterministic)."""
    profiles: dict[str, list[RuleResult]] = {}
    for rule in results.rules:
        profiles.setdefault(rule.profile, []).append(rule)
    started = str(results.header.get("started") or "")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    suites: list[str] = []
    for profile, rules in profiles.items():
        counts = {
            "tests": len(rules),
            "failures": sum(1 for r in rules if _failed(r)),
            "errors": sum(1 for r in rules if r.verdict == "error"),
            "skipped": sum(1 for r in rules if _skipped(r)),
        }
        for key in totals:
            totals[key] += counts[key]
        numbers = {k: str(v) for k, v in counts.items()}
        suites.append(
            "  <testsuite"
            + _attrs(name=profile, time="0", timestamp=started, **numbers)
            + ">"
        )
        for rule in rules:
            suites.extend(_testcase(rule))
        suites.append("  </testsuite>")
    head = "<testsuites" + _attrs(
        name="memconform", **{k: str(v) for k, v in totals.items()}, time="0"
    ) + ">"
    body = "\n".join([head, *suites, "</testsuites>"])
    document = '<?xml version="1.0" encoding="UTF-8"?>\n' + display_document(body) + "\n"
    return document.encode("utf-8")
