#!/usr/bin/env node
// LangGraph for JavaScript (`@langchain/langgraph`, pinned in package.json:
// 1.7.3, with `@langchain/core` 1.4.0; checkpoint package
// `@langchain/langgraph-checkpoint` as the lock file resolves it) as a
// memconform runtime, over the stdio runtime protocol
// (spec/runtime-protocol.md):
//
//   memconform run --runtime "stdio:node node/frameworks/langgraph-runtime.mjs"
//   --profile save-policy
//
// It judges the graph LangGraph.js's prebuilt ReAct agent builds
// (`createReactAgent` from `@langchain/langgraph/prebuilt`) compiled with a
// checkpointer: what LangGraph itself saves when a run completes, fails or is
// interrupted. It is the JavaScript twin of the Python adapter
// memconform/adapters/libraries/langgraph_runtime.py. Run `npm ci` in
// node/frameworks first.
//
// What it drives
// --------------
// One `createReactAgent({ llm, tools, checkpointer })` per script, with
// nothing else passed: no prompt, no pre/post-model hook, no response format,
// no interruptBefore/After, version "v1" (its default), and the ToolNode the
// prebuilt agent builds itself from the tool list (so its `handleToolErrors`
// keeps LangGraph.js's default, `true`). Each run is one `graph.stream(input,
// { configurable: { thread_id }, recursionLimit, streamMode })` with
// LangGraph's default durability (none passed: "async"). A durability named
// after the command (`langgraph-runtime.mjs sync`, `... exit`, `... async`) is
// passed as `durability`, as the Python twin's `langgraph:sync` and
// `langgraph:exit` runtimes do, and the runtime's name then ends
// `:<durability>`. `recursionLimit` is 2 * max_rounds + 2 (the script's
// `max_rounds`, 8 when absent), as in the Python twin: one model step and one
// tool step per round, plus the last answer. `createReactAgent` is marked
// deprecated in favour of langchain's `createAgent`, which is not installed
// here; the graph it builds is the one LangGraph.js 1.x ships in its prebuilt
// module.
//
// - Model: `KitChatModel`, a langchain-core `BaseChatModel`. Every `_generate`
//   is one `env.model("agent", {messages})`, the messages being LangGraph's
//   messages as kit messages (a human message is `user`, an AI message
//   `assistant` with a `tool_call` part per call, a tool message `tool` with
//   one `tool_result` part, `error` in place of `result` when its status is
//   "error"). The scripted step becomes an `AIMessage` with the reply as
//   content and the scripted calls as `tool_calls`. The message gets no id
//   from the adapter: LangGraph's `messagesStateReducer` gives it a uuid, as
//   it gives any message that has none. A scripted failure is thrown out of
//   `_generate` as a provider's error (an Error named by the scripted type,
//   with its message, `status` and the scripted object as `error`). No retry
//   is added: langchain-core's `BaseChatModel` retries nothing itself (a
//   provider integration would use its own client's retries) and the
//   prebuilt agent sets no retry policy on its model node. `bindTools`
//   returns the model bound with the tools in its call options, as provider
//   models do; the fake model does not read them (it follows the script).
// - Tools: each scripted tool is a langchain-core `tool()` with a JSON schema
//   whose properties are the argument names the script's model passes; it
//   calls `env.tool(name, args, callId)` with the id of the tool call
//   LangGraph hands it. A scripted failure is thrown out of the tool (an Error
//   named by the scripted type); what happens next is LangGraph's: the
//   ToolNode's default `handleToolErrors` turns it into an error ToolMessage
//   ("Error: <message>\n Please fix your mistakes.") and the agent goes on. No
//   handler is installed: LangGraph.js's ToolNode takes only a boolean there,
//   so the script's `tool_error` hook has nothing native to stand for (not
//   declared; the points needing it are not run).
// - Approvals: a tool call the script marks `needs_approval` (or that a
//   resume's `continuation` names) calls LangGraph's `interrupt()` in its tool
//   before running it: the run's stream ends with an `__interrupt__` update
//   and the run is `suspended` with the pending call; a `resume` run sends
//   `new Command({ resume })` with the script's resume object. A denied call's
//   tool returns an error ToolMessage whose text is the adapter's
//   ("ToolApprovalDenied: <reason>"), since LangGraph leaves a denial's wording
//   to the tool.
// - Streaming: a streamed run adds LangGraph's "messages" stream mode; each
//   piece of AI text it yields is a `chunk` event on the timeline. The fake
//   model does not stream, so LangGraph yields each answer as one piece.
// - Checkpointer: `KitSaver`, LangGraph's `MemorySaver` whose `messages`
//   channel lives in the kit's store (as the Python twin's saver does):
//   * `put` compares the checkpoint's message list with the thread the store
//     holds: as `getTuple` last read it (LangGraph calls `getTuple` at the
//     start of every run, and the saver reads the thread there even when no
//     checkpoint exists), followed by the saver's own acknowledged appends
//     since. So a `put` makes no read of its own, as a database-backed saver's
//     `put` is one write. The messages after the stored ones are appended as
//     one `env.store.append` (no call when nothing is new). A checkpoint whose
//     list does not start with the stored messages (an earlier message
//     changed, removed or reordered) is a rewrite the append-only store cannot
//     take: a `rewrite` event goes on the timeline and `put` throws
//     `CheckpointRewriteError`, so the run shows it. Each LangGraph message is
//     one kit message whose id is LangGraph's own message id (the
//     `messagesStateReducer` gives a uuid to every message lacking one); the
//     langchain-core message itself travels in the metadata
//     ("langgraph_message", its stored-message dict), so LangGraph reads back
//     exactly what it wrote.
//   * `getTuple` takes the checkpoint's `messages` from the store, so the
//     store under test is the one the next run reads. A message another
//     writer stored becomes the langchain-core message of its role.
//   * The rest of the checkpoint (the checkpoints with their channel
//     versions, the other channels' values, the pending writes: a finished
//     task's writes, `__error__` and `__interrupt__` markers) is LangGraph's
//     bookkeeping, not the thread's messages. When the store declares
//     `state`, it is kept in the store's working state, one JSON entry per
//     thread (scope `langgraph/<thread>`, key `checkpoint`; LangGraph's own
//     serialized bytes as base64, the messages channel left out), read once
//     before LangGraph's first read and written with compare-and-set after
//     each `put`, `putWrites` and `deleteThread`. So a fresh process resumes
//     an interrupted thread as LangGraph does with any durable checkpointer.
//     On a store without `state` it lives only in the saver's memory.
//   * One `put` of LangGraph is therefore at most one `append` and one
//     `write_state`: two writes where LangGraph made one, because the kit's
//     store contract keeps a thread's messages (append-only) and a job's
//     bookkeeping (working state) apart and has no call writing both. The
//     `append` comes first. The kit's fingerprint counts appends only (its
//     crash points follow acknowledged appends), so the bookkeeping writes
//     move no point; the save-policy scenarios that kill after every
//     acknowledged write do see them.
//   * The saver's own calls are made one at a time, in the order LangGraph
//     asks (LangGraph chains its puts; its `putWrites` may overlap them).
//
// Declarations
// ------------
// profiles ["save-policy"]; policies [] (it implements none: LangGraph has no
// save-policy setting, so a script's `save_policy` is passed nowhere, the
// scenarios configuring one are unsupported and the rest are judged against
// LangGraph's one behaviour, as for the Python twin; no save-policy class is
// claimed); hooks ["approval", "stream"] (`interrupt()` and the "messages"
// stream mode, above; the prebuilt agent has no input or output guardrail, no
// run-end hook, no cancellation hook and no retry policy, and its tool-error
// handling is a boolean, so those points are not run); provides [] (below).
//
// What the adapter supplies
// -------------------------
// - No stored message id: each is the id LangGraph's messages carry (the
//   input, the model's and the tools' messages are made without one and get
//   a uuid from LangGraph's reducer). A tool call's id comes from the script,
//   or, when the script gives none, from `env.ids.next("call")`: what a
//   provider's response carries, the model's and not a stored id.
// - No run ids, rounds or turn ids: stored messages have run_id/round null.
// - The denial text of a refused approval (above).
// - The observation: per run what LangGraph's caller sees from the stream:
//   completed (the last AI message's text), suspended (the interrupts'
//   pending calls) or failed (the thrown error's name and message), and an
//   `outcome` event on the timeline once the stream has ended.

import { readFileSync } from "node:fs";
import { oneAtATime, orThrown, serve, storeCall } from "../runtime.mjs";
import { Command, MemorySaver, interrupt } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
} from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";

const versionOf = (name) =>
  JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), "utf8")).version;
const VERSIONS = ["@langchain/langgraph", "@langchain/langgraph-checkpoint", "@langchain/core"]
  .map((name) => `${name} ${versionOf(name)}`);

// The durability mode, when the command names one (`langgraph-runtime.mjs sync`);
// none: LangGraph's default, not passed.
const DURABILITIES = ["async", "sync", "exit"];
const DURABILITY = process.argv[2] ?? null;
if (DURABILITY !== null && !DURABILITIES.includes(DURABILITY)) {
  process.stderr.write(`langgraph-runtime.mjs: durability must be one of ${DURABILITIES.join(", ")}\n`);
  process.exit(2);
}

const MODEL_COMPONENT = "agent";
const MESSAGE_KEY = "langgraph_message";
const CHECKPOINT_KEY = "checkpoint";
const scopeOf = (thread) => `langgraph/${thread}`;

// -- langchain-core messages and kit messages
// ----------------------------------------------

const plain = (value) => JSON.parse(JSON.stringify(value ?? null));

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part === "object" ? String(part.text ?? "") : String(part))).join("");
  }
  return content == null ? "" : String(content);
}

function argsOf(raw) {
  if (typeof raw !== "string") return plain(raw ?? {});
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** The kit role, text and parts of one langchain-core message. */
function kitFields(message) {
  const kind = message.getType();
  const text = textOf(message.content);
  if (kind === "human") return ["user", text, []];
  if (kind === "system") return ["system", text, []];
  if (kind === "tool") {
    const part = { type: "tool_result", call_id: message.tool_call_id ?? null, name: message.name ?? null };
    part[message.status === "error" ? "error" : "result"] = text;
    return ["tool", text, [part]];
  }
  const calls = (message.tool_calls ?? []).map((call) => ({
    type: "tool_call", id: call.id ?? null, name: call.name ?? null, args: argsOf(call.args),
  }));
  return ["assistant", text, calls];
}

/** A langchain-core message as its stored-message dict (what the metadata keeps). */
const dictOf = (message) => plain(mapChatMessagesToStoredMessages([message])[0]);

/** The kit message standing for one langchain-core message, under LangGraph's id. */
function kitMessage(message) {
  const [role, text, parts] = kitFields(message);
  return {
    id: String(message.id), role, text, parts,
    run_id: null, round: null, turn_id: null, committed: true,
    metadata: { [MESSAGE_KEY]: dictOf(message) },
  };
}

/** A kit message another writer stored, as the langchain-core message of its role. */
function foreign(message) {
  const fields = { content: String(message.text ?? ""), id: String(message.id) };
  if (message.role === "user") return new HumanMessage(fields);
  if (message.role === "system") return new SystemMessage(fields);
  if (message.role === "tool") {
    const part = (message.parts ?? []).find((p) => p && typeof p === "object" && p.call_id != null);
    return new ToolMessage({ ...fields, tool_call_id: String(part?.call_id ?? "") });
  }
  return new AIMessage(fields);
}

function requestOf(messages) {
  return {
    messages: messages.map((message) => {
      const [role, text, parts] = kitFields(message);
      return { role, text, parts };
    }),
  };
}

// -- the chat model over the kit's fake model
// ------------------------------------------

class KitChatModel extends BaseChatModel {
  constructor(env) {
    super({});
    this.env = env;
  }

  _llmType() {
    return "memconform-fake";
  }

  bindTools(tools, kwargs = {}) {
    return this.withConfig({ tools, ...kwargs });
  }

  async _generate(messages) {
    const { env } = this;
    const step = await orThrown(env.model(MODEL_COMPONENT, requestOf(messages)));
    const toolCalls = [];
    for (const call of step?.tool_calls ?? []) {
      toolCalls.push({
        name: String(call.name), args: plain(call.args ?? {}),
        id: String(call.id ?? (await env.ids.next("call"))), type: "tool_call",
      });
    }
    const reply = String(step?.reply ?? "");
    const u = step?.usage ?? {};
    const inputTokens = Number(u.input_tokens ?? 0);
    const outputTokens = Number(u.output_tokens ?? 0);
    const message = new AIMessage({
      content: reply,
      tool_calls: toolCalls,
      usage_metadata: {
        input_tokens: inputTokens, output_tokens: outputTokens,
        total_tokens: Number(u.total_tokens ?? inputTokens + outputTokens),
      },
    });
    return { generations: [{ text: reply, message }] };
  }
}

// -- the checkpointer over the kit's store
// ---------------------------------------------------

const packed = (bytes) => (typeof bytes === "string" ? { text: bytes }
  : { base64: Buffer.from(bytes).toString("base64") });
const unpacked = (kept) => (kept && typeof kept.text === "string" ? kept.text
  : new Uint8Array(Buffer.from(String(kept?.base64 ?? ""), "base64")));

class KitSaver extends MemorySaver {
  constructor(env, thread, durable) {
    super();
    this.env = env;
    this.thread = thread;
    this.durable = durable;
    this.loaded = false;
    this.version = null;
    this.known = null; // the stored messages' dicts, as last read plus the saver's appends
    this.tail = Promise.resolve();
  }

  /** `fn` once every earlier call of the saver has settled. */
  exclusive(fn) {
    const result = this.tail.then(fn);
    this.tail = result.then(() => undefined, () => undefined);
    return result;
  }

  /** Take the thread's bookkeeping from the store's working state, once. */
  async load() {
    if (this.loaded || !this.durable) return;
    this.loaded = true;
    const entry = await storeCall(this.env.store.read_state({ scope: scopeOf(this.thread), key: CHECKPOINT_KEY }));
    if (entry == null) return;
    this.version = entry.version;
    this.restore(entry.value);
  }

  /** Write the thread's bookkeeping to the store's working state. */
  async save() {
    if (!this.durable) return;
    const entry = await storeCall(this.env.store.write_state({
      scope: scopeOf(this.thread), key: CHECKPOINT_KEY,
      value: this.bookkeeping(), expected_version: this.version,
    }));
    this.version = entry.version;
  }

  /** What the saver holds for the thread, its messages channel left out, as JSON. */
  bookkeeping() {
    const checkpoints = [];
    for (const [ns, byId] of Object.entries(this.storage[this.thread] ?? {})) {
      for (const [id, [checkpoint, metadata, parent]] of Object.entries(byId)) {
        checkpoints.push([ns, id, packed(checkpoint), packed(metadata), parent ?? null]);
      }
    }
    const writes = [];
    for (const [outer, byTask] of Object.entries(this.writes)) {
      const [owner] = JSON.parse(outer);
      if (owner !== this.thread) continue;
      for (const [inner, [task, channel, value, path]] of Object.entries(byTask)) {
        writes.push([outer, inner, task, channel, packed(value), path ?? ""]);
      }
    }
    return { checkpoints, writes };
  }

  /** Put `bookkeeping()`'s JSON back into the saver (MemorySaver's own layout). */
  restore(kept) {
    if (!kept || typeof kept !== "object") return;
    for (const [ns, id, checkpoint, metadata, parent] of kept.checkpoints ?? []) {
      this.storage[this.thread] ??= Object.create(null);
      this.storage[this.thread][ns] ??= Object.create(null);
      this.storage[this.thread][ns][id] = [unpacked(checkpoint), unpacked(metadata), parent ?? undefined];
    }
    for (const [outer, inner, task, channel, value, path] of kept.writes ?? []) {
      this.writes[outer] ??= Object.create(null);
      this.writes[outer][inner] = [task, channel, unpacked(value), path];
    }
  }

  /** The thread's stored messages as LangGraph's messages (one read of the store); they
   * become what the saver knows the store holds. */
  async stored() {
    const found = await storeCall(this.env.store.messages({ thread_id: this.thread, limit: null }));
    const messages = found.map((message) => {
      const kept = message?.metadata?.[MESSAGE_KEY];
      return kept && typeof kept === "object" ? mapStoredMessagesToChatMessages([plain(kept)])[0] : foreign(message);
    });
    this.known = messages.map(dictOf);
    return messages;
  }

  /** Append what `snapshot` holds after the messages the store holds: as the saver last
   * read them (`getTuple`), with its own acknowledged appends after them. */
  async appendNew(snapshot) {
    const stored = this.known ?? [];
    const mine = snapshot.map(dictOf);
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    let changed = -1;
    for (let i = 0; i < stored.length; i += 1) {
      if (i >= mine.length || !same(stored[i], mine[i])) {
        changed = i;
        break;
      }
    }
    if (changed >= 0) {
      await this.env.emit("rewrite", { thread: this.thread, index: changed, stored: stored.length, checkpoint: mine.length });
      throw new CheckpointRewriteError(
        `the checkpoint changes stored message ${changed} of ${stored.length} (it holds ${mine.length}); the kit's store only appends`,
      );
    }
    const fresh = snapshot.slice(stored.length);
    if (fresh.length > 0) {
      await storeCall(this.env.store.append({ thread_id: this.thread, batch: fresh.map(kitMessage) }));
      this.known = [...stored, ...mine.slice(stored.length)];
    }
  }

  async put(config, checkpoint, metadata, newVersions) {
    return this.exclusive(async () => {
      await this.load();
      const values = checkpoint.channel_values ?? {};
      let kept = checkpoint;
      if ("messages" in values) {
        await this.appendNew(Array.isArray(values.messages) ? values.messages : [values.messages]);
        const { messages: _left, ...others } = values;
        kept = { ...checkpoint, channel_values: others };
      }
      const saved = await super.put(config, kept, metadata, newVersions);
      await this.save();
      return saved;
    });
  }

  async putWrites(config, writes, taskId, taskPath) {
    return this.exclusive(async () => {
      await this.load();
      await super.putWrites(config, writes, taskId, taskPath);
      await this.save();
    });
  }

  async deleteThread(threadId) {
    return this.exclusive(async () => {
      await this.load();
      await super.deleteThread(threadId);
      await this.save();
    });
  }

  async getTuple(config) {
    return this.exclusive(async () => {
      await this.load();
      const found = await super.getTuple(config);
      const messages = await this.stored();
      if (!found || !("messages" in (found.checkpoint.channel_versions ?? {}))) return found;
      return { ...found, checkpoint: { ...found.checkpoint, channel_values: { ...found.checkpoint.channel_values, messages } } };
    });
  }
}

// -- the agent
// ---------------------------------------------------------------------------

function scriptedCalls(script) {
  const steps = script.model?.[MODEL_COMPONENT] ?? [];
  return (Array.isArray(steps) ? steps : [steps]).flatMap((s) => (s && Array.isArray(s.tool_calls) ? s.tool_calls : []));
}

function argumentNames(script, name) {
  const names = [];
  for (const call of scriptedCalls(script)) {
    if (call?.name !== name || !call.args || typeof call.args !== "object") continue;
    for (const key of Object.keys(call.args)) if (!names.includes(key)) names.push(key);
  }
  return names;
}

/** The tool-call ids waiting for approval: marked by the script's model, or named by a
 * resume's continuation (the calls its caller was told are waiting, when the model step
 * that marked them belongs to an earlier part of the script). */
function approvalIds(script) {
  const ids = new Set();
  for (const call of scriptedCalls(script)) if (call?.needs_approval && call.id != null) ids.add(String(call.id));
  for (const spec of script.runs ?? []) {
    const calls = spec?.resume?.continuation?.tool_call_ids;
    for (const id of Array.isArray(calls) ? calls : []) if (id != null) ids.add(String(id));
  }
  return ids;
}

function kitTool(script, env, approvals, name) {
  const schema = {
    type: "object",
    properties: Object.fromEntries(argumentNames(script, name).map((n) => [n, {}])),
    additionalProperties: true,
  };
  return tool(async (input, runtime) => {
    const callId = runtime?.toolCall?.id ?? runtime?.toolCallId ?? null;
    const args = plain(input ?? {});
    if (callId != null && approvals.has(String(callId))) {
      const answer = interrupt({ tool: name, call_id: callId, args });
      if (!(answer && typeof answer === "object" && answer.approved)) {
        const reason = answer && typeof answer === "object" ? answer.reason : null;
        return new ToolMessage({
          content: `ToolApprovalDenied: ${reason || "not approved"}`,
          tool_call_id: String(callId), name, status: "error",
        });
      }
    }
    const result = await orThrown(env.tool(name, args, callId));
    return typeof result === "string" ? result : JSON.stringify(result);
  }, { name, description: `the scripted tool ${name}`, schema });
}

// -- the runs
// -----------------------------------------------------------------------------

const report = (outcome, stage, reply, error) => ({ outcome, stage, reply, error });

async function runOne(graph, config, script, env, spec) {
  let given;
  if (typeof spec?.input === "string") {
    given = { messages: [new HumanMessage({ content: spec.input })] };
  } else if (spec?.resume && typeof spec.resume === "object") {
    given = new Command({ resume: plain(spec.resume) });
  } else {
    return report("unsupported", null, null, { type: "Unsupported", message: "the adapter translates runs with an input or a resume" });
  }
  const streamed = Boolean(spec.stream ?? script.stream ?? false);
  const streamMode = ["values", "updates", ...(streamed ? ["messages"] : [])];
  let last = null;
  const pending = [];
  try {
    const options = { ...config, streamMode };
    if (DURABILITY !== null) options.durability = DURABILITY;
    const stream = await graph.stream(given, options);
    for await (const [mode, chunk] of stream) {
      if (mode === "values") {
        last = chunk;
      } else if (mode === "updates" && chunk && typeof chunk === "object") {
        for (const raised of chunk.__interrupt__ ?? []) pending.push(plain(raised?.value ?? null));
      } else if (mode === "messages") {
        const [piece] = chunk;
        const text = textOf(piece?.content);
        const kind = typeof piece?.getType === "function" ? piece.getType() : piece?.type;
        if (kind === "ai" && text) await env.emit("chunk", { text });
      }
    }
  } catch (exc) {
    return report("failed", null, null, { type: String(exc?.name ?? "Error"), message: String(exc?.message ?? exc) });
  }
  if (pending.length > 0) {
    return {
      ...report("suspended", null, null, null),
      pending_tool_calls: pending.map((p) => (p && typeof p === "object" ? { id: p.call_id ?? null, name: p.tool ?? null, args: p.args ?? null } : p)),
    };
  }
  const messages = Array.isArray(last?.messages) ? last.messages : [];
  const final = messages[messages.length - 1];
  const reply = final && final.getType() === "ai" ? textOf(final.content) : null;
  return report("completed", null, reply, null);
}

serve({
  name: DURABILITY === null ? "langgraph-js" : `langgraph-js:${DURABILITY}`,
  version: VERSIONS.join(", "),
  profiles: ["save-policy"],
  policies: [],
  hooks: ["approval", "stream"],
  provides: [],
  async execute(script, kitEnv) {
    if (script?.profile !== "save-policy") {
      throw new Error(`profile: the langgraph-js runtime runs only 'save-policy', not ${JSON.stringify(script?.profile)}`);
    }
    const env = oneAtATime(kitEnv);
    const thread = String(script.thread ?? "thread");
    const durable = Boolean(await env.store.has("state"));
    const approvals = approvalIds(script);
    const graph = createReactAgent({
      llm: new KitChatModel(env),
      tools: Object.keys(script.tools ?? {}).map((name) => kitTool(script, env, approvals, name)),
      checkpointer: new KitSaver(env, thread, durable),
    });
    const config = {
      configurable: { thread_id: thread },
      recursionLimit: 2 * Number(script.max_rounds ?? 8) + 2,
    };
    const runs = [];
    for (const spec of script.runs ?? []) {
      const told = await runOne(graph, config, script, env, spec);
      runs.push(told);
      await env.emit("outcome", { outcome: told.outcome, stage: told.stage, error: told.error });
    }
    return { construction_error: null, thread, runs };
  },
});
