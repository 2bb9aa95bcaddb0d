"""report.html: one self-contained page rendered from the results.

The page needs nothing but itself: styles and script are inline, nothing is
fetched, and a Content-Security-Policy allows only the kit's own script and
style (by hash), so even text that escaped escaping could not run. Every value
is HTML-escaped by jinja2's autoescaping; then characters illegal in XML
(controls, lone surrogates) and other non-printable ones (bidirectional
overrides, zero-width characters) are turned into visible escapes over the
whole page (:func:`~memconform.reports.escaping.display_document`). The script reads
and writes text only through ``textContent`` and attributes; it never builds
markup from data.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from memconform import __version__
from memconform.reports.escaping import display_document
from memconform.reports.exitcode import exit_code
from memconform.reports.results import VERDICTS, Results, RuleResult

__all__ = [
    "EXIT_MEANINGS",
    "SEVERITY",
    "branch_list",
    "element_text",
    "environment",
    "inline_asset",
    "line_ranges",
    "render_html",
    "store_call_line",
]

EXIT_MEANINGS = {
    0: "conformant",
    1: "non-conformant",
    3: "adapter error",
    4: "kit error",
    5: "usage error",
}


def element_text(value: Any) -> Markup:
    """``value`` escaped for element content only (``&``, ``<``, ``>``): quotes
    stay as they are, which keeps JSON-heavy evidence readable in the source
    and small. Never use it inside an attribute value."""
    text = str(value)
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def store_call_line(entry: Any) -> str:
    """One timeline entry as one line: ``#3 store append("t1", [..]) → None``;
    named arguments (a tool call's) as ``name=value``."""
    if not isinstance(entry, dict):
        return json.dumps(entry, ensure_ascii=False, sort_keys=True)
    rest = {k: v for k, v in entry.items() if k not in ("seq", "kind", "name")}
    args = rest.pop("args", None)
    kwargs = rest.pop("kwargs", None)
    result = rest.pop("result", None) if "result" in rest else ...
    raised = rest.pop("raised", None)
    hung = rest.pop("hung", None)
    if isinstance(args, dict):  # a tool call's named arguments: show their values
        kwargs = {**args, **(kwargs or {})}
        args = []
    elif args is not None and not isinstance(args, list | tuple):
        args = [args]
    shown = [json.dumps(a, ensure_ascii=False, sort_keys=True) for a in args or ()]
    shown += [
        f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}"
        for k, v in sorted((kwargs or {}).items())
    ]
    line = f"#{entry.get('seq', '?')} {entry.get('kind', '?')} {entry.get('name', '?')}"
    if args is not None or kwargs:
        line += f"({', '.join(shown)})"
    if rest:
        line += " " + json.dumps(rest, ensure_ascii=False, sort_keys=True)
    if result is not ...:
        line += " → " + json.dumps(result, ensure_ascii=False, sort_keys=True)
    if isinstance(raised, dict):
        line += f" raised {raised.get('type', '?')}: {raised.get('message', '')}"
    elif raised is not None:
        line += f" raised {raised}"
    if hung:
        line += " (hung: no answer within the timeout)"
    return line


def line_ranges(lines: Sequence[int]) -> str:
    """Line numbers as ranges: ``[3, 4, 5, 9]`` → ``3-5, 9`` (with an en dash)."""
    runs: list[list[int]] = []
    for line in sorted(lines):
        if runs and line == runs[-1][1] + 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in runs)


def branch_list(branches: Sequence[Sequence[int]]) -> str:
    """Branches as ``12→14``; a negative target leaves the function: ``20→exit``."""
    return ", ".join(f"{a}→{b if b > 0 else 'exit'}" for a, b in branches)


SEVERITY = (
    "error", "fail", "stale", "not-run", "inconclusive", "adapter-provided", "warn", "xfail",
    "pass", "informational", "unsupported", "not-scored",
)
"""The order of the rule table: what was judged first, failures on top; then
what the run could not judge; rules it did not score last (hidden by default)."""


def rule_order(rules: Sequence[RuleResult]) -> list[RuleResult]:
    """``rules`` in table order: by :data:`SEVERITY`, catalogue order within one."""
    rank = {v: n for n, v in enumerate(SEVERITY)}
    return sorted(rules, key=lambda r: rank.get(r.verdict, len(rank)))


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def inline_asset(name: str) -> tuple[str, str]:
    """(text, CSP source) of a bundled script or style sheet."""
    return _asset(name)


@cache
def _asset(name: str) -> tuple[str, str]:
    text = resources.files("memconform.reports").joinpath("templates", name).read_text("utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return text, f"'sha256-{digest}'"


@cache
def environment() -> jinja2.Environment:
    """The jinja2 environment of every page: autoescape on, strict undefined."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("memconform.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["call_line"] = store_call_line
    env.filters["element_text"] = element_text
    env.filters["one_line"] = one_line
    env.filters["line_ranges"] = line_ranges
    env.filters["branch_list"] = branch_list
    return env


def _matrix(rules: Sequence[RuleResult], key: str) -> list[tuple[str, dict[str, int]]]:
    groups: dict[str, dict[str, int]] = {}
    for rule in rules:
        counts = groups.setdefault(getattr(rule, key), dict.fromkeys(VERDICTS, 0))
        counts[rule.verdict] += 1
    return list(groups.items())


def render_html(results: Results) -> bytes:
    """The bytes of ``report.html`` (UTF-8, deterministic)."""
    script, script_src = _asset("report.js")
    style, style_src = _asset("report.css")
    code = exit_code(results)
    totals = results.totals
    shown_verdicts = [v for v in VERDICTS if totals[v]]
    levels = [lv for lv in ("MUST", "SHOULD", "MAY") if any(r.level == lv for r in results.rules)]
    page = environment().get_template("report.html.j2").render(
        r=results,
        ordered=rule_order(results.rules),
        header=results.header,
        code=code,
        meaning=EXIT_MEANINGS.get(code, "unknown"),
        totals=totals,
        verdicts=VERDICTS,
        shown_verdicts=shown_verdicts,
        by_profile=_matrix(results.rules, "profile"),
        by_level=sorted(
            _matrix(results.rules, "level"), key=lambda kv: ("MUST", "SHOULD", "MAY").index(kv[0])
        ),
        profiles=list(dict.fromkeys(r.profile for r in results.rules)),
        levels=levels,
        baseline=results.baseline,
        honoured=results.baseline_honoured,
        must_share=results.must_share,
        kit_version=__version__,
        documents=source_documents(results.rules),
        script=Markup(script),
        style=Markup(style),
        csp=f"default-src 'none'; script-src {script_src}; style-src {style_src}; "
        "img-src data:; base-uri 'none'; form-action 'none'",
    )
    return display_document(page).encode("utf-8")


def source_documents(rules: Any) -> list[tuple[str, str]]:
    """Each source document the rules cite, once, by number: a rule drawn from
    several documents (``000, 002`` with ``Save policies, History and records``)
    names each of them, so the list holds every document and no combination."""
    found: dict[str, str] = {}
    for rule in rules:
        numbers = [n.strip() for n in str(rule.source_document).split(",")]
        titles = [t.strip() for t in str(rule.source_title).split(",")]
        if len(numbers) != len(titles):
            titles = [str(rule.source_title)] * len(numbers)
        for number, title in zip(numbers, titles, strict=True):
            found.setdefault(number, title)
    return sorted(found.items())
