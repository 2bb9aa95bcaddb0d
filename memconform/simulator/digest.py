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
no longer recognises.

An *error* is the JSON object scripts use (see
:mod:`memconform.simulator.environment`): ``{"type", "message", "cause",
"body", "status", "stack"}``, everything but ``message`` optional.

:func:`snapshot_digest_text` reproduces the EDDI snapshot instead (variant
``eddi-snapshot``): the top-level message only, URLs and Java frames removed,
no secret filter, class names kept, the reason capped at 200 and followed by
``...``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_DIGEST_LENGTH",
    "MINIMUM_SECRET_LENGTH",
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

MINIMUM_SECRET_LENGTH = 8
"""Values of secret-named keys shorter than this are left alone."""

SECRET_MARKER = "<REDACTED>"
"""What a redacted secret is replaced by."""

URL_MARKER = "[url]"
_ELLIPSIS = "..."

Error = Mapping[str, Any]

# -- the secret filter ------------------------------------------------------------------

_SK_ANT = re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,}")
_SK = re.compile(r"sk-[A-Za-z0-9_\-]{20,}")
_BEARER = re.compile(r"Bearer\s+[A-Za-z0-9\-_.+/=]{20,}")
_SECRET_NAME = r"[A-Za-z0-9_.\-]*(?:api[_-]?key|apikey|token|secret|password|passwd|authorization)[A-Za-z0-9_.\-]*"  # noqa: E501
_VAULT_REFERENCE = re.compile(r"\$\{(?:eddi)?vault:[^}]*\}")
# "name": "value" and \"name\": \"value\" (escaped JSON inside a string).
_QUOTED = re.compile(
    r"(?P<q>\\?\")(?P<key>" + _SECRET_NAME + r")(?P=q)(?P<sep>\s*:\s*)"
    r"(?P=q)(?P<value>(?:\\.|[^\"\\])*?)(?P=q)",
    re.IGNORECASE,
)
# "name": value (unquoted JSON), name=value, name: value, each with an optional scheme word.
_UNQUOTED = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<key>\\?\"?" + _SECRET_NAME + r"\\?\"?)(?P<sep>\s*[:=]\s*)"
    r"(?P<scheme>(?:Basic|Bearer|Digest|Token)\s+)?"
    r"(?P<value>(?:<REDACTED>|[^\s,;&\"'{}\[\]<>\\])+)",
    re.IGNORECASE,
)


def _needs_redaction(value: str) -> bool:
    if value == SECRET_MARKER or not value.strip():
        return False
    if _VAULT_REFERENCE.fullmatch(value):
        return False
    return len(value) >= MINIMUM_SECRET_LENGTH


def _redact_quoted(match: re.Match[str]) -> str:
    value = match.group("value")
    if not _needs_redaction(value):
        return match.group(0)
    q = match.group("q")
    return f"{q}{match.group('key')}{q}{match.group('sep')}{q}{SECRET_MARKER}{q}"


def _redact_unquoted(match: re.Match[str]) -> str:
    value = match.group("value")
    if not _needs_redaction(value):
        return match.group(0)
    scheme = match.group("scheme") or ""
    return f"{match.group('key')}{match.group('sep')}{scheme}{SECRET_MARKER}"


def redact_secrets(text: str, *, bearer_tokens: bool = True) -> str:
    """Replace secrets in ``text`` by :data:`SECRET_MARKER`.

    Recognised: ``sk-ant-`` and ``sk-`` keys (20+ characters after the prefix),
    ``Bearer`` tokens (20+ characters), and values of at least
    :data:`MINIMUM_SECRET_LENGTH` characters under a secret-named key (a name
    containing api_key, apikey, token, secret, password, passwd or
    authorization) written as quoted or unquoted JSON, ``key=value`` or
    ``key: value``. A whole ``${vault:…}`` reference stays legible; a value that
    is only partly redacted is replaced whole. Redacting twice changes nothing
    the second time. ``bearer_tokens=False`` skips the Bearer rule (a mutant).
    """
    text = _SK_ANT.sub("sk-ant-" + SECRET_MARKER, text)
    text = _SK.sub("sk-" + SECRET_MARKER, text)
    if bearer_tokens:
        text = _BEARER.sub("Bearer " + SECRET_MARKER, text)
    text = _QUOTED.sub(_redact_quoted, text)
    return _UNQUOTED.sub(_redact_unquoted, text)


# -- URLs, frames, class names, provider bodies ------------------------------------------

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>()\[\]{}`]+")
_URL_TRAILING = ".,;:!?"


def _url_replacement(match: re.Match[str]) -> str:
    url = match.group(0)
    stripped = url.rstrip(_URL_TRAILING)
    return URL_MARKER + url[len(stripped) :]


def strip_urls(text: str) -> str:
    """Replace every URL (any ``scheme://…``, credentials included) by ``[url]``;
    trailing sentence punctuation is kept outside the marker."""
    return _URL.sub(_url_replacement, text)


_JAVA_FRAME = re.compile(r"\bat\s+[\w$.<>/]+\((?:[^()]*)\)")
_JAVA_MORE = re.compile(r"\.\.\.\s*\d+\s+(?:more|common frames omitted)")
_CAUSED_BY = re.compile(r"\b(?:Caused by|Suppressed):\s*")
_PY_TRACEBACK = re.compile(r"Traceback \(most recent call last\):?")
_PY_FRAME = re.compile(r"File \"[^\"\n]*\", line \d+(?:, in [\w<>.$]+)?")
_PY_FRAME_LINE = re.compile(r"^(?P<indent>\s*)File \"[^\"\n]*\", line \d+(?:, in .*)?$")
_PY_CHAINING = re.compile(
    r"(?:During handling of the above exception, another exception occurred|"
    r"The above exception was the direct cause of the following exception):?"
)
_CARETS = re.compile(r"^\s*[\^~]+\s*$")


def strip_stack_frames(text: str) -> str:
    """Remove stack-frame text: Java frames (``at a.b.C.m(C.java:12)``, ``... N
    more``, ``Caused by:``) and Python tracebacks (the ``Traceback`` header,
    ``File "…", line N, in f`` with the source line printed under it, caret
    lines and the chaining sentences)."""
    lines = text.split("\n")
    kept: list[str] = []
    skip_code_under: int | None = None
    for line in lines:
        if skip_code_under is not None:
            indent = len(line) - len(line.lstrip())
            skip_code_under = None
            if line.strip() and indent > 0 and not _PY_FRAME_LINE.match(line):
                continue
        frame = _PY_FRAME_LINE.match(line)
        if frame:
            skip_code_under = len(frame.group("indent"))
            continue
        if _CARETS.match(line) and line.strip():
            continue
        kept.append(line)
    text = "\n".join(kept)
    for pattern in (_PY_TRACEBACK, _PY_FRAME, _PY_CHAINING, _JAVA_FRAME, _JAVA_MORE, _CAUSED_BY):
        text = pattern.sub(" ", text)
    return text


_CLASS_NAME = re.compile(r"\b(?:[a-z_][a-z0-9_]*\.)+[A-Z][A-Za-z0-9_$]*(?:\.[A-Z][A-Za-z0-9_$]*)*")
_CLASS_NAME_COLON = re.compile(
    r"\b(?:[a-z_][a-z0-9_]*\.)+[A-Z][A-Za-z0-9_$]*(?:\.[A-Z][A-Za-z0-9_$]*)*:\s*"
)


def strip_class_names(text: str) -> str:
    """Remove fully-qualified class names (``java.net.ConnectException``,
    ``requests.exceptions.ConnectionError``, ``a.b.Outer$Inner``) together with the
    ``: `` that follows one used as a message prefix."""
    text = _CLASS_NAME_COLON.sub("", text)
    return _CLASS_NAME.sub("", text)


def _body_message(value: Any) -> str | None:
    """The human message inside a decoded provider error body, if any."""
    if isinstance(value, Mapping):
        for key in ("message", "error_description", "detail"):
            inner = value.get(key)
            if isinstance(inner, str) and inner.strip():
                return inner
        for key in ("error", "errors"):
            inner = value.get(key)
            if isinstance(inner, str) and inner.strip():
                return inner
            found = _body_message(inner)
            if found:
                return found
    if isinstance(value, list):
        for item in value:
            found = _body_message(item)
            if found:
                return found
    return None


def reduce_provider_body(text: str) -> str:
    """Replace each JSON object embedded in ``text`` that carries an error message
    (``message``, ``error.message``, ``error`` as text, ``detail``, ``errors[0]``…)
    by that message; other text is left as it is."""
    decoder = json.JSONDecoder()
    out: list[str] = []
    i = 0
    while i < len(text):
        start = text.find("{", i)
        if start < 0:
            out.append(text[i:])
            break
        out.append(text[i:start])
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            out.append("{")
            i = start + 1
            continue
        message = _body_message(value)
        out.append(message if message is not None else text[start:end])
        i = end
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
    name = str(error.get("type") or "Error")
    return name.replace("$", ".").rsplit(".", 1)[-1] or "Error"


def _link_text(error: Error, *, provider_body: bool) -> str:
    message = str(error.get("message") or "")
    body = error.get("body")
    if provider_body and isinstance(body, str) and body.strip():
        try:
            found = _body_message(json.loads(body))
        except ValueError:
            found = None
        if found:
            return found
    if provider_body:
        message = reduce_provider_body(message)
    return message


def _collapse(text: str) -> str:
    text = " ".join(text.split())
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"(?:[:;,]\s*)+$", "", text)
    text = re.sub(r"^(?:[:;,]\s*)+", "", text)
    return text.strip()


@dataclass(frozen=True)
class DigestRules:
    """Which cleaning steps the digest applies; :data:`SEED_RULES` applies all.

    Each switch exists so a deliberately broken runtime (a mutant) can turn one
    step off and show that the suite notices.
    """

    secret_filter: bool = True
    bearer_tokens: bool = True
    urls: bool = True
    stack_frames: bool = True
    class_names: bool = True
    cause_chain: bool = True
    provider_body: bool = True
    redact_before_cut: bool = True
    cap_whole_text: bool = True


SEED_RULES = DigestRules()


def _clean(text: str, rules: DigestRules, *, redact: bool) -> str:
    if rules.urls:
        text = strip_urls(text)
    if redact and rules.secret_filter:
        text = redact_secrets(text, bearer_tokens=rules.bearer_tokens)
    if rules.stack_frames:
        text = strip_stack_frames(text)
    if rules.class_names:
        text = strip_class_names(text)
    return _collapse(text)


def failure_reason(error: Error, rules: DigestRules = SEED_RULES) -> str:
    """The most specific reason in ``error``'s cause chain, cleaned and redacted.

    Each link's text is its provider body's message when the body is JSON with
    one, otherwise its message with embedded JSON bodies reduced. Starting from
    the innermost link with text, the reason widens to an enclosing link only
    while that link's text contains it (a wrapper that adds context such as
    ``Streaming chat failed: …``); a generic wrapper that does not repeat it
    (``Error while executing lifecycle!``) is skipped. When no link has text, the
    reason is the innermost error type's simple name.
    """
    chain = cause_chain(error) if rules.cause_chain else [error]
    texts = [
        _clean(
            _link_text(link, provider_body=rules.provider_body),
            rules,
            redact=rules.redact_before_cut,
        )
        for link in chain
    ]
    present = [t for t in texts if t]
    if not present:
        return _simple_type(chain[-1]) if chain else "Error"
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


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - len(_ELLIPSIS)].rstrip() + _ELLIPSIS


def digest_text(task_name: str, error: Error, rules: DigestRules = SEED_RULES) -> str:
    """``Task 'eddi://<name>' failed: <reason>``, cleaned, then cut to at most
    :data:`MAX_DIGEST_LENGTH` characters (a cut text ends in ``...``)."""
    prefix = f"Task '{task_uri(task_name)}' failed: "
    reason = failure_reason(error, rules)
    if rules.cap_whole_text:
        text = _cut(prefix + reason, MAX_DIGEST_LENGTH)
    else:
        text = prefix + _cut(reason, MAX_DIGEST_LENGTH)
    if not rules.redact_before_cut and rules.secret_filter:
        text = redact_secrets(text, bearer_tokens=rules.bearer_tokens)
    return text


_SNAPSHOT_URL = re.compile(r"https?://[^\s]+")
_SNAPSHOT_FRAME = re.compile(r"at [a-zA-Z0-9.$]+\([^)]+\)")


def snapshot_digest_text(task_name: str, error: Error) -> str:
    """The EDDI snapshot's digest: the top-level message (or the simple type name
    when blank), ``http(s)`` URLs replaced, Java frames removed, no secret filter,
    class names kept, the reason cut at 200 and then followed by ``...``."""
    message = str(error.get("message") or "")
    if not message.strip():
        message = _simple_type(error)
    message = _SNAPSHOT_URL.sub(URL_MARKER, message)
    message = _SNAPSHOT_FRAME.sub("", message)
    if len(message) > MAX_DIGEST_LENGTH:
        message = message[:MAX_DIGEST_LENGTH] + _ELLIPSIS
    return f"Task '{task_uri(task_name)}' failed: {message.strip()}"


def raw_error_text(error: Error) -> str:
    """The unredacted text a failing task leaves as its raw output: each link's
    ``type: message``, its body and its stack lines, causes after ``Caused by:``."""
    lines: list[str] = []
    for n, link in enumerate(cause_chain(error)):
        head = f"{link.get('type') or 'Error'}: {link.get('message') or ''}".rstrip()
        lines.append(head if n == 0 else f"Caused by: {head}")
        body = link.get("body")
        if isinstance(body, str) and body:
            lines.append(body)
        stack = link.get("stack")
        if isinstance(stack, list):
            lines.extend(f"\t{frame}" for frame in stack if isinstance(frame, str))
    return "\n".join(lines)

