"""The OpenAI Agents SDK (``openai-agents``, module ``agents``) as a runtime.

``memconform run --runtime openai-agents`` and ``memconform fingerprint
--runtime openai-agents`` judge the SDK's ``Runner`` with a ``Session``: what
the SDK itself writes to a session when a run completes, fails or is blocked.
The runtime is named in :data:`memconform.adapters.registry.BUILTIN_RUNTIMES`
(the factory is :func:`openai_agents_runtime`).

How it depends on the kit
-------------------------
The adapter implements the kit's ``Runtime`` protocol
(:class:`memconform.simulator.runtime.Runtime`: ``profiles`` and
``execute(script, env)``) and touches nothing but the
:class:`~memconform.harness.environment.Environment` the kit hands it, as
any runtime must: it imports neither the simulator nor its save policies.
Each piece of the SDK is plugged into one piece of the environment:

- the SDK's ``Model`` (:class:`KitModel`, a subclass of
  ``agents.models.interface.Model``) calls the kit's fake model,
  ``env.model("agent", request)``; the request shows the model the SDK's input
  items as kit messages (``role`` and ``text``), the scripted step becomes the
  SDK's output items (a ``function_call`` per tool call, a ``message`` for the
  text), a scripted failure is raised inside the SDK's model call;
- the SDK's tools are ``FunctionTool`` objects, one per tool of the script,
  made by ``agents.function_tool`` (parameters: the argument names the script's
  model passes), each calling ``env.tool(name, args, call_id)``; the script's
  ``tool_error`` hook is the tool's ``failure_error_function``: an allowing
  hook keeps the SDK's default (``default_tool_error_function`` turns the error
  into the tool's output), a terminating one re-raises the tool's error as
  the SDK does without a handler, a failing one raises inside the handler;
- the SDK's ``Session`` (:class:`KitSession`, a subclass of
  ``agents.memory.session.SessionABC``) writes to ``env.store`` (the kit's
  recording proxy): one ``add_items`` call is one ``append`` of one batch,
  each item one :class:`~memconform.values.Message` (a user or assistant
  message, an assistant message holding a ``tool_call`` part for a
  ``function_call`` item, a tool message holding a ``tool_result`` part for a
  ``function_call_output`` item). The item itself travels in the message's
  metadata (:data:`ITEM_KEY`) so ``get_items`` gives the SDK back exactly what
  it wrote. ``pop_item`` and ``clear_session`` would remove stored messages,
  which the kit's store cannot do: they raise, and the run shows it.
- the script's ``input_guardrail`` and ``output_guardrail`` hooks are the
  agent's ``InputGuardrail`` and ``OutputGuardrail`` (SDK defaults kept: the
  input guardrail runs in parallel with the first model call); a ``block``
  trips the wire, a scripted failure raises inside the guardrail.

Translate, never fix
--------------------
The SDK has one save behaviour and no save-policy setting: a script's
``save_policy`` is not passed anywhere. The adapter declares the optional hooks
it translates (:attr:`OpenAIAgentsRuntime.hooks`); a failure point needing any
other (run-end hook, cancellation, approvals, streaming,
retries) is ``unsupported``, never emulated. The adapter stamps no run ids or
rounds (it ``provides`` nothing) and returns only what the SDK's caller sees:
each run's outcome, reply and error, never the model's calls or the messages
the run made.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any

from memconform.adapters.libraries import library_versions, require
from memconform.adapters.libraries.description import Library, RuntimeEntry
from memconform.adapters.libraries.framework import (
    FrameworkRuntime,
    argument_names,
    unsupported_report,
)
from memconform.adapters.libraries.framework import outcome_report as _report
from memconform.adapters.libraries.framework import run_error as _error_of
from memconform.adapters.libraries.openai_agents import LIBRARY as _STORES
from memconform.contract import StoreError
from memconform.values import JSONValue, Message, freeze_json

__all__ = [
    "ITEM_KEY",
    "LIBRARY",
    "MODEL_COMPONENT",
    "OpenAIAgentsRuntime",
    "item_roles",
    "message_from_item",
    "openai_agents_runtime",
]

EXTRA = "openai-agents"
MODEL_COMPONENT = "agent"
"""The fake-model component the agent's model calls (as in the save-policy scripts)."""
ITEM_KEY = "openai_agents_item"
"""The metadata key holding the SDK item a stored message stands for."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return "" if content is None else str(content)


def _plain(item: Any) -> dict[str, Any]:
    """An SDK item (a dict or a pydantic model) as a JSON dict."""
    if isinstance(item, Mapping):
        plain: dict[str, Any] = json.loads(json.dumps(dict(item), default=str))
        return plain
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        dumped: dict[str, Any] = json.loads(json.dumps(dump(exclude_unset=True), default=str))
        return dumped
    raise StoreError(f"session item is {type(item).__name__}, not an item")


def item_roles(item: Mapping[str, Any]) -> tuple[str, str, tuple[JSONValue, ...]]:
    """The kit role, text and parts of one SDK item."""
    kind = item.get("type", "message")
    if kind == "function_call":
        args: Any = item.get("arguments") or "{}"
        with contextlib.suppress(TypeError, ValueError):
            args = json.loads(args)
        part = {"type": "tool_call", "id": item.get("call_id"), "name": item.get("name"),
                "args": args}
        return "assistant", "", (freeze_json(part),)
    if kind == "function_call_output":
        output = _text_of(item.get("output"))
        part = {"type": "tool_result", "call_id": item.get("call_id"), "result": output}
        return "tool", output, (freeze_json(part),)
    if kind == "message":
        role = str(item.get("role", "assistant"))
        return ("assistant" if role not in ("user", "system") else role,
                _text_of(item.get("content")), ())
    return "assistant", "", (freeze_json({"type": str(kind)}),)


def message_from_item(item: Any, message_id: str) -> Message:
    """The kit message standing for one SDK item (the item kept in its metadata)."""
    plain = _plain(item)
    role, text, parts = item_roles(plain)
    return Message(id=message_id, role=role, text=text, parts=parts,  # type: ignore[arg-type]
                   metadata=freeze_json({ITEM_KEY: plain}))


def _request_messages(items: Sequence[Mapping[str, Any]]) -> list[JSONValue]:
    """What the model is shown, as kit messages: consecutive function calls of
    one model response make one assistant message."""
    shown: list[dict[str, Any]] = []
    for item in items:
        role, text, parts = item_roles(item)
        if (parts and item.get("type") == "function_call" and shown
                and shown[-1]["role"] == "assistant" and shown[-1]["parts"]
                and all(p.get("type") == "tool_call" for p in shown[-1]["parts"])):
            shown[-1]["parts"].append(parts[0])
            continue
        shown.append({"role": role, "text": text, "parts": list(parts)})
    return [freeze_json(m) for m in shown]


class _Run:
    """Per-run state shared by the model, tools and guardrails."""

    def __init__(self, env: Any, thread: str) -> None:
        self.env = env
        self.thread = thread


def _build_sdk_types(agents: Any) -> dict[str, Any]:
    """The SDK classes the adapter subclasses, made once the SDK is imported."""
    interface = require("agents.models.interface", EXTRA)
    session_mod = require("agents.memory.session", EXTRA)
    responses = require("openai.types.responses", EXTRA)
    usage_mod = require("agents.usage", EXTRA)

    class KitModel(interface.Model):  # type: ignore[misc,name-defined]
        """The SDK's ``Model`` over the kit's fake model."""

        def __init__(self, run: _Run) -> None:
            self._run = run

        async def get_response(self, system_instructions: Any, input: Any,
                               model_settings: Any, tools: Any, output_schema: Any,
                               handoffs: Any, tracing: Any, **_: Any) -> Any:
            items = ([{"type": "message", "role": "user", "content": input}]
                     if isinstance(input, str) else [_plain(i) for i in input])
            request = {"messages": _request_messages(items)}
            env = self._run.env
            step = env.model(MODEL_COMPONENT, freeze_json(request))
            output: list[Any] = []
            reply = str(step.get("reply") or "")
            calls = step.get("tool_calls") or []
            if reply or not calls:
                output.append(responses.ResponseOutputMessage(
                    id=env.ids.next("item"), type="message", role="assistant",
                    status="completed",
                    content=[responses.ResponseOutputText(
                        text=reply, type="output_text", annotations=[])],
                ))
            for call in calls:
                call_id = str(call.get("id") or env.ids.next("call"))
                output.append(responses.ResponseFunctionToolCall(
                    id=call_id, call_id=call_id, type="function_call",
                    name=str(call["name"]),
                    arguments=json.dumps(call.get("args", {}), sort_keys=True),
                ))
            return agents.items.ModelResponse(
                output=output, usage=usage_mod.Usage(), response_id=None,
            )

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the adapter does not translate streaming")

    class KitSession(session_mod.SessionABC):  # type: ignore[misc,name-defined]
        """The SDK's ``Session`` over the kit's store: one ``add_items`` = one batch."""

        def __init__(self, run: _Run) -> None:
            self.session_id = run.thread
            self.session_settings = None
            self._run = run

        async def get_items(self, limit: int | None = None) -> list[Any]:
            env = self._run.env
            stored = env.store.messages(self._run.thread, limit)
            items = []
            for message in stored:
                item = dict(message.metadata).get(ITEM_KEY)
                if not isinstance(item, Mapping):
                    item = {"type": "message", "role": message.role, "content": message.text}
                items.append(json.loads(json.dumps(item)))
            return items

        async def add_items(self, items: list[Any]) -> None:
            if not items:
                return
            env = self._run.env
            batch = [message_from_item(item, env.ids.next("msg")) for item in items]
            env.store.append(self._run.thread, batch)

        async def pop_item(self) -> Any:
            raise StoreError("pop_item: the kit's store never removes a stored message")

        async def clear_session(self) -> None:
            raise StoreError("clear_session: the kit's store never removes stored messages")

    return {"model": KitModel, "session": KitSession}


class OpenAIAgentsRuntime(FrameworkRuntime[_Run]):
    """The SDK's ``Runner.run`` with a :class:`KitSession`, for ``save-policy`` scripts."""

    framework = "openai-agents"
    hooks = frozenset({"input_guardrail", "output_guardrail", "tool_error"})
    """The optional hooks the SDK has and the adapter translates (see the module)."""

    policies: frozenset[str] = frozenset()
    """The save policies the SDK implements: none. It has no save-policy setting,
    and its fingerprint (README) matches none of ``message``, ``turn`` and
    ``run``: nearest ``message`` with 11 of 18 points differing (it never calls
    ``record_error``, keeps the input when the input guardrail trips). So every
    scenario configuring a policy is ``unsupported`` and it claims no
    save-policy class; scenarios configuring none still run and are judged."""

    def __init__(self) -> None:
        self._agents: Any = require("agents", EXTRA)
        self._types = _build_sdk_types(self._agents)
        self.version = library_versions("openai-agents")

    async def start(self, script: Mapping[str, Any], env: Any, thread: str) -> _Run:
        """The runs' shared state; each run builds its agent and session afresh."""
        return _Run(env, thread)

    def _agent(self, script: Mapping[str, Any], run: _Run) -> Any:
        agents = self._agents
        env = run.env

        def tool(name: str) -> Any:
            async def invoke(ctx: Any, **_: Any) -> str:
                args = json.loads(getattr(ctx, "tool_arguments", None) or "{}")
                result = env.tool(name, freeze_json(args), getattr(ctx, "tool_call_id", None))
                return result if isinstance(result, str) else json.dumps(result, sort_keys=True)

            def on_error(ctx: Any, error: Exception) -> str:
                verdict = env.hook("tool_error", freeze_json(
                    {"tool": name, "error": {"type": type(error).__name__,
                                             "message": str(error)}}))
                if verdict.get("action") == "terminate":
                    raise error  # as with failure_error_function=None: the run ends with it
                text: str = agents.default_tool_error_function(ctx, error)
                return text

            _signed(agents, invoke, argument_names(script, name))
            return agents.function_tool(invoke, name_override=name, strict_mode=False,
                                        failure_error_function=on_error)

        def guard(kind: str, text_of: Any) -> Any:
            async def check(ctx: Any, agent: Any, value: Any) -> Any:
                verdict = env.hook(kind, freeze_json({"text": text_of(value)}))
                return agents.GuardrailFunctionOutput(
                    output_info=verdict, tripwire_triggered=verdict.get("action") == "block",
                )
            return check

        return agents.Agent(
            name="memconform",
            instructions=None,
            model=self._types["model"](run),
            tools=[tool(str(name)) for name in (script.get("tools") or {})],
            input_guardrails=[agents.InputGuardrail(
                guardrail_function=guard("input_guardrail", _input_text), name="input")],
            output_guardrails=[agents.OutputGuardrail(
                guardrail_function=guard("output_guardrail", str), name="output")],
        )

    async def run_one(self, run: _Run, script: Mapping[str, Any], spec: Any) -> JSONValue:
        """One run through ``Runner.run`` with a fresh agent and :class:`KitSession`."""
        agents = self._agents
        if not isinstance(spec, Mapping) or not isinstance(spec.get("input"), str):
            return unsupported_report("the adapter translates only runs with an input")
        agent = self._agent(script, run)
        session = self._types["session"](run)
        try:
            result = await agents.Runner.run(
                agent, spec["input"], session=session,
                run_config=agents.RunConfig(tracing_disabled=True),
                max_turns=int(script.get("max_rounds", 10)),
            )
        except agents.InputGuardrailTripwireTriggered as exc:
            return _report("blocked", "input", _verdict_text(exc.guardrail_result), None)
        except agents.OutputGuardrailTripwireTriggered as exc:
            return _report("blocked", "output", _verdict_text(exc.guardrail_result), None)
        except Exception as exc:  # the SDK's caller sees the run raise
            return _report("failed", None, None, _error_of(exc))
        return _report("completed", None, str(result.final_output), None)


def _signed(agents: Any, invoke: Any, names: Sequence[str]) -> None:
    """Give ``invoke`` the signature ``function_tool`` reads its parameters from:
    the run context, then each argument (any JSON value, optional)."""
    context = agents.RunContextWrapper[Any]
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=context)]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=Any, default=None)
               for n in names if n.isidentifier()]
    invoke.__signature__ = inspect.Signature(params, return_annotation=str)
    invoke.__annotations__ = {"ctx": context, **{p.name: Any for p in params[1:]},
                              "return": str}


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "\n".join(_text_of(_plain(i).get("content")) for i in value)


def _verdict_text(result: Any) -> JSONValue:
    info = getattr(getattr(result, "output", None), "output_info", None)
    return info.get("text") if isinstance(info, Mapping) else None


def openai_agents_runtime() -> OpenAIAgentsRuntime:
    """The factory ``memconform run --runtime openai-agents`` builds."""
    return OpenAIAgentsRuntime()


_LACKS = (
    ("turns", "the SDK keeps a session's items and nothing else: no turn records, windows "
              "or digests beyond the items themselves"),
    ("strict-write", "the SDK has no task writes or digests apart from the session items"),
    ("candidates", "the SDK has no memory candidates to extract, gate or promote"),
    ("persisted-state", "the SDK keeps no working state or knowledge beside the session "
                        "(its run state can be serialised by the caller, not stored by it)"),
)

LIBRARY = Library(
    module=__name__,
    extra=EXTRA,
    pins=_STORES.pins,
    order=_STORES.order,
    runtimes=(("openai-agents", openai_agents_runtime.__name__),),
    runtime_targets=(
        RuntimeEntry(
            "openai-agents", "openai-agents", "OpenAI Agents SDK: Runner with a Session",
            ("openai-agents", "openai"), "openai_agents",
            "The SDK has run hooks, streaming (Runner.run_streamed), tool approvals and model "
            "retry settings, which the adapter does not translate yet: the points needing a "
            "run-end hook, cancellation, approval, streaming or retries are not run (never "
            "emulated).",
            _LACKS,
        ),
    ),
)
"""The SDK's Runner as a runtime: its name, extra (the stores') and runtime target."""
