"""Google ADK (``google-adk``) as a runtime: its ``Runner`` with an ``LlmAgent``.

``memconform run --runtime google-adk`` and ``memconform fingerprint --runtime
google-adk`` judge ADK's ``Runner.run_async`` over a session service: what ADK
itself writes to a session when a run completes, fails or waits for a tool
confirmation. The runtime is named in
:data:`memconform.adapters.registry.BUILTIN_RUNTIMES` (the factory is
:func:`google_adk_runtime`).

How it depends on the kit
-------------------------
The adapter implements the kit's ``Runtime`` protocol
(:class:`memconform.simulator.runtime.Runtime`: ``profiles`` and
``execute(script, env)``) and touches nothing but the
:class:`~memconform.harness.environment.Environment` the kit hands it: it
imports neither the simulator nor its save policies. Each piece of ADK is
plugged into one piece of the environment:

- the agent's model (:class:`KitLlm`, a ``google.adk.models.base_llm.BaseLlm``)
  calls the kit's fake model, ``env.model("agent", request)``; the request
  shows the model ADK's ``llm_request.contents`` as kit messages (``role``,
  ``text``, ``tool_call`` / ``tool_result`` parts), the scripted step becomes
  one ``LlmResponse`` (a ``function_call`` part per tool call, carrying the
  script's id, a text part for the reply), a scripted failure is raised inside
  the model call. Asked to stream, the model yields the reply's text as one
  ``partial`` response before the whole one, as a streaming model does;
- the agent's tools are ``FunctionTool`` objects, one per tool of the script
  (parameters: the argument names the script's model passes), each calling
  ``env.tool(name, args, call_id)``. The script's ``tool_error`` hook is the
  agent's ``on_tool_error_callback``: an allowing hook returns
  ``{"error": message}`` as the tool's response (ADK has no error text of its
  own; that is the shape its ``FunctionTool`` gives its own recoverable
  errors), a terminating one returns ``None``, which lets ADK raise the tool's
  error as it does without a callback, a failing one raises inside the
  callback;
- the script's ``input_guardrail`` is the agent's ``before_model_callback``
  (ADK's place for checking a request before the model sees it), consulted
  on the first model call of a run with an input, with that input's text; the
  script's ``output_guardrail`` is its ``after_model_callback``, consulted on a
  complete model response calling no tool (the answer), with its text. A
  ``block`` returns an ``LlmResponse`` holding the verdict's text, which ADK
  uses instead of the model's call or answer (and stores as the agent's
  answer); the run is reported ``blocked`` at that stage with that text, as
  the application whose callback blocked knows it. A scripted failure raises
  inside the callback;
- a run's ``cancel_before_model_call`` is ADK's ``abort_signal``, the
  ``asyncio.Event`` the caller of ``run_async`` owns: when the run comes to
  that model call (the agent's ``before_model_callback``), the signal is set
  and the callback waits, the model not called, until ADK cancels it. ADK
  then seals the invocation (an ``INVOCATION_ABORTED`` error event, or an
  error response to each call left unanswered) and ends the run without
  raising: the run is reported ``cancelled``;
- the script's ``run_end`` hook is a plugin's ``after_run_callback``, which
  ADK calls once a run has ended without an error (completed, suspended or
  aborted; not after a failure): a
  scripted failure raises inside it (ADK hands its caller that error wrapped
  in a ``RuntimeError``); a ``cancel`` verdict has no ADK counterpart (the
  callback returns nothing and the run is over) and changes nothing;
- a tool call the script marks ``needs_approval`` is ADK's tool confirmation:
  the tool is made with ``require_confirmation``, a callable answering yes for
  the marked call ids. ADK then ends the run with an
  ``adk_request_confirmation`` call (a long-running tool call) instead of
  running the tool: the run is ``suspended`` with the pending call. A
  ``resume`` run sends ADK the confirmation it asks for, a function response
  to that call holding ``{"confirmed": approved}``; a rejected call's result is
  ADK's own rejection;
- the session service (:class:`KitSessionService`, an ADK
  ``InMemorySessionService`` keeping ADK's own bookkeeping: sessions, state)
  writes every event the runner appends to ``env.store`` (the kit's recording
  proxy) before ADK's own copy: one ``append_event`` is one ``append`` of one
  batch holding one :class:`~memconform.values.Message` (the user's input; an
  assistant message with ``tool_call`` parts for a model event calling tools;
  a tool message with ``tool_result`` parts for a function-response event; an
  assistant message with an ``error`` part for an error event, which holds no
  content, only ADK's ``error_code`` and ``error_message``). The event itself
  travels in the message's metadata (:data:`EVENT_KEY`), and ``get_session``
  takes the session's events from the store, so the store under test is the
  one the next run reads. ADK's event and invocation ids and its timestamps
  come from the kit's ids (``adk-1``, ...) and clock (ADK's
  ``google.adk.platform`` providers), so what is stored is the same on every
  run of a script. An error event is no ``record_error`` call: it names
  neither a run's messages nor the run, it is one more event of the session;
- a streamed run is ``RunConfig(streaming_mode=StreamingMode.SSE)``: each
  ``partial`` event ``run_async`` yields is a ``chunk`` event on the timeline
  (ADK never appends a partial event).

Translate, never fix
--------------------
ADK has no save-policy setting: a script's ``save_policy`` is not passed
anywhere. The adapter declares the optional hooks it translates
(:attr:`GoogleADKRuntime.hooks`); a failure point needing another is
``unsupported``, never emulated. Not translated: provider retries (ADK's
retry options configure the Gemini client, which the kit's model replaces),
``on_model_error_callback`` is not installed: the script has no hook a model
error is handed to, so ADK's default (raise, after storing an error event)
is what runs. It stamps no run ids or rounds (it
``provides`` nothing) and returns only what ADK's caller sees: each run's
outcome, reply and error, never the model's calls or the messages the run
made.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from memconform.adapters.libraries import library_versions, require
from memconform.adapters.libraries.description import Library, RuntimeEntry
from memconform.adapters.libraries.framework import (
    FrameworkRuntime,
    approval_ids,
    argument_names,
    suspended_report,
    unsupported_report,
)
from memconform.adapters.libraries.framework import outcome_report as _report
from memconform.adapters.libraries.framework import run_error as _error_of
from memconform.adapters.libraries.google_adk import LIBRARY as _STORES
from memconform.values import JSONValue, Message, freeze_json

__all__ = [
    "APP_NAME",
    "EVENT_KEY",
    "LIBRARY",
    "MODEL_COMPONENT",
    "USER_ID",
    "GoogleADKRuntime",
    "event_fields",
    "google_adk_runtime",
]

EXTRA = "google-adk"
MODEL_COMPONENT = "agent"
"""The fake-model component the agent's model calls (as in the save-policy scripts)."""
EVENT_KEY = "google_adk_event"
"""The metadata key holding the ADK event (its JSON dump) a stored message stands for."""
APP_NAME = "memconform"
"""The ``app_name`` of the runner and of every session."""
USER_ID = "memconform"
"""The ``user_id`` of every session."""
AGENT_NAME = "memconform"
"""The agent's name (the ``author`` of every event the agent makes)."""
ADK_LOGGER = "google_adk"
"""The logger every ADK module logs under."""
_QUIET = logging.NullHandler()
CONFIRMATION_TOOL = "adk_request_confirmation"
"""The function call with which ADK asks its caller to confirm a tool call."""


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def _response_text(response: Any) -> str:
    """The text a function response stands for: its ``result`` when that is a
    string (ADK wraps a tool's plain return value so), else its JSON."""
    if isinstance(response, Mapping) and set(response) == {"result"} \
            and isinstance(response["result"], str):
        return response["result"]
    return json.dumps(_plain(response), sort_keys=True)


def event_fields(event: Mapping[str, Any]) -> tuple[str, str, tuple[JSONValue, ...]]:
    """The kit role, text and parts of one ADK event (its JSON dump, field names
    as pydantic dumps them by name)."""
    content = event.get("content") or {}
    parts = [p for p in content.get("parts") or [] if isinstance(p, Mapping)]
    text = "".join(str(p["text"]) for p in parts if isinstance(p.get("text"), str))
    calls = [p["function_call"] for p in parts if isinstance(p.get("function_call"), Mapping)]
    answers = [p["function_response"] for p in parts
               if isinstance(p.get("function_response"), Mapping)]
    if answers:
        results = tuple(freeze_json({"type": "tool_result", "call_id": a.get("id"),
                                     "name": a.get("name"), "result": a.get("response")})
                        for a in answers)
        return "tool", "".join(_response_text(a.get("response")) for a in answers), results
    if calls:
        return "assistant", text, tuple(
            freeze_json({"type": "tool_call", "id": c.get("id"), "name": c.get("name"),
                         "args": c.get("args") or {}}) for c in calls)
    if not content and event.get("error_code") is not None:
        return "assistant", "", (freeze_json({
            "type": "error", "code": str(event.get("error_code")),
            "message": event.get("error_message")}),)
    if event.get("author") == "user" or content.get("role") == "user":
        return "user", text, ()
    return "assistant", text, ()


def _dump(event: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = _plain(event.model_dump(mode="json", exclude_none=True))
    return dumped


class _Run:
    """Per-execution state shared by the model, the tools and the session service."""

    def __init__(self, env: Any, thread: str, script: Mapping[str, Any]) -> None:
        self.env = env
        self.thread = thread
        self.approvals = approval_ids(script, MODEL_COMPONENT)
        self.input: str | None = None
        """The text of the running run's input, until the input guardrail saw it."""
        self.cancel_at: int | None = None
        """The model call of the running run before which its caller cancels it."""
        self.model_calls = 0
        """How many model calls the running run came to (``before_model_callback``)."""
        self.abort: asyncio.Event | None = None
        """The running run's ``abort_signal``."""
        self.blocked: str | None = None
        """The stage (``input``, ``output``) at which a guardrail blocked the run."""
        self.confirmations: list[str] = []
        """The ids of the ``adk_request_confirmation`` calls the last run ended with."""
        self.runner: Any = None
        """ADK's ``Runner`` every run of the script goes through."""


def _build_types() -> dict[str, Any]:
    """The ADK classes the adapter subclasses, made once ADK is imported."""
    base_llm = require("google.adk.models.base_llm", EXTRA)
    llm_response = require("google.adk.models.llm_response", EXTRA)
    sessions = require("google.adk.sessions", EXTRA)
    events = require("google.adk.events", EXTRA)
    types = require("google.genai.types", EXTRA)
    pydantic = require("pydantic", EXTRA)
    plugins = require("google.adk.plugins.base_plugin", EXTRA)
    response_class: Any = llm_response.LlmResponse
    event_class: Any = events.Event

    class KitLlm(base_llm.BaseLlm):  # type: ignore[misc,name-defined]
        """ADK's ``BaseLlm`` over the kit's fake model."""

        model: str = "memconform-fake"
        kit_run: Any = pydantic.Field(default=None, exclude=True)

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            env = self.kit_run.env
            shown = [_shown(content) for content in llm_request.contents or []]
            step = env.model(MODEL_COMPONENT, freeze_json({"messages": shown}))
            reply = str(step.get("reply") or "")
            parts = [types.Part(text=reply)] if reply or not step.get("tool_calls") else []
            for call in step.get("tool_calls") or []:
                parts.append(types.Part(function_call=types.FunctionCall(
                    id=str(call.get("id") or env.ids.next("call")), name=str(call["name"]),
                    args=_plain(call.get("args") or {}))))
            if stream and reply:
                yield response_class(partial=True, content=types.Content(
                    role="model", parts=[types.Part(text=reply)]))
            yield response_class(content=types.Content(role="model", parts=parts))

    class KitSessionService(sessions.InMemorySessionService):  # type: ignore[misc,name-defined]
        """ADK's in-memory session service whose events live in the kit's store."""

        def __init__(self, run: _Run) -> None:
            super().__init__()
            self._kit_run = run

        async def append_event(self, session: Any, event: Any) -> Any:
            if not event.partial and session.id == self._kit_run.thread:
                env = self._kit_run.env
                dumped = _dump(event)
                role, text, parts = event_fields(dumped)
                env.store.append(self._kit_run.thread, [Message(
                    id=env.ids.next("msg"), role=role, text=text,  # type: ignore[arg-type]
                    parts=parts, metadata=freeze_json({EVENT_KEY: dumped}))])
            return await super().append_event(session, event)

        async def get_session(self, **kwargs: Any) -> Any:
            session = await super().get_session(**kwargs)
            if session is not None and session.id == self._kit_run.thread:
                stored = self._kit_run.env.store.messages(self._kit_run.thread)
                session.events = [_event_of(m, event_class, types) for m in stored]
            return session

    class RunEndPlugin(plugins.BasePlugin):  # type: ignore[misc,name-defined]
        """A plugin whose ``after_run_callback`` is the script's ``run_end`` hook."""

        def __init__(self, run: _Run) -> None:
            super().__init__(name="memconform_run_end")
            self._kit_run = run

        async def after_run_callback(self, *, invocation_context: Any) -> None:
            # a "cancel" verdict has no ADK counterpart: the run is over
            self._kit_run.env.hook("run_end", freeze_json(
                {"invocation_id": getattr(invocation_context, "invocation_id", None)}))

    return {"model": KitLlm, "session": KitSessionService, "types": types,
            "run_end": RunEndPlugin,
            "response": response_class}


def _shown(content: Any) -> dict[str, Any]:
    """One ADK ``Content`` as the kit message the model is shown."""
    dumped = _plain(content.model_dump(mode="json", exclude_none=True))
    role, text, parts = event_fields({"content": dumped, "author": dumped.get("role")})
    return {"role": role, "text": text, "parts": list(parts)}


def _event_of(message: Message, event_class: Any, types: Any) -> Any:
    """The ADK event a stored message stands for (kept in its metadata), or, for a
    message another writer stored, a plain text event of its role."""
    kept = dict(message.metadata).get(EVENT_KEY)
    if isinstance(kept, Mapping):
        return event_class.model_validate(_plain(kept))
    user = message.role == "user"
    return event_class(
        id=message.id, invocation_id=message.run_id or "",
        author="user" if user else AGENT_NAME,
        content=types.Content(role="user" if user else "model",
                              parts=[types.Part(text=message.text)]))


class GoogleADKRuntime(FrameworkRuntime[_Run]):
    """ADK's ``Runner.run_async`` with a :class:`KitSessionService`, for
    ``save-policy`` scripts."""

    framework = "google-adk"
    hooks = frozenset({"input_guardrail", "output_guardrail", "tool_error", "run_end",
                       "cancel", "approval", "stream"})
    """The optional hooks ADK has and the adapter translates (see the module)."""

    policies: frozenset[str] = frozenset()
    """The save policies ADK implements: none. It has no save-policy setting and
    writes each event as it is made (its fingerprint is in the README)."""

    def __init__(self) -> None:
        self._agents: Any = require("google.adk.agents", EXTRA)
        self._runners: Any = require("google.adk.runners", EXTRA)
        self._apps: Any = require("google.adk.apps", EXTRA)
        self._ids: Any = require("google.adk.platform.uuid", EXTRA)
        self._time: Any = require("google.adk.platform.time", EXTRA)
        self._tools: Any = require("google.adk.tools", EXTRA)
        self._tool_context: Any = require("google.adk.tools.tool_context", EXTRA).ToolContext
        self._types = _build_types()
        self.version = library_versions("google-adk", "google-genai")
        # ADK logs each failed run with its traceback; with no handler configured
        # Python's last-resort handler printed them all to stderr (over 1,600
        # lines for one fingerprint). A NullHandler on ADK's logger stops that
        # and leaves the records to any handler the application configures.
        logging.getLogger(ADK_LOGGER).addHandler(_QUIET)

    async def start(self, script: Mapping[str, Any], env: Any, thread: str) -> _Run:
        """ADK's ids and clock from the kit's, the thread's session created in a
        :class:`KitSessionService`, and one ``Runner`` (with the run-end plugin)
        for every run of the script."""
        run = _Run(env, thread, script)
        # ADK's own ids and clock (event and invocation ids, timestamps) come from
        # the kit's; both providers are context variables, so they hold for the task
        # executing the script (start is awaited in it) and the tasks ADK starts
        # from it, and nothing else
        self._ids.set_id_provider(lambda: env.ids.next("adk"))
        self._time.set_time_provider(lambda: env.clock.now_datetime().timestamp())
        service = self._types["session"](run)
        await service.create_session(app_name=APP_NAME, user_id=USER_ID, session_id=thread)
        app = self._apps.App(name=APP_NAME, root_agent=self._agent(script, run),
                             plugins=[self._types["run_end"](run)])
        run.runner = self._runners.Runner(app=app, session_service=service)
        return run

    async def finish(self, run: _Run) -> None:
        """Close the ``Runner``."""
        await run.runner.close()

    def _agent(self, script: Mapping[str, Any], run: _Run) -> Any:
        env = run.env

        def on_tool_error(tool: Any, args: Any, tool_context: Any, error: Exception) -> Any:
            verdict = env.hook("tool_error", freeze_json(
                {"tool": getattr(tool, "name", None),
                 "error": {"type": _error_of(error)["type"], "message": str(error)}}))
            if verdict.get("action") == "terminate":
                return None  # as without a callback: ADK raises the tool's error
            return {"error": str(error)}

        def text_response(text: Any) -> Any:
            types = self._types["types"]
            return self._types["response"](content=types.Content(
                role="model", parts=[types.Part(text=str(text or ""))]))

        async def before_model(callback_context: Any, llm_request: Any) -> Any:
            run.model_calls += 1
            if run.cancel_at == run.model_calls and run.abort is not None:
                run.abort.set()
                await _cancelled_by_adk()
            if run.input is None:
                return None
            text, run.input = run.input, None
            verdict = env.hook("input_guardrail", freeze_json({"text": text}))
            if verdict.get("action") != "block":
                return None
            run.blocked = "input"
            return text_response(verdict.get("text"))

        def output_guardrail(callback_context: Any, llm_response: Any) -> Any:
            if llm_response.partial or llm_response.get_function_calls() \
                    or llm_response.error_code is not None:
                return None
            verdict = env.hook("output_guardrail", freeze_json({"text": _text(llm_response)}))
            if verdict.get("action") != "block":
                return None
            run.blocked = "output"
            return text_response(verdict.get("text"))

        return self._agents.LlmAgent(
            name=AGENT_NAME,
            before_model_callback=before_model,
            after_model_callback=output_guardrail,
            model=self._types["model"](kit_run=run),
            tools=[self._tool(str(name), argument_names(script, str(name), MODEL_COMPONENT), run)
                   for name in (script.get("tools") or {})],
            on_tool_error_callback=on_tool_error,
        )

    def _tool(self, name: str, names: Sequence[str], run: _Run) -> Any:
        env = run.env

        async def invoke(tool_context: Any, **args: Any) -> Any:
            given = {k: v for k, v in args.items() if v is not None}
            return env.tool(name, freeze_json(given), tool_context.function_call_id)

        params = [inspect.Parameter("tool_context", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    annotation=self._tool_context)]
        params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=Any,
                                     default=None) for n in names if n.isidentifier()]
        invoke.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        invoke.__annotations__ = {"tool_context": self._tool_context,
                                  **{p.name: Any for p in params[1:]}}
        invoke.__name__ = invoke.__qualname__ = name
        invoke.__doc__ = f"The scripted tool {name}."

        def needs_approval(tool_context: Any, **_: Any) -> bool:
            return str(tool_context.function_call_id) in run.approvals

        return self._tools.FunctionTool(invoke, require_confirmation=needs_approval)

    async def run_one(self, run: _Run, script: Mapping[str, Any], spec: Any) -> JSONValue:
        """One run (an input, or a resume confirming the tool calls ADK asked
        about) through ``Runner.run_async``."""
        runner = run.runner
        types = self._types["types"]
        if isinstance(spec, Mapping) and isinstance(spec.get("input"), str):
            parts = [types.Part(text=spec["input"])]
        elif isinstance(spec, Mapping) and isinstance(spec.get("resume"), Mapping):
            approved = bool(spec["resume"].get("approved"))
            parts = [types.Part(function_response=types.FunctionResponse(
                id=call_id, name=CONFIRMATION_TOOL, response={"confirmed": approved}))
                for call_id in run.confirmations]
        else:
            parts = []
        if not parts:
            return unsupported_report("the adapter translates runs with an input or a resume")
        run.confirmations = []
        run.input = spec["input"] if isinstance(spec.get("input"), str) else None
        run.blocked = None
        run.model_calls = 0
        cancel_at = spec.get("cancel_before_model_call")
        run.cancel_at = cancel_at if isinstance(cancel_at, int) else None
        run.abort = asyncio.Event()
        message = types.Content(role="user", parts=parts)
        streamed = bool(spec.get("stream", script.get("stream", False)))
        mode = self._agents.run_config.StreamingMode
        config = self._agents.RunConfig(
            streaming_mode=mode.SSE if streamed else mode.NONE,
            max_llm_calls=int(script.get("max_rounds", 10)) + 1)
        last: Any = None
        pending: list[JSONValue] = []
        try:
            async for event in runner.run_async(user_id=USER_ID, session_id=run.thread,
                                                new_message=message, run_config=config,
                                                abort_signal=run.abort):
                if event.partial:
                    text = _text(event)
                    if text:
                        run.env.emit("chunk", text=text)
                    continue
                last = event
                pending += self._pending(event, run)
        except Exception as exc:  # ADK's caller sees the run raise
            return _report("failed", None, None, _error_of(exc))
        if run.blocked is not None:
            return _report("blocked", run.blocked, _text(last) if last is not None else None,
                           None)
        if pending:
            return suspended_report(pending)
        if run.abort.is_set():
            return _report("cancelled", None, None, {
                "type": str(getattr(last, "error_code", None) or "Aborted"),
                "message": str(getattr(last, "error_message", None) or "")})
        if last is not None and last.error_code is not None:
            return _report("failed", None, None, {"type": str(last.error_code),
                                                  "message": str(last.error_message or "")})
        return _report("completed", None, _text(last) if last is not None else None, None)

    @staticmethod
    def _pending(event: Any, run: _Run) -> list[JSONValue]:
        """The tool calls ``event`` asks the caller to confirm (ADK's long-running
        ``adk_request_confirmation`` calls), each as the original call."""
        waiting = set(event.long_running_tool_ids or ())
        found: list[JSONValue] = []
        for call in event.get_function_calls() if waiting else []:
            if call.name != CONFIRMATION_TOOL or call.id not in waiting:
                continue
            run.confirmations.append(str(call.id))
            original = (call.args or {}).get("originalFunctionCall") or {}
            found.append(freeze_json(_plain({"id": original.get("id"),
                                             "name": original.get("name"),
                                             "args": original.get("args") or {}})))
        return found


ABORT_GRACE = 60.0
"""Seconds a cancelled run's callback waits for ADK to cancel it before it gives
up with an error (a bound against a hang, never reached when ADK cancels)."""


async def _cancelled_by_adk() -> None:
    """Wait until ADK cancels the waiting task (it does once the run's abort
    signal is set); raise if it never does."""
    try:
        await asyncio.wait_for(asyncio.Event().wait(), ABORT_GRACE)
    except TimeoutError:
        raise RuntimeError("ADK did not cancel the run after its abort_signal was set") from None


def _text(event: Any) -> str:
    content = getattr(event, "content", None)
    return "".join(p.text for p in (content.parts or []) if p.text) if content else ""


def google_adk_runtime() -> GoogleADKRuntime:
    """The factory ``memconform run --runtime google-adk`` builds."""
    return GoogleADKRuntime()


_LACKS = (
    ("turns", "a session keeps events and nothing else: no turn records, windows or digests"),
    ("strict-write", "ADK has no task writes or digests apart from the session's events"),
    ("candidates", "ADK extracts no memory candidates of its own"),
    ("persisted-state", "ADK keeps no job record and writes no fact of its own. Session "
                        "state holds what application code assigns (context.state, or an "
                        "agent's output_key text), carried as the state_delta of the event it "
                        "came with and persisted when the session service appends that event "
                        "(temp: keys never), so a record's shape, what a step records and "
                        "what a failed step leaves would be the adapter's code, not ADK's (a "
                        "tool's assignments made before it raised are kept: they travel with "
                        "the error response its on_tool_error_callback gives). Its SQLite and "
                        "database session services refuse an append to a session another "
                        "writer changed since it was read (StaleSessionError) and never "
                        "re-read. ADK does resume on its own: with ResumabilityConfig("
                        "is_resumable=True) (experimental in this version) a SequentialAgent "
                        "(deprecated there in favour of Workflow) logs which sub-agent runs "
                        "in the session's events, and run_async given the invocation's id "
                        "rebuilds its progress from those events, the conversation history, "
                        "not from a record; whether a resumed sub-agent calls its tool again "
                        "is the model's answer to the history it is shown, and this "
                        "profile's scripts do not script the model, so the adapter would "
                        "decide it. The resume scenarios (PS-006, PS-007, PS-009) could "
                        "judge the rest, but a runtime declares this profile whole, so the "
                        "record, hand-off, knowledge and export scenarios would run and fail "
                        "for want of a feature instead of being n/a. The MemoryService is "
                        "storage ADK calls only when application code does (add_memory, "
                        "delete_memory by id) or a memory tool searches it: a MemoryEntry "
                        "has no subject, no provenance beyond author and timestamp, no "
                        "recheck date, trust or origin, and ADK has no cap, confirmation "
                        "gate or instruction check, so every durable-knowledge rule would "
                        "judge the adapter"),
)

LIBRARY = Library(
    module=__name__,
    extra=EXTRA,
    pins=_STORES.pins,
    order=_STORES.order,
    runtimes=(("google-adk", google_adk_runtime.__name__),),
    runtime_targets=(
        RuntimeEntry(
            "google-adk", "google-adk", "Google ADK: Runner with a SessionService",
            ("google-adk", "google-genai"), "google_adk",
            "ADK's retry options configure the Gemini client, which the kit's fake model "
            "replaces, so the adapter translates no retry: the point needing one is not run.",
            _LACKS,
        ),
    ),
)
"""ADK's Runner as a runtime: its name, extra (the stores') and runtime target."""
