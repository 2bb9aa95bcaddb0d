"""Error digests of document 001 and the secret filter they are redacted with.

A digest is the short text a failed lifecycle task leaves in place of its raw
output: ``Task 'eddi://<name>' failed: <reason>``. The reason is the most
specific reason in the error's cause chain; a provider's JSON error body is
reduced to its ``message``. Before the text is cut to :data:`MAX_DIGEST_LENGTH`
characters (the whole text, prefix included), it is cleaned in this order:

1. URLs become ``[url]`` (URLs carrying credentials included);
2. the secret filter (:func:`redact_secrets`) replaces secrets by ``<REDACTED>``;
3. stack frames (Java ``at a.b.C.m(C.java:12)``, Python ``File "…", line N, in f``
   and ``Traceback`` lines) are removed;
4. fully-qualified class names (``java.net.ConnectException``) are removed.

Cutting happens last, so a secret can never be split into a fragment the filter
no longer recognises. The filter runs once more after the stack frames and class
names are gone, in case their removal joined a key to its value. When no link of
the chain has text, the reason is the innermost error type's simple name, and it
is cleaned and redacted like any other text (family ``error-type``).

Every pattern is compiled by RE2 (:mod:`memconform.simulator.linear_regex`), so
the digest takes time linear in its input; it never raises on any error object
(deep nesting, lone surrogates and non-text fields included), and it always
returns at most :data:`MAX_DIGEST_LENGTH` characters.

An *error* is the JSON object scripts use (see
:mod:`memconform.harness.environment`): ``{"type", "message", "cause",
"body", "status", "stack"}``, everything but ``message`` optional.

:func:`snapshot_digest_text` reproduces the EDDI snapshot instead (variant
``eddi-snapshot``): the top-level message only, URLs and Java frames removed,
no secret filter, class names kept, the reason capped at 200 and followed by
``...``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memconform.simulator.linear_regex import Found, linear, text, utf8
from memconform.simulator.secret_filter import (
    MINIMUM_SECRET_LENGTH,
    SECRET_FAMILIES,
    SECRET_MARKER,
    redact_secrets,
)

__all__ = [
    "MAX_DIGEST_LENGTH",
    "MINIMUM_SECRET_LENGTH",
    "SECRET_FAMILIES",
    "SECRET_MARKER",
    "SEED_RULES",
    "DigestRules",
    "cause_chain",
    "digest_text",
    "failure_reason",
    "raw_error_text",
    "redact_secrets",
    "reduce_provider_body",
    "snapshot_digest_text",
    "strip_class_names",
    "strip_stack_frames",
    "strip_urls",
    "task_uri",
]

MAX_DIGEST_LENGTH = 200
"""The longest digest text, prefix included."""

URL_MARKER = "[url]"
_ELLIPSIS = "..."

Error = Mapping[str, Any]


def _text_of(value: Any) -> str:
    """A field as text: a string as it is (a lone surrogate as U+FFFD), nothing as
    empty, anything else as JSON (empty when it cannot be written, for example
    nested too deep)."""
    if isinstance(value, str):
        return text(utf8(value))
    if value is None or value is False or value == "":
        return ""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return ""


# -- URLs, frames, class names, provider bodies ------------------------------------------

# The user information before an "@" may hold any character but a space, "@" or "/"
# (a password with a parenthesis or a quote is still part of the URL).
_URL = linear(r"\b[A-Za-z][A-Za-z0-9+.\-]*://(?:[^\s@/]*@)?[^\s\"'<>()\[\]{}`]+")
_URL_TRAILING = b".,;:!?"


def _url_replacement(found: Found) -> bytes:
    url = found.text()
    stripped = url.rstrip(_URL_TRAILING)
    return URL_MARKER.encode() + url[len(stripped):]


def strip_urls(value: str) -> str:
    """Replace every URL (any ``scheme://…``, credentials included) by ``[url]``;
    trailing sentence punctuation is kept outside the marker."""
    return _URL.replace(_url_replacement, value)


_JAVA_FRAME = linear(r"\bat\s+[\w$.<>/]+\([^()]*\)")
_JAVA_MORE = linear(r"\.\.\.\s*[0-9]+\s+(?:more|common frames omitted)")
_CAUSED_BY = linear(r"\b(?:Caused by|Suppressed):\s*")
_PY_TRACEBACK = linear(r"Traceback \(most recent call last\):?")
_PY_FRAME = linear(r"File \"[^\"\n]*\", line [0-9]+(?:, in [\w<>.$]+)?")
# A whole frame line, and the indented source line printed under it unless that
# line is itself a frame (frame lines are first turned into a mark no source line
# starts with).
_PY_FRAME_LINE = linear(r"(?m)^[ \t]*File \"[^\"\n]*\", line [0-9]+(?:, in [^\n]*)?$")
_FRAME_MARK = b"\x00frame\x00"
_PY_SOURCE_UNDER_FRAME = linear(r"\x00frame\x00(?:\n[ \t]+[^ \t\n\x00][^\n]*)?")
_PY_CHAINING = linear(
    r"(?:During handling of the above exception, another exception occurred|"
    r"The above exception was the direct cause of the following exception):?"
)
_CARETS = linear(r"(?m)^[ \t]*[\^~]+[ \t]*$")


def strip_stack_frames(value: str) -> str:
    """Remove stack-frame text: Java frames (``at a.b.C.m(C.java:12)``, ``... N
    more``, ``Caused by:``) and Python tracebacks (the ``Traceback`` header,
    ``File "…", line N, in f`` with the source line printed under it, caret
    lines and the chaining sentences)."""
    data = utf8(value).replace(b"\x00", "\ufffd".encode())
    if b'File "' in data:
        data = _PY_FRAME_LINE.sub(_FRAME_MARK, data)
        data = _PY_SOURCE_UNDER_FRAME.sub(b"", data)
    data = _CARETS.sub(b"", data)
    for pattern in (_PY_TRACEBACK, _PY_FRAME, _PY_CHAINING, _JAVA_FRAME, _JAVA_MORE, _CAUSED_BY):
        data = pattern.sub(b" ", data)
    return text(data)


_CLASS_NAME = linear(
    r"\b(?:[a-z_][a-z0-9_]*\.)+[A-Z][A-Za-z0-9_$]*(?:\.[A-Z][A-Za-z0-9_$]*)*(?::\s*)?"
)


def _class_name_replacement(found: Found) -> bytes:
    return b""


def strip_class_names(value: str) -> str:
    """Remove fully-qualified class names (``java.net.ConnectException``,
    ``requests.exceptions.ConnectionError``, ``a.b.Outer$Inner``) together with the
    ``: `` that follows one used as a message prefix."""
    return _CLASS_NAME.replace(_class_name_replacement, value)


_BODY_MESSAGE_DEPTH = 16
"""How deep into a provider body the message is looked for."""

_BODY_ATTEMPTS = 64
"""How many embedded JSON objects one text may have decoded; past that the rest is
left as text (still cleaned and redacted), which bounds the work on any input."""

_BODY_START = linear(r"\{\s*[\"}]")


def _body_message(value: Any, depth: int = 0, *, every_shape: bool = True) -> str | None:
    """The human message inside a decoded provider error body, if any. Without
    ``every_shape`` (a mutant's gap) only ``message`` and ``error.message`` count."""
    if depth > _BODY_MESSAGE_DEPTH:
        return None
    texts, nests = (
        (("message", "error_description", "detail"), ("error", "errors"))
        if every_shape else (("message",), ("error",))
    )
    if isinstance(value, Mapping):
        for key in texts:
            inner = value.get(key)
            if isinstance(inner, str) and inner.strip():
                return inner
        for key in nests:
            inner = value.get(key)
            if every_shape and isinstance(inner, str) and inner.strip():
                return inner
            found = _body_message(inner, depth + 1, every_shape=every_shape)
            if found:
                return found
    if isinstance(value, list) and every_shape:
        for item in value:
            found = _body_message(item, depth + 1)
            if found:
                return found
    return None


def reduce_provider_body(value: str, *, every_shape: bool = True) -> str:
    """Replace each JSON object embedded in ``value`` that carries an error message
    (``message``, ``error.message``, ``error`` as text, ``detail``, ``errors[0]``…)
    by that message; other text is left as it is. At most 64 embedded objects are
    decoded; one nested too deep to decode is left as text. ``every_shape`` as
    for :func:`_body_message`."""
    value = text(utf8(value))
    decoder = json.JSONDecoder()
    out: list[str] = []
    copied = 0
    position = 0
    for _ in range(_BODY_ATTEMPTS):
        found = _BODY_START.engine.search(value, position)
        if found is None:
            break
        start = found.start()
        try:
            decoded, end = decoder.raw_decode(value, start)
        except (ValueError, RecursionError):
            position = start + 1
            continue
        message = _body_message(decoded, every_shape=every_shape)
        if message is not None:
            out += [value[copied:start], message]
            copied = end
        position = end
    out.append(value[copied:])
    return "".join(out)


# -- the cause chain ------------------------------------------------------------------------


def cause_chain(error: Error) -> list[Error]:
    """The error and its causes, outermost first (a cycle or a non-object ends it)."""
    chain: list[Error] = []
    current: Any = error
    seen: set[int] = set()
    while isinstance(current, Mapping) and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.get("cause")
    return chain


def _simple_type(error: Error) -> str:
    name = _text_of(error.get("type")) or "Error"
    return name.replace("$", ".").rsplit(".", 1)[-1] or "Error"


def _link_text(error: Error, rules: DigestRules) -> str:
    message = _text_of(error.get("message"))
    body = error.get("body")
    shapes = rules.body_shapes
    if rules.provider_body and isinstance(body, str) and body.strip():
        body = _text_of(body)
        try:
            found = _body_message(json.loads(body), every_shape=shapes)
        except (ValueError, RecursionError):
            found = None
        if found:
            return found
    if rules.provider_body:
        message = reduce_provider_body(message, every_shape=shapes)
    return message


_SPACE_BEFORE_PUNCTUATION = linear(r"\s+([,.;:!?])")
_TRAILING_SEPARATORS = linear(r"(?:[:;,]\s*)+\z")
_LEADING_SEPARATORS = linear(r"\A(?:[:;,]\s*)+")


def _punctuation(found: Found) -> bytes:
    return found.text(1)


def _collapse(value: str) -> str:
    data = utf8(" ".join(value.split()))
    data = _SPACE_BEFORE_PUNCTUATION.sub(_punctuation, data)
    data = _TRAILING_SEPARATORS.sub(b"", data)
    data = _LEADING_SEPARATORS.sub(b"", data)
    return text(data).strip()


@dataclass(frozen=True)
class DigestRules:
    """Which cleaning steps the digest applies; :data:`SEED_RULES` applies all.

    Each switch exists so a deliberately broken runtime (a mutant) can turn one
    step off and show that the suite notices. ``secret_families`` names the
    secret filter's families applied (see
    :mod:`memconform.simulator.secret_filter`); ``error-type`` among them means the
    error type, when it stands in for the reason, is cleaned too.
    ``cut_in_bytes`` counts the 200 in UTF-8 bytes instead of characters (a
    mutant's bug that only non-ASCII text shows). ``body_shapes`` off reduces a
    provider body from ``message`` and ``error.message`` only.
    """

    secret_filter: bool = True
    secret_families: frozenset[str] = field(default=SECRET_FAMILIES)
    urls: bool = True
    stack_frames: bool = True
    class_names: bool = True
    cause_chain: bool = True
    provider_body: bool = True
    body_shapes: bool = True
    redact_before_cut: bool = True
    cap_whole_text: bool = True
    cut_in_bytes: bool = False


SEED_RULES = DigestRules()


def _redact(value: str, rules: DigestRules) -> str:
    return redact_secrets(value, rules.secret_families)


def _clean(value: str, rules: DigestRules, *, redact: bool) -> str:
    redact = redact and rules.secret_filter
    if rules.urls:
        value = strip_urls(value)
    if redact:
        value = _redact(value, rules)
    once = value
    if rules.stack_frames:
        value = strip_stack_frames(value)
    if rules.class_names:
        value = strip_class_names(value)
    value = _collapse(value)
    if redact and value != once:
        value = _redact(value, rules)
    return value


def failure_reason(error: Error, rules: DigestRules = SEED_RULES) -> str:
    """The most specific reason in ``error``'s cause chain, cleaned and redacted.

    Each link's text is its provider body's message when the body is JSON with
    one, otherwise its message with embedded JSON bodies reduced. Starting from
    the innermost link with text, the reason widens to an enclosing link only
    while that link's text contains it (a wrapper that adds context such as
    ``Streaming chat failed: …``); a generic wrapper that does not repeat it
    (``Error while executing lifecycle!``) is skipped. When no link has text, the
    reason is the innermost error type's simple name, cleaned and redacted too.
    """
    chain = cause_chain(error) if rules.cause_chain else [error]
    chain = [link for link in chain if isinstance(link, Mapping)]
    texts = [
        _clean(
            _link_text(link, rules),
            rules,
            redact=rules.redact_before_cut,
        )
        for link in chain
    ]
    present = [t for t in texts if t]
    if not present:
        name = _simple_type(chain[-1]) if chain else "Error"
        if "error-type" not in rules.secret_families:
            return name
        return _clean(name, rules, redact=rules.redact_before_cut) or "Error"
    reason = present[-1]
    for outer in reversed(present[:-1]):
        if reason in outer:
            reason = outer
        else:
            break
    return reason


def task_uri(task_name: str) -> str:
    """The task id as the digest text prints it: ``eddi://<name>``."""
    return task_name if task_name.startswith("eddi://") else f"eddi://{task_name}"


def _cut(value: str, limit: int, in_bytes: bool = False) -> str:
    if in_bytes:
        data = value.encode("utf-8")
        if len(data) <= limit:
            return value
        kept = data[: limit - len(_ELLIPSIS)].decode("utf-8", errors="ignore")
        return kept.rstrip() + _ELLIPSIS
    if len(value) <= limit:
        return value
    return value[: limit - len(_ELLIPSIS)].rstrip() + _ELLIPSIS


def digest_text(task_name: str, error: Error, rules: DigestRules = SEED_RULES) -> str:
    """``Task 'eddi://<name>' failed: <reason>``, cleaned, then cut to at most
    :data:`MAX_DIGEST_LENGTH` characters (a cut text ends in ``...``)."""
    prefix = f"Task '{task_uri(task_name)}' failed: "
    reason = failure_reason(error, rules)
    if rules.cap_whole_text:
        result = _cut(prefix + reason, MAX_DIGEST_LENGTH, rules.cut_in_bytes)
    else:
        result = prefix + _cut(reason, MAX_DIGEST_LENGTH, rules.cut_in_bytes)
    if not rules.redact_before_cut and rules.secret_filter:
        result = _redact(result, rules)
    return result


_SNAPSHOT_URL = linear(r"https?://[^\s]+")
_SNAPSHOT_FRAME = linear(r"at [a-zA-Z0-9.$]+\([^)]+\)")


def snapshot_digest_text(task_name: str, error: Error) -> str:
    """The EDDI snapshot's digest: the top-level message (or the simple type name
    when blank), ``http(s)`` URLs replaced, Java frames removed, no secret filter,
    class names kept, the reason cut at 200 and then followed by ``...``."""
    message = _text_of(error.get("message"))
    if not message.strip():
        message = _simple_type(error)
    data = _SNAPSHOT_URL.sub(URL_MARKER.encode(), utf8(message))
    message = text(_SNAPSHOT_FRAME.sub(b"", data))
    if len(message) > MAX_DIGEST_LENGTH:
        message = message[:MAX_DIGEST_LENGTH] + _ELLIPSIS
    return f"Task '{task_uri(task_name)}' failed: {message.strip()}"


def raw_error_text(error: Error) -> str:
    """The unredacted text a failing task leaves as its raw output: each link's
    ``type: message``, its body and its stack lines, causes after ``Caused by:``.

    Fields that are not strings are written as JSON (nothing when nested too deep
    to write), so no error value, however hostile, makes this raise."""
    lines: list[str] = []
    for n, link in enumerate(cause_chain(error)):
        head = f"{_text_of(link.get('type')) or 'Error'}: {_text_of(link.get('message'))}".rstrip()
        lines.append(head if n == 0 else f"Caused by: {head}")
        body = link.get("body")
        if isinstance(body, str) and body:
            lines.append(body)
        stack = link.get("stack")
        if isinstance(stack, list):
            lines.extend(f"\t{frame}" for frame in stack if isinstance(frame, str))
    return "\n".join(lines)
