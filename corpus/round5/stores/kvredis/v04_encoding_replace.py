"""v04: readable UTF-8 JSON through a client that replaces what it cannot encode.

The bug: values are dumped with ``ensure_ascii=False`` (readable, smaller for
non-Latin text) and the client is opened with ``encoding_errors="replace"``.
A lone surrogate in a message text, a part or metadata cannot be encoded as
UTF-8, so redis-py silently writes ``?`` in its place: the store keeps an
altered value instead of refusing it or keeping it exactly.

Why a team ships it: a production append once crashed with
``UnicodeEncodeError`` from deep inside redis-py; "replace" made it go away,
and every test text (emoji, RTL, CJK) still round-trips.

Rules broken: ST-015 (text that cannot be held exactly must be refused, never
kept altered), ST-013/ST-014. Shows with a lone surrogate (``"\\ud800"``) in
any stored text.
"""

from __future__ import annotations

import json
from typing import Any

import redis

from corpus.round5.stores.kvredis.base import DEFAULT_PREFIX, DEFAULT_URL, KVRedisStore
from memconform.contract import UnsupportedValueError
from memconform.values import JSONValue

__all__ = ["ReplacingStore", "make"]


class ReplacingStore(KVRedisStore):
    def _make_client(self, url: str) -> Any:
        # --- BUG (1/2): unencodable text becomes '?' instead of raising ---
        return redis.Redis.from_url(url, decode_responses=False, encoding_errors="replace")

    def _dumps(self, value: JSONValue, what: str) -> str:
        try:
            # --- BUG (2/2): raw UTF-8 in the JSON, so lone surrogates reach the encoder ---
            return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except ValueError as exc:
            raise UnsupportedValueError(f"{what}: {exc}") from None


def make(**kwargs: str) -> ReplacingStore:
    return ReplacingStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
