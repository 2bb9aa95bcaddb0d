"""LangGraph's prebuilt ReAct agent (``langgraph``, ``langgraph-prebuilt``) as a runtime.

``memconform run --runtime langgraph`` and ``memconform fingerprint --runtime
langgraph`` judge the graph ``langgraph.prebuilt.create_react_agent`` builds,
compiled with a checkpointer: what LangGraph itself saves when a run
completes, fails or is interrupted. LangGraph offers three durability modes
(``langgraph.types.Durability``): ``async`` (its default), ``sync`` and
``exit``. Each is a runtime of its own, named in
:data:`memconform.adapters.registry.BUILTIN_RUNTIMES`: ``langgraph`` (the
default mode, no ``durability`` passed), ``langgraph:async``,
``langgraph:sync`` and ``langgraph:exit``.

How it depends on the kit
-------------------------
The adapter implements the kit's ``Runtime`` protocol
(:class:`memconform.simulator.runtime.Runtime`: ``profiles`` and
``execute(script, env)``) and touches nothing but the
:class:`~memconform.harness.environment.Environment` the kit hands it: it
imports neither the simulator nor its save policies. Each piece of LangGraph
is plugged into one piece of the environment:

- the agent's chat model (:class:`KitChatModel`, a langchain-core
  ``BaseChatModel``) calls the kit's fake model, ``env.model("agent",
  request)``; the request shows the model LangGraph's messages as kit
  messages (``role``, ``text``, ``tool_call`` / ``tool_result`` parts), the
  scripted step becomes an ``AIMessage`` (its ``tool_calls`` carry the
  script's ids), a scripted failure is raised inside the model call.
  ``bind_tools`` returns the model itself: the fake model knows its tools;
- the agent's tools are ``StructuredTool`` objects, one per tool of the
  script, each calling ``env.tool(name, args, call_id)``; they run in a
  ``ToolNode`` whose ``handle_tool_errors`` handler is the script's
  ``tool_error`` hook: an allowing hook gives LangGraph's own error text
  (``TOOL_CALL_ERROR_TEMPLATE``, as ``handle_tool_errors=True`` would), a
  terminating one re-raises the tool's error (LangGraph's default for any
  error but an argument-validation one), a failing one raises inside the
  handler;
- a tool call the script marks ``needs_approval`` calls LangGraph's
  ``interrupt()`` in its tool before running it: the run stops ``suspended``
  with the pending call, and a ``resume`` run sends ``Command(resume=...)``;
  a denied call's result is the denial. A resume run on a fresh instance
  knows the waiting calls from its ``continuation`` (the kit's default: the
  pending tool-call ids the caller was told), since the model step marking
  them belongs to the earlier part of the script;
- the checkpointer (:class:`KitSaver`, an ``InMemorySaver`` LangGraph works
  on) writes the ``messages`` channel to ``env.store`` (the kit's recording
  proxy). A checkpoint holds the whole message list, so each ``put`` is
  diffed against the thread the store holds: the messages after the stored
  ones are appended as one batch (no batch when nothing is new); a
  checkpoint whose list does not start with the stored messages (an earlier
  message changed, removed or reordered) is a rewrite the kit's append-only
  store cannot take: it is put on the timeline as a ``rewrite`` event and the
  ``put`` raises :class:`CheckpointRewriteError`, so the run shows it.
  Reading a checkpoint back (``get_tuple``) takes its ``messages`` from the
  store, so the store under test is the one the next run reads;
- the rest of LangGraph's checkpoint (the checkpoints themselves with their
  channel versions, the other channels' values, and the pending writes:
  a finished task's writes before its step's checkpoint, ``__error__`` and
  ``__interrupt__`` markers) is LangGraph's bookkeeping, not the thread's
  messages. When the store declares ``state``, the saver keeps it in the
  store's working state, one JSON entry per thread
  (:func:`checkpoint_scope`, key :data:`CHECKPOINT_KEY`; LangGraph's own
  serialized bytes as base64, the ``messages`` channel left out), read once
  per ``execute`` before LangGraph's first read and written after each
  ``put``, ``put_writes`` and ``delete_thread`` with compare-and-set: a fresh
  instance, in this process or another, resumes an interrupted thread as
  LangGraph does with any durable checkpointer. The store is the only
  durable place the environment gives, and its working state is the place
  the contract has for a job's bookkeeping; these calls are on the timeline
  like any other, and none is an ``append`` or a ``record_error`` (an
  ``__error__`` write holds only one task's exception, not a run's
  messages). On a store without ``state`` the bookkeeping lives only in the
  saver's memory, so a resume on a fresh instance finds no checkpoint
  (LangGraph starts the thread over, which the saver reports as a rewrite).
  A thread the saver never checkpointed,
  written by another writer, starts without a checkpoint;
- a streamed run is LangGraph's ``astream`` with the ``messages`` mode: each
  piece of an answer it yields is a ``chunk`` event on the timeline.

Translate, never fix
--------------------
LangGraph has no save-policy setting: a script's ``save_policy`` is not passed
anywhere, and the adapter declares no save policies
(:attr:`LangGraphRuntime.policies` is empty). The adapter declares the optional hooks it translates
(:attr:`LangGraphRuntime.hooks`: tool errors, approvals, streaming); a
failure point needing another (guardrails, a run-end hook, cancellation; the
prebuilt agent sets no retry policy on its model node) is ``unsupported``,
never emulated. It stamps no run ids or rounds
(it ``provides`` nothing) and returns only what LangGraph's caller sees: each
run's outcome, reply, error and pending tool calls, never the model's calls
or the messages the run made.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

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
from memconform.adapters.libraries.langgraph import LIBRARY as _STORES
from memconform.values import JSONValue, Message, freeze_json

__all__ = [
    "CHECKPOINT_KEY",
    "DURABILITIES",
    "LIBRARY",
    "MESSAGE_KEY",
    "MODEL_COMPONENT",
    "CheckpointRewriteError",
    "LangGraphRuntime",
    "checkpoint_scope",
    "kit_message",
    "langgraph_async_runtime",
    "langgraph_exit_runtime",
    "langgraph_runtime",
    "langgraph_sync_runtime",
]

EXTRA = "langgraph"
MODEL_COMPONENT = "agent"
"""The fake-model component the agent's model calls (as in the save-policy scripts)."""
CHECKPOINT_KEY = "checkpoint"
"""The working-state key (in :func:`checkpoint_scope`) of LangGraph's bookkeeping."""
MESSAGE_KEY = "langgraph_message"
"""The metadata key holding the langchain-core message (``message_to_dict``) a stored
message stands for."""
DURABILITIES = ("async", "sync", "exit")
"""LangGraph's durability modes (``langgraph.types.Durability``); ``async`` is its default."""


class CheckpointRewriteError(Exception):
    """A checkpoint changed messages the store already holds (the kit's store only appends)."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
        )
    return "" if content is None else str(content)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def _args(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return _plain(raw)


def kit_fields(message: Any) -> tuple[str, str, tuple[JSONValue, ...]]:
    """The kit role, text and parts of one langchain-core message."""
    kind = getattr(message, "type", "")
    text = _text_of(getattr(message, "content", ""))
    if kind == "human":
        return "user", text, ()
    if kind == "system":
        return "system", text, ()
    if kind == "tool":
        part: dict[str, Any] = {"type": "tool_result",
                                "call_id": getattr(message, "tool_call_id", None),
                                "name": getattr(message, "name", None)}
        part["error" if getattr(message, "status", "") == "error" else "result"] = text
        return "tool", text, (freeze_json(part),)
    calls = tuple(
        freeze_json({"type": "tool_call", "id": c.get("id"), "name": c.get("name"),
                     "args": _args(c.get("args", {}))})
        for c in getattr(message, "tool_calls", None) or []
    )
    return "assistant", text, calls


def kit_message(message: Any, message_id: str, messages_mod: Any) -> Message:
    """The kit message standing for one langchain-core message (kept in its metadata)."""
    role, text, parts = kit_fields(message)
    kept = _plain(messages_mod.message_to_dict(message))
    return Message(id=message_id, role=role, text=text, parts=parts,  # type: ignore[arg-type]
                   metadata=freeze_json({MESSAGE_KEY: kept}))


def _request(messages: Sequence[Any]) -> JSONValue:
    shown = []
    for message in messages:
        role, text, parts = kit_fields(message)
        shown.append({"role": role, "text": text, "parts": list(parts)})
    return freeze_json({"messages": shown})


class _Run:
    """Per-execution state shared by the model, the tools and the saver, and the
    agent graph the runs go through with its config."""

    def __init__(self, env: Any, thread: str, script: Mapping[str, Any]) -> None:
        self.env = env
        self.thread = thread
        self.approvals = approval_ids(script, MODEL_COMPONENT) | _awaited(script)
        self.graph: Any = None
        self.config: dict[str, Any] = {}


def _awaited(script: Mapping[str, Any]) -> set[str]:
    """The tool-call ids a resume's continuation names: the calls its caller was
    told are waiting for approval (the model step that marked them belongs to
    an earlier part of the script, run by another instance)."""
    ids: set[str] = set()
    for spec in script.get("runs") or []:
        resume = spec.get("resume") if isinstance(spec, Mapping) else None
        held = resume.get("continuation") if isinstance(resume, Mapping) else None
        calls = held.get("tool_call_ids") if isinstance(held, Mapping) else None
        ids |= {str(c) for c in calls or () if c is not None}
    return ids


def _build_types() -> dict[str, Any]:
    """The LangGraph and langchain-core classes the adapter subclasses."""
    chat_models = require("langchain_core.language_models.chat_models", EXTRA)
    outputs = require("langchain_core.outputs", EXTRA)
    messages_mod = require("langchain_core.messages", EXTRA)
    memory = require("langgraph.checkpoint.memory", EXTRA)
    base = require("langgraph.checkpoint.base", EXTRA)
    pydantic = require("pydantic", EXTRA)

    class KitChatModel(chat_models.BaseChatModel):  # type: ignore[misc,name-defined]
        """A langchain-core chat model over the kit's fake model."""

        run: Any = pydantic.Field(default=None, exclude=True)

        @property
        def _llm_type(self) -> str:
            return "memconform-fake"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> Any:
            env = self.run.env
            step = env.model(MODEL_COMPONENT, _request(messages))
            calls = [
                {"name": str(c["name"]), "args": dict(c.get("args") or {}),
                 "id": str(c.get("id") or env.ids.next("call")), "type": "tool_call"}
                for c in step.get("tool_calls") or []
            ]
            reply = messages_mod.AIMessage(content=str(step.get("reply") or ""),
                                           tool_calls=calls, id=env.ids.next("lc"))
            return outputs.ChatResult(generations=[outputs.ChatGeneration(message=reply)])

        async def _agenerate(self, messages: list[Any], stop: Any = None,
                             run_manager: Any = None, **kwargs: Any) -> Any:
            return self._generate(messages, stop, run_manager, **kwargs)

    class KitSaver(memory.InMemorySaver):  # type: ignore[misc,name-defined]
        """LangGraph's in-memory saver whose ``messages`` channel lives in the kit's store."""

        def __init__(self, run: _Run) -> None:
            super().__init__()
            self._run = run
            self._durable = "state" in run.env.store.capabilities
            self._loaded = False
            self._version: int | None = None

        def _load(self) -> None:
            """Take the thread's bookkeeping from the store's working state, once."""
            if self._loaded or not self._durable:
                return
            self._loaded = True
            entry = self._run.env.store.read_state(checkpoint_scope(self._run.thread),
                                                   CHECKPOINT_KEY)
            if entry is not None:
                self._version = entry.version
                _restore(self, self._run.thread, entry.value)

        def _save(self) -> None:
            """Write the thread's bookkeeping to the store's working state."""
            if not self._durable:
                return
            entry = self._run.env.store.write_state(
                checkpoint_scope(self._run.thread), CHECKPOINT_KEY,
                _bookkeeping(self, self._run.thread), self._version)
            self._version = entry.version

        def _stored(self) -> list[Any]:
            stored = self._run.env.store.messages(self._run.thread)
            found = []
            for message in stored:
                kept = dict(message.metadata).get(MESSAGE_KEY)
                if isinstance(kept, Mapping):
                    found.append(messages_mod.messages_from_dict([_plain(kept)])[0])
                else:  # written by someone else: the kit message as LangChain's
                    found.append(_foreign(message, messages_mod))
            return found

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            self._load()
            values = checkpoint.get("channel_values") or {}
            if "messages" in values:
                self._append_new(list(values["messages"]))
            saved = super().put(config, checkpoint, metadata, new_versions)
            self._save()
            return saved

        def put_writes(self, config: Any, writes: Any, task_id: str,
                       task_path: str = "") -> None:
            self._load()
            super().put_writes(config, writes, task_id, task_path)
            self._save()

        def delete_thread(self, thread_id: str) -> None:
            self._load()
            super().delete_thread(thread_id)
            self._save()

        def _append_new(self, snapshot: list[Any]) -> None:
            env = self._run.env
            stored = [_plain(messages_mod.message_to_dict(m)) for m in self._stored()]
            mine = [_plain(messages_mod.message_to_dict(m)) for m in snapshot]
            if mine[:len(stored)] != stored:
                changed = next((i for i, (a, b) in enumerate(zip(stored, mine, strict=False))
                                if a != b), min(len(stored), len(mine)))
                env.emit("rewrite", thread=self._run.thread, index=changed,
                         stored=len(stored), checkpoint=len(mine))
                raise CheckpointRewriteError(
                    f"the checkpoint changes stored message {changed} of {len(stored)} "
                    f"(it holds {len(mine)}); the kit's store only appends")
            new = snapshot[len(stored):]
            if new:
                env.store.append(self._run.thread, [
                    kit_message(m, env.ids.next("msg"), messages_mod) for m in new])

        def get_tuple(self, config: Any) -> Any:
            self._load()
            found = super().get_tuple(config)
            if found is None or "messages" not in found.checkpoint.get("channel_versions", {}):
                return found
            checkpoint = {**found.checkpoint, "channel_values": {
                **found.checkpoint["channel_values"], "messages": self._stored()}}
            return base.CheckpointTuple(found.config, checkpoint, found.metadata,
                                        found.parent_config, found.pending_writes)

    return {"model": KitChatModel, "saver": KitSaver, "messages": messages_mod}


def checkpoint_scope(thread: str) -> str:
    """The working-state scope holding the LangGraph bookkeeping of ``thread``."""
    return f"langgraph/{thread}"


def _blob(typed: tuple[str, bytes]) -> list[JSONValue]:
    return [typed[0], base64.b64encode(typed[1]).decode("ascii")]


def _unblob(kept: Any) -> tuple[str, bytes]:
    return str(kept[0]), base64.b64decode(str(kept[1]))


def _bookkeeping(saver: Any, thread: str) -> JSONValue:
    """What ``saver`` holds for ``thread`` but its ``messages`` channel, as JSON:
    its checkpoints (serialized by LangGraph, kept as base64), their pending
    writes and their channels' values by version."""
    checkpoints = [
        [ns, cid, _blob(checkpoint), _blob(metadata), parent]
        for ns, by_id in saver.storage.get(thread, {}).items()
        for cid, (checkpoint, metadata, parent) in by_id.items()
    ]
    writes = [
        [ns, cid, task, idx, channel, _blob(value), path]
        for (owner, ns, cid), by_task in saver.writes.items() if owner == thread
        for (task, idx), (_, channel, value, path) in by_task.items()
    ]
    blobs = [
        [ns, channel, version, _blob(value)]
        for (owner, ns, channel, version), value in saver.blobs.items()
        if owner == thread and channel != "messages"
    ]
    return freeze_json({"checkpoints": checkpoints, "writes": writes, "blobs": blobs})


def _restore(saver: Any, thread: str, kept: Any) -> None:
    """Put :func:`_bookkeeping`'s JSON back into ``saver`` (LangGraph's own layout)."""
    if not isinstance(kept, Mapping):
        return
    for ns, cid, checkpoint, metadata, parent in kept.get("checkpoints") or ():
        saver.storage[thread][ns][cid] = (_unblob(checkpoint), _unblob(metadata), parent)
    for ns, cid, task, idx, channel, value, path in kept.get("writes") or ():
        saver.writes[(thread, ns, cid)][(task, idx)] = (task, channel, _unblob(value), path)
    for ns, channel, version, value in kept.get("blobs") or ():
        saver.blobs[(thread, ns, channel, version)] = _unblob(value)


def _foreign(message: Message, messages_mod: Any) -> Any:
    """A kit message another writer stored, as the langchain-core message of its role."""
    if message.role == "user":
        return messages_mod.HumanMessage(content=message.text, id=message.id)
    if message.role == "system":
        return messages_mod.SystemMessage(content=message.text, id=message.id)
    if message.role == "tool":
        call = next((p.get("call_id") for p in message.parts if isinstance(p, Mapping)), "")
        return messages_mod.ToolMessage(content=message.text, tool_call_id=str(call or ""),
                                        id=message.id)
    return messages_mod.AIMessage(content=message.text, id=message.id)


class LangGraphRuntime(FrameworkRuntime[_Run]):
    """``create_react_agent`` with a :class:`KitSaver`, for ``save-policy`` scripts,
    under one durability mode (``None``: LangGraph's default)."""

    framework = "langgraph"
    hooks = frozenset({"tool_error", "approval", "stream"})
    """The optional hooks LangGraph has and the adapter translates (see the module)."""

    policies: frozenset[str] = frozenset()
    """The save policies LangGraph implements: none. The prebuilt agent takes no
    save-policy setting; a durability mode is fixed when the runtime is built and
    says when LangGraph writes its checkpoints, never which of document 000's
    policies a script configures, so every scenario configuring one is
    ``unsupported`` (the fingerprint says which policy each mode comes nearest)."""

    def __init__(self, durability: str | None = None) -> None:
        if durability is not None and durability not in DURABILITIES:
            raise ValueError(f"durability must be one of {', '.join(DURABILITIES)}")
        self.durability = durability
        self._prebuilt = require("langgraph.prebuilt", EXTRA)
        self._langgraph_types = require("langgraph.types", EXTRA)
        self._tools = require("langchain_core.tools", EXTRA)
        self._types = _build_types()
        self.version = library_versions("langgraph", "langgraph-prebuilt", "langchain-core")

    async def start(self, script: Mapping[str, Any], env: Any, thread: str) -> _Run:
        """One agent graph over one :class:`KitSaver` for every run of the script."""
        run = _Run(env, thread, script)
        run.graph = self._graph(script, run)
        run.config = {"configurable": {"thread_id": thread},
                      "recursion_limit": 2 * int(script.get("max_rounds", 8)) + 2}
        return run

    def _graph(self, script: Mapping[str, Any], run: _Run) -> Any:
        env = run.env
        tools = [self._tool(str(name), argument_names(script, str(name), MODEL_COMPONENT), run)
                 for name in (script.get("tools") or {})]

        def on_tool_error(error: Exception) -> str:
            verdict = env.hook("tool_error", freeze_json(
                {"tool": getattr(error, "tool", None),
                 "error": {"type": _error_of(error)["type"], "message": str(error)}}))
            if verdict.get("action") == "terminate":
                raise error  # as without a handler: the graph ends with it
            return str(self._prebuilt.tool_node.TOOL_CALL_ERROR_TEMPLATE.format(
                error=repr(error)))

        node = self._prebuilt.ToolNode(tools, handle_tool_errors=on_tool_error)
        with warnings.catch_warnings():
            # deprecated for langchain's create_agent, which the pinned extra does not
            # install; the graph it builds is the one LangGraph 1.x users run
            warnings.simplefilter("ignore", DeprecationWarning)
            return self._prebuilt.create_react_agent(
                self._types["model"](run=run), node, checkpointer=self._types["saver"](run),
            )

    def _tool(self, name: str, names: Sequence[str], run: _Run) -> Any:
        env = run.env
        tools = self._tools
        interrupt = self._langgraph_types.interrupt
        messages_mod = self._types["messages"]
        pydantic = require("pydantic", EXTRA)
        fields: dict[str, Any] = {n: (Any, None) for n in names if n.isidentifier()}
        fields["tool_call_id"] = (Annotated[str, tools.InjectedToolCallId], ...)
        schema = pydantic.create_model(f"{name}_arguments", **fields)

        async def invoke(tool_call_id: str, **args: Any) -> Any:
            given = {k: v for k, v in args.items() if v is not None}
            if tool_call_id in run.approvals:
                answer = interrupt({"tool": name, "call_id": tool_call_id, "args": given})
                if not (isinstance(answer, Mapping) and answer.get("approved")):
                    reason = answer.get("reason") if isinstance(answer, Mapping) else None
                    return messages_mod.ToolMessage(
                        content=f"ToolApprovalDenied: {reason or 'not approved'}",
                        tool_call_id=tool_call_id, name=name, status="error",
                        id=env.ids.next("lc"))
            try:
                result = env.tool(name, freeze_json(given), tool_call_id)
            except Exception as exc:
                exc.tool = name  # type: ignore[attr-defined]  # for the tool-error hook
                raise
            text = result if isinstance(result, str) else json.dumps(result, sort_keys=True)
            return messages_mod.ToolMessage(content=text, tool_call_id=tool_call_id,
                                            name=name, id=env.ids.next("lc"))

        return tools.StructuredTool.from_function(
            coroutine=invoke, name=name, description=f"the scripted tool {name}",
            args_schema=schema, infer_schema=False,
        )

    async def run_one(self, run: _Run, script: Mapping[str, Any], spec: Any) -> JSONValue:
        """One run (an input, or a resume answering an interrupt) streamed through the graph."""
        graph, config = run.graph, run.config
        if not isinstance(spec, Mapping):
            return unsupported_report("a run must be an object")
        messages_mod = self._types["messages"]
        if isinstance(spec.get("input"), str):
            given: Any = {"messages": [messages_mod.HumanMessage(
                content=spec["input"], id=run.env.ids.next("lc"))]}
        elif isinstance(spec.get("resume"), Mapping):
            given = self._langgraph_types.Command(resume=dict(spec["resume"]))
        else:
            return unsupported_report("the adapter translates runs with an input or a resume")
        streamed = bool(spec.get("stream", script.get("stream", False)))
        modes = ["values", "updates", *(["messages"] if streamed else [])]
        options: dict[str, Any] = {"stream_mode": modes}
        if self.durability is not None:
            options["durability"] = self.durability
        last: Any = None
        pending: list[JSONValue] = []
        try:
            async for mode, chunk in graph.astream(given, config, **options):
                if mode == "values":
                    last = chunk
                elif mode == "updates" and isinstance(chunk, Mapping):
                    for interrupt in chunk.get("__interrupt__") or ():
                        pending.append(freeze_json(_plain(getattr(interrupt, "value", None))))
                elif mode == "messages":
                    piece, _ = chunk
                    text = _text_of(getattr(piece, "content", ""))
                    if getattr(piece, "type", "") in ("ai", "AIMessageChunk") and text:
                        run.env.emit("chunk", text=text)
        except Exception as exc:  # LangGraph's caller sees the run raise
            return _report("failed", None, None, _error_of(exc))
        if pending:
            return suspended_report([
                {"id": p.get("call_id"), "name": p.get("tool"), "args": p.get("args")}
                if isinstance(p, Mapping) else p for p in pending])
        final = (last or {}).get("messages") or [] if isinstance(last, Mapping) else []
        reply = _text_of(final[-1].content) if final and final[-1].type == "ai" else None
        return _report("completed", None, reply, None)


def langgraph_runtime() -> LangGraphRuntime:
    """``--runtime langgraph``: LangGraph's default durability (``async``, not passed)."""
    return LangGraphRuntime()


def langgraph_async_runtime() -> LangGraphRuntime:
    """``--runtime langgraph:async``: ``durability="async"`` passed explicitly."""
    return LangGraphRuntime("async")


def langgraph_sync_runtime() -> LangGraphRuntime:
    """``--runtime langgraph:sync``: each checkpoint saved before the next step starts."""
    return LangGraphRuntime("sync")


def langgraph_exit_runtime() -> LangGraphRuntime:
    """``--runtime langgraph:exit``: checkpoints saved only when the graph exits."""
    return LangGraphRuntime("exit")


_LACKS = (
    ("turns", "the prebuilt agent keeps the thread's messages in checkpoints: no turn "
              "records, windows or digests"),
    ("strict-write", "the prebuilt agent has no task writes or digests apart from the "
                     "checkpointed messages"),
    ("candidates", "the prebuilt agent extracts no memory candidates (its long-term store "
                   "is written only by code the caller adds)"),
    ("persisted-state", "the prebuilt agent keeps no job record and writes no fact. Its graph "
                        "state is the messages and the step budget, checkpointed as its "
                        "durability mode says; a record with steps, statuses and values "
                        "exists only in a graph the caller builds, whose nodes decide what it "
                        "holds (LangGraph would checkpoint it, let a person edit it with "
                        "update_state and stop after a node with interrupt_after), so the "
                        "record rules would judge the adapter's nodes, not LangGraph. Its "
                        "long-term store (BaseStore) is written only by the caller's code (a "
                        "node, or a tool given the store through InjectedStore): an item is a "
                        "JSON value under a namespace and key, replaced by a put on that key, "
                        "removed by delete, stamped with the store's own created_at and "
                        "updated_at (wall clock) and, where the store supports a TTL, "
                        "deleted once it expires; no "
                        "provenance, recheck date, trust, origin, cap, confirmation gate or "
                        "instruction check is LangGraph's"),
)
_HOOKS = (
    "The prebuilt agent has no input or output guardrail, no run-end hook and no "
    "cancellation hook, and sets no retry policy on its model node: the points needing "
    "them are not run."
)
_PACKAGES = ("langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
                       "langchain-core")

LIBRARY = Library(
    module=__name__,
    extra=EXTRA,
    pins=_STORES.pins,
    order=_STORES.order,
    runtimes=(
        # LangGraph's prebuilt ReAct agent under its default durability, then each mode by name.
        ("langgraph", langgraph_runtime.__name__),
        ("langgraph:async", langgraph_async_runtime.__name__),
        ("langgraph:sync", langgraph_sync_runtime.__name__),
        ("langgraph:exit", langgraph_exit_runtime.__name__),
    ),
    runtime_targets=(
        RuntimeEntry("langgraph", "langgraph",
                     "LangGraph: prebuilt ReAct agent, default durability (async)", _PACKAGES,
                     "langgraph", _HOOKS, _LACKS),
        RuntimeEntry("langgraph-sync", "langgraph:sync",
                     "LangGraph: prebuilt ReAct agent, durability sync", _PACKAGES,
                     "langgraph", _HOOKS, _LACKS),
        RuntimeEntry("langgraph-exit", "langgraph:exit",
                     "LangGraph: prebuilt ReAct agent, durability exit", _PACKAGES,
                     "langgraph", _HOOKS, _LACKS),
    ),
)
"""The prebuilt agent as a runtime: its names, extra (the stores') and runtime targets."""
