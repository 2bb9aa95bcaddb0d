"""A runtime's answer: the call bounded in time, and its shape checked.

:func:`call_execute` calls a runtime's ``execute`` within a bound (the plugin
sets it with :func:`limit_execute`); what no runtime may raise there
(``SystemExit``) is the adapter's error. Before any rule reads an observation,
it must be JSON, and each field it gives must be of the kind its profile's
published schema (``spec/schemas/observation-<profile>.schema.json``) says; its
runs (turns, responses) must be there and a run must say its outcome
(:data:`REQUIRED`). The claims (``x-claims``: what a
runtime says of its own internals, optional) are left out: no verdict rests on
them, their shape neither.

An answer missing a field, or holding a value of the wrong kind, is the
adapter's error (exit 3) naming the first place it breaks, never a crash of the
kit inside a step that reads it, nor a failure charged to a rule. The check
reads only the shape; no verdict rests on what the answer says.
"""

from __future__ import annotations

import functools
import json
import math
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from memconform.harness.proxy import AdapterContractError, AdapterTimeoutError, abandon
from memconform.resources import spec_dir

__all__ = [
    "call_execute", "check_observation", "execute_hung", "execute_limit", "limit_execute",
    "note_execute_hung",
]


class _ExecuteLimit:
    """How long a runtime's ``execute`` may take, and whether one already hung."""

    seconds: float | None = None
    hung: str | None = None


_LIMIT = _ExecuteLimit()


def limit_execute(seconds: float | None) -> None:
    """Bound every later ``execute`` of a runtime other than the reference
    simulator to ``seconds`` (``None``: wait forever), and forget an earlier
    hang. The plugin sets it from the store-call timeout."""
    _LIMIT.seconds = seconds
    _LIMIT.hung = None


def execute_limit() -> float | None:
    """The bound set by :func:`limit_execute` (``None``: none)."""
    return _LIMIT.seconds


def execute_hung() -> str | None:
    """Why the kit calls no runtime any more (an ``execute`` hung), or ``None``."""
    return _LIMIT.hung


def note_execute_hung(reason: str) -> None:
    """Record that an ``execute`` hung elsewhere (in a child process): every
    later bounded call, here or in a child, is refused at once."""
    if _LIMIT.hung is None:
        _LIMIT.hung = reason


def call_execute(runtime: Any, script: Mapping[str, Any], env: Any, *, bounded: bool) -> Any:
    """``runtime.execute(script, env)``; when ``bounded`` (any runtime but the
    kit's reference), within the bound: past it the call is abandoned in its
    thread and :class:`AdapterTimeoutError` raised; after one hang, every later
    call raises at once (a hung runtime is broken, and waiting again would only
    multiply the delay). ``SystemExit`` out of it is the adapter's error."""
    seconds = _LIMIT.seconds
    try:
        if seconds is None or not bounded:
            return runtime.execute(script, env)
        return _bounded(runtime, script, env, seconds)
    except SystemExit as exc:  # a runtime must not end the kit's process
        raise AdapterContractError(
            "execute", f"raised SystemExit({exc.code!r}) instead of answering"
        ) from None


def _bounded(runtime: Any, script: Mapping[str, Any], env: Any, seconds: float) -> Any:
    if _LIMIT.hung is not None:
        raise AdapterTimeoutError("execute", f"not called: {_LIMIT.hung}")
    answer: Future[Any] = Future()

    def work() -> None:
        try:
            answer.set_result(runtime.execute(script, env))
        except BaseException as exc:  # handed to the caller, never lost
            answer.set_exception(exc)

    threading.Thread(target=work, name="memconform-execute", daemon=True).start()
    try:
        return answer.result(timeout=seconds)
    except TimeoutError:
        if answer.done():  # the runtime's own TimeoutError
            raise
        abandon(answer)
        _LIMIT.hung = f"an earlier execute did not return within {seconds:g} s"
        raise AdapterTimeoutError(
            "execute", f"did not return within {seconds:g} s (a runtime's answer may take "
            "15 times the store-call timeout, --timeout)"
        ) from None


@functools.cache
def _validator(profile: str) -> tuple[Any, tuple[str, ...]] | None:
    """The profile's validator and its claims (``x-claims`` paths)."""
    path = spec_dir() / "schemas" / f"observation-{profile}.schema.json"
    if not path.is_file():
        return None
    schema = json.loads(path.read_text(encoding="utf-8"))
    claims = tuple(str(c) for c in schema.get("x-claims", ()))
    cls = jsonschema.validators.validator_for(schema)
    return cls(_optional(schema)), claims


REQUIRED = frozenset({"runs", "turns", "responses", "outcomes", "outcome"})
"""The fields an answer must give wherever its schema has them: its runs, turns,
responses or outcomes, and what each run's caller is told; every other field a
schema lists may be left out, as a
framework's runtime has no run ids or event lists of its own, and is read as
absent. A field given must be of its schema's kind."""


_VALUE_RULES = frozenset({
    "maxLength", "minLength", "pattern", "format", "maximum", "minimum",
    "exclusiveMaximum", "exclusiveMinimum", "multipleOf", "maxItems", "minItems",
    "uniqueItems",
})
"""Schema keywords that bound a value rather than give its kind (a digest of at
most 200 characters, say): the rules judge those, so the check leaves them out;
a runtime breaking one fails its rule, not the contract."""


def _optional(schema: Any) -> Any:
    """``schema`` with every ``required`` cut down to :data:`REQUIRED`, except
    under ``not``, where a ``required`` forbids a field instead."""
    if isinstance(schema, list):
        return [_optional(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {k: v if k == "not" else _optional(v) for k, v in schema.items()
           if k not in _VALUE_RULES}
    if isinstance(out.get("required"), list):
        out["required"] = [n for n in out["required"] if n in REQUIRED]
    return out


def _without(value: Any, path: list[str]) -> Any:
    """``value`` less the claim at ``path`` (``runs[]``, ``model_calls``, ...)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    many = head.endswith("[]")
    key = head[:-2] if many else head
    if not isinstance(value, Mapping) or key not in value:
        return value
    out = dict(value)
    if not rest:
        del out[key]
    elif many and isinstance(out[key], list):
        out[key] = [_without(item, rest) for item in out[key]]
    elif not many:
        out[key] = _without(out[key], rest)
    return out


def _not_json(value: Any, where: str) -> str | None:
    """Where ``value`` holds something JSON cannot carry (a set, an object, a
    NaN, a non-string key, a cycle past any sane depth), or ``None``."""
    found = _first_not_json(value, 0)
    if found is None:
        return None
    path, problem = found
    return f"{where}{''.join(reversed(path))}: {problem}"


_SCALARS = (str, int, bool, type(None))


def _first_not_json(value: Any, depth: int) -> tuple[list[str], str] | None:
    """The first problem :func:`_not_json` reports, as the path to it (innermost
    part first; built only when there is a problem) and what is wrong there."""
    if depth > 200:
        return [], "nested deeper than 200 levels (a cycle?)"
    kind = type(value)
    if kind in _SCALARS or isinstance(value, bool | str | int):
        return None
    if kind is not dict and kind is not list and isinstance(value, float):
        return None if math.isfinite(value) else ([], f"{value!r} is not a JSON number")
    if kind is dict or isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return [], f"key {key!r} is not a string"
            if depth < 200 and type(item) in _SCALARS:
                continue
            found = _first_not_json(item, depth + 1)
            if found is not None:
                found[0].append(f".{key}")
                return found
        return None
    if kind is list or isinstance(value, list | tuple):
        for i, item in enumerate(value):
            if depth < 200 and type(item) in _SCALARS:
                continue
            found = _first_not_json(item, depth + 1)
            if found is not None:
                found[0].append(f"[{i}]")
                return found
        return None
    return [], f"a {type(value).__name__} is not a JSON value"


def check_observation(observation: Mapping[str, Any]) -> None:
    """Raise :class:`AdapterContractError` (method ``execute``) when the
    observation is not JSON or does not match its profile's schema."""
    problem = _not_json(observation, "observation")
    if problem:
        if len(problem) > 300:
            problem = problem[:140] + " … " + problem[-140:]
        raise AdapterContractError("execute", f"returned an answer that is not JSON: {problem}")
    found = _validator(str(observation.get("profile")))
    if found is None:
        return
    validator, claims = found
    judged: Any = observation
    for claim in claims:  # what a runtime says of itself decides nothing, its shape neither
        judged = _without(judged, claim.split("."))
    error = jsonschema.exceptions.best_match(validator.iter_errors(judged))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(the answer)"
        raise AdapterContractError(
            "execute",
            f"returned an observation that does not match "
            f"observation-{observation.get('profile')}.schema.json at {where}: "
            f"{error.message[:300]}",
        )
