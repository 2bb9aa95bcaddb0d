"""Writing one run's reports into a folder."""

from __future__ import annotations

from pathlib import Path

from memconform.reports.badge import render_badge
from memconform.reports.html import render_html
from memconform.reports.junit import render_junit
from memconform.reports.render_json import canonical_json
from memconform.reports.results import Results

__all__ = ["REPORT_FILES", "write_reports"]

REPORT_FILES = ("results.json", "report.html", "junit.xml", "badge.svg")


def write_reports(results: Results, out_dir: Path) -> list[Path]:
    """Write ``results.json``, ``report.html``, ``junit.xml`` and ``badge.svg``
    into ``out_dir`` (created if needed); return their paths in that order.
    Every file is a pure function of ``results``: equal results, equal bytes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    renderings = (
        canonical_json(results.to_json()),
        render_html(results),
        render_junit(results),
        render_badge(results),
    )
    paths = []
    for name, data in zip(REPORT_FILES, renderings, strict=True):
        path = out_dir / name
        path.write_bytes(data)
        paths.append(path)
    return paths
