"""badge.svg: the conformance classes achieved and the MUST pass share.

Left: ``memconform <catalogue version>``. Right: the achieved classes (or
``none``) and the share of MUST rules passed within the claimed classes,
e.g. ``core, errors · MUST 97%``. Colour: green when every claimed class is
achieved, yellow when some are, red when none, grey when the report is
incomplete or the run judged only a selection of rules (then the message says
``partial run``: a partial run claims no class). Text is escaped; the file is deterministic.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from memconform.reports.escaping import printable, xml_text
from memconform.reports.results import Results

__all__ = ["badge_text", "render_badge"]

_GREEN, _YELLOW, _RED, _GREY = "#2e7d32", "#b58900", "#c62828", "#757575"


def badge_text(results: Results) -> tuple[str, str, str]:
    """(label, message, colour) of the badge."""
    version = results.header.get("catalogue", {}).get("version") or "?"
    label = f"memconform {version}"
    achieved = results.achieved
    claimed = [c for c in results.classes if c.claimed and c.status != "not-scored"]
    passed, total = results.must_share
    share = f"MUST {passed * 100 // total}%" if total else "MUST n/a"
    message = f"{', '.join(achieved) or 'none'} · {share}"
    if not results.complete:
        return label, f"incomplete · {share}", _GREY
    if results.header.get("selection") is not None:
        return label, f"partial run · {share}", _GREY
    if claimed and len(achieved) == len(claimed):
        colour = _GREEN
    elif achieved:
        colour = _YELLOW
    else:
        colour = _RED
    return label, message, colour


def _width(text: str) -> int:
    # Verdana 11px averages about 6.5 px per character; wide enough for digits.
    return int(len(text) * 6.6) + 12


def render_badge(results: Results) -> bytes:
    """The SVG bytes of the badge."""
    label, message, colour = badge_text(results)
    label, message = printable(xml_text(label), keep=""), printable(xml_text(message), keep="")
    lw, mw = _width(label), _width(message)
    total = lw + mw
    title = f"{label}: {message}"
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" '
        f'role="img" aria-label={quoteattr(title)}>\n'
        f"<title>{escape(title)}</title>\n"
        f'<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" '
        f'stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>\n'
        f'<clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath>\n'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{colour}"/>'
        f'<rect width="{total}" height="20" fill="url(#s)"/></g>\n'
        f'<g fill="#fff" text-anchor="middle" '
        f'font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">\n'
        f'<text x="{lw / 2:.1f}" y="14">{escape(label)}</text>\n'
        f'<text x="{lw + mw / 2:.1f}" y="14">{escape(message)}</text>\n'
        f"</g>\n</svg>\n"
    )
    return svg.encode("utf-8")
