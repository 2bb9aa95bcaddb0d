"""badge.svg: a badge-sized summary of the conformance classes, detail in its title.

It follows the shields.io conventions: 20 px high, a grey label on the left
(``memconform``) and a coloured message on the right, Verdana 11 px, each side
as wide as its text plus 5 px of padding on either side. The message is short
whatever the run: ``3/5 classes`` (claimed classes achieved: a runtime's
results count its runtime classes, per profile and save policy, a store's its
store classes), ``incomplete``
or ``partial run``. Colour: green when every claimed class is achieved,
yellow when some are, red when none, grey when the report is incomplete or
the run judged only a selection of rules (a partial run claims no class).

Everything else is in the SVG ``<title>`` (shown on hover) and its
``aria-label``: the catalogue version, the classes achieved and not, the MUST
pass share, and how many rules are ``inconclusive``, ``adapter-provided``
(neither counts as passed; each leaves its class not achieved) or
``informational`` (measured, not claimed, not counted). Text is escaped; the
file is deterministic.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape, quoteattr

from memconform.reports.escaping import printable, xml_text
from memconform.reports.results import Results

__all__ = ["badge_text", "badge_title", "render_badge", "text_width"]

_GREEN, _YELLOW, _RED, _GREY = "#2e7d32", "#b58900", "#c62828", "#757575"
_LABEL = "memconform"

# Advance widths of Verdana at 11 px, in pixels, for the characters a badge
# shows; anything else counts as a wide letter, so the text never overflows.
_NARROW = dict.fromkeys("il.,:;|!'", 3.4) | dict.fromkeys("fjrt ()/-", 4.6)
_WIDE = dict.fromkeys("mwMW%", 10.4)
_DEFAULT_LOWER, _DEFAULT_OTHER = 6.6, 7.6


def text_width(text: str) -> int:
    """The width in pixels of ``text`` set in Verdana 11 px (rounded up)."""
    total = 0.0
    for char in text:
        if char in _NARROW:
            total += _NARROW[char]
        elif char in _WIDE:
            total += _WIDE[char]
        elif char.islower():
            total += _DEFAULT_LOWER
        else:
            total += 7.0 if char.isdigit() else _DEFAULT_OTHER
    return math.ceil(total)


def badge_text(results: Results) -> tuple[str, str, str]:
    """(label, message, colour) of the badge."""
    claimed = [c for c in results.subject_classes if c.claimed and c.status != "not-scored"]
    achieved = [c for c in claimed if c.status == "achieved"]
    if not results.complete:
        return _LABEL, "incomplete", _GREY
    if results.header.get("selection") is not None:
        return _LABEL, "partial run", _GREY
    message = f"{len(achieved)}/{len(claimed)} classes"
    if claimed and len(achieved) == len(claimed):
        colour = _GREEN
    elif achieved:
        colour = _YELLOW
    else:
        colour = _RED
    return _LABEL, message, colour


def badge_title(results: Results) -> str:
    """The badge's detail: catalogue, classes, MUST share and the verdicts that
    keep a class from being achieved or are shown apart."""
    version = results.header.get("catalogue", {}).get("version") or "?"
    claimed = [c for c in results.subject_classes if c.claimed]
    achieved = [c.name for c in claimed if c.status == "achieved"]
    missed = [c.name if c.status == "not-achieved" else f"{c.name} ({c.status.replace('-', ' ')})"
              for c in claimed if c.status != "achieved"]
    passed, total = (sum(c.must_passed for c in claimed), sum(c.must_total for c in claimed))
    share = f"MUST {passed * 100 // total}% ({passed} of {total})" if total else "MUST n/a"
    parts = [f"memconform {version}"]
    if results.of_runtime:
        parts.append("runtime classes" if claimed else "runtime classes: none declared")
    if not results.complete:
        parts.append("incomplete report")
    if results.header.get("selection") is not None:
        parts.append("partial run: no class claimed")
    parts.append(f"achieved: {', '.join(achieved) or 'none'}")
    if missed:
        parts.append(f"not achieved: {', '.join(missed)}")
    parts.append(share)
    totals = results.totals
    apart = [f"{totals[v]} {v}" for v in ("fail", "error", "inconclusive", "adapter-provided")
             if totals.get(v)]
    if apart:
        parts.append(", ".join(apart))
    if totals.get("informational"):
        parts.append(f"{totals['informational']} informational (not claimed, not counted)")
    return " · ".join(parts)


def render_badge(results: Results) -> bytes:
    """The SVG bytes of the badge."""
    label, message, colour = badge_text(results)
    label, message = printable(xml_text(label), keep=""), printable(xml_text(message), keep="")
    title = printable(xml_text(badge_title(results)), keep="")
    lw, mw = text_width(label) + 10, text_width(message) + 10
    total = lw + mw
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
