"""Text hygiene for every rendering of results.

Stored text (messages, tool payloads, error strings) reaches the reports as
evidence and may hold anything: markup, control characters, lone surrogates.
These helpers make such text safe for a given output without losing what it
was: a character that cannot appear is shown as a visible escape (``\\x01``,
``\\udc80``), never dropped silently.
"""

from __future__ import annotations

import re
from functools import cache
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = [
    "display_document",
    "display_text",
    "printable",
    "redact_identity",
    "xml_text",
]

# XML 1.0 allows #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ASCII_PLAIN = re.compile(r"[\t\n -~]*")
_PLAIN = re.compile(r"[^\t\n -~]")  # anything but printable ASCII, tab and newline
_SECRET_KEYS = re.compile(r"pass|pwd|secret|token|key|auth|credential", re.IGNORECASE)


def _visible(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def xml_text(text: str) -> str:
    """``text`` with every character illegal in XML 1.0 replaced by a visible escape.

    The result still needs the ordinary markup escaping (``&``, ``<``, ``>``,
    quotes) of the XML or HTML writer that emits it.
    """
    if _XML_ILLEGAL.search(text) is None:
        return text
    return _XML_ILLEGAL.sub(lambda m: _visible(m.group()), text)


def printable(text: str, keep: str = "\n\t") -> str:
    """``text`` with every non-printable character (other than those in ``keep``)
    replaced by a visible escape: for places such as the badge or a one-line
    summary where even a tab or a bidirectional override would mislead."""
    if _ASCII_PLAIN.fullmatch(text) is not None and not any(
        c in text for c in "\t\n" if c not in keep
    ):
        return text
    if text.translate(_drop(keep)).isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _visible(c) for c in text)


@cache
def _drop(keep: str) -> dict[int, None]:
    return dict.fromkeys(map(ord, keep))


def redact_identity(url: str) -> str:
    """A store URL with its password and any secret-looking query value masked.

    The command line redacts URLs before they reach the reports; this is the
    second line of defence, and it never fails: text that is not a URL comes
    back unchanged.
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    netloc = parts.netloc
    if password is not None and password != "***":
        netloc = netloc.replace(f":{password}@", ":***@", 1)
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_KEYS.search(k) for k, _ in pairs):
            query = urlencode(
                [(k, "***" if _SECRET_KEYS.search(k) else v) for k, v in pairs], safe="*"
            )
    if netloc == parts.netloc and query == parts.query:
        return url
    return parts._replace(netloc=netloc, query=query).geturl()


def display_text(text: str) -> str:
    """``text`` safe to show in a document: XML-legal and with every
    non-printable character but newline and tab visible as an escape (so a
    bidirectional override or a zero-width character in stored text cannot
    disguise what it says). Markup escaping is still the writer's job."""
    if _PLAIN.search(text) is None:
        return text
    return printable(xml_text(text), keep="\n\t")


def _visible_unless_printable(match: re.Match[str]) -> str:
    char = match.group()
    return char if char.isprintable() else _visible(char)


def display_document(document: str) -> str:
    """A whole rendered document with every non-printable character other
    than newline and tab turned into a visible escape, in one pass.

    Equivalent to :func:`display_text` on each value when the document's own
    template text is printable (the kit's templates are): the escapes are
    plain letters and digits, so applying them after markup escaping is safe.
    """
    if document.replace("\n", "").replace("\t", "").isprintable():
        return document
    return _PLAIN.sub(_visible_unless_printable, document)
