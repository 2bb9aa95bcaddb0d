"""The corpus of error texts the digest's secret filter is held to.

Built as a product: secret-named keys (each key-name variant) x syntax x position
in the text (start, middle, straddling the 200-character cut), secrets known by
their shape x position, real error strings of the clients agents use (psycopg,
redis-py, httpx, boto3, the OpenAI and Anthropic SDKs), and the inputs that
leaked, hung or crashed before the filter was rewritten. Each case names the
substrings that must not survive in the digest and those that must.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CASES", "TASK", "Case"]

TASK = "ai.labs.llm"
PREFIX = f"Task 'eddi://{TASK}' failed: "
SECRET = "Zq8Lw3Rt7Yp2Kd9M"


@dataclass(frozen=True)
class Case:
    """One error: what must be gone from its digest and what must remain."""

    name: str
    error: dict[str, Any]
    gone: tuple[str, ...]
    kept: tuple[str, ...] = field(default=())


SYNTAXES: dict[str, Callable[[str, str], str]] = {
    "equals": lambda k, v: f"{k}={v}",
    "colon": lambda k, v: f"{k}: {v}",
    "json": lambda k, v: json.dumps({"user": "bot", k: v}, ensure_ascii=False),
    "json-ascii": lambda k, v: json.dumps({"user": "bot", k: v}),
    "json-escaped": lambda k, v: '{\\"user\\": \\"bot\\", \\"' + k + '\\": \\"' + v + '\\"}',
    "json-escaped-twice": lambda k, v: '{\\\\\\"' + k + '\\\\\\": \\\\\\"' + v + '\\\\\\"}',
    "double-quoted-assign": lambda k, v: f'{k}="{v}"',
    "python-repr": lambda k, v: repr({"user": "bot", k: v}),
    "yaml-single": lambda k, v: f"{k}: '{v}'",
    "libpq": lambda k, v: f"host=db.internal user=app {k}='{v}' dbname=main",
}

KEY_NAMES: dict[str, str] = {
    "lower": "password",
    "upper": "API_KEY",
    "camel": "accessToken",
    "dash": "x-api-key",
    "dot": "api.key",
    "inner-word": "aws_secret_access_key",
    "lookalike": "p\u0430ssword",  # Cyrillic a
    "zero-width": "pass\u200bword",
}

_FILLER = "the upstream service refused the request after several retries " * 3


def _positioned(position: str, fragment: str) -> tuple[str, tuple[str, ...]]:
    """The message with ``fragment`` at ``position`` and the context that must remain."""
    if position == "start":
        return f"{fragment}; retry billing later", ("retry billing later",)
    if position == "middle":
        return (f"upstream refused the call ({fragment}); retry billing later",
                ("upstream refused the call", "retry billing later"))
    # straddle: the fragment's secret crosses the 200th character of the digest.
    head = _FILLER[: 200 - len(PREFIX) - 12 - fragment.find(SECRET)]
    return f"{head} {fragment}; retry billing later", ("the upstream service",)


def _error(message: str) -> dict[str, Any]:
    return {"type": "ai.labs.eddi.engine.lifecycle.exceptions.LifecycleException",
            "message": message}


def _key_cases() -> list[Case]:
    cases = []
    for syntax, write in SYNTAXES.items():
        for variant, key in KEY_NAMES.items():
            for position in ("start", "middle", "straddle"):
                message, kept = _positioned(position, write(key, SECRET))
                cases.append(Case(f"key/{syntax}/{variant}/{position}", _error(message),
                                  (SECRET,), kept))
    return cases


SHAPES: dict[str, tuple[str, str]] = {
    # name: (text, the part that must be gone)
    "sk": ("invalid key sk-proj4a7b9c2d1e8f3a6b5c4d2e1f0", "proj4a7b9c2d1e8f3a6b5c4d2e1f0"),
    "sk-ant": ("key sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2", "api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2"),
    "bearer": ("sent Bearer Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1J", "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1J"),
    "aws": ("key id AKIAZ7Q4W8E2R6T1Y3U9 rejected", "Z7Q4W8E2R6T1Y3U9"),
    "google": ("key AIzaSyZx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8 rejected",
               "SyZx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8"),
    "github": ("token ghp_Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8Dc7B expired",
               "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8Dc7B"),
    "slack": ("slack said xoxb-1234567890-Zx8Yw7Vu6Ts5Rq4 is revoked",
              "1234567890-Zx8Yw7Vu6Ts5Rq4"),
    "stripe": ("charge with sk_live_Zx8Yw7Vu6Ts5Rq4Po3Nm2 declined", "Zx8Yw7Vu6Ts5Rq4Po3Nm2"),
    "huggingface": ("hub refused hf_Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8",
                    "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8"),
    "jwt": ("session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib3QifQ.Zx8Yw7Vu6Ts5Rq4Po3Nm2 expired",
            "eyJzdWIiOiJib3QifQ.Zx8Yw7Vu6Ts5Rq4Po3Nm2"),
    "pem": ("bad key -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAZx8Yw7Vu6Ts5\n"
            "-----END RSA PRIVATE KEY----- given", "MIIEpAIBAAKCAQEAZx8Yw7Vu6Ts5"),
    "basic": ("proxy sent Basic Ym90OlpxOEx3M1J0N1lwMg== upstream", "Ym90OlpxOEx3M1J0N1lwMg"),
    "userinfo": ("cannot reach app:Zq8Lw3Rt7Yp2@db.internal:5432", "Zq8Lw3Rt7Yp2"),
    "userinfo-url": ("cannot reach mysql://app:Zq8(Lw3)Rt7@db.internal/main", "Zq8(Lw3)Rt7"),
}


def _shape_cases() -> list[Case]:
    cases = []
    for shape, (fragment, secret) in SHAPES.items():
        for position in ("start", "middle", "straddle"):
            if position == "straddle":
                head = _FILLER[: 200 - len(PREFIX) - 8 - fragment.find(secret[:6])]
                message, kept = f"{head} {fragment}; retry", ("the upstream service",)
            else:
                message, kept = _positioned(position, fragment)
            cases.append(Case(f"shape/{shape}/{position}", _error(message), (secret,), kept))
    return cases


CLIENT_ERRORS: list[Case] = [
    Case("psycopg/auth-failed", {
        "type": "psycopg.OperationalError",
        "message": 'connection failed: connection to server at "10.0.0.5", port 5432 failed: '
                   'FATAL:  password authentication failed for user "app"'},
        (), ('password authentication failed for user "app"',)),
    Case("psycopg/conninfo", {
        "type": "psycopg.ProgrammingError",
        "message": 'invalid connection option "sslmod"\nDSN: host=db.internal port=5432 '
                   "user=app password=s3cr3tPa55word dbname=main"},
        ("s3cr3tPa55word",), ("invalid connection option",)),
    Case("psycopg/libpq-quoted", {
        "type": "psycopg.OperationalError",
        "message": "could not connect with host=db.internal user=app password='s3cretpass' "
                   "dbname=main"},
        ("s3cretpass",), ("could not connect with",)),
    Case("redis/auth-failed", {
        "type": "redis.exceptions.AuthenticationError",
        "message": "invalid username-password pair or user is disabled."},
        (), ("invalid username-password pair or user is disabled.",)),
    Case("redis/url", {
        "type": "redis.exceptions.ConnectionError",
        "message": "Error while reading from redis://:hunter2hunter2@cache.internal:6379/0 : "
                   "(104, 'Connection reset by peer')"},
        ("hunter2hunter2", "cache.internal"), ("Connection reset by peer",)),
    Case("redis/auth-without-password", {
        "type": "redis.exceptions.AuthenticationError",
        "message": "AUTH <password> called without any password configured for the default "
                   "user. Are you sure your configuration is correct?"},
        (), ("called without any password configured",)),
    Case("httpx/status", {
        "type": "httpx.HTTPStatusError",
        "message": "Client error '401 Unauthorized' for url "
                   "'https://api.openai.com/v1/chat/completions'\nFor more information check: "
                   "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/401"},
        ("api.openai.com", "developer.mozilla.org"), ("Client error '401 Unauthorized'",)),
    Case("httpx/headers", {
        "type": "httpx.HTTPStatusError",
        "message": "request rejected; headers: Headers({'host': 'api.example.com', "
                   "'authorization': 'Bearer Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1J'})"},
        ("Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1J",), ("request rejected",)),
    Case("boto3/token-invalid", {
        "type": "botocore.exceptions.ClientError",
        "message": "An error occurred (UnrecognizedClientException) when calling the "
                   "InvokeModel operation: The security token included in the request is "
                   "invalid."},
        (), ("The security token included in the request is invalid.",)),
    Case("boto3/access-key-id", {
        "type": "botocore.exceptions.ClientError",
        "message": "An error occurred (InvalidAccessKeyId) when calling the PutObject "
                   "operation: The AWS Access Key Id you provided does not exist in our "
                   "records. (AKIAZ7Q4W8E2R6T1Y3U9)"},
        ("Z7Q4W8E2R6T1Y3U9",), ("does not exist in our records",)),
    Case("boto3/signature", {
        "type": "botocore.exceptions.ClientError",
        "message": "An error occurred (SignatureDoesNotMatch) when calling the GetObject "
                   "operation: The request signature we calculated does not match the "
                   "signature you provided. Check your key and signing method."},
        (), ("does not match the signature you provided",)),
    Case("openai/invalid-key", {
        "type": "openai.AuthenticationError",
        "message": "Error code: 401 - {'error': {'message': 'Incorrect API key provided: "
                   "sk-proj-AbCdEf0123456789AbCdEf0123456789. You can find your API key at "
                   "https://platform.openai.com/account/api-keys.', 'type': "
                   "'invalid_request_error', 'param': None, 'code': 'invalid_api_key'}}"},
        ("AbCdEf0123456789AbCdEf0123456789",), ("Incorrect API key provided",)),
    Case("openai/max-tokens", {
        "type": "openai.BadRequestError",
        "message": "Error code: 400 - {'error': {'message': \"max_tokens is too large: "
                   "100000000. This model supports at most 16384 completion tokens.\", "
                   "'type': 'invalid_request_error', 'param': 'max_tokens'}}"},
        (), ("max_tokens is too large: 100000000",)),
    Case("openai/json-body", {
        "type": "openai.AuthenticationError", "message": "HTTP 401", "status": 401,
        "body": json.dumps({"error": {
            "message": "Incorrect API key provided: sk-AbCdEf0123456789AbCdEf0123456789.",
            "type": "invalid_request_error", "code": "invalid_api_key"}})},
        ("AbCdEf0123456789AbCdEf0123456789",), ("Incorrect API key provided: sk-<REDACTED>",)),
    Case("openai/rate-limit", {
        "type": "openai.RateLimitError",
        "message": "Error code: 429 - {'error': {'message': 'Rate limit reached for gpt-4o "
                   "on tokens per min (TPM): Limit 30000, Used 29000, Requested 1500.'}}"},
        (), ("tokens per min (TPM): Limit 30000",)),
    Case("anthropic/invalid-key", {
        "type": "anthropic.AuthenticationError",
        "message": "Error code: 401 - {'type': 'error', 'error': {'type': "
                   "'authentication_error', 'message': 'invalid x-api-key'}}"},
        (), ("invalid x-api-key",)),
]

OBSERVED: list[Case] = [
    Case("observed/double-quoted-after-equals", _error('api_key="abcdefgh12345"'),
         ("abcdefgh12345",)),
    Case("observed/python-repr", _error("{'password': 'hunter2hunter2'}"), ("hunter2hunter2",)),
    Case("observed/libpq", _error("password='s3cretpass'"), ("s3cretpass",)),
    Case("observed/yaml-single", _error("api_key: 'abcd1234efgh'"), ("abcd1234efgh",)),
    Case("observed/quoted-phrase", _error('password="correct horse battery staple"'),
         ("correct horse", "battery staple")),
    Case("observed/unquoted-phrase", _error("password: open sesame please now"),
         ("open sesame", "sesame please now")),
    Case("observed/basic-pair", _error("Basic dXNlcjpwYXNzd29yZA=="), ("dXNlcjpwYXNzd29yZA",)),
    Case("observed/url-with-parenthesis",
         _error("cannot reach postgresql://app:pa(ss)w0rd@db.internal:5432/main"),
         ("pa(ss", "ss)w0rd", "w0rd")),
    Case("observed/error-type-as-reason",
         {"type": "com.acme.KeyRejected sk-abcdefghijklmnopqrstuvwx", "message": ""},
         ("abcdefghijklmnopqrstuvwx",), ("KeyRejected",)),
    Case("observed/error-type-with-password",
         {"type": "AuthError password=hunter2hunter2", "message": None},
         ("hunter2hunter2",), ("AuthError",)),
    Case("observed/max-tokens", _error("max_tokens=100000000"), (), ("max_tokens=100000000",)),
]

CASES: list[Case] = _key_cases() + _shape_cases() + CLIENT_ERRORS + OBSERVED
