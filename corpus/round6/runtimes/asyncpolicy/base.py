"""The correct base of the ``asyncpolicy`` family, opened as
``corpus.round6.runtimes.asyncpolicy.base:make``.

A save-policy runtime built around asyncio and an internal event stream. The
agent loop never touches the store: it publishes what happens (the input was
accepted, the model streamed a word, a round of tools completed, the answer
passed the output guardrail, the run settled, the run was suspended) on an
:class:`EventBus`. Each subscriber owns an :class:`asyncio.Queue` and a worker
task; ``publish`` hands the event to every subscriber in turn and waits for
each to acknowledge it, so nothing the loop does next can overtake a write.

Three subscribers listen:

- :class:`Persistence` holds the save policy (:class:`MessagePolicy`,
  :class:`TurnPolicy`, :class:`RunPolicy`) and decides what to append, when;
- :class:`Recorder` keeps every new message of the run in order (stored or
  not), which is what the error record of a failed run carries;
- :class:`Streamer` turns model deltas into ``chunk`` events for the caller.

A run is wrapped in ``Persistence.scope``: whatever ends the run early (a
failure, a cancellation) leaves the scope with an exception and the policy's
unflushed buffer is dropped. Cancellations are asyncio-style:
:class:`RunCancelled` derives from :class:`asyncio.CancelledError`.

A suspended run hands its caller ``{"run_id", "tool_call_ids"}``. A resume in
the same ``execute`` continues from the suspended run's view; on a fresh
instance it rebuilds the pending calls and the context from the store.

Everything goes through ``env``: model, tools, hooks, store, clock and ids.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memconform.contract import StoreError
from memconform.harness.environment import ScriptedFailure
from memconform.values import ErrorRecord, JSONValue, Message

__all__ = ["AsyncPolicyRuntime", "make"]

POLICIES = ("message", "turn", "run")
HOOKS = frozenset({"input_guardrail", "output_guardrail", "tool_error", "run_end", "cancel",
                   "approval", "stream", "retry"})
RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})
MODEL = "agent"


# -- run-ending exceptions -----------------------------------------------------------


class RunFailure(Exception):
    """Ends a run as failed with ``error``, the error its caller gets."""

    def __init__(self, error: dict[str, JSONValue]) -> None:
        super().__init__(str(error.get("message", "")))
        self.error = error


class RunCancelled(asyncio.CancelledError):
    """Ends a run as cancelled (asyncio's own notion of cancellation)."""

    def __init__(self, error: dict[str, JSONValue]) -> None:
        super().__init__(str(error.get("message", "")))
        self.error = error


ENDING = (RunFailure, RunCancelled, ScriptedFailure, StoreError)


def error_of(exc: BaseException) -> dict[str, JSONValue]:
    """The error object a run ending with ``exc`` reports."""
    if isinstance(exc, RunFailure | RunCancelled):
        return dict(exc.error)
    if isinstance(exc, ScriptedFailure):
        return {**exc.error, "type": exc.type_name}
    return {"type": type(exc).__name__, "message": str(exc)}


def result_text(part: Mapping[str, Any]) -> str:
    """How one tool result reads in the transcript and for the model."""
    if "error" in part:
        return str(part["error"])
    result = part.get("result")
    return result if isinstance(result, str) else json.dumps(result, sort_keys=True)


# -- run state ----------------------------------------------------------------------


@dataclass
class RunState:
    """One run: its id, round, the model's view and what it reported."""

    id: str
    index: int
    spec: Mapping[str, Any]
    stream: bool
    round: int = 1
    model_calls: int = 0
    view: list[Message] = field(default_factory=list)
    made: list[Message] = field(default_factory=list)
    events: list[dict[str, JSONValue]] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "resume" if self.spec.get("resume") is not None else "input"


# -- events -------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    run: RunState


@dataclass(frozen=True)
class InputAccepted(Event):
    message: Message


@dataclass(frozen=True)
class ModelDelta(Event):
    round: int
    text: str


@dataclass(frozen=True)
class ToolCallsRequested(Event):
    """The model asked for tools; none has run yet (nothing to store)."""

    message: Message


@dataclass(frozen=True)
class RoundCompleted(Event):
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class AnswerReady(Event):
    message: Message


@dataclass(frozen=True)
class Discarded(Event):
    """A message a failing guardrail was shown: never stored, but recorded."""

    message: Message


@dataclass(frozen=True)
class ApprovalAnswered(Event):
    message: Message


@dataclass(frozen=True)
class ApprovedResult(Event):
    message: Message


@dataclass(frozen=True)
class ApprovalsSettled(Event):
    """Every pending call of a resumed run has its result: the round is done."""


@dataclass(frozen=True)
class Suspended(Event):
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class RunSettled(Event):
    """The run has a response outcome that the run-end hook let stand."""

    outcome: str


MESSAGE_EVENTS = (InputAccepted, ToolCallsRequested, AnswerReady, Discarded, ApprovalAnswered,
                  ApprovedResult)
BATCH_EVENTS = (RoundCompleted, Suspended)


# -- the event stream ---------------------------------------------------------------


Handler = Callable[[Event], None]


class Subscription:
    """One subscriber: a queue and a worker task acknowledging each event."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.queue: asyncio.Queue[tuple[Event, asyncio.Future[None]]] = asyncio.Queue()
        self.task = asyncio.get_running_loop().create_task(self._work())

    async def _work(self) -> None:
        while True:
            event, done = await self.queue.get()
            try:
                self.handler(event)
            except Exception as exc:
                if not done.cancelled():
                    done.set_exception(exc)
            else:
                if not done.cancelled():
                    done.set_result(None)
            finally:
                self.queue.task_done()

    async def deliver(self, event: Event) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((event, done))
        await done


class EventBus:
    """Fans every event out to the subscribers, in subscription order."""

    def __init__(self) -> None:
        self.subscriptions: list[Subscription] = []

    def subscribe(self, handler: Handler) -> None:
        self.subscriptions.append(Subscription(handler))

    async def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber, each acknowledging it before the
        next gets it; every subscriber sees every event, and the first failure is
        raised to the publisher once all have seen it."""
        first: Exception | None = None
        for sub in self.subscriptions:
            try:
                await sub.deliver(event)
            except Exception as exc:
                if first is None:
                    first = exc
        if first is not None:
            raise first

    async def close(self) -> None:
        for sub in self.subscriptions:
            sub.task.cancel()
        for sub in self.subscriptions:
            with contextlib.suppress(asyncio.CancelledError):
                await sub.task


# -- save policies ------------------------------------------------------------------


class Policy:
    """Decides, event by event, what reaches the store."""

    name = ""

    def __init__(self, append: Callable[[Sequence[Message]], None]) -> None:
        self.append = append

    def handle(self, event: Event) -> None:
        method = getattr(self, "on_" + type(event).__name__, None)
        if method is not None:
            method(event)

    def discard(self) -> None:
        """The run ended early: forget whatever was held back."""


class MessagePolicy(Policy):
    """Every completed batch goes to the store at once."""

    name = "message"

    def on_InputAccepted(self, event: InputAccepted) -> None:
        self.append([event.message])

    def on_RoundCompleted(self, event: RoundCompleted) -> None:
        self.append(event.messages)

    def on_AnswerReady(self, event: AnswerReady) -> None:
        self.append([event.message])

    def on_ApprovalAnswered(self, event: ApprovalAnswered) -> None:
        self.append([event.message])

    def on_ApprovedResult(self, event: ApprovedResult) -> None:
        self.append([event.message])

    def on_Suspended(self, event: Suspended) -> None:
        self.append(event.messages)


class TurnPolicy(Policy):
    """A round goes to the store whole once it completes; the input opens round one."""

    name = "turn"

    def __init__(self, append: Callable[[Sequence[Message]], None]) -> None:
        super().__init__(append)
        self.open: list[Message] = []

    def close_round(self, more: Sequence[Message] = ()) -> None:
        batch = [*self.open, *more]
        self.open = []
        if batch:
            self.append(batch)

    def on_InputAccepted(self, event: InputAccepted) -> None:
        self.open.append(event.message)

    def on_RoundCompleted(self, event: RoundCompleted) -> None:
        self.close_round(event.messages)

    def on_AnswerReady(self, event: AnswerReady) -> None:
        self.open.append(event.message)

    def on_ApprovalAnswered(self, event: ApprovalAnswered) -> None:
        self.open.append(event.message)

    def on_ApprovedResult(self, event: ApprovedResult) -> None:
        self.open.append(event.message)

    def on_ApprovalsSettled(self, event: ApprovalsSettled) -> None:
        self.close_round()

    def on_Suspended(self, event: Suspended) -> None:
        self.close_round(event.messages)

    def on_RunSettled(self, event: RunSettled) -> None:
        self.close_round()

    def discard(self) -> None:
        self.open = []


class RunPolicy(Policy):
    """Nothing reaches the store before a response outcome; then all of it, at once."""

    name = "run"

    def __init__(self, append: Callable[[Sequence[Message]], None]) -> None:
        super().__init__(append)
        self.held: list[Message] = []

    def hold(self, messages: Sequence[Message]) -> None:
        self.held.extend(messages)

    def stamp(self, messages: Sequence[Message], round_: int) -> list[Message]:
        """The run's one batch carries the round it is appended in."""
        return [dataclasses.replace(m, round=round_) for m in messages]

    def flush(self, run: RunState) -> None:
        batch = self.stamp(self.held, run.round)
        self.held = []
        if batch:
            self.append(batch)

    def on_InputAccepted(self, event: InputAccepted) -> None:
        self.hold([event.message])

    def on_RoundCompleted(self, event: RoundCompleted) -> None:
        self.hold(event.messages)

    def on_AnswerReady(self, event: AnswerReady) -> None:
        self.hold([event.message])

    def on_ApprovalAnswered(self, event: ApprovalAnswered) -> None:
        self.hold([event.message])

    def on_ApprovedResult(self, event: ApprovedResult) -> None:
        self.hold([event.message])

    def on_Suspended(self, event: Suspended) -> None:
        self.hold(event.messages)
        self.flush(event.run)

    def on_RunSettled(self, event: RunSettled) -> None:
        self.flush(event.run)

    def discard(self) -> None:
        self.held = []


POLICY_CLASSES: dict[str, type[Policy]] = {
    "message": MessagePolicy, "turn": TurnPolicy, "run": RunPolicy,
}


# -- subscribers --------------------------------------------------------------------


class Persistence:
    """The persistence subscriber: the save policy on top of the store."""

    def __init__(self, env: Any, thread: str, policy: str,
                 classes: Mapping[str, type[Policy]] = POLICY_CLASSES) -> None:
        self.env = env
        self.thread = thread
        self.policy = classes[policy](self.append)

    def append(self, batch: Sequence[Message]) -> None:
        self.env.store.append(self.thread, list(batch))

    def handle(self, event: Event) -> None:
        self.policy.handle(event)

    @contextlib.asynccontextmanager
    async def scope(self, run: RunState) -> AsyncIterator[None]:
        """One run: leaving it early, for whatever reason, drops the held batch."""
        try:
            yield
        except BaseException:
            self.policy.discard()
            raise


class Recorder:
    """Keeps every new message of the run, stored or not, in run order."""

    def handle(self, event: Event) -> None:
        if isinstance(event, MESSAGE_EVENTS):
            self.keep(event.run, [event.message])
        elif isinstance(event, BATCH_EVENTS):
            self.keep(event.run, event.messages)

    @staticmethod
    def keep(run: RunState, messages: Sequence[Message]) -> None:
        known = {m.id for m in run.made}
        run.made.extend(m for m in messages if m.id not in known)


class Streamer:
    """Forwards the model's deltas to the caller as ``chunk`` events."""

    def __init__(self, emit: Callable[..., None]) -> None:
        self.emit = emit

    def handle(self, event: Event) -> None:
        if isinstance(event, ModelDelta):
            self.emit(event.run, "chunk", round=event.round, text=event.text)


# -- the agent ----------------------------------------------------------------------


class Agent:
    """Every run of one script, in order, on one thread."""

    persistence_class: type[Persistence] = Persistence
    bus_class: type[EventBus] = EventBus

    def __init__(self, script: Mapping[str, Any], env: Any, policy: str) -> None:
        self.script = script
        self.env = env
        self.policy_name = policy
        self.thread = str(script["thread"])
        self.max_rounds = int(script.get("max_rounds") or 8)
        retries = script.get("max_retries")
        self.max_retries = 2 if retries is None else int(retries)
        self.suspension: tuple[list[Message], Mapping[str, Any]] | None = None

    # -- wiring -------------------------------------------------------------------

    async def execute(self) -> list[dict[str, JSONValue]]:
        self.bus = self.bus_class()
        self.persistence = self.persistence_class(self.env, self.thread, self.policy_name)
        self.bus.subscribe(self.persistence.handle)
        self.bus.subscribe(Recorder().handle)
        self.bus.subscribe(Streamer(self.emit).handle)
        try:
            runs = []
            for index, spec in enumerate(self.script["runs"]):
                runs.append(await self.run_one(index, spec))
            await self.drain()
            return runs
        finally:
            await self.bus.close()

    async def drain(self) -> None:
        """Wait for work still in flight (none: every publish is awaited)."""

    def emit(self, run: RunState, name: str, **data: JSONValue) -> None:
        self.env.emit(name, run_id=run.id, **data)
        run.events.append({"name": name, "run_id": run.id, **data})

    def new(self, run: RunState, role: str, text: str,
            parts: Sequence[JSONValue] = ()) -> Message:
        return Message(id=self.message_id(run), role=role,  # type: ignore[arg-type]
                       text=text, parts=tuple(parts), run_id=run.id, round=run.round)

    def message_id(self, run: RunState) -> str:
        """A fresh id from the kit's id source (unique across processes)."""
        return str(self.env.ids.next("msg"))

    def see(self, run: RunState, *messages: Message) -> None:
        run.view.extend(messages)

    def history(self) -> list[Message]:
        return list(self.env.store.messages(self.thread))

    # -- one run ------------------------------------------------------------------

    async def run_one(self, index: int, spec: Mapping[str, Any]) -> dict[str, JSONValue]:
        stream = bool(spec.get("stream", self.script.get("stream", False)))
        run = RunState(id=self.env.ids.next("run"), index=index, spec=spec, stream=stream)
        self.emit(run, "run_started", run_index=index)
        try:
            async with self.persistence.scope(run):
                if run.kind == "resume":
                    return await self.resume(run, spec["resume"])
                return await self.start(run, str(spec["input"]))
        except ENDING as exc:
            return await self.fail(run, exc)

    async def start(self, run: RunState, text: str) -> dict[str, JSONValue]:
        run.view = self.history()
        user = self.new(run, "user", text)
        try:
            verdict = self.env.hook("input_guardrail", {"run_id": run.id, "text": text})
        except ScriptedFailure:
            await self.bus.publish(Discarded(run, user))
            raise
        if verdict.get("action") == "block":
            return self.finish(run, "blocked", stage="input", reply=verdict.get("text"))
        self.see(run, user)
        await self.bus.publish(InputAccepted(run, user))
        return await self.loop(run)

    async def loop(self, run: RunState) -> dict[str, JSONValue]:
        while True:
            if run.round > self.max_rounds:
                raise RunFailure({"type": "MaxRoundsError",
                                  "message": f"the run needed more than {self.max_rounds} rounds"})
            step = await self.ask_model(run)
            reply = str(step.get("reply") or "")
            requested = list(step.get("tool_calls") or [])
            if not requested:
                return await self.answer(run, reply)
            calls = [self.tool_call(raw, i) for i, raw in enumerate(requested)]
            assistant = self.new(run, "assistant", reply,
                                 [self.call_part(c) for c in calls])
            self.see(run, assistant)
            await self.bus.publish(ToolCallsRequested(run, assistant))
            if any(c.get("needs_approval") for c in calls):
                return await self.suspend(run, assistant, calls)
            parts = await self.run_tools(run, calls)
            tool = self.new(run, "tool", "\n".join(result_text(p) for p in parts), parts)
            self.see(run, tool)
            await self.bus.publish(RoundCompleted(run, (assistant, tool)))
            run.round += 1

    async def ask_model(self, run: RunState) -> Mapping[str, Any]:
        run.model_calls += 1
        if run.spec.get("cancel_before_model_call") == run.model_calls:
            raise RunCancelled({"type": "RunCancelledError",
                                "message": f"cancelled before model call {run.model_calls}"})
        attempt = 1
        while True:
            try:
                step = self.env.model(MODEL, self.request(run, attempt))
            except ScriptedFailure as exc:
                if exc.error.get("status") in RETRYABLE and attempt <= self.max_retries:
                    attempt += 1
                    continue
                raise
            await self.stream_reply(run, str(step.get("reply") or ""))
            return step

    def request(self, run: RunState, attempt: int) -> dict[str, JSONValue]:
        return {"run_id": run.id, "round": run.round, "attempt": attempt,
                "messages": [m.to_json() for m in run.view]}

    async def stream_reply(self, run: RunState, reply: str) -> None:
        if run.stream:
            for word in reply.split():
                await self.bus.publish(ModelDelta(run, run.round, word))

    # -- tools --------------------------------------------------------------------

    def tool_call(self, raw: Mapping[str, Any], index: int) -> dict[str, JSONValue]:
        return {"type": "tool_call", "id": str(raw.get("id") or self.env.ids.next("call")),
                "name": str(raw["name"]), "args": raw.get("args", {}),
                "needs_approval": bool(raw.get("needs_approval"))}

    @staticmethod
    def call_part(call: Mapping[str, Any]) -> dict[str, JSONValue]:
        return {k: v for k, v in call.items() if k != "needs_approval"}

    async def run_tools(self, run: RunState,
                        calls: Sequence[Mapping[str, Any]]) -> list[dict[str, JSONValue]]:
        """The round's tools, one after the other, results in call order."""
        return [await self.invoke(run, call) for call in calls]

    async def invoke(self, run: RunState, call: Mapping[str, Any]) -> dict[str, JSONValue]:
        part: dict[str, JSONValue] = {"type": "tool_result", "call_id": call["id"],
                                      "name": call["name"]}
        try:
            part["result"] = self.env.tool(call["name"], call["args"], call["id"])
        except ScriptedFailure as exc:
            self.tool_failed(run, call, exc)
            part["error"] = f"ToolCallError: {exc}"
        return part

    def tool_failed(self, run: RunState, call: Mapping[str, Any], exc: ScriptedFailure) -> None:
        """Ask the tool-error hook; ``terminate`` cancels the run."""
        verdict = self.env.hook("tool_error", {"run_id": run.id, "tool": call["name"],
                                               "call_id": call["id"], "error": error_of(exc)})
        if verdict.get("action") == "terminate":
            reason = verdict.get("text") or f"the tool-error hook terminated {call['name']}"
            raise RunCancelled({"type": "RunCancelledError", "message": str(reason),
                                "tool": call["name"]})

    # -- endings ------------------------------------------------------------------

    async def answer(self, run: RunState, model_text: str) -> dict[str, JSONValue]:
        try:
            verdict = self.env.hook("output_guardrail", {"run_id": run.id, "text": model_text})
        except ScriptedFailure:
            await self.bus.publish(Discarded(run, self.new(run, "assistant", model_text)))
            raise
        text, stage = model_text, None
        if verdict.get("action") in ("replace", "block"):
            text = str(verdict.get("text") or "")
            if verdict.get("action") == "block":
                stage = "output"
        message = self.new(run, "assistant", text)
        self.see(run, message)
        await self.bus.publish(AnswerReady(run, message))
        end = self.env.hook("run_end", {"run_id": run.id, "reply": text})
        if end.get("action") == "cancel":
            raise RunCancelled({"type": "RunCancelledError",
                                "message": "cancelled by the run-end hook"})
        outcome = "completed" if stage is None else "blocked"
        await self.settle(run, outcome)
        return self.finish(run, outcome, stage=stage, reply=text)

    async def settle(self, run: RunState, outcome: str) -> None:
        await self.bus.publish(RunSettled(run, outcome))

    async def suspend(self, run: RunState, assistant: Message,
                      calls: Sequence[Mapping[str, Any]]) -> dict[str, JSONValue]:
        pending = [c for c in calls if c.get("needs_approval")]
        done = [await self.invoke(run, c) for c in calls if not c.get("needs_approval")]
        messages = [assistant]
        if done:
            tool = self.new(run, "tool", "\n".join(result_text(p) for p in done), done)
            self.see(run, tool)
            messages.append(tool)
        await self.bus.publish(Suspended(run, tuple(messages)))
        continuation = self.continuation_of(run, pending)
        self.suspension = (list(run.view), continuation)
        return self.finish(run, "suspended",
                           pending_tool_calls=[self.call_part(c) for c in pending],
                           continuation=continuation)

    def continuation_of(self, run: RunState,
                        pending: Sequence[Mapping[str, Any]]) -> dict[str, JSONValue]:
        return {"run_id": run.id, "tool_call_ids": [str(c["id"]) for c in pending]}

    # -- resume -------------------------------------------------------------------

    async def resume(self, run: RunState, answer: Mapping[str, Any]) -> dict[str, JSONValue]:
        suspension, self.suspension = self.suspension, None
        if suspension is not None:  # suspended by this very instance: its view is at hand
            view, continuation = list(suspension[0]), suspension[1]
        else:  # a fresh instance: rebuild the suspended run from the store
            continuation = answer.get("continuation")
            if not isinstance(continuation, Mapping):
                raise RunFailure({"type": "NothingToResumeError",
                                  "message": "no suspended run to resume"})
            view = self.history()
        run.view = view
        pending = self.pending_calls(view, continuation)
        if not pending:
            raise RunFailure({"type": "NothingToResumeError",
                              "message": f"run {continuation.get('run_id')!r} awaits nothing"})
        approved = bool(answer.get("approved"))
        reason = str(answer.get("reason") or "")
        for call in pending:
            word = "approved" if approved else "denied"
            approval = self.new(run, "tool", f"{call['name']}: {word}" + (
                f" ({reason})" if reason else ""),
                [{"type": "tool_approval", "call_id": call["id"], "approved": approved}])
            self.see(run, approval)
            await self.bus.publish(ApprovalAnswered(run, approval))
            if approved:
                part = await self.invoke(run, call)
            else:
                part = {"type": "tool_result", "call_id": call["id"], "name": call["name"],
                        "error": f"ToolApprovalDenied: {reason or 'the call was not approved'}"}
            result = self.new(run, "tool", result_text(part), [part])
            self.see(run, result)
            await self.bus.publish(ApprovedResult(run, result))
        await self.bus.publish(ApprovalsSettled(run))
        return await self.loop(run)

    def pending_calls(self, stored: Sequence[Message],
                      continuation: Mapping[str, Any]) -> list[dict[str, JSONValue]]:
        """The suspended run's stored tool calls that nothing answers yet."""
        run_id = continuation.get("run_id")
        wanted = continuation.get("tool_call_ids")
        answered = {str(p.get("call_id")) for m in stored for p in m.parts
                    if isinstance(p, Mapping) and p.get("type") in ("tool_result", "tool_approval")}
        pending = []
        for message in stored:
            if message.role != "assistant" or message.run_id != run_id:
                continue
            for p in message.parts:
                if not isinstance(p, Mapping) or p.get("type") != "tool_call":
                    continue
                if isinstance(wanted, list) and p.get("id") not in wanted:
                    continue
                if str(p.get("id")) not in answered:
                    pending.append(dict(p))
        return pending

    # -- reporting ----------------------------------------------------------------

    async def fail(self, run: RunState, exc: BaseException) -> dict[str, JSONValue]:
        """The failure path: run_error hook, error record, outcome."""
        error = error_of(exc)
        with contextlib.suppress(ScriptedFailure):
            self.env.hook("run_error", {"run_id": run.id, "error": error})
        if self.env.store.has("errors"):
            record = ErrorRecord(run_id=run.id, error=error, messages=tuple(run.made),
                                 scope=self.thread, recorded_at=self.env.clock.now())
            with contextlib.suppress(StoreError):
                self.env.store.record_error(self.thread, record)
        outcome = "cancelled" if isinstance(exc, RunCancelled) else "failed"
        return self.finish(run, outcome, error=error)

    def finish(self, run: RunState, outcome: str, *, stage: str | None = None,
               reply: JSONValue = None, error: JSONValue = None,
               **extra: JSONValue) -> dict[str, JSONValue]:
        """Tell the caller, once every append the outcome needs has returned."""
        self.emit(run, "outcome", outcome=outcome, stage=stage, error=error)
        return {"run_id": run.id, "kind": run.kind, "outcome": outcome, "stage": stage,
                "reply": reply, "error": error, "events": run.events,
                "pending_tool_calls": [], **extra}


class AsyncPolicyRuntime:
    """The runtime object the kit builds: one asyncio event loop per ``execute``."""

    profiles = frozenset({"save-policy"})
    policies = frozenset(POLICIES)
    hooks = HOOKS
    agent_class: type[Agent] = Agent

    def execute(self, script: Mapping[str, Any], env: Any) -> dict[str, JSONValue]:
        policy = script.get("save_policy")
        if policy is None:
            policy = "message"
        answer: dict[str, JSONValue] = {"save_policy": policy, "thread": script.get("thread"),
                                        "construction_error": None, "runs": []}
        if policy not in POLICIES:
            answer["construction_error"] = {
                "type": "ConfigurationError", "field": "save_policy",
                "message": f"save_policy must be one of {', '.join(POLICIES)}, got {policy!r}"}
            return answer
        agent = self.agent_class(script, env, str(policy))
        answer["runs"] = asyncio.run(agent.execute())
        return answer


def make() -> AsyncPolicyRuntime:
    return AsyncPolicyRuntime()
