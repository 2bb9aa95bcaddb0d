"""What a server-backed store can hold exactly, checked before anything is written.

A store refuses a value it would alter (``UnsupportedValueError``) instead of
storing something else. The checks here walk JSON data once, before a write
starts, so a refused write stores nothing. :func:`exact_json` renders JSON
text whose floats survive servers that parse numbers as decimals.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from memconform.contract import UnsupportedValueError
from memconform.values import JSONValue

__all__ = ["Exactness", "exact_json"]


@dataclass(frozen=True)
class Exactness:
    """The limits of one kind of storage.

    Every store refuses lone surrogates (not Unicode text: they cannot be
    encoded as UTF-8) and non-finite floats (not JSON). ``nul`` says whether
    the storage holds U+0000 in text; ``negative_zero`` whether it keeps the
    sign of ``-0.0``.
    """

    nul: bool = True
    negative_zero: bool = True

    def text(self, value: str, where: str) -> None:
        """Refuse ``value`` (named ``where`` in the message) if it cannot be held."""
        if not self.nul and "\x00" in value:
            raise UnsupportedValueError(
                f"{where} holds U+0000 at index {value.index(chr(0))}; "
                "this store cannot hold it and does not alter it"
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UnsupportedValueError(
                f"{where} holds a lone surrogate at index {exc.start}; it is not Unicode text"
            ) from None

    def json(self, value: JSONValue, where: str) -> None:
        """Refuse JSON data holding anything this storage would alter."""
        if value is None or isinstance(value, bool | int):
            return
        if isinstance(value, float):
            if not math.isfinite(value):
                raise UnsupportedValueError(f"{where} holds {value!r}, which is not JSON")
            if not self.negative_zero and value == 0.0 and math.copysign(1.0, value) < 0:
                raise UnsupportedValueError(
                    f"{where} holds -0.0; this store cannot keep the sign of zero"
                )
            return
        if isinstance(value, str):
            self.text(value, where)
            return
        if isinstance(value, Mapping):
            for key, item in value.items():
                self.text(str(key), f"{where} key {key!r}")
                self.json(item, f"{where}[{key!r}]")
            return
        if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
            for i, item in enumerate(value):
                self.json(item, f"{where}[{i}]")
            return
        raise UnsupportedValueError(f"{where} is {type(value).__name__}, not JSON data")


def _number(value: float) -> str:
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return text if "." in text else text + ".0"


def exact_json(value: JSONValue) -> str:
    """Compact JSON text for ``value`` in which every float has a decimal point
    and no exponent, so a server that keeps numbers as decimals (PostgreSQL
    ``jsonb``) gives back a float with the same value, never an int."""
    if isinstance(value, float):
        return _number(value)
    if value is None or isinstance(value, bool | int | str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = (
            f"{json.dumps(str(k), ensure_ascii=False)}:{exact_json(v)}" for k, v in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return "[" + ",".join(exact_json(v) for v in value) + "]"
    raise TypeError(f"not JSON data: {type(value).__name__}")
