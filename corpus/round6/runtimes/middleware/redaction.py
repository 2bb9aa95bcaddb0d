"""The error digester of the middleware family: the reason of a failure, cleaned.

``Digester`` turns a scripted error (``type``, ``message``, ``cause``, ``body``,
``status``, ``stack``) into the digest text ``Task 'eddi://<task>' failed: <reason>``:
the most specific reason of the cause chain, stack frames and qualified class names
stripped, URLs replaced by ``[url]``, secrets replaced by ``<REDACTED>``, and only then
the whole text capped at 200 characters. Each stage is a method, so a pipeline (or a
variant) can change one of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

MARK = "<REDACTED>"
CAP = 200
ELLIPSIS = "..."

_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")
_LOOKALIKE = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i",
    "ѕ": "s", "ј": "j", "ԁ": "d", "к": "k", "т": "t", "н": "h", "м": "m", "в": "b",
    "А": "A", "Е": "E", "О": "O", "Р": "P", "С": "C", "Х": "X", "У": "Y", "І": "I",
    "Ѕ": "S", "К": "K", "Т": "T", "Н": "H", "М": "M", "В": "B",
})

# --- stack frames and class names ------------------------------------------------------
_JAVA_FRAME = re.compile(r"\s*\bat\s+[\w$.<>/-]*[\w$<>]\.[\w$<>]+\([^()\n]*\)")
_MORE = re.compile(r"\s*\.\.\.\s*\d+\s+more\b")
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):?")
_PY_FRAME = re.compile(r'\s*File "[^"\n]*", line \d+(?:, in [^\n]*)?')
_QUALIFIED = re.compile(r"\b(?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?::(?=\s|$))?")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*")

# --- secrets ---------------------------------------------------------------------------
_SHAPES = [
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)",
               re.S),
    re.compile(r"\beyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]{4,}"),
    re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    re.compile(r"\bAIza[\w-]{30,}"),
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{20,})"),
    re.compile(r"\bglpat-[\w-]{20,}"),
    re.compile(r"\bxox[abposr]-[\w-]{10,}"),
    re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"),
    re.compile(r"\b(?:hf|gsk)_[A-Za-z0-9]{20,}"),
    re.compile(r"\bxai-[A-Za-z0-9]{20,}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{30,}"),
    re.compile(r"\bpypi-[\w-]{30,}"),
    re.compile(r"\bSG\.[\w-]{16,}\.[\w-]{16,}"),
    re.compile(r"\br8_[A-Za-z0-9]{30,}"),
]
_BEARER = re.compile(r"\b(Bearer|Basic)\s+([A-Za-z0-9._~+/=-]+)", re.I)
_WORDS = r"(?:api[\s_-]?key|apikey|token|secret|password|passwd|authorization)"
_KEY = (r"(?P<kq>\\*[\"']?)(?P<key>[A-Za-z0-9_.-]*" + _WORDS
        + r"(?:[_-][A-Za-z0-9]+)*)(?P=kq)")
_VALUE = re.compile(
    _KEY + r"(?P<sep>\s*[:=]\s*)(?:"
    r"(?P<vq>\\*\")(?P<dq>.*?)(?<!\\)(?P=vq)"
    r"|'(?P<sq>[^'\n]*)'"
    r"|(?P<bare>[^\s\"',;&(){}\[\]\\]+(?:[^\S\n]+[^\s\"',;&(){}\[\]\\:=]+)*)"
    r")",
    re.I,
)
_USERINFO = re.compile(r"\b([\w.+-]+):([^\s@/:]{3,})@([\w-]+(?:\.[\w-]+)*)")
_BODY_KEYS = ("message", "error.message", "error", "detail", "errors[0]")


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


class Digester:
    """The reason, the cleaning stages and the digest text of one failure."""

    prefix = "Task 'eddi://{task}' failed: "
    body_keys: tuple[str, ...] = _BODY_KEYS

    # -- the reason ---------------------------------------------------------------------

    def body_message(self, body: Any) -> str | None:
        """A provider's JSON error body reduced to its message."""
        if isinstance(body, str):
            try:
                body = json.loads(body)
            except ValueError:
                return None
        if not isinstance(body, Mapping):
            return None
        for path in self.body_keys:
            found = self.body_path(body, path)
            if _is_text(found):
                return str(found)
            if isinstance(found, Mapping) and _is_text(found.get("message")):
                return str(found["message"])
        return None

    @staticmethod
    def body_path(body: Mapping[str, Any], path: str) -> Any:
        if path == "error.message":
            inner = body.get("error")
            return inner.get("message") if isinstance(inner, Mapping) else None
        if path == "errors[0]":
            items = body.get("errors")
            return items[0] if isinstance(items, list) and items else None
        return body.get(path)

    def inline_body(self, text: str) -> str:
        """A message that ends in a provider's JSON body keeps the body's message only."""
        start = text.find("{")
        while start != -1:
            try:
                body = json.loads(text[start:])
            except ValueError:
                start = text.find("{", start + 1)
                continue
            reduced = self.body_message(body)
            if reduced is None:
                return text
            return text[:start] + reduced
        return text

    def chain(self, error: Mapping[str, Any]) -> list[str]:
        """The messages of the cause chain, outermost first (a body counts as the
        innermost part of the error carrying it)."""
        texts: list[str] = []
        seen = 0
        current: Any = error
        while isinstance(current, Mapping) and seen < 32:
            seen += 1
            if _is_text(current.get("message")):
                texts.append(self.inline_body(str(current["message"])))
            body = self.body_message(current.get("body"))
            if body is not None:
                texts.append(body)
            current = current.get("cause")
        return texts

    def reason(self, error: Mapping[str, Any]) -> str:
        texts = self.chain(error)
        if not texts:
            return str(error.get("type") or "Error")
        reason = texts[-1]
        for outer in reversed(texts[:-1]):
            if reason in outer:
                reason = outer
            else:
                break
        return reason

    # -- cleaning -----------------------------------------------------------------------

    def strip_frames(self, text: str) -> str:
        text = _TRACEBACK.sub(" ", text)
        lines: list[str] = []
        after_frame = False
        for line in text.splitlines():
            if _PY_FRAME.fullmatch(line):
                after_frame = True
                continue
            if after_frame and line.startswith((" ", "\t")):
                after_frame = False
                continue
            after_frame = False
            lines.append(line)
        text = " ".join(lines)
        text = _JAVA_FRAME.sub(" ", text)
        text = _MORE.sub(" ", text)
        text = _PY_FRAME.sub(" ", text)
        return _QUALIFIED.sub("", text)

    def strip_urls(self, text: str) -> str:
        return _URL.sub("[url]", text)

    def redact(self, text: str) -> str:
        text = _INVISIBLE.sub("", text).translate(_LOOKALIKE)
        for shape in _SHAPES:
            text = shape.sub(MARK, text)
        text = _BEARER.sub(self._bearer, text)
        text = _VALUE.sub(self._value, text)
        return _USERINFO.sub(lambda m: f"{m[1]}:{MARK}@{m[3]}", text)

    @staticmethod
    def _bearer(match: re.Match[str]) -> str:
        token = match[2]
        if token == MARK or (match[1].lower() == "bearer" and len(token) < 20):
            return match[0]
        if match[1].lower() == "basic" and len(token) < 8:
            return match[0]
        return f"{match[1]} {MARK}"

    @staticmethod
    def _value(match: re.Match[str]) -> str:
        head = match.group("kq") + match.group("key") + match.group("kq") + match.group("sep")
        if match.group("vq") is not None:
            value, quote = match.group("dq"), match.group("vq")
            if len(value) < 8 or value == MARK:
                return match[0]
            return f"{head}{quote}{MARK}{quote}"
        if match.group("sq") is not None:
            value = match.group("sq")
            if len(value) < 8 or value == MARK:
                return match[0]
            return f"{head}'{MARK}'"
        value = match.group("bare")
        if "=" in match.group("sep") and " " in value:
            first, rest = value.split(" ", 1)
            if len(first) < 8 or first == MARK:
                return match[0]
            return f"{head}{MARK} {rest}"
        if value == MARK or (len(value) < 8 and ":" not in match.group("sep")):
            return match[0]
        if len(value) < 8 and " " not in value:
            return match[0]
        return f"{head}{MARK}"

    @staticmethod
    def squeeze(text: str) -> str:
        return re.sub(r"\s+", " ", text).strip(" :")

    def clean(self, reason: str) -> str:
        """Stack frames, class names and URLs out, then the secret filter."""
        text = self.squeeze(self.strip_urls(self.strip_frames(reason)))
        return self.squeeze(self.redact(text)) or "failed"

    def cap(self, text: str) -> str:
        if len(text) <= CAP:
            return text
        return text[: CAP - len(ELLIPSIS)].rstrip() + ELLIPSIS

    # -- the digest ---------------------------------------------------------------------

    def text(self, task: str, error: Mapping[str, Any]) -> str:
        whole = self.prefix.format(task=task) + self.clean(self.reason(error))
        return self.cap(self.redact(whole))

    def entry(self, task: str, error: Mapping[str, Any]) -> dict[str, Any]:
        return {"type": "errorDigest", "taskId": task, "text": self.text(task, error)}

    def stream_reason(self, error: Mapping[str, Any]) -> str:
        return self.cap(self.clean(self.reason(error)))


def raw_error_text(error: Mapping[str, Any]) -> str:
    """The failure as a task leaves it behind: type, message, body, stack, causes."""
    parts: list[str] = []
    current: Any = error
    depth = 0
    while isinstance(current, Mapping) and depth < 32:
        depth += 1
        head = str(current.get("type") or "Error")
        message = str(current.get("message") or "")
        parts.append(("Caused by: " if depth > 1 else "") + f"{head}: {message}".rstrip())
        if current.get("status") is not None:
            parts.append(f"status {current['status']}")
        if current.get("body") is not None:
            body = current["body"]
            parts.append(body if isinstance(body, str) else json.dumps(body, sort_keys=True))
        for frame in current.get("stack") or []:
            parts.append(str(frame))
        current = current.get("cause")
    return "\n".join(parts)
