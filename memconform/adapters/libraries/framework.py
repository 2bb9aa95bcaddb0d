"""The skeleton every Python framework runtime adapter fills in.

A framework runtime (the ``*_runtime`` modules of
:mod:`memconform.adapters.libraries`) is a :class:`FrameworkRuntime`: it runs
only ``save-policy`` scripts (:data:`PROFILE`), declares the save policies it
implements (none: no framework here has a save-policy setting) and the
optional hooks it translates (``hooks``, its own), and runs a script by one
skeleton (:meth:`FrameworkRuntime.execute`): set up what the runs of the
script share (:meth:`~FrameworkRuntime.start`: the framework's agent, its
memory over the kit's store), run each run of the script through the framework
(:meth:`~FrameworkRuntime.run_one`), tell the kit's timeline each run's outcome
as its caller saw it (:func:`tell_outcome`), then release what ``start`` made
(:meth:`~FrameworkRuntime.finish`), and return the thread and the outcomes.
What the framework is and how its pieces plug into the kit's environment is
the adapter's; nothing here adds a check or a guarantee.

The helpers read a script the way every adapter does (:func:`scripted_calls`,
:func:`approval_ids`, :func:`argument_names`), say what a run's caller saw
(:func:`outcome_report`, :func:`unsupported_report`, :func:`suspended_report`,
:func:`run_error`), and run a framework's coroutines from the kit's synchronous
``execute`` (:func:`run_to_end`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from memconform.values import JSONValue

__all__ = [
    "PROFILE",
    "FrameworkRuntime",
    "approval_ids",
    "argument_names",
    "outcome_report",
    "run_error",
    "run_to_end",
    "scripted_calls",
    "suspended_report",
    "tell_outcome",
    "unsupported_report",
]

T = TypeVar("T")
S = TypeVar("S")

PROFILE = "save-policy"
"""The one profile a framework runtime runs: its frameworks keep a conversation,
nothing else the kit judges."""


def scripted_calls(
    script: Mapping[str, Any], component: str | None = None
) -> list[Mapping[str, Any]]:
    """The tool calls the script's model makes, in order: those of ``component``'s
    steps, or of every component's when ``None``. Steps and calls that are not
    mappings are left out (the kit's script schema is checked elsewhere)."""
    model = script.get("model") or {}
    groups = list(model.values()) if component is None else [model.get(component) or []]
    calls: list[Mapping[str, Any]] = []
    for steps in groups:
        for step in steps if isinstance(steps, list) else [steps]:
            if isinstance(step, Mapping):
                calls += [c for c in step.get("tool_calls") or [] if isinstance(c, Mapping)]
    return calls


def approval_ids(script: Mapping[str, Any], component: str) -> set[str]:
    """The ids of the tool calls ``component``'s model marks ``needs_approval``."""
    return {str(c.get("id")) for c in scripted_calls(script, component) if c.get("needs_approval")}


def argument_names(
    script: Mapping[str, Any], tool: str, component: str | None = None
) -> list[str]:
    """The argument names the script's model passes ``tool`` (its parameters),
    in the order they first appear."""
    names: list[str] = []
    for call in scripted_calls(script, component):
        if call.get("name") == tool:
            names += [str(k) for k in (call.get("args") or {}) if str(k) not in names]
    return names


def run_to_end(coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``coroutine()`` makes to its end from synchronous code
    and return its value (or raise what it raised): on a new event loop here, or,
    when called from inside a running loop (which ``asyncio.run`` refuses), on a
    thread of its own."""
    result: list[T] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            result.append(asyncio.run(coroutine()))
        except BaseException as exc:
            failed.append(exc)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        work()
    else:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    if failed:
        raise failed[0]
    return result[0]


def run_error(exc: BaseException) -> dict[str, JSONValue]:
    """What the caller is told of ``exc``: a scripted failure's own type and
    message (the kit's fake model and tools carry them), else the exception's."""
    scripted = getattr(exc, "error", None)
    if isinstance(scripted, Mapping):
        return {"type": str(getattr(exc, "type_name", None) or scripted.get("type") or "Error"),
                "message": str(scripted.get("message", ""))}
    return {"type": type(exc).__name__, "message": str(exc)}


def tell_outcome(env: Any, told: JSONValue) -> None:
    """The caller was told a run's outcome: the ``outcome`` event on the kit's
    timeline (what ends a run there), with its stage and error, and no run id
    (the framework stamps none)."""
    if isinstance(told, Mapping):
        env.emit("outcome", outcome=told.get("outcome"), stage=told.get("stage"),
                 error=told.get("error"))


def outcome_report(outcome: str, stage: str | None, reply: JSONValue,
                   error: dict[str, JSONValue] | None) -> dict[str, JSONValue]:
    """A run as its caller saw it: outcome, stage, reply and error."""
    return {"outcome": outcome, "stage": stage, "reply": reply, "error": error}


def unsupported_report(message: str) -> dict[str, JSONValue]:
    """A run the adapter does not translate, as its caller is told: ``unsupported``,
    with an ``Unsupported`` error saying why."""
    return outcome_report("unsupported", None, None, {"type": "Unsupported", "message": message})


def suspended_report(pending: Sequence[JSONValue]) -> dict[str, JSONValue]:
    """A run waiting for its caller (an approval): ``suspended``, with the tool
    calls it waits on."""
    return {**outcome_report("suspended", None, None, None), "pending_tool_calls": list(pending)}


class FrameworkRuntime(Generic[S]):
    """A framework as a runtime for ``save-policy`` scripts: the kit's ``Runtime``
    (``profiles`` and ``execute``), ``policies`` and the subclass's ``hooks``.

    A subclass sets :attr:`framework`, ``hooks`` and ``version`` and fills in
    :meth:`start` (what the script's runs share, of type ``S``), :meth:`run_one`
    and, when ``start`` made something to release, :meth:`finish`.
    """

    framework: ClassVar[str]
    """The runtime's name in messages (``the <framework> runtime runs only ...``)."""

    policies: frozenset[str] = frozenset()
    """The save policies the framework implements: none unless a subclass says
    otherwise (a framework without a save-policy setting claims no save-policy
    class; scenarios configuring none still run and are judged)."""

    @property
    def profiles(self) -> frozenset[str]:
        """Only ``save-policy``: the framework keeps a conversation, nothing else
        the kit judges."""
        return frozenset({PROFILE})

    def execute(self, script: Mapping[str, Any], env: Any) -> Mapping[str, JSONValue]:
        """Run every run of ``script`` through the framework; return what its caller saw.
        Raises :class:`ValueError` for a script of another profile."""
        if script.get("profile") != PROFILE:
            raise ValueError(f"profile: the {self.framework} runtime runs only {PROFILE!r}")
        return run_to_end(lambda: self._execute(script, env))

    async def _execute(self, script: Mapping[str, Any], env: Any) -> dict[str, JSONValue]:
        thread = str(script.get("thread", "thread"))
        state = await self.start(script, env, thread)
        runs: list[JSONValue] = []
        try:
            for spec in script.get("runs") or []:
                told = await self.run_one(state, script, spec)
                runs.append(told)
                tell_outcome(env, told)
        finally:
            await self.finish(state)
        return {"thread": thread, "runs": runs}

    async def start(self, script: Mapping[str, Any], env: Any, thread: str) -> S:
        """What the runs of ``script`` share on ``thread`` (made before the first run)."""
        raise NotImplementedError

    async def run_one(self, state: S, script: Mapping[str, Any], spec: Any) -> JSONValue:
        """One run of the script (``spec``, as the script gives it, checked here)
        through the framework: what its caller saw (:func:`outcome_report`)."""
        raise NotImplementedError

    async def finish(self, state: S) -> None:
        """Release what :meth:`start` made, after the last run (or a run that
        raised); nothing by default."""
