"""compare.html: several results side by side, stores by rules.

One column per results file, headed by what it judged (store URL or runtime,
type and version, declared capabilities or, for a runtime's results, the
profiles and save policies it declared, the classes achieved: a runtime's
runtime classes or a store's store classes, kit and catalogue versions, start
time, completeness); one row per rule, in the catalogue order of the first
file (rules only later files hold follow). A cell shows the verdict, with its
one-line reason on hover and when expanded, and links to that rule's evidence
in that column's own report; a rule absent from a file shows ``—``. Files
from different catalogue versions are flagged, since their verdicts may not
mean the same thing.

:func:`write_comparison` writes each column's report beside the page
(``reports/<n>/report.html``), so every link resolves offline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from memconform import __version__
from memconform.reports.escaping import display_document
from memconform.reports.exitcode import exit_code
from memconform.reports.html import environment, inline_asset, one_line, render_html
from memconform.reports.results import VERDICTS, Results

__all__ = ["Note", "Table", "render_comparison", "write_comparison"]


NOTE_LOOKS = ("error", "fail", "warn", "informational", "unsupported", "not-run")
"""The verdict colours a note's severity borrows, worst first (by ``Note.rank``)."""


@dataclass(frozen=True)
class Note:
    """What a page knows about one column's verdict on one rule beyond the run:
    a finding, with its ``severity`` (as shown), ``rank`` (0 for the worst; the
    findings table sorts by it), ``text`` and ``where`` (the library code)."""

    severity: str
    rank: int
    text: str
    where: str = ""

    @property
    def look(self) -> str:
        """The verdict class whose colour the severity is shown in."""
        return NOTE_LOOKS[min(self.rank, len(NOTE_LOOKS) - 1)]


@dataclass(frozen=True)
class Table:
    """A table a page shows for one column (a runtime's fingerprint, say): its
    ``caption``, the ``header`` cells and the ``rows`` of text cells."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def _per_column(values: Sequence[Any] | None, n: int, what: str) -> list[Any]:
    if values is None:
        return [None] * n
    if len(values) != n:
        raise ValueError(f"give one {what} per results file")
    return list(values)


def render_comparison(
    results: Sequence[Results],
    reports: Sequence[str | None] | None = None,
    *,
    labels: Sequence[str] | None = None,
    subject: str | None = None,
    notes: Sequence[Mapping[str, Note]] | None = None,
    summaries: Sequence[str] | None = None,
    decisions: Sequence[tuple[str, str, str]] = (),
    tables: Sequence[Table | None] | None = None,
    glossary: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The bytes of ``compare.html`` for ``results`` (in the order given).

    ``reports`` holds, per column, the address of that column's ``report.html``
    relative to the page (``None``: no link); a cell links to ``#rule-<id>``
    in it. The rest serve a page about named subjects (the compliance page):
    ``labels`` name the columns instead of their store URL or runtime identity
    (a URL may be a temporary path of the run); ``subject`` keeps only the
    rules of that subject (``"store"``), so the rules no column could score
    stay out; ``notes`` holds, per column, a :class:`Note` by rule id, shown in
    that cell and in a findings table sorted by severity; ``summaries`` holds
    one line per column, shown with what was judged; ``decisions`` are
    ``(title, text, where)`` of behaviours judged by hand that no rule scores,
    listed after the findings; ``tables`` holds, per column, a :class:`Table`
    shown in a section of its own (``None``: none); ``glossary`` the
    ``(term, meaning)`` of every name the page uses that a reader may not know."""
    if not results:
        raise ValueError("nothing to compare: give at least one results file")
    links = _per_column(reports, len(results), "report address (or None)")
    names = _per_column(labels, len(results), "label")
    column_notes: list[Mapping[str, Note]] = [
        n or {} for n in _per_column(notes, len(results), "set of notes")
    ]
    lines = _per_column(summaries, len(results), "summary")
    column_tables = _per_column(tables, len(results), "table (or None)")
    order: dict[str, int] = {}
    texts: dict[str, tuple[str, str, str]] = {}
    for res in results:
        for rule in res.rules:
            if subject is not None and rule.subject != subject:
                continue
            if rule.id not in order:
                order[rule.id] = len(order)
                texts[rule.id] = (rule.level, rule.profile, rule.text)
    cells = [{r.id: r for r in res.rules} for res in results]
    rows = []
    for rule_id in order:
        verdicts = [c[rule_id].verdict if rule_id in c else None for c in cells]
        level, profile, text = texts[rule_id]
        rows.append(
            {
                "id": rule_id,
                "level": level,
                "profile": profile,
                "text": text,
                "verdicts": verdicts,
                "cells": [
                    None if rule_id not in c else {
                        "verdict": c[rule_id].verdict,
                        "reason": one_line(c[rule_id].reason),
                        "href": None if link is None else f"{link}#rule-{rule_id}",
                        "note": noted.get(rule_id),
                    }
                    for c, link, noted in zip(cells, links, column_notes, strict=True)
                ],
                "differs": len(set(verdicts)) > 1,
            }
        )
    keyed = [
        ((note.rank, n, order[rule_id]), {
            "n": n + 1, "rule": rule_id, "note": note, "text": texts[rule_id][2],
            "verdict": cells[n][rule_id].verdict if rule_id in cells[n] else "—",
            "name": names[n] or results[n].identity(),
        })
        for n, noted in enumerate(column_notes)
        for rule_id, note in noted.items()
        if rule_id in order
    ]
    findings = [entry for _, entry in sorted(keyed, key=lambda k: k[0])]
    versions = sorted({str(r.header.get("catalogue", {}).get("version")) for r in results})
    script, script_src = inline_asset("compare.js")
    style, style_src = inline_asset("report.css")
    page = environment().get_template("compare.html.j2").render(
        columns=[
            {"r": res, "code": exit_code(res), "n": n + 1, "label": name, "summary": line}
            for n, (res, name, line) in enumerate(zip(results, names, lines, strict=True))
        ],
        rows=rows,
        findings=findings,
        decisions=[{"title": t, "text": x, "where": w} for t, x, w in decisions],
        tables=[{"n": n + 1, "label": names[n] or results[n].identity(), "table": table}
                for n, table in enumerate(column_tables) if table is not None],
        glossary=[{"term": t, "meaning": m} for t, m in glossary],
        verdicts=VERDICTS,
        versions=versions,
        kit_version=__version__,
        script=Markup(script),
        style=Markup(style),
        csp=f"default-src 'none'; script-src {script_src}; style-src {style_src}; "
        "img-src data:; base-uri 'none'; form-action 'none'",
    )
    return display_document(page).encode("utf-8")


def write_comparison(results: list[Results], out_dir: Path) -> Path:
    """Write ``compare.html`` for ``results`` into ``out_dir``, with each
    column's ``report.html`` under ``reports/<n>/`` for its cells to link to;
    return the page's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    links = []
    for n, res in enumerate(results, 1):
        folder = out_dir / "reports" / str(n)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.html").write_bytes(render_html(res))
        links.append(f"reports/{n}/report.html")
    path = out_dir / "compare.html"
    path.write_bytes(render_comparison(results, links))
    return path
