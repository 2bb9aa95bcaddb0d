"""The secret filter and the digest on hostile input: the corpus, over-redaction,
the linear engine, and the never-raises property."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memconform.simulator import digest, linear_regex, secret_filter
from memconform.simulator.digest import MAX_DIGEST_LENGTH, digest_text
from memconform.simulator.linear_regex import COMPILED, LinearPattern
from memconform.simulator.secret_filter import SECRET_FAMILIES, SECRET_MARKER, redact_secrets
from tests.secret_corpus import CASES, PREFIX, TASK, Case


def _windows(secret: str, size: int = 8) -> list[str]:
    if len(secret) <= size:
        return [secret]
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


# -- the corpus -------------------------------------------------------------------------------


def test_the_corpus_is_large_and_names_are_unique() -> None:
    assert len(CASES) >= 150
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_corpus_case(case: Case) -> None:
    text = digest_text(TASK, case.error)
    assert text.startswith(PREFIX), text
    assert len(text) <= MAX_DIGEST_LENGTH
    unmarked = text.replace(SECRET_MARKER, "\x00")
    for secret in case.gone:
        for window in _windows(secret):
            assert window not in unmarked, (window, text)
    for context in case.kept:
        assert context in text, (context, text)


# -- over-redaction (the kit's own filter only) ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=100000000",
        "prompt_tokens: 1234567890, completion_tokens: 987654321",
        "the secretary approved the tokenizer change for passwordless login",
        "secretary: Jane Smith-Johnson",
        "tokenizer=cl100k_base_extended",
        "password authentication failed for user app",
        "Basic authentication failed for realm staging",
        "the token was rejected because it expired yesterday",
        "an api key is required for this endpoint",
        "tokens_used=123456789 passwords_rotated_at=20261130",
        "task-runner-queue-0123456789abcdefghij is busy",
        "mailbox full at 10:30 today",
        "environment: PWD=/srv/agent/workdir HOME=/home/agent",
    ],
)
def test_ordinary_words_survive(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PASSWORD=Zq8Lw3Rt7Yp2", "PASSWORD=<REDACTED>"),
        ("apiKey: Zq8Lw3Rt7Yp2", "apiKey: <REDACTED>"),
        ("x-api-key=Zq8Lw3Rt7Yp2", "x-api-key=<REDACTED>"),
        ("password=12345678", "password=<REDACTED>"),
        ("password=1234567", "password=1234567"),
        ('"password": "12345678"', '"password": "<REDACTED>"'),
        ('"password": "ab\\"cd-SECRET"', '"password": "<REDACTED>"'),
        ('apiKey: "x" to host "y"', 'apiKey: "x" to host "y"'),
        ("password: ${vault:db/app}", "password: ${vault:db/app}"),
        ("password=${vault:db/app}SECRETTAIL", "password=<REDACTED>"),
        ("key sk-ant-" + "b" * 24 + ",SECRET-TAIL", "key sk-ant-<REDACTED>,SECRET-TAIL"),
        ('{"apiKey": "sk-ant-' + "b" * 24 + ',SECRET-TAIL"}', '{"apiKey": "<REDACTED>"}'),
        ("\\\\\\\"token\\\\\\\": \\\\\\\"Zq8Lw3Rt7Yp2\\\\\\\"",
         "\\\\\\\"token\\\\\\\": \\\\\\\"<REDACTED>\\\\\\\""),
        ("Authorization: Digest Zq8Lw3Rt7Yp2", "Authorization: Digest <REDACTED>"),
        ("postgresql://:pw@db", "postgresql://:<REDACTED>@db"),
    ],
)
def test_filter_examples(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected
    assert redact_secrets(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        'password: "password": "Zq8Lw3Rt7Yp2Kd9M"',
        "password= password: Zq8Lw3Rt7Yp2Kd9M",
        'secret:a PASSWORD="Zq8Lw3Rt7Yp2Kd9M"',
        'password:" PASSWORD="Zq8Lw3Rt7Yp2Kd9M"',
        "password=xtoken: Zq8Lw3Rt7Yp2Kd9M",
        "password=" * 50 + "Zq8Lw3Rt7Yp2Kd9M",
    ],
)
def test_a_key_inside_another_value_is_judged_on_its_own(text: str) -> None:
    once = redact_secrets(text)
    assert "Zq8Lw3Rt" not in once
    assert redact_secrets(once) == once


_KEYISH = st.lists(st.sampled_from(
    [*"ab:=\"' {}[],;\n\tpT_-.@/<>$()", "password", "token", "API_KEY", "<REDACTED>",
     "${vault:x}", '\\"', "sk-", "Bearer ", "Basic ", "\u0430", "\u200b", "secret"]),
    max_size=30).map("".join)
_PLANTED = "Zq8Lw3Rt7Yp2Kd9M"


@settings(derandomize=True, max_examples=400, deadline=None)
@given(_KEYISH, _KEYISH, st.sampled_from([
    "password={}", "password: {}", '"password": "{}"', "'password': '{}'",
    '\\"api_key\\": \\"{}\\"', "app:{}@host", 'PASSWORD="{}"', "Authorization: Bearer {}",
]))
def test_a_planted_secret_never_survives_its_neighbours(before: str, after: str,
                                                        shape: str) -> None:
    text = f"{before} {shape.format(_PLANTED)} {after}"
    once = redact_secrets(text)
    assert _PLANTED not in once, (text, once)
    assert redact_secrets(once) == once


def test_each_family_can_be_switched_off_alone() -> None:
    text = "PASSWORD=Zq8Lw3Rt7Yp2"
    assert redact_secrets(text, SECRET_FAMILIES - {"key-case"}) == text
    assert redact_secrets(text, SECRET_FAMILIES - {"bearer"}) == "PASSWORD=<REDACTED>"


# -- linear time ----------------------------------------------------------------------------------


@pytest.mark.parametrize("module", [digest, secret_filter, linear_regex],
                         ids=lambda m: m.__name__)
def test_every_pattern_is_compiled_by_the_linear_engine(module: ModuleType) -> None:
    assert "re" not in vars(module), f"{module.__name__} imports the backtracking re module"
    for name, value in vars(module).items():
        if hasattr(value, "pattern") and hasattr(value, "sub"):
            raise AssertionError(f"{module.__name__}.{name} is not a LinearPattern")
        if isinstance(value, LinearPattern):
            assert value in COMPILED
            assert type(value.engine).__module__.startswith("re2"), name


_MEGABYTE = 1_000_000
ADVERSARIAL: dict[str, str] = {
    "dots": "a." * (_MEGABYTE // 2),
    "dots-10k": "a." * 10_000,
    "dots-50k": "a." * 50_000,
    "non-ascii-dots": "é." * (_MEGABYTE // 2),
    "brackets": "[" * _MEGABYTE,
    "braces": "{" * _MEGABYTE,
    "json-keys": '{"a":' * (_MEGABYTE // 5),
    "nested-json-2000": '{"error": ' + "[" * 2000 + "]" * 2000 + "}",
    "key-like-run": "token" * (_MEGABYTE // 5),
    "key-then-run": "password=" * (_MEGABYTE // 9),
    "backslashes": "\\" * _MEGABYTE,
    "escaped-quotes": '"password": "' + '\\"' * (_MEGABYTE // 2),
    "newlines": "\n" * _MEGABYTE,
    "frame-lines": 'File "x", line 1\n' * (_MEGABYTE // 17),
    "java-frames": "at a(" * (_MEGABYTE // 5),
    "unclosed-quotes": "token:'ab\n" * 20_000,
    "many-userinfo": "a:b@c " * 20_000,
}


def _finishes(work: Callable[[], Any]) -> Any:
    """Run ``work`` with a guard against hanging (not a speed check)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(work).result(timeout=120)


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_finishes(name: str) -> None:
    text = _finishes(lambda: digest_text(TASK, {"message": ADVERSARIAL[name]}))
    assert text.startswith(PREFIX)
    assert len(text) <= MAX_DIGEST_LENGTH


# -- never raises ---------------------------------------------------------------------------------

_any_text = st.text(st.characters(blacklist_categories=()), max_size=300)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_any_text, inner, max_size=4),
    max_leaves=20,
)


@st.composite
def _deep(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 3000))
    opener = draw(st.sampled_from(["[", "{", '{"error": ', '{"a":[']))
    return opener * depth + draw(_any_text)


@st.composite
def _errors(draw: st.DrawFn) -> Any:
    fields = st.fixed_dictionaries(
        {}, optional={"type": _json, "message": _any_text | _json | _deep(),
                      "body": _any_text | _deep(), "status": _json, "stack": _json},
    )
    error = draw(fields)
    if draw(st.booleans()):
        error["cause"] = draw(fields | _json)
    return draw(st.just(error) | _json)


@settings(derandomize=True, max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_errors())
def test_the_digest_never_raises_and_stays_short(error: Any) -> None:
    text = digest_text(TASK, error)
    assert text.startswith(PREFIX)
    assert len(text) <= MAX_DIGEST_LENGTH


@settings(derandomize=True, max_examples=200, deadline=None)
@given(_any_text)
def test_the_filter_never_raises_and_is_idempotent(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once


def test_a_deep_cause_chain_and_a_deep_message_do_not_raise() -> None:
    error: dict[str, Any] = {"message": "innermost password=Zq8Lw3Rt7Yp2"}
    for _ in range(5000):
        error = {"type": "Wrapper", "message": "", "cause": error}
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    assert "Zq8Lw3Rt7Yp2" not in digest_text(TASK, error)
    assert digest_text(TASK, {"message": deep, "type": deep}).startswith(PREFIX)


_SECRET_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz23456789"


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    st.integers(0, 260),
    st.text(_SECRET_ALPHABET, min_size=36, max_size=48),
    st.sampled_from(["sk-{}", "Bearer {}", "password={}", '"api_key": "{}"',
                     "token: {}", "ghp_{}", "app:{}@db.internal"]),
)
def test_redaction_happens_before_the_cut(filler: int, secret: str, shape: str) -> None:
    message = "x " * (filler // 2) + shape.format(secret) + " and more words after it"
    text = digest_text(TASK, {"message": message})
    assert len(text) <= MAX_DIGEST_LENGTH
    for window in _windows(secret, 6):
        assert window not in text, (window, text)


def test_json_error_bodies_of_any_depth_do_not_raise() -> None:
    body = json.dumps({"error": {"message": "Slow down"}})
    assert digest_text(TASK, {"message": "HTTP 429", "body": body}).endswith("Slow down")
    assert digest_text(TASK, {"message": "HTTP 500", "body": "[" * 100_000}).startswith(PREFIX)
