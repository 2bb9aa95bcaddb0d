"""The secret filter of document 001: what the error digest is redacted with.

Document 001 says the digest "is redacted with the same secret filter as the
logs", which is EDDI's ``SecretRedactionFilter``. The filter here removes what
that filter removes (the *seed families*, judged by SW-019 at MUST) and more (the
*kit families*, judged by SW-031 at SHOULD). Each family is one way of writing a
secret; a family can be switched off, which is how a deliberately broken runtime
(a mutant) shows that the rule notices.

Seed families (SW-019):

- ``sk-key``: ``sk-`` and ``sk-ant-`` keys (20 or more of ``A-Za-z0-9_-``);
- ``bearer``: ``Bearer`` followed by a token of 20 or more characters;
- ``unquoted-value``: a value without quotes under a secret-named key:
  ``key=value``, ``key: value``, ``"key": 12345678``;
- ``double-quoted-value``: a double-quoted value, up to its own closing quote
  (spaces and escaped quotes included): ``"key": "value"``, ``key="value"``;
- ``escaped-json``: the same inside a JSON string, at any depth of escaping
  (``\\"key\\": \\"value\\"``, ``\\\\\\"key\\\\\\": …``);
- ``key-case``: key names in any letter case (``PASSWORD``, ``apiKey``).

A name is secret-named at this level when it *ends* with ``api_key``, ``api-key``,
``apikey``, ``token``, ``secret``, ``password`` or ``authorization`` (any case),
so ``db_password`` and ``access_token`` are, and ``max_tokens``, ``tokenizer`` and
``secretary`` are not. A value is redacted when it has at least
:data:`MINIMUM_SECRET_LENGTH` characters.

Kit families (SW-031):

- ``single-quoted-value``: apostrophe-quoted values (Python repr, YAML, libpq);
- ``unquoted-phrase``: free text after ``key:`` up to the end of its clause
  (``password: open sesame please now``), where the seed filter stops at the
  first space;
- ``key-name-variant``: the secret word as one part of a longer name
  (``aws_secret_access_key``, ``password_hash``), ``.`` or a space inside the name
  (``api.key``, ``API Key``) and more words (``passwd``, ``pwd``, ``credentials``,
  ``passphrase``, ``private_key``, ``access_key``, ``authorisation``);
- ``lookalike-key-name``: names spelled with lookalike letters (Cyrillic or Greek
  letters that look like a, o or p; full-width forms) or with invisible characters inside
  (zero-width space, soft hyphen);
- ``url-userinfo``: the password of ``user:password@host``, with or without a
  scheme;
- ``provider-key``: API keys and tokens whose prefix names them (AWS ``AKIA``,
  Google ``AIza``, GitHub ``ghp_``/``github_pat_``, GitLab ``glpat-``, Slack
  ``xox?-``, Stripe ``sk_live_``, Hugging Face ``hf_``, Groq ``gsk_``, xAI
  ``xai-``, npm, PyPI, SendGrid, Replicate);
- ``jwt``: JSON Web Tokens (``eyJ….eyJ….…``) anywhere;
- ``private-key-block``: PEM private key blocks, up to their end line or the end
  of the text;
- ``basic-auth-pair``: ``Basic <base64>`` whose base64 decodes to ``user:password``,
  without a header name in front;
- ``error-type``: every field that feeds the digest's reason is filtered, the
  error type included (applied by :mod:`memconform.simulator.digest`).

Every pattern is compiled by RE2 (:mod:`memconform.simulator.linear_regex`); the
value scanner reads each character a bounded number of times, so the filter takes
time linear in the text. Redacting twice changes nothing the second time. A whole
``${vault:…}`` reference (a pointer to a secret, not a secret) stays legible, and
a value that is only partly redacted is replaced whole.
"""

from __future__ import annotations

import base64
import binascii
import json
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

from memconform.simulator.linear_regex import Found, linear, text, utf8

__all__ = [
    "KIT_FAMILIES",
    "MINIMUM_SECRET_LENGTH",
    "SECRET_FAMILIES",
    "SECRET_MARKER",
    "SEED_FAMILIES",
    "redact_secrets",
]

SECRET_MARKER = "<REDACTED>"
"""What a redacted secret is replaced by."""

MINIMUM_SECRET_LENGTH = 8
"""Values of secret-named keys shorter than this are left alone."""

SEED_FAMILIES: tuple[str, ...] = (
    "sk-key", "bearer", "unquoted-value", "double-quoted-value", "escaped-json", "key-case",
)
"""What EDDI's ``SecretRedactionFilter`` (named by document 001) removes: SW-019."""

KIT_FAMILIES: tuple[str, ...] = (
    "single-quoted-value", "unquoted-phrase", "key-name-variant", "lookalike-key-name",
    "url-userinfo", "provider-key", "jwt", "private-key-block", "basic-auth-pair", "error-type",
)
"""What the kit removes beyond it: SW-031."""

SECRET_FAMILIES: frozenset[str] = frozenset(SEED_FAMILIES + KIT_FAMILIES)
"""Every family; the reference filter applies them all."""

_MARKER = SECRET_MARKER.encode()

# -- secrets recognised by their shape ---------------------------------------------------------

_PRIVATE_KEY_BLOCK = linear(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\z)"
)
_SK_ANT = linear(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")
_SK = linear(r"\bsk-[A-Za-z0-9_\-]{20,}")
_BEARER = linear(r"\b((?i:bearer))\s+[A-Za-z0-9\-_.+/=]{20,}")

# Each alternative captures the prefix that names the key; the prefix is kept.
_PROVIDER_PREFIXES = (
    (r"AKIA|ASIA", r"[A-Z0-9]{16}\b"),  # AWS access key id
    (r"AIza", r"[0-9A-Za-z_\-]{35}"),  # Google API key
    (r"gh[pousr]_", r"[A-Za-z0-9]{30,}"),  # GitHub tokens
    (r"github_pat_", r"[A-Za-z0-9_]{22,}"),  # GitHub fine-grained token
    (r"glpat-", r"[A-Za-z0-9_\-]{20,}"),  # GitLab personal access token
    (r"xox[abposr]-", r"[A-Za-z0-9\-]{10,}"),  # Slack tokens
    (r"[sr]k_(?:live|test)_", r"[A-Za-z0-9]{16,}"),  # Stripe secret and restricted keys
    (r"hf_", r"[A-Za-z0-9]{30,}"),  # Hugging Face token
    (r"gsk_", r"[A-Za-z0-9]{20,}"),  # Groq key
    (r"xai-", r"[A-Za-z0-9]{20,}"),  # xAI key
    (r"npm_", r"[A-Za-z0-9]{36}"),  # npm token
    (r"pypi-", r"[A-Za-z0-9_\-]{50,}"),  # PyPI token
    (r"SG\.", r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),  # SendGrid key
    (r"r8_", r"[A-Za-z0-9]{20,}"),  # Replicate token
)
_PROVIDER_KEY = linear(
    r"\b(?:" + "|".join(f"({prefix}){rest}" for prefix, rest in _PROVIDER_PREFIXES) + ")"
)
_JWT = linear(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")
_BASIC = linear(r"\b((?i:basic))\s+([A-Za-z0-9+/]{6,}={0,2})")
_USERINFO = linear(
    r"(\b[A-Za-z][A-Za-z0-9+.\-]*://)?([^\s:/@\"'<>\[\]{}()]*):([^\s@/]+)@([A-Za-z0-9\[])"
)

# Exactly what a rule leaves behind when it redacted a whole value.
_REDACTED_VALUE = linear(
    r"(?:sk-|sk-ant-|(?i:bearer|basic|token|digest)\s+|"
    + "|".join(prefix for prefix, _ in _PROVIDER_PREFIXES)
    + r")?<REDACTED>"
)
_VAULT_REFERENCE = linear(r"\$\{(?:eddi)?vault:[^}\s]{0,256}\}")

# -- secrets recognised by their key -------------------------------------------------------------

# A name character, or a character written as an escape (``p\u0430ssword`` in a
# JSON body, ``pass\u200bword`` in a Python repr).
_ESCAPED_CHAR = r"\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}"
_NAME_CHAR = r"(?:[\pL\pN\p{Mn}\p{Cf}_.\-]|" + _ESCAPED_CHAR + ")"
_SECRET_WORD = (
    r"(?i:api[_.\- ]?key|token|secret|passw(?:or)?d|pwd|passphrase|authori[sz]ation|"
    r"credentials?|private[_.\- ]?key|access[_.\- ]?key)"
)
_LOOKALIKE_CHAR = (
    r"(?:[\p{Cyrillic}\p{Greek}\p{Armenian}\p{Cf}\x{FF01}-\x{FF5E}]|" + _ESCAPED_CHAR + ")"
)
_KEY = linear(
    f"({_NAME_CHAR}*(?:{_SECRET_WORD}|{_LOOKALIKE_CHAR}){_NAME_CHAR}*)"
    r"(\\*[\"']?)(\s*[:=]\s*)"
)
_KEY_CLOSE = linear(r"\\*[\"']\s*[:=]")
_SCHEME = linear(r"(?i:basic|bearer|digest|token)[ \t]+")
_SCHEME_FIRST = (b"B", b"b", b"D", b"d", b"T", b"t")
_RUN = linear(r"[^\s,;{}\]\"'\\]*")
_PHRASE = linear(r"[^\n\r,;{}\]\"\\]*")

_SEED_NAME_ENDINGS = ("api_key", "api-key", "apikey", "token", "secret", "password",
                      "authorization")
_SECRET_PARTS = frozenset({
    "secret", "secrets", "password", "passwd", "pwd", "passphrase", "token",
    "apikey", "authorization", "authorisation", "credential", "credentials",
})
_SECRET_PAIRS = frozenset({"apikey", "privatekey", "accesskey", "secretkey", "signingkey"})

# Letters of other scripts that look like Latin ones, as they are used to dodge filters.
_LOOKALIKES = str.maketrans(
    "аАвВеЕкКмМнНоОрРсСтТуУхХіІјЈѕЅԁԛԝ"  # Cyrillic
    "αΑβΒεΕζΖηΗιΙκΚμΜνΝοΟρΡτΤυΥχΧ",  # Greek
    "aAbBeEkKmMhHoOpPcCtTyYxXiIjJsSdqw"
    "aAbBeEzZnHiIkKmMvNoOpPtTuYxX",
)


def _fold(name: str) -> tuple[str, bool]:
    """``name`` with lookalike letters mapped to Latin and invisible characters
    dropped, and whether anything changed."""
    if name.isascii():
        return name, False
    kept: list[str] = []
    for char in name:
        if char.isascii():
            kept.append(char)
            continue
        if unicodedata.category(char) in ("Cf", "Mn"):
            continue
        normal = unicodedata.normalize("NFKC", char)
        kept.append(normal if normal.isascii() else char.translate(_LOOKALIKES))
    return "".join(kept), True


def _name_parts(name: str) -> list[str]:
    """The words of a key name, lower case: split at anything not a letter or a
    digit, between a lower-case letter and an upper-case one, and between letters
    and digits (``awsSecret_accessKey2`` -> aws, secret, access, key, 2)."""
    parts: list[str] = []
    current: list[str] = []
    previous = ""
    for char in name:
        if not char.isalnum():
            if current:
                parts.append("".join(current))
            current = []
            previous = ""
            continue
        boundary = current and (
            (previous.islower() and char.isupper())
            or (previous.isalpha() != char.isalpha())
        )
        if boundary:
            parts.append("".join(current))
            current = []
        current.append(char)
        previous = char
    if current:
        parts.append("".join(current))
    return [p.lower() for p in parts]


@lru_cache(maxsize=4096)
def _name_families(name: str) -> frozenset[str] | None:
    """The families needed to recognise ``name`` as secret-named, or ``None`` when
    it is not secret-named at all."""
    if "\\" in name:
        try:
            name = json.loads('"' + name.replace("\\x", "\\u00") + '"')
        except ValueError:
            return None
    folded, changed = _fold(name)
    needed: set[str] = {"lookalike-key-name"} if changed else set()
    lower = folded.lower()
    for ending in _SEED_NAME_ENDINGS:
        if lower.endswith(ending):
            written = folded[len(folded) - len(ending):]
            if written != written.lower():
                needed.add("key-case")
            return frozenset(needed)
    if folded == "PWD":  # the shell's working directory, not a password
        return None
    parts = _name_parts(folded)
    pairs = {a + b for a, b in pairwise(parts)}
    if _SECRET_PARTS.intersection(parts) or _SECRET_PAIRS.intersection(pairs):
        needed.add("key-name-variant")
        return frozenset(needed)
    return None


def _escaping(backslashes: int) -> int:
    """How many of the backslashes in front of a quote escape the quote itself: a
    quote ``d`` levels of JSON-in-a-string deep wears ``2**d - 1`` of its own, and
    each escaped backslash of content before it adds ``2**d`` more."""
    run = backslashes + 1
    return (run & -run) - 1


def _backslashes_before(data: bytes, index: int, floor: int) -> int:
    count = 0
    while index - 1 - count >= floor and data[index - 1 - count] == 0x5C:
        count += 1
    return count


class _Next:
    """The next occurrence of one byte at or after a position, remembered: the
    scanner asks with positions that never go back, so every byte is read once."""

    def __init__(self, data: bytes, byte: bytes) -> None:
        self.data = data
        self.byte = byte
        self.searched_from = len(data) + 1
        self.found = -1

    def at_or_after(self, position: int) -> int:
        """The index of the byte at or after ``position``, or the text's length."""
        known = self.searched_from <= position and (self.found == -1 or self.found >= position)
        if not known:
            self.searched_from = position
            self.found = self.data.find(self.byte, position)
        return len(self.data) if self.found == -1 else self.found


class _Scanner:
    """Finds secret-named keys and replaces their values, left to right."""

    def __init__(self, data: bytes, families: frozenset[str]) -> None:
        self.data = data
        self.families = families
        self.newline = _Next(data, b"\n")
        self.quotes = {0x22: _Next(data, b'"'), 0x27: _Next(data, b"'")}
        self.pieces: list[bytes] = []
        self.copied = 0
        self.next_key: Found | None = None
        """A key already found where the search resumes (a value that is a key)."""

    def replace(self, start: int, end: int) -> None:
        self.pieces += [self.data[self.copied:start], _MARKER]
        self.copied = end

    def quoted_value_end(self, start: int, quote: int, escaping: int) -> int:
        """Where a quoted value that starts at ``start`` ends (exclusive, before the
        closing quote's own backslashes): at its closing quote (the same quote, not
        escaped at the value's depth) or at a quote of a shallower depth (the
        enclosing string closed first); else at the end of the line or of the text,
        since a value cut short is a secret to its end."""
        line_end = self.newline.at_or_after(start)
        unit = escaping + 1
        position = start
        while True:
            found = self.quotes[quote].at_or_after(position)
            if found >= line_end:
                return line_end
            run = _backslashes_before(self.data, found, start)
            same_depth = (run + 1) % unit == 0
            escaped_here = same_depth and ((run + 1) // unit) % 2 == 0
            if not escaped_here and _escaping(run) <= escaping:
                return found - _escaping(run)
            position = found + 1

    def quoted(self, value_at: int, backslashes: int) -> int:
        """Handle a quoted value; the position to search on from."""
        opening = value_at + backslashes
        quote = self.data[opening]
        escaping = _escaping(backslashes)
        family = "double-quoted-value" if quote == 0x22 else "single-quoted-value"
        wanted = {family, "escaped-json"} if escaping else {family}
        start = opening + 1
        end = self.quoted_value_end(start, quote, escaping)
        value = self.data[start:end]
        if _KEY_CLOSE.match(self.data, end) and _name_families(text(value)) is not None:
            return start  # a secret-named key of its own (`password: "token": "…"`)
        inner = self.before_next_key(start, end)
        if inner < end:  # a secret-named key inside: its value is judged on its own
            head = self.data[start:inner]
            if wanted <= self.families and head.strip() and not _exempt(head):
                self.replace(start, inner)
            return inner
        if wanted <= self.families and _long_enough(value) and not _exempt(value):
            self.replace(start, end)
            return end
        return start

    def unquoted(self, value_at: int, phrase: bool) -> int:
        """Handle a value without quotes; the position to search on from."""
        data = self.data
        scheme = _SCHEME.match(data, value_at) if data[value_at:value_at + 1] in _SCHEME_FIRST \
            else None
        start = scheme.end() if scheme is not None else value_at
        inner = _KEY.match(data, start)
        if inner is not None and _name_families(text(inner.text(1))) is not None:
            self.next_key = inner
            return start  # a secret-named key of its own (`password= token: …`)
        vault = _VAULT_REFERENCE.match(data, start) if data[start:start + 1] == b"$" else None
        run = _RUN.match(data, vault.end() if vault is not None else start)
        run_end = run.end() if run is not None else start
        end = run_end
        if phrase and "unquoted-phrase" in self.families:
            found = _PHRASE.match(data, start)
            phrase_end = self.before_next_key(start, found.end() if found is not None else start)
            while phrase_end > run_end and data[phrase_end - 1] in b" \t":
                phrase_end -= 1
            end = max(end, phrase_end)
        if not _long_enough(data[start:end]):
            return value_at  # nothing to redact; a key may start inside
        if _exempt(data[start:run_end]):
            return run_end
        if end == run_end and "unquoted-value" not in self.families:
            return run_end
        self.replace(start, end)
        return end

    def before_next_key(self, start: int, end: int) -> int:
        """Where a phrase from ``start`` to ``end`` stops: before the first
        secret-named key inside it, whose value is then judged on its own."""
        position = start
        while True:
            found = _KEY.search(self.data, position, end)
            if found is None:
                return end
            if _name_families(text(found.text(1))) is not None:
                return found.start()
            position = found.end()

    def run(self) -> bytes:
        data = self.data
        position = 0
        while True:
            found = self.next_key
            self.next_key = None
            if found is None or found.start() != position:
                found = _KEY.search(data, position)
            if found is None:
                break
            position = found.end()
            needed = _name_families(text(found.text(1)))
            if needed is None or not needed <= self.families:
                continue
            value_at = found.end()
            backslashes = 0
            while value_at + backslashes < len(data) and data[value_at + backslashes] == 0x5C:
                backslashes += 1
            if value_at + backslashes < len(data) and data[value_at + backslashes] in b"\"'":
                position = self.quoted(value_at, backslashes)
                continue
            key_quoted = found.text(2).endswith((b'"', b"'"))
            phrase = b":" in found.text(3) and not key_quoted
            position = self.unquoted(value_at, phrase)
        if not self.pieces:
            return data
        self.pieces.append(data[self.copied:])
        return b"".join(self.pieces)


def _exempt(value: bytes) -> bool:
    """A whole vault reference, or a value an earlier rule already redacted whole."""
    if value.startswith(b"${"):
        return _VAULT_REFERENCE.fullmatch(value)
    return _MARKER in value and _REDACTED_VALUE.fullmatch(value)


def _long_enough(value: bytes) -> bool:
    decoded = text(value)
    return len(decoded) >= MINIMUM_SECRET_LENGTH and bool(decoded.strip())


def _bearer(found: Found) -> bytes:
    return found.text(1) + b" " + _MARKER


def _provider_key(found: Found) -> bytes:
    prefix = next(found.text(g) for g in range(1, len(found.spans)) if found.start(g) >= 0)
    return prefix + _MARKER


def _basic_pair(found: Found) -> bytes:
    encoded = found.text(2)
    try:
        decoded = base64.b64decode(encoded + b"=" * (-len(encoded) % 4), validate=True)
        pair = decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return found.text()
    if ":" not in pair or not pair.isprintable():
        return found.text()
    return found.text(1) + b" " + _MARKER


def _userinfo(found: Found) -> bytes:
    return found.text(1) + found.text(2) + b":" + _MARKER + b"@" + found.text(4)


def redact_secrets(text_value: str, families: Iterable[str] = SECRET_FAMILIES) -> str:
    """Replace the secrets in ``text_value`` by :data:`SECRET_MARKER`.

    ``families`` names the families applied (all of them by default); the module
    docstring says what each one covers. The result is the same whatever the
    order of the input's secrets, and redacting it again changes nothing.
    """
    on = frozenset(families)
    data = utf8(text_value)
    if "private-key-block" in on:
        data = _PRIVATE_KEY_BLOCK.sub(_MARKER, data)
    if "sk-key" in on:
        data = _SK_ANT.sub(b"sk-ant-" + _MARKER, data)
        data = _SK.sub(b"sk-" + _MARKER, data)
    if "bearer" in on:
        data = _BEARER.sub(_bearer, data)
    if "provider-key" in on:
        data = _PROVIDER_KEY.sub(_provider_key, data)
    if "jwt" in on:
        data = _JWT.sub(_MARKER, data)
    if "basic-auth-pair" in on:
        data = _BASIC.sub(_basic_pair, data)
    if "url-userinfo" in on:
        data = _USERINFO.sub(_userinfo, data)
    data = _Scanner(data, on).run()
    return text(data)
