"""Expose any Python store over the stdio protocol (``memconform.stdio/1``).

Run ``python -m memconform.adapters.stdio_server <store-url>``: the store named
by the URL (any URL :func:`~memconform.adapters.registry.open_store` accepts)
answers requests on standard input with responses on standard output, as
``spec/stdio-protocol.md`` specifies. It is the reference implementation of the
protocol's store side and a way to run one Python store in a separate process.

Standard output carries protocol lines only: anything the store prints goes to
standard error instead. Exceptions become error answers: ``DuplicateIdError``
``duplicate-id``, ``ConflictError`` ``conflict``, ``UnsupportedValueError``
``unsupported-value``, any other ``StoreError`` ``store``, ``KeyError`` ``key``,
``ValueError`` ``value``, anything else ``internal``.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any

from memconform import __version__
from memconform.adapters.registry import open_store
from memconform.contract import (
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
)
from memconform.values import ErrorRecord, Fact, Message, StateEntry, TurnRecord

__all__ = ["PROTOCOL", "RequestError", "StdioServer", "error_kind", "main"]

PROTOCOL = "memconform.stdio/1"


class RequestError(Exception):
    """A request the server cannot carry out as written (answered as ``value``):
    a missing or mistyped field, or an unknown method."""


def error_kind(exc: BaseException) -> str:
    """The protocol's error kind for an exception a store raised."""
    if isinstance(exc, DuplicateIdError):
        return "duplicate-id"
    if isinstance(exc, ConflictError):
        return "conflict"
    if isinstance(exc, UnsupportedValueError):
        return "unsupported-value"
    if isinstance(exc, StoreError):
        return "store"
    if isinstance(exc, KeyError):
        return "key"
    if isinstance(exc, ValueError | RequestError):
        return "value"
    return "internal"


def _message_of(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    text = str(exc)
    return text if isinstance(exc, StoreError | ValueError | RequestError) else (
        f"{type(exc).__name__}: {text}"
    )


def _field(params: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    if name not in params:
        raise RequestError(f"params: missing field {name!r}")
    value = params[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise RequestError(f"params: field {name!r} has type {type(value).__name__}")
    return value


def _json(value: Any) -> Any:
    if isinstance(value, Message | ErrorRecord | TurnRecord | StateEntry | Fact):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


class StdioServer:
    """Answers protocol requests with one store. :meth:`handle` takes one parsed
    request and returns the response object; :meth:`serve` runs the line loop."""

    def __init__(self, store: object) -> None:
        self.store = store
        self.greeted = False
        self.closed = False
        self._loop: asyncio.AbstractEventLoop | None = None  # made for the first async call
        self._methods: dict[str, Callable[[Mapping[str, Any]], Any]] = {
            "append": self._append,
            "messages": self._messages,
            "set_committed": lambda p: self._call(
                "set_committed", _field(p, "thread_id", str),
                _field(p, "message_ids", list), _field(p, "committed", bool),
            ),
            "record_error": lambda p: self._call(
                "record_error", _field(p, "thread_id", str),
                ErrorRecord.from_json(_field(p, "record", dict)),
            ),
            "errors": lambda p: self._call("errors", _field(p, "thread_id", str)),
            "append_record": lambda p: self._call(
                "append_record", TurnRecord.from_json(_field(p, "record", dict))
            ),
            "records": lambda p: self._call(
                "records", None if p.get("thread_id") is None else _field(p, "thread_id", str)
            ),
            "read_state": lambda p: self._call(
                "read_state", _field(p, "scope", str), _field(p, "key", str)
            ),
            "write_state": self._write_state,
            "put_fact": lambda p: self._call(
                "put_fact", _field(p, "scope", str), Fact.from_json(_field(p, "fact", dict))
            ),
            "get_fact": lambda p: self._call(
                "get_fact", _field(p, "scope", str), _field(p, "subject", str)
            ),
            "facts": lambda p: self._call("facts", _field(p, "scope", str)),
            "forget": lambda p: self._call(
                "forget", _field(p, "scope", str), _field(p, "subject", str)
            ),
            "damage": lambda p: self._call("damage", _field(p, "thread_id", str)),
        }

    # -- methods ---------------------------------------------------------------------

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        fn = getattr(self.store, method, None)
        if not callable(fn):
            raise NotImplementedError(f"the store has no method {method!r}")
        return _json(self._settle(fn(*args, **kwargs)))

    def _settle(self, value: Any) -> Any:
        """``value``, awaited first when it is awaitable."""
        if not inspect.isawaitable(value):
            return value
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(_await(value))

    def _append(self, params: Mapping[str, Any]) -> Any:
        batch = [Message.from_json(m) for m in _field(params, "batch", list)]
        self._call("append", _field(params, "thread_id", str), batch)
        return None

    def _messages(self, params: Mapping[str, Any]) -> Any:
        thread_id = _field(params, "thread_id", str)
        limit = params.get("limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise RequestError(f"params: field 'limit' has type {type(limit).__name__}")
        if params.get("include_uncommitted") is True:
            return self._call("messages", thread_id, limit, include_uncommitted=True)
        return self._call("messages", thread_id, limit)

    def _write_state(self, params: Mapping[str, Any]) -> Any:
        if "value" not in params:
            raise RequestError("params: missing field 'value'")
        expected = params.get("expected_version")
        if expected is not None and (isinstance(expected, bool) or not isinstance(expected, int)):
            raise RequestError(
                f"params: field 'expected_version' has type {type(expected).__name__}"
            )
        return self._call(
            "write_state", _field(params, "scope", str), _field(params, "key", str),
            params["value"], expected,
        )

    def _capabilities(self) -> list[str]:
        declared: Any = getattr(self.store, "capabilities", frozenset())
        if callable(declared):
            declared = declared()
        return sorted(str(c) for c in declared)

    # -- dispatch ----------------------------------------------------------------------

    def dispatch(self, method: str, params: Mapping[str, Any]) -> Any:
        """Carry out one store ``method`` with the protocol's ``params`` and return
        its result as JSON data. A method the protocol does not have, or params
        it cannot read, raise :class:`RequestError`; what the store raises passes
        through unchanged (:func:`error_kind` names it)."""
        handler = self._methods.get(method)
        if handler is None:
            raise RequestError(f"unknown method {method!r}")
        return handler(params)

    def handle(self, request: Any) -> dict[str, Any]:
        """The response object for one request object."""
        if not isinstance(request, dict):
            return _error(None, "internal", "a request must be a JSON object")
        request_id = request.get("id")
        method = request.get("method")
        params = request.get("params", {})
        if not isinstance(request_id, int) or isinstance(request_id, bool):
            return _error(None, "internal", "a request needs an integer 'id'")
        if not isinstance(params, dict):
            return _error(request_id, "internal", "'params' must be an object")
        if method == "hello":
            if params.get("protocol") != PROTOCOL:
                return _error(
                    request_id, "internal",
                    f"this store speaks {PROTOCOL}, not {params.get('protocol')!r}",
                )
            self.greeted = True
            return {
                "id": request_id,
                "result": {
                    "protocol": PROTOCOL,
                    "name": str(getattr(self.store, "name", type(self.store).__name__)),
                    "version": str(getattr(self.store, "version", __version__)),
                    "capabilities": self._capabilities(),
                    "provides": sorted(str(p) for p in getattr(self.store, "provides", ())),
                    "hooks": ["damage"] if callable(getattr(self.store, "damage", None)) else [],
                },
            }
        if not self.greeted:
            return _error(request_id, "internal", "the session must start with 'hello'")
        if method == "close":
            self.close()
            return {"id": request_id, "result": None}
        if str(method) not in self._methods:
            return _error(request_id, "internal", f"unknown method {method!r}")
        try:
            result = self.dispatch(str(method), params)
        except Exception as exc:
            return _error(request_id, error_kind(exc), _message_of(exc))
        return {"id": request_id, "result": result}

    def close(self) -> None:
        """Close the store (if it has ``close``) and the event loop, once."""
        if self.closed:
            return
        self.closed = True
        close = getattr(self.store, "close", None)
        try:
            if callable(close):
                self._settle(close())
        finally:
            if self._loop is not None:
                self._loop.close()

    def serve(self, stdin: IO[str], stdout: IO[str]) -> None:
        """Answer lines from ``stdin`` on ``stdout`` until ``close`` or end of input."""
        for line in stdin:
            try:
                request = json.loads(line)
            except ValueError as exc:
                response = _error(None, "internal", f"not a JSON line: {exc}")
            else:
                response = self.handle(request)
            stdout.write(json.dumps(response, ensure_ascii=True, allow_nan=False) + "\n")
            stdout.flush()
            if self.closed:
                return
        self.close()


async def _await(value: Any) -> Any:
    return await value


def _error(request_id: int | None, kind: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "error": {"kind": kind, "message": message}}


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m memconform.adapters.stdio_server <store-url>``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(
            "usage: python -m memconform.adapters.stdio_server <store-url>\n"
            "Serves the store over the memconform.stdio/1 protocol on stdin/stdout.",
            file=sys.stderr,
        )
        return 2
    protocol_out, protocol_in = sys.stdout, sys.stdin
    if isinstance(protocol_in, io.TextIOWrapper):
        protocol_in.reconfigure(encoding="utf-8", errors="strict")
    sys.stdout = sys.stderr  # whatever the store prints must not corrupt the protocol
    try:
        try:
            store = open_store(args[0])
        except Exception as exc:
            print(f"cannot open the store {args[0]!r}: {exc}", file=sys.stderr)
            return 1
        StdioServer(store).serve(protocol_in, protocol_out)
    finally:
        sys.stdout = protocol_out
    return 0


if __name__ == "__main__":
    sys.exit(main())
