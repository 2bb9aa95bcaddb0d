"""v03: working-state key names are built by plain concatenation.

The bug: a state entry lives under ``PREFIX s:<scope>:<key>`` with the raw
scope and key, instead of the hex of each. A ``:`` inside a scope or a key
makes two different (scope, key) pairs name the same Redis key: scope
``job:7`` key ``step`` and scope ``job`` key ``7:step`` are one entry.

Why a team ships it: readable keys in ``redis-cli`` and ``KEYS s:job*`` for
debugging; scopes in tests are ``job-1`` and keys ``plan``, with no colon.

Rules broken: ST-027 and PS-030 (state of one scope shows in, and is
versioned through, another), ST-035 (names differing in a separator
conflated). Shows with a ``:`` in a scope or a key.
"""

from __future__ import annotations

from corpus.round5.stores.kvredis.base import DEFAULT_PREFIX, DEFAULT_URL, KVRedisStore

__all__ = ["RawKeyStore", "make"]


class RawKeyStore(KVRedisStore):
    def _state_key(self, scope: str, key: str) -> str:
        # --- BUG: separator-joined raw names; a ':' inside either one collides ---
        return f"{self._prefix}s:{scope}:{key}"


def make(**kwargs: str) -> RawKeyStore:
    return RawKeyStore(kwargs.get("url", DEFAULT_URL), kwargs.get("prefix", DEFAULT_PREFIX))
