"""pydantic-ai (``pydantic-ai-slim``, module ``pydantic_ai``) as a runtime.

``memconform run --runtime pydantic-ai`` and ``memconform fingerprint
--runtime pydantic-ai`` judge a pydantic-ai ``Agent`` used with its
``ConversationStore`` the way pydantic-ai documents it: before each run the
caller loads the conversation (``store.load(id)``, or a new ``Conversation``),
runs the agent with it (``agent.run(prompt, conversation=...)``) and saves the
run's result (``store.save(result)``). The agent itself never writes: the
save is the caller's, after the run returned. The runtime is named in
:data:`memconform.adapters.registry.BUILTIN_RUNTIMES` (the factory is
:func:`pydantic_ai_runtime`).

How it depends on the kit
-------------------------
The adapter implements the kit's ``Runtime`` protocol
(:class:`memconform.simulator.runtime.Runtime`: ``profiles`` and
``execute(script, env)``) and touches nothing but the
:class:`~memconform.harness.environment.Environment` the kit hands it: it
imports neither the simulator nor its save policies. Each piece of
pydantic-ai is plugged into one piece of the environment:

- the agent's model is pydantic-ai's ``FunctionModel`` over the kit's fake
  model, ``env.model("agent", request)``: the request shows the model
  pydantic-ai's messages as kit messages (``role``, ``text``, ``tool_call`` /
  ``tool_result`` parts), the scripted step becomes a ``ModelResponse`` (a
  ``TextPart`` for the reply, a ``ToolCallPart`` per tool call with the
  script's ids), a scripted failure is raised inside the model function.
  A streamed run uses the model's stream function (the reply as one text
  delta, each tool call as one tool-call delta);
- the agent's tools are pydantic-ai ``Tool`` objects (``Tool.from_schema``,
  any JSON arguments), one per tool of the script, each calling
  ``env.tool(name, args, call_id)``. A tool error goes to pydantic-ai's own
  tool-error hook, a capability's ``on_tool_execute_error``, which calls the
  script's ``tool_error`` hook: an allowing hook raises ``ToolFailed`` (the
  way pydantic-ai reports a failed tool to the model: a ``ToolReturnPart``
  with ``outcome='failed'``), a terminating one re-raises the tool's error
  (what pydantic-ai does without the hook: the run fails with it), a failing
  one raises inside the hook;
- a tool call the script marks ``needs_approval`` raises pydantic-ai's
  ``ApprovalRequired`` until the call is approved: the run ends with
  ``DeferredToolRequests`` as its output (the agent's output type allows it),
  which the caller sees as ``suspended`` with the pending calls; a
  ``resume`` run passes ``DeferredToolResults`` (an approval, or a
  ``ToolDenied`` with the reason) with the loaded conversation;
- the script's ``run_end`` hook is pydantic-ai's run-end hook, the same
  capability's ``after_run`` (called with the run's result, a paused run's
  included): a failing hook raises there, so ``agent.run`` raises it; a
  cancelling one calls ``ctx.cancel()``, which pydantic-ai honours at the
  run's exit (``RunCancelled``);
- a run the script cancels before its N-th model call is driven with
  ``agent.iter`` and cancelled by the caller (``AgentRun.cancel()``) when the
  N-th model-request node is next, before it runs: the run ends with
  ``RunCancelled`` (outcome ``cancelled``). ``agent.iter`` takes no stream
  handler, so a streamed run with a scripted cancellation is ``unsupported``;
- a streamed run passes an ``event_stream_handler`` to ``agent.run``: each
  piece of answer text pydantic-ai streams (a text part's start, then its
  deltas) is a ``chunk`` event on the timeline;
- the conversation store (:class:`KitConversationStore`, a subclass of
  ``pydantic_ai.conversation_store.ConversationStore``) keeps the
  conversation in ``env.store`` (the kit's recording proxy): its entries are
  the thread's messages, one kit message per pydantic-ai message (the
  message itself, as ``ModelMessagesTypeAdapter`` dumps it, kept in the
  metadata under :data:`MESSAGE_KEY`), and one ``write_record`` with new
  entries is one ``append`` of one batch. The record is derived from the
  stored thread (its head is the last stored message, its revision names the
  stored count and head); what a record carries besides its head (the
  conversation's usage and the deferred tool requests a paused run waits on)
  travels in the metadata of the batch's last message (:data:`RECORD_KEY`).
  The entry ids pydantic-ai mints are not kept: the kit's messages get the
  kit's deterministic ids, and the entries read back carry those. A save that
  would branch (new entries not following the stored head) is a rewrite the
  kit's append-only store cannot take: it is put on the timeline as a
  ``rewrite`` event and raises :class:`ConversationRewriteError`; deleting a
  conversation raises (the kit's store never removes messages).

Translate, never fix
--------------------
pydantic-ai has no save-policy setting (``policies`` is empty): a script's
``save_policy`` is not passed anywhere. What is saved is what the documented
loop saves: the whole run in one batch after it completed or paused, nothing
when ``agent.run`` raised or was cancelled (the caller's save never runs). The
adapter declares the optional hooks it translates
(:attr:`PydanticAIRuntime.hooks`: tool errors, the run-end hook,
cancellation, approvals, streaming); a failure point needing another is
``unsupported``, never emulated: pydantic-ai has no input or output
guardrail (an output validator can only ask the model again or fail the
run, it cannot block an answer), and no retry of a failed model request
unless a capability raises ``RetryModelRequest`` (the agent has none by
default). It stamps no run ids or rounds (it ``provides`` nothing) and returns
only what the caller of ``agent.run`` sees: each run's outcome, reply, error
and pending tool calls, never the model's calls or the messages the run made.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from memconform.adapters.libraries import library_versions, require
from memconform.adapters.libraries.description import Library, RuntimeEntry
from memconform.adapters.libraries.framework import (
    FrameworkRuntime,
    approval_ids,
    suspended_report,
    unsupported_report,
)
from memconform.adapters.libraries.framework import outcome_report as _report
from memconform.adapters.libraries.framework import run_error as _error_of
from memconform.contract import StoreError
from memconform.values import JSONValue, Message, freeze_json

__all__ = [
    "LIBRARY",
    "MESSAGE_KEY",
    "MODEL_COMPONENT",
    "RECORD_KEY",
    "ConversationRewriteError",
    "PydanticAIRuntime",
    "kit_fields",
    "pydantic_ai_runtime",
]

EXTRA = "pydantic-ai"
MODEL_COMPONENT = "agent"
"""The fake-model component the agent's model calls (as in the save-policy scripts)."""
MESSAGE_KEY = "pydantic_ai_message"
"""The metadata key holding the pydantic-ai message (its JSON dump) a stored message stands for."""
RECORD_KEY = "pydantic_ai_record"
"""The metadata key, on a batch's last message, holding what the conversation's record
carries besides its head: ``usage`` and ``deferred_tool_requests`` (JSON dumps)."""


class ConversationRewriteError(StoreError):
    """A save branched off the stored history (the kit's store only appends)."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        return "".join(item if isinstance(item, str) else "" for item in content)
    return "" if content is None else json.dumps(content, sort_keys=True, default=str)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def kit_fields(message: Any) -> tuple[str, str, tuple[JSONValue, ...]]:
    """The kit role, text and parts of one pydantic-ai message (``ModelRequest`` or
    ``ModelResponse``): a response is the assistant's (its text parts, a ``tool_call``
    part per tool call); a request holding tool returns or tool retries is a tool
    message (a ``tool_result`` part each, ``error`` for a failed or retried call), one
    holding a user prompt is the user's, one holding only system prompts the system's."""
    parts = list(getattr(message, "parts", ()))
    if getattr(message, "kind", "") == "response":
        text = "".join(p.content for p in parts if getattr(p, "part_kind", "") == "text")
        calls = tuple(
            freeze_json({"type": "tool_call", "id": p.tool_call_id, "name": p.tool_name,
                         "args": _plain(p.args_as_dict())})
            for p in parts if getattr(p, "part_kind", "") == "tool-call")
        return "assistant", text, calls
    results: list[JSONValue] = []
    texts: dict[str, list[str]] = {"tool": [], "user": [], "system": []}
    for part in parts:
        kind = getattr(part, "part_kind", "")
        if kind == "tool-return":
            body = _text_of(part.content)
            failed = getattr(part, "outcome", "success") != "success"
            results.append(freeze_json({"type": "tool_result", "call_id": part.tool_call_id,
                                        "name": part.tool_name,
                                        "error" if failed else "result": body}))
            texts["tool"].append(body)
        elif kind == "retry-prompt" and getattr(part, "tool_name", None):
            body = part.model_response()
            results.append(freeze_json({"type": "tool_result", "call_id": part.tool_call_id,
                                        "name": part.tool_name, "error": body}))
            texts["tool"].append(body)
        elif kind in ("user-prompt", "retry-prompt"):
            texts["user"].append(_text_of(part.content) if kind == "user-prompt"
                                 else part.model_response())
        elif kind == "system-prompt":
            texts["system"].append(_text_of(part.content))
    for role in ("tool", "user", "system"):
        if texts[role]:
            return role, "\n".join(texts[role]), tuple(results)
    return "user", "", tuple(results)


def _request(messages: Sequence[Any]) -> JSONValue:
    shown = []
    for message in messages:
        role, text, parts = kit_fields(message)
        shown.append({"role": role, "text": text, "parts": list(parts)})
    return freeze_json({"messages": shown})


class _Run:
    """Per-execution state shared by the model, the tools and the store, and the
    agent and conversation store the runs go through."""

    def __init__(self, env: Any, thread: str, script: Mapping[str, Any]) -> None:
        self.env = env
        self.thread = thread
        self.approvals = approval_ids(script, MODEL_COMPONENT)
        self.agent: Any = None
        self.store: Any = None


def _build_types() -> dict[str, Any]:
    """The pydantic-ai classes the adapter subclasses, made once pydantic-ai is imported."""
    stores = require("pydantic_ai.conversation_store", EXTRA)
    capabilities = require("pydantic_ai.capabilities", EXTRA)
    exceptions = require("pydantic_ai.exceptions", EXTRA)
    messages_mod = require("pydantic_ai.messages", EXTRA)
    usage_mod = require("pydantic_ai.usage", EXTRA)
    deferred = require("pydantic_ai.tools", EXTRA)
    pydantic = require("pydantic", EXTRA)
    usage_json = pydantic.TypeAdapter(usage_mod.RunUsage)
    deferred_json = pydantic.TypeAdapter(deferred.DeferredToolRequests | None)
    adapter = messages_mod.ModelMessagesTypeAdapter

    class KitConversationStore(stores.ConversationStore):  # type: ignore[misc,name-defined]
        """pydantic-ai's conversation store over the kit's store: one ``write_record``
        with new entries = one batch."""

        def __init__(self, run: _Run) -> None:
            self._run = run

        def _stored(self) -> list[Message]:
            return list(self._run.env.store.messages(self._run.thread))

        def _record(self, conversation_id: str, stored: list[Message]) -> Any:
            if not stored:
                return None
            carried = next((dict(m.metadata).get(RECORD_KEY) for m in reversed(stored)
                            if isinstance(dict(m.metadata).get(RECORD_KEY), Mapping)), None)
            carried = carried if isinstance(carried, Mapping) else {}
            return stores.ConversationRecord(
                conversation_id=conversation_id,
                head_id=stored[-1].id,
                usage=usage_json.validate_python(_plain(carried.get("usage") or {})),
                deferred_tool_requests=deferred_json.validate_python(
                    _plain(carried.get("deferred_tool_requests"))),
                revision=_revision(stored),
                updated_at=self._run.env.clock.now_datetime(),
            )

        def _entries(self, stored: list[Message]) -> list[Any]:
            entries, parent = [], None
            for message in stored:
                kept = dict(message.metadata).get(MESSAGE_KEY)
                found = (adapter.validate_python([_plain(kept)])[0] if isinstance(kept, Mapping)
                         else _foreign(message, messages_mod))
                entries.append(stores.ConversationEntry(id=message.id, parent_id=parent,
                                                        message=found))
                parent = message.id
            return entries

        async def read_record(self, conversation_id: str) -> Any:
            if conversation_id != self._run.thread:
                return None
            return self._record(conversation_id, self._stored())

        async def read_records(self, *, scope: str | None = None,
                               limit: int | None = None) -> Sequence[Any]:
            record = await self.read_record(self._run.thread)
            found = [record] if record is not None and (scope is None or record.scope == scope) \
                else []
            return found[:limit] if limit is not None else found

        async def read_history(self, head_id: str | None, *,
                               limit: int | None = None) -> list[Any]:
            entries = self._entries(self._stored())
            ids = [entry.id for entry in entries]
            if head_id is None:
                return []
            if head_id not in ids:
                raise LookupError(head_id)
            upto = entries[: ids.index(head_id) + 1]
            return upto[max(0, len(upto) - limit):] if limit is not None else upto

        async def read_entry(self, entry_id: str) -> Any:
            for entry in self._entries(self._stored()):
                if entry.id == entry_id:
                    return entry
            raise LookupError(entry_id)

        async def write_record(self, record: Any, *, new_entries: Sequence[Any] = (),
                               expected_revision: str | None) -> None:
            env = self._run.env
            stored = self._stored()
            current = self._record(record.conversation_id, stored)
            if (current.revision if current is not None else None) != expected_revision:
                raise stores.ConversationConflict(record.conversation_id)
            head = stored[-1].id if stored else None
            if not new_entries:
                if record.head_id != head:
                    self._rewrite(len(stored), record.head_id)
                return  # nothing new: no batch
            if new_entries[0].parent_id != head:
                self._rewrite(len(stored), new_entries[0].parent_id)
            carried = {
                "usage": _plain(usage_json.dump_python(record.usage, mode="json")),
                "deferred_tool_requests": _plain(deferred_json.dump_python(
                    record.deferred_tool_requests, mode="json")),
            }
            batch = []
            for i, entry in enumerate(new_entries):
                role, text, parts = kit_fields(entry.message)
                metadata: dict[str, Any] = {
                    MESSAGE_KEY: _plain(adapter.dump_python([entry.message], mode="json")[0])}
                if i == len(new_entries) - 1:
                    metadata[RECORD_KEY] = carried
                batch.append(Message(id=env.ids.next("msg"), role=role,  # type: ignore[arg-type]
                                     text=text, parts=parts, metadata=freeze_json(metadata)))
            env.store.append(self._run.thread, batch)

        def _rewrite(self, stored: int, parent: Any) -> None:
            self._run.env.emit("rewrite", thread=self._run.thread, stored=stored,
                               parent=None if parent is None else str(parent))
            raise ConversationRewriteError(
                f"the save branches off the stored history at {parent!r} "
                f"(it holds {stored} messages); the kit's store only appends")

        async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
            raise StoreError("delete: the kit's store never removes stored messages")

    class ScriptHooks(capabilities.AbstractCapability):  # type: ignore[misc,name-defined]
        """pydantic-ai's tool-error and run-end hooks calling the script's ``tool_error``
        and ``run_end`` hooks."""

        def __init__(self, run: _Run) -> None:
            self._run = run

        async def after_run(self, ctx: Any, *, result: Any) -> Any:
            output = result.output
            verdict = self._run.env.hook("run_end", freeze_json(
                {"reply": output if isinstance(output, str) else None}))
            if verdict.get("action") == "cancel":
                ctx.cancel()  # honoured at the run's exit: RunCancelled
            return result

        async def on_tool_execute_error(self, ctx: Any, *, call: Any, tool_def: Any,
                                        args: Any, error: Exception) -> Any:
            failure = _error_of(error)
            verdict = self._run.env.hook("tool_error", freeze_json(
                {"tool": call.tool_name, "error": failure}))
            if verdict.get("action") == "terminate":
                raise error  # as without the hook: the run fails with it
            raise exceptions.ToolFailed(f"{failure['type']}: {failure['message']}")

    return {"store": KitConversationStore, "hooks": ScriptHooks,
            "messages": messages_mod}


def _revision(stored: Sequence[Message]) -> str:
    """The revision of a stored thread: it changes with every append."""
    return f"{len(stored)}:{stored[-1].id}" if stored else "0:"


def _foreign(message: Message, messages_mod: Any) -> Any:
    """A kit message another writer stored, as the pydantic-ai message of its role."""
    if message.role == "assistant":
        return messages_mod.ModelResponse(parts=[messages_mod.TextPart(content=message.text)])
    if message.role == "system":
        return messages_mod.ModelRequest(
            parts=[messages_mod.SystemPromptPart(content=message.text)])
    return messages_mod.ModelRequest(parts=[messages_mod.UserPromptPart(content=message.text)])


class PydanticAIRuntime(FrameworkRuntime[_Run]):
    """A pydantic-ai ``Agent`` saved through :class:`KitConversationStore` as pydantic-ai
    documents it (load, run, save), for ``save-policy`` scripts."""

    framework = "pydantic-ai"
    hooks = frozenset({"tool_error", "approval", "stream", "run_end", "cancel"})
    """The optional hooks pydantic-ai has and the adapter translates (see the module)."""

    policies: frozenset[str] = frozenset()
    """The save policies pydantic-ai implements: none (it has no save-policy setting;
    the README's fingerprint says which policy it comes nearest)."""

    def __init__(self) -> None:
        self._pydantic_ai: Any = require("pydantic_ai", EXTRA)
        self._function = require("pydantic_ai.models.function", EXTRA)
        self._types = _build_types()
        self.version = library_versions("pydantic-ai-slim", "pydantic-graph")

    async def start(self, script: Mapping[str, Any], env: Any, thread: str) -> _Run:
        """One agent and one :class:`KitConversationStore` for every run of the script."""
        run = _Run(env, thread, script)
        run.agent = self._agent(script, run)
        run.store = self._types["store"](run)
        return run

    def _agent(self, script: Mapping[str, Any], run: _Run) -> Any:
        pai = self._pydantic_ai
        function = self._function
        messages_mod = self._types["messages"]
        env = run.env

        def step(messages: list[Any]) -> Mapping[str, Any]:
            return env.model(MODEL_COMPONENT, _request(messages))  # type: ignore[no-any-return]

        def respond(messages: list[Any], info: Any) -> Any:
            answer = step(messages)
            parts: list[Any] = []
            if answer.get("reply") or not answer.get("tool_calls"):
                parts.append(messages_mod.TextPart(content=str(answer.get("reply") or "")))
            for call in answer.get("tool_calls") or []:
                parts.append(messages_mod.ToolCallPart(
                    tool_name=str(call["name"]), args=dict(call.get("args") or {}),
                    tool_call_id=str(call.get("id") or env.ids.next("call"))))
            return messages_mod.ModelResponse(parts=parts)

        async def stream(messages: list[Any], info: Any) -> AsyncIterator[Any]:
            answer = step(messages)
            if answer.get("reply") or not answer.get("tool_calls"):
                yield str(answer.get("reply") or "")
            for i, call in enumerate(answer.get("tool_calls") or []):
                yield {i: function.DeltaToolCall(
                    name=str(call["name"]),
                    json_args=json.dumps(call.get("args") or {}, sort_keys=True),
                    tool_call_id=str(call.get("id") or env.ids.next("call")))}

        tools = [self._tool(str(name), run) for name in (script.get("tools") or {})]
        return pai.Agent(
            function.FunctionModel(respond, stream_function=stream, model_name="memconform"),
            tools=tools,
            output_type=[str, pai.DeferredToolRequests],
            capabilities=[self._types["hooks"](run)],
        )

    def _tool(self, name: str, run: _Run) -> Any:
        pai = self._pydantic_ai
        env = run.env

        async def invoke(ctx: Any, **args: Any) -> str:
            call_id = ctx.tool_call_id
            if call_id in run.approvals and not ctx.tool_call_approved:
                raise pai.ApprovalRequired()
            result = env.tool(name, freeze_json(args), call_id)
            return result if isinstance(result, str) else json.dumps(result, sort_keys=True)

        return pai.Tool.from_schema(
            invoke, name=name, description=f"the scripted tool {name}",
            json_schema={"type": "object", "properties": {}, "additionalProperties": True},
            takes_ctx=True,
        )

    async def run_one(self, run: _Run, script: Mapping[str, Any], spec: Any) -> JSONValue:
        """One run (an input, or a resume answering deferred tool calls): the
        conversation loaded, the agent run on it, the result saved."""
        pai = self._pydantic_ai
        agent, store = run.agent, run.store
        if not isinstance(spec, Mapping):
            return unsupported_report("a run must be an object")
        options: dict[str, Any] = {"run_id": run.env.ids.next("run")}
        if isinstance(spec.get("input"), str):
            options["user_prompt"] = spec["input"]
        elif isinstance(spec.get("resume"), Mapping):
            options["deferred_tool_results"] = self._answers(dict(spec["resume"]), store, run)
        else:
            return unsupported_report("the adapter translates runs with an input or a resume")
        cancel_at = spec.get("cancel_before_model_call")
        if spec.get("stream", script.get("stream", False)):
            if cancel_at is not None:
                return unsupported_report(
                    "agent.iter, which a cancellation needs, takes no stream handler")
            options["event_stream_handler"] = _chunks(run, self._types["messages"])
        try:
            conversation = await store.load(run.thread) or pai.Conversation(
                conversation_id=run.thread)
            if "deferred_tool_results" in options:
                options["deferred_tool_results"] = options["deferred_tool_results"](conversation)
            if cancel_at is None:
                result = await agent.run(conversation=conversation, **options)
            else:
                result = await _cancelled_before(agent, int(cancel_at), conversation, options)
            await store.save(result)
        except pai.RunCancelled as exc:  # the run stopped because the caller asked it to
            return _report("cancelled", None, None, _error_of(exc))
        except Exception as exc:  # the caller of agent.run (or of save) sees it raise
            return _report("failed", None, None, _error_of(exc))
        output = result.output
        if isinstance(output, pai.DeferredToolRequests):
            return suspended_report([
                {"id": call.tool_call_id, "name": call.tool_name,
                 "args": _plain(call.args_as_dict())}
                for call in [*output.approvals, *output.calls]])
        return _report("completed", None, str(output), None)

    def _answers(self, answer: dict[str, Any], store: Any, run: _Run) -> Any:
        """The ``DeferredToolResults`` a resume run passes, made from the loaded
        conversation's pending requests: each approval approved or denied."""
        pai = self._pydantic_ai

        def build(conversation: Any) -> Any:
            pending = conversation.deferred_tool_requests
            calls = list(pending.approvals) if pending is not None else []
            if answer.get("approved"):
                verdict: Any = True
            else:
                verdict = pai.ToolDenied(str(answer.get("reason") or "not approved"))
            return pai.DeferredToolResults(approvals={c.tool_call_id: verdict for c in calls})

        return build


async def _cancelled_before(agent: Any, call: int, conversation: Any,
                            options: dict[str, Any]) -> Any:
    """Drive the run with ``agent.iter`` and cancel it (``AgentRun.cancel()``) when its
    ``call``-th model request is the next node, before that request runs: the
    caller's cancellation, which ends the run with ``RunCancelled``."""
    requests = 0
    async with agent.iter(conversation=conversation, **options) as agent_run:
        async for node in agent_run:
            if type(agent).is_model_request_node(node):
                requests += 1
                if requests == call:
                    agent_run.cancel()
    return agent_run.result


def _chunks(run: _Run, messages_mod: Any) -> Any:
    """The ``event_stream_handler`` putting each streamed piece of answer text on the timeline."""

    async def handle(ctx: Any, events: AsyncIterator[Any]) -> None:
        async for event in events:
            text = ""
            if isinstance(event, messages_mod.PartStartEvent) and isinstance(
                    event.part, messages_mod.TextPart):
                text = event.part.content
            elif isinstance(event, messages_mod.PartDeltaEvent) and isinstance(
                    event.delta, messages_mod.TextPartDelta):
                text = event.delta.content_delta
            if text:
                run.env.emit("chunk", text=text)

    return handle


def pydantic_ai_runtime() -> PydanticAIRuntime:
    """The factory ``memconform run --runtime pydantic-ai`` builds."""
    return PydanticAIRuntime()


_LACKS = (
    ("turns", "pydantic-ai keeps a conversation's messages and nothing else: no turn "
              "records, windows or digests"),
    ("strict-write", "pydantic-ai has no task writes or digests apart from the conversation"),
    ("candidates", "pydantic-ai extracts no memory candidates"),
    ("persisted-state", "pydantic-ai keeps no working state or knowledge beside the "
                        "conversation store (its step persistence is a separate package, "
                        "not installed with the pinned extra)"),
)

LIBRARY = Library(
    module=__name__,
    extra=EXTRA,
    pins=("pydantic-ai-slim==2.68.0", "pydantic-graph==2.68.0"),
    order=3,
    runtimes=(("pydantic-ai", pydantic_ai_runtime.__name__),),
    runtime_targets=(
        RuntimeEntry(
            "pydantic-ai", "pydantic-ai", "pydantic-ai: Agent saved through its ConversationStore",
            ("pydantic-ai-slim", "pydantic-graph"), "pydantic_ai",
            "pydantic-ai has no input or output guardrail (an output validator can ask the "
            "model again or fail the run, not block an answer) and retries no failed model "
            "request unless a capability asks it to (the agent has none): the points needing "
            "them are not run.",
            _LACKS,
        ),
    ),
)
"""A pydantic-ai Agent as a runtime: its name, extra and runtime target (pydantic-ai
keeps no store the kit certifies)."""
