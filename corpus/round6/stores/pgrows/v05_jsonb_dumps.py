"""v05: message parts and metadata go into jsonb as plain ``json.dumps`` text.

The bug: the jsonb columns get ``json.dumps(value)`` instead of the base's
encoding that writes every float as a plain decimal with a point. jsonb
keeps numbers as ``numeric``: ``1e+16`` is stored as the integer
``10000000000000000`` and comes back as a Python ``int``.

Situation that shows it: a float whose shortest form has a positive
exponent (at least 1e16 in magnitude: ``2.0**64``, ``1e300``, a large
whole float a tool returned) in a message's parts or metadata. It comes
back equal under ``==`` but as an ``int``: a JSON number of another kind.
Ordinary floats (``0.5``, ``1.0``, ``3.14``) and tiny ones come back fine.

Why a team would ship it: ``json.dumps`` is what every psycopg example
uses for jsonb, the round trip tests used ``{"score": 0.5}``, and Python's
``1e16 == 10**16`` hides the change in any test written with ``==``.

Rules broken: ST-013.
"""

from __future__ import annotations

import json

from corpus.round6.stores.pgrows.base import DEFAULT_URL, PgRowsStore, encode_json
from memconform.values import JSONValue


class JsonDumpsStore(PgRowsStore):
    def encode_parts(self, value: JSONValue, what: str) -> str:
        encode_json(value, what, for_jsonb=True)  # the refusals (NUL, -0.0, NaN) stay
        # --- the bug ---
        return json.dumps(value, ensure_ascii=False, allow_nan=False)


def make(run: str | None = None, url: str = DEFAULT_URL) -> JsonDumpsStore:
    if not run:
        raise ValueError("pgrows needs ?run=NAME")
    return JsonDumpsStore(run, url)
