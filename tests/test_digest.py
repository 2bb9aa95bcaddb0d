"""The error digest and the secret filter (memconform.simulator.digest)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memconform.simulator.digest import (
    MAX_DIGEST_LENGTH,
    SECRET_FAMILIES,
    SECRET_MARKER,
    DigestRules,
    digest_text,
    failure_reason,
    raw_error_text,
    redact_secrets,
    reduce_provider_body,
    snapshot_digest_text,
    strip_class_names,
    strip_stack_frames,
    strip_urls,
)

GOLDEN_MODEL = "Task 'eddi://ai.labs.llm' failed: Chat model execution failed: model 'x' not found"
GOLDEN_STREAMING = (
    "Task 'eddi://ai.labs.llm' failed: Streaming chat failed: "
    "`temperature` is deprecated for this model."
)
PROVIDER_BODY = json.dumps(
    {
        "error": {
            "message": "`temperature` is deprecated for this model.",
            "type": "invalid_request_error",
            "param": "temperature",
        }
    }
)


# -- goldens ------------------------------------------------------------------------------


def test_golden_model_not_found() -> None:
    error = {
        "type": "ai.labs.eddi.engine.lifecycle.exceptions.LifecycleException",
        "message": "Error while executing lifecycle!",
        "cause": {
            "type": "x.ChatModelException",
            "message": "Chat model execution failed: model 'x' not found",
            "cause": {"type": "a.b.ModelNotFoundException", "message": "model 'x' not found"},
        },
    }
    assert digest_text("ai.labs.llm", error) == GOLDEN_MODEL


def test_golden_streaming_provider_rejection() -> None:
    error = {
        "type": "LifecycleException",
        "message": "Error while executing lifecycle!",
        "cause": {
            "type": "StreamingChatException",
            "message": f"Streaming chat failed: {PROVIDER_BODY}",
            "cause": {"type": "HttpException", "status": 400, "message": PROVIDER_BODY},
        },
    }
    assert digest_text("ai.labs.llm", error) == GOLDEN_STREAMING


def test_task_uri_is_not_doubled() -> None:
    text = digest_text("eddi://weather", {"message": "down"})
    assert text == "Task 'eddi://weather' failed: down"


# -- reason -------------------------------------------------------------------------------


def test_reason_from_body_field() -> None:
    error = {"message": "HTTP 429", "body": json.dumps({"error": {"message": "Slow down"}})}
    assert failure_reason(error) == "Slow down"


def test_reason_skips_generic_wrapper() -> None:
    error = {"message": "Error while executing lifecycle!", "cause": {"message": "disk full"}}
    assert failure_reason(error) == "disk full"


def test_reason_widens_to_wrapper_that_repeats_it() -> None:
    error = {"message": "java.lang.RuntimeException: java.io.IOException: disk full",
             "cause": {"type": "java.io.IOException", "message": "disk full"}}
    assert failure_reason(error) == "disk full"


def test_reason_of_blank_chain_is_type_name() -> None:
    assert failure_reason({"type": "a.b.LifecycleException", "message": ""}) == (
        "LifecycleException"
    )


def test_cause_cycle_terminates() -> None:
    error: dict[str, Any] = {"message": "outer"}
    error["cause"] = error
    assert failure_reason(error) == "outer"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"message": "plain"}', "plain"),
        ('{"error": {"message": "nested"}}', "nested"),
        ('{"error": "invalid_grant", "error_description": "expired code"}', "expired code"),
        ('{"detail": "not allowed"}', "not allowed"),
        ('{"errors": [{"message": "first"}, {"message": "second"}]}', "first"),
    ],
)
def test_provider_body_shapes(body: str, message: str) -> None:
    assert reduce_provider_body(f"failed: {body}") == f"failed: {message}"


def test_body_without_message_is_kept() -> None:
    assert reduce_provider_body('bad {"code": 7} {oops') == 'bad {"code": 7} {oops'


# -- cleaning -------------------------------------------------------------------------------


def test_urls_with_credentials_and_punctuation() -> None:
    text = "see https://u:p@h.example/a?b=1, and redis://:pw@cache:6379."
    assert strip_urls(text) == "see [url], and [url]."


def test_java_frames() -> None:
    text = ("boom\n\tat a.b.C.m(C.java:12)\n\tat java.base/x.Y.z(Native Method)\n"
            "Caused by: oops\n\t... 4 more")
    assert " ".join(strip_stack_frames(text).split()) == "boom oops"


def test_python_traceback() -> None:
    text = ('Traceback (most recent call last):\n  File "/a/b.py", line 3, in run\n'
            "    do_it()\n      ^^^^^\nValueError: bad")
    assert " ".join(strip_stack_frames(text).split()) == "ValueError: bad"


def test_class_names() -> None:
    assert strip_class_names("java.net.ConnectException: refused") == "refused"
    assert strip_class_names("in a.b.Outer$Inner today") == "in  today"
    assert strip_class_names("api.example.com stays") == "api.example.com stays"


# -- secret filter ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-" + "a" * 24, "key sk-<REDACTED>"),
        ("key sk-ant-" + "b" * 24, "key sk-ant-<REDACTED>"),
        ("Authorization: Bearer " + "c" * 24, "Authorization: Bearer <REDACTED>"),
        ("Bearer short", "Bearer short"),
        ('{"api_key": "abcdefgh"}', '{"api_key": "<REDACTED>"}'),
        ('{"api_key": "abc"}', '{"api_key": "abc"}'),
        ('{"token": 123456789}', '{"token": <REDACTED>}'),
        ('{\\"password\\": \\"hunter2222\\"}', '{\\"password\\": \\"<REDACTED>\\"}'),
        ("db_password=correcthorse", "db_password=<REDACTED>"),
        ("client_secret: s3cr3t-value", "client_secret: <REDACTED>"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic <REDACTED>"),
        ('"secret": "${vault:payments/key}"', '"secret": "${vault:payments/key}"'),
        ('"password": "<REDACTED>tail"', '"password": "<REDACTED>"'),
        ("password=<REDACTED>tail", "password=<REDACTED>"),
        ('"password": "          "', '"password": "          "'),
    ],
)
def test_secret_filter(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


def test_secret_filter_can_skip_a_family() -> None:
    token = "Bearer " + "d" * 30
    assert redact_secrets(token, SECRET_FAMILIES - {"bearer"}) == token


# -- cap and order ----------------------------------------------------------------------------


def test_whole_text_is_capped() -> None:
    text = digest_text("t", {"message": "x" * 500})
    assert len(text) == MAX_DIGEST_LENGTH
    assert text.endswith("...")


def test_redaction_happens_before_the_cut() -> None:
    key = "sk-" + "Q" * 40
    message = "y" * 150 + " " + key
    assert "QQQQ" not in digest_text("t", {"message": message})
    broken = digest_text("t", {"message": message}, DigestRules(redact_before_cut=False))
    assert "QQQQ" in broken


def test_reason_only_cap_exceeds_limit() -> None:
    text = digest_text("t", {"message": "x" * 500}, DigestRules(cap_whole_text=False))
    assert len(text) > MAX_DIGEST_LENGTH


# -- the snapshot's digest ----------------------------------------------------------------------


def test_snapshot_keeps_class_names_and_secrets() -> None:
    message = "java.net.ConnectException: refused Bearer " + "e" * 30
    text = snapshot_digest_text("weather", {"message": message})
    assert text == f"Task 'eddi://weather' failed: {message}"


def test_snapshot_caps_reason_then_appends_dots() -> None:
    text = snapshot_digest_text("w", {"message": "z" * 300})
    assert text == "Task 'eddi://w' failed: " + "z" * 200 + "..."


def test_snapshot_blank_message_gives_simple_type() -> None:
    assert snapshot_digest_text("w", {"type": "a.b.LifecycleException", "message": None}) == (
        "Task 'eddi://w' failed: LifecycleException"
    )


def test_snapshot_uses_top_message_only() -> None:
    error = {"message": "Error while executing lifecycle!", "cause": {"message": "deep"}}
    assert snapshot_digest_text("w", error).endswith("Error while executing lifecycle!")


def test_raw_error_text_keeps_everything() -> None:
    error = {"type": "A", "message": "top", "body": "{}", "stack": ["at x.Y.z(Y.java:1)"],
             "cause": {"type": "B", "message": "Bearer " + "f" * 30}}
    raw = raw_error_text(error)
    assert raw.splitlines() == ["A: top", "{}", "\tat x.Y.z(Y.java:1)",
                                "Caused by: B: Bearer " + "f" * 30]


def test_raw_error_text_never_raises_on_hostile_fields() -> None:
    """A message nested far too deep to write is left out; a non-string field
    is written as JSON; the text is still produced."""
    deep: list[object] = []
    inner = deep
    for _ in range(5000):
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]
    raw = raw_error_text({"type": {"k": 1}, "message": deep, "cause": {"message": 7}})
    assert raw.splitlines() == ['{"k": 1}:', "Caused by: Error: 7"]


# -- generated error texts ----------------------------------------------------------------------

_SECRET_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
_secret = st.text(_SECRET_ALPHABET, min_size=20, max_size=40)
_word = st.sampled_from(
    ["upstream", "request", "failed", "while", "calling", "the", "service", "timed", "out",
     "retry", "later", "quota", "exceeded", "for", "account", "invalid", "input"]
)
_prose = st.lists(_word, min_size=0, max_size=12).map(" ".join)
_package = st.lists(st.sampled_from(["java", "net", "com", "acme", "io", "requests", "core"]),
                    min_size=1, max_size=4).map(".".join)
_class = st.tuples(_package, st.sampled_from(
    ["ConnectException", "TimeoutError", "HttpException", "LifecycleException", "Failure"]
)).map(lambda p: f"{p[0]}.{p[1]}")
_host = st.sampled_from(["api.acme.example", "db.internal", "llm.vendor.example"])


@st.composite
def _fragment(draw: st.DrawFn) -> tuple[str, list[str]]:
    """One piece of error text and the strings that must not survive in a digest."""
    kind = draw(st.sampled_from([
        "url", "credential_url", "bearer", "sk", "sk_ant", "json_password", "json_unquoted",
        "key_value", "key_colon", "java_trace", "python_trace", "class_name", "provider_body",
    ]))
    secret = draw(_secret)
    host = draw(_host)
    if kind == "url":
        path = draw(st.sampled_from(["/v1/charges", "/chat", "/a/b?c=1"]))
        return f"GET https://{host}{path} returned 500", [f"https://{host}{path}", host]
    if kind == "credential_url":
        scheme = draw(st.sampled_from(["https", "postgresql", "redis"]))
        return f"cannot reach {scheme}://app:{secret}@{host}/x", [secret, host]
    if kind == "bearer":
        return f"header Authorization: Bearer {secret}", [secret]
    if kind == "sk":
        return f"invalid key sk-{secret}", [secret]
    if kind == "sk_ant":
        return f"invalid key sk-ant-{secret}", [secret]
    if kind == "json_password":
        name = draw(st.sampled_from(["password", "api_key", "client_secret", "authorization"]))
        return json.dumps({"user": "bot", name: secret}), [secret]
    if kind == "json_unquoted":
        return '{"token": ' + str(draw(st.integers(10**9, 10**15))) + "}", []
    if kind == "key_value":
        name = draw(st.sampled_from(["password", "api_key", "access_token", "apikey"]))
        return f"query {name}={secret} rejected", [secret]
    if kind == "key_colon":
        name = draw(st.sampled_from(["password", "secret", "token", "Authorization"]))
        return f"{name}: {secret}", [secret]
    if kind == "java_trace":
        cls = draw(_class)
        frame = "at com.acme.Weather.fetch(Weather.java:42)"
        return f"{cls}: refused\n\t{frame}\n\tat java.base/x.Y.z(Native Method)\n\t... 3 more", [
            cls, frame, "Weather.java:42"]
    if kind == "python_trace":
        return ('Traceback (most recent call last):\n  File "/srv/app/tool.py", line 12, in run\n'
                "    client.get(path)\nrequests.exceptions.ConnectionError: refused"), [
            "Traceback", 'File "/srv/app/tool.py"', "requests.exceptions.ConnectionError"]
    if kind == "class_name":
        cls = draw(_class)
        return f"{cls}: boom", [cls]
    body = json.dumps({"error": {"message": draw(_prose) or "rejected",
                                 "api_key": secret, "type": "invalid_request_error"}})
    return f"provider said {body}", [secret, "invalid_request_error"]


@st.composite
def _error(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    depth = draw(st.integers(1, 3))
    forbidden: list[str] = []
    error: dict[str, Any] | None = None
    for _ in range(depth):
        pieces = draw(st.lists(_fragment(), min_size=1, max_size=4))
        parts = [draw(_prose)]
        for text, bad in pieces:
            parts.append(text)
            parts.append(draw(_prose))
            forbidden.extend(bad)
        link: dict[str, Any] = {"type": draw(_class), "message": " ".join(parts)}
        if error is not None:
            link["cause"] = error
        error = link
    assert error is not None
    return error, forbidden


_FRAME_PATTERNS = [
    re.compile(r"\bat [\w$.]+\([^)]*\)"),
    re.compile(r"File \"[^\"]*\", line \d+"),
    re.compile(r"Traceback \(most recent call last\)"),
]


@settings(derandomize=True, max_examples=200, deadline=None)
@given(_error())
def test_generated_errors_leave_no_secret_url_frame_or_class_name(
    case: tuple[dict[str, Any], list[str]],
) -> None:
    error, forbidden = case
    text = digest_text("ai.labs.httpcalls", error)
    assert len(text) <= MAX_DIGEST_LENGTH
    assert text.startswith("Task 'eddi://ai.labs.httpcalls' failed: ")
    reason = text.removeprefix("Task 'eddi://ai.labs.httpcalls' failed: ")
    assert "://" not in reason
    for pattern in _FRAME_PATTERNS:
        assert not pattern.search(reason), reason
    unmarked = reason.replace(SECRET_MARKER, "")
    for item in forbidden:
        assert item not in reason, (item, reason)
    for item in forbidden:
        if all(c in _SECRET_ALPHABET for c in item):
            for i in range(len(item) - 7):
                assert item[i : i + 8] not in unmarked, (item, reason)


@settings(derandomize=True, max_examples=100, deadline=None)
@given(_error())
def test_redaction_is_idempotent(case: tuple[dict[str, Any], list[str]]) -> None:
    error, _ = case
    once = redact_secrets(str(error["message"]))
    assert redact_secrets(once) == once


def test_the_cut_counts_characters_and_the_byte_counting_switch_counts_bytes() -> None:
    """Greek letters take two UTF-8 bytes and an emoji four: the reference cuts at
    200 characters, the mutants' switch at 200 bytes (far fewer characters)."""
    reason = "Η αποθήκη απάντησε με σφάλμα 📦 " * 20
    error = {"type": "LifecycleException", "message": reason}
    cut = digest_text("ai.labs.llm", error)
    assert len(cut) == MAX_DIGEST_LENGTH
    assert cut.endswith("...")
    in_bytes = digest_text("ai.labs.llm", error, DigestRules(cut_in_bytes=True))
    assert len(in_bytes.encode("utf-8")) <= MAX_DIGEST_LENGTH < len(cut.encode("utf-8"))
    assert in_bytes.endswith("...")
    assert len(in_bytes) < len(cut)
