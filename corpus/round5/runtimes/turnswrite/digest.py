"""The error digest of the strict-write runtime: reason, cleaning, secret filter, cap.

A digest reads ``Task 'eddi://<task>' failed: <reason>``. The reason is the most
specific text of the failure's cause chain (a provider's JSON body reduced to its
message); it is cleaned in this order: URLs become ``[url]``, secrets become
``<REDACTED>``, stack frames and fully-qualified class names are stripped; the whole
text is then cut to 200 characters (``...`` marks a cut). Redaction always runs before
the cut, so no fragment of a secret survives.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import itertools
import json
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

MAX_DIGEST = 200
MARKER = "<REDACTED>"
URL_MARKER = "[url]"
MIN_SECRET = 8

# -- secrets recognised by their shape ----------------------------------------------------

_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S)
_SK_ANT = re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")
_SK = re.compile(r"\bsk-(?!ant-<)[A-Za-z0-9_\-]{20,}")
_BEARER = re.compile(r"\b(bearer)\s+[A-Za-z0-9\-_.+/=]{20,}", re.I)
_PROVIDER = re.compile(
    r"\b(AKIA|ASIA)[A-Z0-9]{16}\b|\b(AIza)[0-9A-Za-z_\-]{35}|\b(gh[pousr]_)[A-Za-z0-9]{30,}"
    r"|\b(github_pat_)[A-Za-z0-9_]{22,}|\b(glpat-)[A-Za-z0-9_\-]{20,}"
    r"|\b(xox[abposr]-)[A-Za-z0-9\-]{10,}|\b([sr]k_(?:live|test)_)[A-Za-z0-9]{16,}"
    r"|\b(hf_)[A-Za-z0-9]{30,}|\b(gsk_)[A-Za-z0-9]{20,}|\b(xai-)[A-Za-z0-9]{20,}"
    r"|\b(npm_)[A-Za-z0-9]{36}|\b(pypi-)[A-Za-z0-9_\-]{50,}"
    r"|\b(SG\.)[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}|\b(r8_)[A-Za-z0-9]{20,}"
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")
_BASIC = re.compile(r"\b(basic)\s+([A-Za-z0-9+/]{6,}={0,2})", re.I)
_USERINFO = re.compile(
    r"(\b[A-Za-z][A-Za-z0-9+.\-]*://)?([^\s:/@\"'<>\[\]{}()]*):([^\s@/]+)@([A-Za-z0-9\[])"
)

# -- secrets recognised by their key ------------------------------------------------------

_KEY = re.compile(
    r"((?:[\w.\-\u200b\u00ad]|\\u[0-9A-Fa-f]{4})+(?:[ .](?:key|Key|KEY))?)(\\*[\"']?)(\s*[:=]\s*)"
)
_ENDINGS = ("api_key", "api-key", "apikey", "token", "secret", "password", "authorization")
_PARTS = {"secret", "secrets", "password", "passwd", "pwd", "passphrase", "token", "apikey",
          "authorization", "authorisation", "credential", "credentials"}
_PAIRS = {"apikey", "privatekey", "accesskey", "secretkey", "signingkey"}
_LOOK = str.maketrans("аАвВеЕкКмМнНоОрРсСтТуУхХіІјЈѕЅαΑοΟρΡ",
                      "aAbBeEkKmMhHoOpPcCtTyYxXiIjJsSaAoOpP")
_SCHEME = re.compile(r"(?:basic|bearer|digest|token)[ \t]+", re.I)
_RUN = re.compile(r"[^\s,;{}\]\"'\\]*")
_PHRASE = re.compile(r"[^\n\r,;{}\]\"\\]*")
_VAULT = re.compile(r"\$\{(?:eddi)?vault:[^}\s]{0,256}\}")


def _plain_name(name: str) -> str:
    if "\\u" in name:
        with contextlib.suppress(ValueError):
            name = json.loads('"' + name + '"')
    kept = []
    for char in name:
        if char.isascii():
            kept.append(char)
        elif unicodedata.category(char) in ("Cf", "Mn"):
            continue
        else:
            normal = unicodedata.normalize("NFKC", char)
            kept.append(normal if normal.isascii() else char.translate(_LOOK))
    return "".join(kept)


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Za-z])([0-9])|([0-9])([A-Za-z])", r"\1\3 \2\4", spaced)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def secret_name(name: str) -> bool:
    """Whether a key name names a secret (``db_password``, ``accessToken``, not ``max_tokens``)."""
    plain = _plain_name(name)
    if plain.lower().endswith(_ENDINGS):
        return True
    if plain == "PWD":
        return False
    words = _words(plain)
    pairs = {a + b for a, b in itertools.pairwise(words)}
    return bool(_PARTS.intersection(words) or _PAIRS.intersection(pairs))


def _exempt(value: str) -> bool:
    return bool(_VAULT.fullmatch(value)) or (MARKER in value and len(value) <= len(MARKER) + 8)


def _quoted_end(text: str, start: int, quote: str, depth: int) -> int:
    """Where a quoted value starting at ``start`` ends: its closing quote at the same
    escaping depth, a shallower quote, the line's end or the text's end."""
    position = start
    while True:
        found = text.find(quote, position)
        line = text.find("\n", start)
        line = len(text) if line == -1 else line
        if found == -1 or found >= line:
            return line
        run = 0
        while found - 1 - run >= start and text[found - 1 - run] == "\\":
            run += 1
        if run <= depth:
            return found - run
        position = found + 1


def _redact_keyed(text: str) -> str:
    out: list[str] = []
    copied = 0
    position = 0
    while True:
        found = _KEY.search(text, position)
        if found is None:
            break
        position = found.end()
        if not secret_name(found.group(1)):
            # the name may end in a word that starts a secret name further on
            continue
        at = found.end()
        slashes = 0
        while at + slashes < len(text) and text[at + slashes] == "\\":
            slashes += 1
        if at + slashes < len(text) and text[at + slashes] in "\"'":
            quote = text[at + slashes]
            start = at + slashes + 1
            end = _quoted_end(text, start, quote, slashes)
            value = text[start:end]
            if len(value.strip()) >= MIN_SECRET and not _exempt(value):
                out += [text[copied:start], MARKER]
                copied = end
            position = max(position, end)
            continue
        start = at
        scheme = _SCHEME.match(text, start)
        if scheme is not None:
            start = scheme.end()
        inner = _KEY.match(text, start)
        if inner is not None and secret_name(inner.group(1)):
            position = start
            continue
        end = _RUN.match(text, start).end()
        if ":" in found.group(3) and not found.group(2):
            phrase = _PHRASE.match(text, start).end()
            nested = _KEY.search(text, start, phrase)
            while nested is not None and not secret_name(nested.group(1)):
                nested = _KEY.search(text, nested.end(), phrase)
            if nested is not None:
                phrase = nested.start()
            phrase_text = text[start:phrase].rstrip(" \t")
            end = max(end, start + len(phrase_text))
        value = text[start:end]
        if len(value.strip()) < MIN_SECRET or _exempt(text[start:_RUN.match(text, start).end()]):
            continue
        out += [text[copied:start], MARKER]
        copied = end
        position = end
    if not out:
        return text
    out.append(text[copied:])
    return "".join(out)


def _basic(found: re.Match[str]) -> str:
    encoded = found.group(2)
    try:
        pair = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode()
    except (binascii.Error, ValueError):
        return found.group(0)
    if ":" not in pair or not pair.isprintable():
        return found.group(0)
    return f"{found.group(1)} {MARKER}"


def _provider(found: re.Match[str]) -> str:
    prefix = next(g for g in found.groups() if g)
    return prefix + MARKER


def redact_secrets(text: str) -> str:
    """Replace every secret in ``text`` by ``<REDACTED>``; idempotent."""
    text = _PEM.sub(MARKER, text)
    text = _SK_ANT.sub("sk-ant-" + MARKER, text)
    text = _SK.sub("sk-" + MARKER, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MARKER}", text)
    text = _PROVIDER.sub(_provider, text)
    text = _JWT.sub(MARKER, text)
    text = _BASIC.sub(_basic, text)
    text = _USERINFO.sub(lambda m: f"{m.group(1) or ''}{m.group(2)}:{MARKER}@{m.group(4)}", text)
    return _redact_keyed(text)


# -- URLs, stack frames, class names ------------------------------------------------------

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://(?:[^\s@/]*@)?[^\s\"'<>()\[\]{}`]+")
_FRAME_LINE = re.compile(
    r"(?m)^[ \t]*File \"[^\"\n]*\", line [0-9]+(?:, in [^\n]*)?$"
    r"(?:\n[ \t]+(?![ \t]*File \")[^\n]*)?")
_FRAMES = [
    re.compile(r"Traceback \(most recent call last\):?"),
    re.compile(r"File \"[^\"\n]*\", line [0-9]+(?:, in [\w<>.$]+)?"),
    re.compile(r"(?:During handling of the above exception, another exception occurred|"
               r"The above exception was the direct cause of the following exception):?"),
    re.compile(r"\bat\s+[\w$.<>/]+\([^()]*\)"),
    re.compile(r"\.\.\.\s*[0-9]+\s+(?:more|common frames omitted)"),
    re.compile(r"\b(?:Caused by|Suppressed):\s*"),
    re.compile(r"(?m)^[ \t]*[\^~]+[ \t]*$"),
]
_CLASS = re.compile(
    r"\b(?:[a-z_][a-z0-9_]*\.)+[A-Z][A-Za-z0-9_$]*(?:\.[A-Z][A-Za-z0-9_$]*)*(?::\s*)?")


def strip_urls(text: str) -> str:
    def repl(found: re.Match[str]) -> str:
        url = found.group(0)
        stripped = url.rstrip(".,;:!?")
        return URL_MARKER + url[len(stripped):]
    return _URL.sub(repl, text)


def strip_frames(text: str) -> str:
    text = _FRAME_LINE.sub(" ", text)
    for pattern in _FRAMES:
        text = pattern.sub(" ", text)
    return text


def _collapse(text: str) -> str:
    text = " ".join(text.split())
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"(?:[:;,]\s*)+$", "", text)
    text = re.sub(r"^(?:[:;,]\s*)+", "", text)
    return text.strip()


def clean(text: str, *, redact: bool = True) -> str:
    """URLs, secrets, frames and class names out; whitespace collapsed."""
    text = strip_urls(text)
    if redact:
        text = redact_secrets(text)
    once = text
    text = _collapse(_CLASS.sub("", strip_frames(text)))
    if redact and text != once:
        text = redact_secrets(text)
    return text


# -- the reason ---------------------------------------------------------------------------


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8", "replace")
    if value is None or value is False or value == "":
        return ""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return ""


def _body_message(value: Any, depth: int = 0) -> str | None:
    if depth > 16:
        return None
    if isinstance(value, Mapping):
        for key in ("message", "error_description", "detail"):
            inner = value.get(key)
            if isinstance(inner, str) and inner.strip():
                return inner
        for key in ("error", "errors"):
            inner = value.get(key)
            if isinstance(inner, str) and inner.strip():
                return inner
            found = _body_message(inner, depth + 1)
            if found:
                return found
    if isinstance(value, list):
        for item in value:
            found = _body_message(item, depth + 1)
            if found:
                return found
    return None


_BODY_START = re.compile(r"\{\s*[\"}]")


def reduce_bodies(text: str) -> str:
    """Each embedded JSON error body becomes its message."""
    decoder = json.JSONDecoder()
    out: list[str] = []
    copied = position = 0
    for _ in range(64):
        found = _BODY_START.search(text, position)
        if found is None:
            break
        start = found.start()
        try:
            decoded, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            position = start + 1
            continue
        message = _body_message(decoded)
        if message is not None:
            out += [text[copied:start], message]
            copied = end
        position = end
    out.append(text[copied:])
    return "".join(out)


def cause_chain(error: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    chain: list[Mapping[str, Any]] = []
    seen: set[int] = set()
    current: Any = error
    while isinstance(current, Mapping) and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.get("cause")
    return chain


def _link_text(link: Mapping[str, Any]) -> str:
    body = link.get("body")
    if isinstance(body, str) and body.strip():
        try:
            found = _body_message(json.loads(body))
        except (ValueError, RecursionError):
            found = None
        if found:
            return found
    return reduce_bodies(_as_text(link.get("message")))


def failure_reason(error: Mapping[str, Any], *, redact: bool = True) -> str:
    """The most specific reason of the cause chain, cleaned (and redacted)."""
    chain = cause_chain(error)
    texts = [t for t in (clean(_link_text(link), redact=redact) for link in chain) if t]
    if not texts:
        name = _as_text(chain[-1].get("type")) if chain else ""
        name = (name or "Error").replace("$", ".").rsplit(".", 1)[-1] or "Error"
        return clean(name, redact=redact) or "Error"
    reason = texts[-1]
    for outer in reversed(texts[:-1]):
        if reason in outer:
            reason = outer
        else:
            break
    return reason


def task_uri(task: str) -> str:
    return f"eddi://{task}"


def cut(text: str, limit: int = MAX_DIGEST) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 3].rstrip() + "..."


def digest_text(task: str, error: Mapping[str, Any]) -> str:
    """``Task 'eddi://<task>' failed: <reason>``, redacted, then cut to 200."""
    return cut(f"Task '{task_uri(task)}' failed: {failure_reason(error)}")


def raw_error_text(error: Mapping[str, Any]) -> str:
    """What a failing task leaves as raw output: types, messages, bodies, stacks."""
    lines: list[str] = []
    for n, link in enumerate(cause_chain(error)):
        head = f"{_as_text(link.get('type')) or 'Error'}: {_as_text(link.get('message'))}".rstrip()
        lines.append(head if n == 0 else f"Caused by: {head}")
        body = link.get("body")
        if isinstance(body, str) and body:
            lines.append(body)
        stack = link.get("stack")
        if isinstance(stack, list):
            lines.extend(f"\t{frame}" for frame in stack if isinstance(frame, str))
    return "\n".join(lines)
