"""Serve any Python runtime over the runtime protocol (``memconform.runtime/1``).

Run ``python -m memconform.runtime_server RUNTIME`` (any ``--runtime`` name but
a ``stdio:`` one: ``simulator``, a variant, a framework, ``module:factory``):
the runtime answers the kit's ``hello`` and ``execute`` on standard input and
output, as ``spec/runtime-protocol.md`` specifies, and every model, tool, hook,
clock, id and store call it makes goes back to the kit over the same pipe. It
is the reference implementation of the protocol's runtime side: the kit judging
``stdio:python -m memconform.runtime_server simulator`` must give the verdicts
it gives the simulator in its own process.

Standard output carries protocol lines only: anything the runtime prints goes
to standard error.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import IO, Any, NoReturn

from memconform import __version__
from memconform.adapters.stdio import ERROR_KINDS, _nothing, _value, _values
from memconform.adapters.stdio_runtime import PROTOCOL
from memconform.harness.environment import ScriptedFailure
from memconform.harness.runtime import declared_hooks, declared_policies, declared_profiles
from memconform.runtime_names import runtime_factory, runtime_target
from memconform.values import ErrorRecord, Fact, JSONValue, Message, StateEntry, TurnRecord

__all__ = ["RemoteEnvironment", "RemoteStore", "main", "serve"]


class _Gone(Exception):
    """The kit closed the pipe, or spoke out of turn: the server stops at once."""


class _Pipe:
    """The runtime's side of the pipe: its calls out, the kit's answers in."""

    def __init__(self, stdin: IO[str], stdout: IO[str]) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.calls = 0

    def write(self, message: Mapping[str, Any]) -> None:
        self.stdout.write(json.dumps(message, ensure_ascii=True, allow_nan=False) + "\n")
        self.stdout.flush()

    def read(self) -> dict[str, Any]:
        line = self.stdin.readline()
        if not line:
            raise _Gone("the kit closed the pipe")
        message = json.loads(line)
        if not isinstance(message, dict):
            raise _Gone(f"the kit wrote {type(message).__name__}")
        return message

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Ask the kit for ``method``; its result, or the exception its error names."""
        self.calls += 1
        self.write({"call": self.calls, "method": method, "params": dict(params or {})})
        answer = self.read()
        if answer.get("call") != self.calls:
            raise _Gone(f"the kit answered call {answer.get('call')!r}, not {self.calls}")
        if "error" not in answer:
            return answer.get("result")
        error = answer["error"]
        kind, text = error.get("kind"), str(error.get("message", ""))
        if kind == "scripted-failure":
            raise ScriptedFailure(error.get("error") or {"message": text})
        if kind in ERROR_KINDS:
            raise ERROR_KINDS[kind](text)
        raise _Gone(f"the kit answered an error of unknown kind {kind!r}: {text}")


class _Clock:
    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    def now(self) -> str:
        return str(self._pipe.call("clock.now"))

    def now_datetime(self) -> datetime:
        return datetime.fromisoformat(self.now().replace("Z", "+00:00"))

    def advance(self, seconds: float) -> str:
        return str(self._pipe.call("clock.advance", {"seconds": seconds}))


class _Ids:
    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    def next(self, prefix: str) -> str:
        return str(self._pipe.call("ids.next", {"prefix": prefix}))


class RemoteStore:
    """The store under test as a runtime sees it: each method one ``store.*`` call."""

    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    def _call(self, method: str, **params: Any) -> Any:
        return self._pipe.call(f"store.{method}", params)

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(self._pipe.call("store.capabilities"))

    def has(self, capability: object) -> bool:
        return bool(self._pipe.call("store.has", {"capability": str(capability)}))

    def append(self, thread_id: str, batch: Sequence[Message]) -> None:
        _nothing("append", self._call("append", thread_id=thread_id,
                                      batch=[m.to_json() for m in batch]))

    def messages(self, thread_id: str, limit: int | None = None, *,
                 include_uncommitted: bool = False) -> list[Message]:
        return _values(Message, "messages", self._call(
            "messages", thread_id=thread_id, limit=limit, include_uncommitted=include_uncommitted))

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        _nothing("set_committed", self._call("set_committed", thread_id=thread_id,
                                             message_ids=list(message_ids), committed=committed))

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        _nothing("record_error", self._call("record_error", thread_id=thread_id,
                                            record=record.to_json()))

    def errors(self, thread_id: str) -> list[ErrorRecord]:
        return _values(ErrorRecord, "errors", self._call("errors", thread_id=thread_id))

    def append_record(self, record: TurnRecord) -> None:
        _nothing("append_record", self._call("append_record", record=record.to_json()))

    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        return _values(TurnRecord, "records", self._call("records", thread_id=thread_id))

    def read_state(self, scope: str, key: str) -> StateEntry | None:
        found = self._call("read_state", scope=scope, key=key)
        return None if found is None else _value(StateEntry, "read_state", found)

    def write_state(self, scope: str, key: str, value: JSONValue,
                    expected_version: int | None) -> StateEntry:
        return _value(StateEntry, "write_state", self._call(
            "write_state", scope=scope, key=key, value=value, expected_version=expected_version))

    def put_fact(self, scope: str, fact: Fact) -> None:
        _nothing("put_fact", self._call("put_fact", scope=scope, fact=fact.to_json()))

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        found = self._call("get_fact", scope=scope, subject=subject)
        return None if found is None else _value(Fact, "get_fact", found)

    def facts(self, scope: str) -> list[Fact]:
        return _values(Fact, "facts", self._call("facts", scope=scope))

    def forget(self, scope: str, subject: str) -> bool:
        return bool(self._call("forget", scope=scope, subject=subject))


class RemoteEnvironment:
    """What a Python runtime touches, every part of it a call to the kit (the
    same surface as :class:`~memconform.harness.environment.Environment`)."""

    def __init__(self, script: Mapping[str, Any], pipe: _Pipe) -> None:
        self.script = script
        self._pipe = pipe
        self.store = RemoteStore(pipe)
        self.clock = _Clock(pipe)
        self.ids = _Ids(pipe)

    @property
    def ledger(self) -> list[dict[str, JSONValue]]:
        found: list[dict[str, JSONValue]] = self._pipe.call("ledger")
        return found

    def model(self, component: str, request: JSONValue) -> dict[str, JSONValue]:
        found: dict[str, JSONValue] = self._pipe.call(
            "model", {"component": component, "request": request})
        return found

    def model_calls(self, component: str | None = None) -> int:
        return int(self._pipe.call("model_calls", {"component": component}))

    def tool(self, name: str, args: JSONValue, call_id: str | None = None) -> JSONValue:
        found: JSONValue = self._pipe.call("tool", {"name": name, "args": args,
                                                    "call_id": call_id})
        return found

    def hook(self, name: str, payload: JSONValue = None) -> dict[str, JSONValue]:
        found: dict[str, JSONValue] = self._pipe.call("hook", {"name": name, "payload": payload})
        return found

    def emit(self, name: str, **data: JSONValue) -> None:
        self._pipe.call("emit", {"name": name, "data": data})


def _declaration(runtime: object) -> dict[str, Any]:
    policies, hooks = declared_policies(runtime), declared_hooks(runtime)
    return {
        "protocol": PROTOCOL,
        "name": str(getattr(runtime, "name", type(runtime).__name__)),
        "version": str(getattr(runtime, "version", None) or __version__),
        "profiles": sorted(declared_profiles(runtime)),
        "policies": None if policies is None else sorted(policies),
        "hooks": None if hooks is None else sorted(hooks),
        "provides": sorted(str(getattr(p, "value", p)) for p in getattr(runtime, "provides", ())),
    }


def serve(runtime: Any, stdin: IO[str], stdout: IO[str]) -> None:
    """Answer the kit's requests with ``runtime`` until ``close`` or end of input."""
    pipe = _Pipe(stdin, stdout)
    while True:
        try:
            request = pipe.read()
        except (_Gone, ValueError):
            return
        request_id, method = request.get("id"), request.get("method")
        params = request.get("params") or {}
        if method == "close":
            pipe.write({"id": request_id, "result": None})
            return
        try:
            if method == "hello":
                result: Any = _declaration(runtime)
            elif method == "execute":
                script = params.get("script")
                if not isinstance(script, dict):
                    raise ValueError("execute: params.script must be an object")
                result = dict(runtime.execute(script, RemoteEnvironment(script, pipe)))
            else:
                raise ValueError(f"unknown method {method!r}")
        except _Gone:
            return
        except Exception as exc:
            # a ValueError out of execute is how a Python runtime refuses a configuration
            kind = "configuration" if isinstance(exc, ValueError) else "internal"
            pipe.write({"id": request_id, "error": {
                "kind": kind, "message": f"{type(exc).__name__}: {exc}"}})
            continue
        pipe.write({"id": request_id, "result": result})


def _usage() -> NoReturn:
    print("usage: python -m memconform.runtime_server RUNTIME\n"
          "Serves the runtime (simulator, a variant, a framework or module:factory)\n"
          f"over the {PROTOCOL} protocol on stdin/stdout.", file=sys.stderr)
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m memconform.runtime_server RUNTIME``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help") or args[0].startswith("stdio:"):
        _usage()
    protocol_out, protocol_in = sys.stdout, sys.stdin
    if isinstance(protocol_in, io.TextIOWrapper):
        protocol_in.reconfigure(encoding="utf-8", errors="strict")
    sys.stdout = sys.stderr  # whatever the runtime prints must not corrupt the protocol
    try:
        try:
            runtime = runtime_factory(runtime_target(args[0]))()
        except Exception as exc:
            print(f"cannot build the runtime {args[0]!r}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            return 1
        serve(runtime, protocol_in, protocol_out)
    finally:
        sys.stdout = protocol_out
    return 0


if __name__ == "__main__":
    sys.exit(main())
