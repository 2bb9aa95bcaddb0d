#!/usr/bin/env node
// Mastra (`@mastra/core` with `@mastra/memory`, pinned in package.json beside
// this file) as a memconform runtime, over the stdio runtime protocol
// (spec/runtime-protocol.md):
//
//   memconform run --runtime "stdio:node node/frameworks/mastra/mastra-runtime.mjs" --profile save-policy
//
// It judges what a Mastra `Agent` with its `Memory` leaves in memory when
// `agent.generate()` completes, fails or is blocked. Run `npm ci` in
// node/frameworks/mastra first; Mastra declares node >= 22.13.
//
// What it drives
// --------------
// Each run of the script is one `agent.generate(input, {memory: {thread,
// resource}, maxSteps})` of one `Agent` whose memory is `new Memory({storage})`
// with every Memory option left at its default (last 10 messages of history,
// no semantic recall, no working memory, no generated titles) and no Mastra
// instance around it. `maxSteps` is the script's `max_rounds` (the kit's 8 when
// absent): the Agent's own cap on model calls. The resource is the constant
// "memconform-user". Nothing else is set: no `maxRetries` (the Agent's default
// is 0, so no model call is retried), no `onError`, no `onFinish`, no
// `savePerStep` (false), no processors beyond the two guardrails below.
//
// - Model: `KitLanguageModel` is an AI SDK `LanguageModelV2`
//   (`specificationVersion: "v2"`, which @mastra/core 1.71 wraps in its own
//   `AISDKV5LanguageModel`). Mastra's `generate()` calls `doGenerate` (its
//   loop picks `doStream` only for `stream()`): each `doGenerate` is one
//   `env.model("agent", {messages})`, the messages being Mastra's prompt as kit
//   messages (a system prompt, user text, an assistant message with its text
//   and one `tool_call` part per call, a tool message with one `tool_result`
//   part per result, text one result per line). The scripted step becomes the
//   V2 result: a `text` content part for the reply (when there is one or there
//   are no calls), a `tool-call` part per call (its scripted id, or
//   `env.ids.next("call")` as a provider would give one), finish reason
//   `tool-calls` or `stop`, the scripted usage. A scripted failure is thrown out
//   of `doGenerate` as a provider's error: an Error named by the scripted type,
//   with its message, `status` and `error` (the scripted object) kept.
//   `doStream` throws: streaming is not translated.
// - Tools: each scripted tool is a Mastra `createTool()` whose input schema is
//   a loose zod object of the argument names the script's model passes;
//   `execute` calls `env.tool(name, args, toolCallId)` and a scripted failure
//   is thrown out of `execute` (an Error named by the scripted type). Mastra
//   has no tool-error hook: it turns the thrown error into the call's result
//   itself.
// - Storage: `KitStore` is a `MastraCompositeStore` whose only domain is
//   `KitMemoryStorage`, a subclass of Mastra's `MemoryStorage` (the memory
//   domain of @mastra/core/storage). Mastra's Memory reaches the store through
//   it and nothing else:
//   - `saveMessages({messages})` is one `env.store.append({thread_id, batch})`
//     of exactly the messages Mastra handed over, when it hands them over (a
//     call with no message appends nothing and makes no store call). Mastra's
//     `saveMessages` is an upsert; the kit's store only appends, so a message
//     Mastra saves again under an id already stored is appended as it is and
//     the store refuses it (`duplicate-id`), which Mastra meets as the store's
//     error.
//   - `listMessages({threadId, perPage, page, orderBy})` is one
//     `env.store.messages({thread_id, limit: null})`: Mastra's `perPage` counts
//     its own messages, which the kit holds as one or more kit messages each
//     (below), so the whole thread is read in that one call and Mastra's page
//     (newest `perPage` of its messages for `createdAt DESC`, in store order)
//     is taken from it. `include` and `filter` (semantic recall and metadata
//     queries, off by default) throw.
//   - `listMessagesById` is one `env.store.messages({thread_id, limit: null})`
//     of the script's thread, keeping the ids asked for.
//   - Threads (`getThreadById`, `saveThread`, `updateThread`) are Mastra's
//     bookkeeping, not messages: on a store declaring `state` each thread is
//     one working-state entry (scope "mastra/threads", key the thread id),
//     `getThreadById` one `read_state`, `saveThread` and `updateThread` one
//     `write_state` each with compare-and-set on the version last read. On a
//     store without `state` they live in this process only (a later process
//     finds no thread, and Mastra creates it again).
//   - `updateMessages`, `deleteMessages`, `deleteThread`, `listThreads`,
//     `cloneThread` and the resource methods (working memory, off by default)
//     would change or list what the kit's store cannot: they throw.
//   Only the script's thread is served; a call naming another thread throws.
//   A store's refusal is thrown as the store's error (`StoreError`,
//   `DuplicateIdError`, ... by its kind).
// - Messages: a Mastra message (format 2) becomes kit messages as the kit's
//   message model has them (docs/runtime-guide.md, "Messages, tool calls and
//   tool results"): a user or system message is one message; an assistant
//   message is cut at its `step-start` parts and its tool invocations, so that
//   its text, its calls (one assistant message with a `tool_call` part each)
//   and their results (one tool message, a `tool_result` part each, or
//   `error` with Mastra's `errorText`) come in the order Mastra wrote them. An
//   `error` part (what Mastra keeps of a failed model call) is an assistant
//   message with no text and one `{type: "error", name, message}` part. The
//   first kit message of a Mastra message carries Mastra's id and the whole
//   Mastra message in its metadata ("mastra_message"), so a read gives Mastra
//   back exactly what it wrote; the later ones carry the same id with
//   `#2`, `#3`, ... and name the message they belong to ("mastra_of"). All of
//   them go in the one append of that `saveMessages` call.
// - Hooks: `input_guardrail` is an input processor (`processInput`) calling
//   the hook with the input's text: `block` is `abort(text)`, Mastra's
//   tripwire; any other action lets the input through. `output_guardrail` is an
//   output processor (`processOutputResult`) calling the hook with the run's
//   text: `block` is `abort(text)`; `replace` puts the hook's text in place of
//   the text of the run's last assistant message, the processor's own way to
//   change the output. A scripted failure is thrown inside the processor.
//
// Declarations
// ------------
// profiles ["save-policy"]; policies [] (it implements none: Mastra has no
// message/turn/run save-policy setting, so a script's `save_policy` is passed
// nowhere, the scenarios configuring one are unsupported and the rest are
// judged against Mastra's default behaviour, as for every framework without
// one; no save-policy class is claimed; the one persistence option
// of `generate()`, `savePerStep` (default false: the run's messages are saved
// once, by Memory's message-history output processor), is left at its
// default); hooks ["input_guardrail", "output_guardrail"] (Mastra has
// no tool-error hook and no run-end hook; its streaming, tool approvals
// (`requireApproval`), model retries (`maxRetries`) and abort signals exist
// but are not translated: those points are unsupported, never emulated);
// provides [] (every stored id is Mastra's own message id, the later pieces of
// one Mastra message suffixed by their place in it).
//
// What the adapter supplies
// -------------------------
// - A tool call's id when the script gives none (`env.ids.next("call")`): the
//   provider's, as in a real model response.
// - No run ids, rounds or turn ids: Mastra's stored messages carry none
//   (run_id/round null).
// - The observation: per run what `generate()` returned (completed, its
//   `text`; a result with a `tripwire`: blocked at input or output, by the
//   processor that tripped it, with its reason as the reply) or threw (failed,
//   with the thrown error's name and message), and an `outcome` event on the
//   timeline once `generate()` has settled.
// - Calls to the kit are made one at a time (the protocol's pipe is
//   sequential); concurrent Mastra work reaches the kit in the order it asks.

import { readFileSync } from "node:fs";
import {
  oneAtATime, orThrown as scripted, serve, storeCall as stored,
} from "../../runtime.mjs";
import { Agent } from "@mastra/core/agent";
import { MastraCompositeStore, MemoryStorage } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { Memory } from "@mastra/memory";
import { z } from "zod";

const versionOf = (name) =>
  JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), "utf8")).version;

const MODEL_COMPONENT = "agent";
const RESOURCE = "memconform-user";
const MESSAGE_KEY = "mastra_message";
const PIECE_KEY = "mastra_of";
const THREAD_SCOPE = "mastra/threads";
const INPUT_GUARDRAIL = "memconform-input-guardrail";
const OUTPUT_GUARDRAIL = "memconform-output-guardrail";

// -- JSON forms ---------------------------------------------------------------------

const asJson = (value) => JSON.parse(JSON.stringify(value ?? null));

function revived(message) {
  const copy = asJson(message);
  if (copy.createdAt) copy.createdAt = new Date(copy.createdAt);
  return copy;
}

function revivedThread(thread) {
  if (!thread) return null;
  const copy = asJson(thread);
  for (const key of ["createdAt", "updatedAt"]) if (copy[key]) copy[key] = new Date(copy[key]);
  return copy;
}

const resultText = (value) => (typeof value === "string" ? value : JSON.stringify(value ?? null));

// -- Mastra messages and kit messages -----------------------------------------------------

function contentText(content) {
  if (typeof content === "string") return content;
  if (!content || typeof content !== "object") return "";
  if (typeof content.content === "string") return content.content;
  return (content.parts ?? []).filter((p) => p?.type === "text").map((p) => String(p.text ?? "")).join("");
}

/**
 * One Mastra message as kit messages, in Mastra's order: its text, its calls
 * (one assistant message), their results (one tool message), cut where Mastra
 * starts a new step.
 */
function pieces(message) {
  const role = message.role;
  if (role !== "assistant") {
    return [{ role: ["user", "system"].includes(role) ? role : "user", text: contentText(message.content), parts: [] }];
  }
  const out = [];
  let speech = null; // the assistant message being filled
  let answers = null; // the tool message answering its calls
  const close = () => {
    if (speech) out.push(speech);
    if (answers) {
      answers.text = answers.lines.join("\n");
      delete answers.lines;
      out.push(answers);
    }
    speech = null;
    answers = null;
  };
  const open = () => {
    speech ??= { role: "assistant", text: "", parts: [] };
    return speech;
  };
  for (const part of message.content?.parts ?? []) {
    const type = part?.type;
    if (type === "step-start") {
      close();
    } else if (type === "text") {
      if (speech && speech.parts.some((p) => p.type === "tool_call")) close();
      open().text += String(part.text ?? "");
    } else if (type === "tool-invocation") {
      const call = part.toolInvocation ?? {};
      open().parts.push({ type: "tool_call", id: call.toolCallId, name: call.toolName, args: call.args ?? {} });
      if (call.state === "result" || call.state === "output-error" || "errorText" in call) {
        answers ??= { role: "tool", text: "", parts: [], lines: [] };
        if ("errorText" in call || call.state === "output-error") {
          const error = String(call.errorText ?? "");
          answers.parts.push({ type: "tool_result", call_id: call.toolCallId, name: call.toolName, error });
          answers.lines.push(error);
        } else {
          const result = resultText(call.result);
          answers.parts.push({ type: "tool_result", call_id: call.toolCallId, name: call.toolName, result });
          answers.lines.push(result);
        }
      }
    } else if (type === "error") {
      close();
      const error = part.error ?? {};
      out.push({ role: "assistant", text: "", parts: [{ type: "error", name: String(error.name ?? "Error"), message: String(error.message ?? "") }] });
    } else if (type) {
      open().parts.push({ type: String(type) });
    }
  }
  close();
  if (out.length === 0) out.push({ role: "assistant", text: contentText(message.content), parts: [] });
  return out;
}

/** The kit messages one `saveMessages` call stands for. */
function batchOf(messages) {
  const batch = [];
  for (const message of messages) {
    const kept = asJson(message);
    pieces(message).forEach((piece, index) => {
      batch.push({
        id: index === 0 ? String(message.id) : `${message.id}#${index + 1}`,
        role: piece.role, text: piece.text, parts: piece.parts,
        run_id: null, round: null, turn_id: null, committed: true,
        metadata: index === 0 ? { [MESSAGE_KEY]: kept } : { [PIECE_KEY]: String(message.id) },
      });
    });
  }
  return batch;
}

/** The Mastra messages of a kit thread, in store order. */
function mastraMessages(kitMessages, threadId) {
  const found = [];
  for (const message of kitMessages) {
    const metadata = message?.metadata ?? {};
    if (metadata[MESSAGE_KEY]) {
      found.push(revived(metadata[MESSAGE_KEY]));
    } else if (!metadata[PIECE_KEY]) { // written by another writer: its text as Mastra's
      found.push({
        id: message.id, role: message.role === "tool" ? "assistant" : message.role,
        createdAt: new Date(0), threadId, resourceId: RESOURCE,
        content: { format: 2, parts: [{ type: "text", text: message.text }], content: message.text },
      });
    }
  }
  return found;
}

// -- Mastra's memory domain over the kit's store ---------------------------------------------

class KitMemoryStorage extends MemoryStorage {
  supportsPartialThreadUpdate = true;

  constructor(env, thread, durable) {
    super();
    this.env = env;
    this.thread = thread;
    this.durable = durable;
    this.threads = new Map(); // thread id -> {record, version}
  }

  ours(threadId, what) {
    if (threadId !== this.thread) {
      throw new Error(`${what}: the adapter serves only the script's thread ${JSON.stringify(this.thread)}, not ${JSON.stringify(threadId)}`);
    }
  }

  async dangerouslyClearAll() {
    throw new Error("dangerouslyClearAll: the kit's store never removes stored messages");
  }

  async getThreadById({ threadId }) {
    if (!this.durable) return revivedThread(this.threads.get(threadId)?.record ?? null);
    const entry = await stored(this.env.store.read_state({ scope: THREAD_SCOPE, key: String(threadId) }));
    if (!entry) return null;
    this.threads.set(threadId, { record: entry.value, version: entry.version });
    return revivedThread(entry.value);
  }

  async keepThread(thread) {
    const record = asJson(thread);
    const known = this.threads.get(record.id);
    if (this.durable) {
      const entry = await stored(this.env.store.write_state({
        scope: THREAD_SCOPE, key: String(record.id), value: record, expected_version: known?.version ?? null,
      }));
      this.threads.set(record.id, { record, version: entry.version });
    } else {
      this.threads.set(record.id, { record, version: null });
    }
    return revivedThread(record);
  }

  async saveThread({ thread }) {
    return this.keepThread(thread);
  }

  async updateThread({ id, title, metadata }) {
    const current = this.threads.get(id)?.record ?? asJson(await this.getThreadById({ threadId: id }));
    if (!current) throw new Error(`Thread with id ${id} not found`);
    const next = { ...current, updatedAt: new Date().toISOString() };
    if (title !== undefined) next.title = title;
    if (metadata !== undefined) next.metadata = { ...(current.metadata ?? {}), ...metadata };
    return this.keepThread(next);
  }

  async deleteThread() {
    throw new Error("deleteThread: the kit's store never removes stored messages");
  }

  async listThreads() {
    throw new Error("listThreads: the kit's store keeps no list of threads");
  }

  async cloneThread() {
    throw new Error("cloneThread: not translated");
  }

  async copyThread() {
    throw new Error("copyThread: not translated");
  }

  async listMessages({ threadId, include, filter, perPage, page = 0, orderBy }) {
    const ids = Array.isArray(threadId) ? threadId : [threadId];
    for (const id of ids) this.ours(id, "listMessages");
    if (Array.isArray(include) && include.length > 0) throw new Error("listMessages: `include` is not translated");
    if (filter && Object.keys(filter).length > 0) throw new Error("listMessages: `filter` is not translated");
    const kit = await stored(this.env.store.messages({ thread_id: this.thread, limit: null }));
    let messages = mastraMessages(kit, this.thread);
    const direction = orderBy?.direction === "DESC" ? "DESC" : "ASC";
    if (direction === "DESC") messages.reverse();
    const total = messages.length;
    const size = perPage === false ? total : Number(perPage ?? 40);
    const offset = perPage === false ? 0 : page * size;
    messages = messages.slice(offset, offset + size);
    return { messages, total, page, perPage: perPage === false ? false : size, hasMore: offset + size < total };
  }

  async listMessagesById({ messageIds }) {
    const kit = await stored(this.env.store.messages({ thread_id: this.thread, limit: null }));
    const wanted = new Set(messageIds);
    return { messages: mastraMessages(kit, this.thread).filter((m) => wanted.has(m.id)) };
  }

  async saveMessages({ messages }) {
    if (!messages || messages.length === 0) return { messages: [] };
    for (const message of messages) this.ours(message.threadId, "saveMessages");
    await stored(this.env.store.append({ thread_id: this.thread, batch: batchOf(messages) }));
    return { messages };
  }

  async updateMessages() {
    throw new Error("updateMessages: the kit's store never changes a stored message");
  }

  async deleteMessages() {
    throw new Error("deleteMessages: the kit's store never removes a stored message");
  }

  async getResourceById() {
    throw new Error("getResourceById: resources (working memory) are not translated");
  }

  async saveResource() {
    throw new Error("saveResource: resources (working memory) are not translated");
  }

  async updateResource() {
    throw new Error("updateResource: resources (working memory) are not translated");
  }
}

class KitStore extends MastraCompositeStore {
  constructor(memory) {
    super({ id: "memconform", name: "MemconformKitStore" });
    this.hasInitialized = Promise.resolve(true);
    this.stores = { memory };
  }
}

// -- the model ----------------------------------------------------------------------

function promptMessages(prompt) {
  const out = [];
  for (const message of prompt ?? []) {
    const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : (message.content ?? []);
    if (message.role === "system") {
      out.push({ role: "system", text: typeof message.content === "string" ? message.content : contentText({ parts: content }), parts: [] });
    } else if (message.role === "user") {
      out.push({ role: "user", text: content.filter((p) => p.type === "text").map((p) => p.text).join(""), parts: [] });
    } else if (message.role === "assistant") {
      const text = content.filter((p) => p.type === "text").map((p) => p.text).join("");
      const parts = content.filter((p) => p.type === "tool-call").map((p) => ({
        type: "tool_call", id: p.toolCallId, name: p.toolName,
        args: typeof p.input === "string" ? JSON.parse(p.input || "{}") : (p.input ?? {}),
      }));
      out.push({ role: "assistant", text, parts });
    } else if (message.role === "tool") {
      const parts = [];
      const lines = [];
      for (const p of content) {
        if (p.type !== "tool-result") continue;
        const output = p.output ?? {};
        const value = output.type === "text" || output.type === "error-text" ? String(output.value) : resultText(output.value);
        const isError = String(output.type ?? "").startsWith("error");
        parts.push({ type: "tool_result", call_id: p.toolCallId, name: p.toolName, [isError ? "error" : "result"]: value });
        lines.push(value);
      }
      out.push({ role: "tool", text: lines.join("\n"), parts });
    }
  }
  return out;
}

class KitLanguageModel {
  specificationVersion = "v2";
  provider = "memconform";
  modelId = "fake-model";
  supportedUrls = {};

  constructor(env) {
    this.env = env;
  }

  async doGenerate(options) {
    const step = await scripted(this.env.model(MODEL_COMPONENT, { messages: promptMessages(options.prompt) }));
    const content = [];
    const reply = String(step?.reply ?? "");
    const calls = step?.tool_calls ?? [];
    if (reply || calls.length === 0) content.push({ type: "text", text: reply });
    for (const call of calls) {
      content.push({
        type: "tool-call",
        toolCallId: String(call.id ?? (await this.env.ids.next("call"))),
        toolName: String(call.name),
        input: JSON.stringify(call.args ?? {}),
      });
    }
    const u = step?.usage ?? {};
    const inputTokens = Number(u.input_tokens ?? 0);
    const outputTokens = Number(u.output_tokens ?? 0);
    return {
      content,
      finishReason: calls.length > 0 ? "tool-calls" : "stop",
      usage: { inputTokens, outputTokens, totalTokens: Number(u.total_tokens ?? inputTokens + outputTokens) },
      warnings: [],
    };
  }

  async doStream() {
    throw new Error("the adapter does not translate streaming");
  }
}

// -- tools and guardrails -----------------------------------------------------------

function argumentNames(script, name) {
  const steps = script.model?.[MODEL_COMPONENT] ?? [];
  const names = new Set();
  for (const step of Array.isArray(steps) ? steps : [steps]) {
    for (const call of step?.tool_calls ?? []) {
      if (call?.name === name && call.args && typeof call.args === "object") Object.keys(call.args).forEach((k) => names.add(k));
    }
  }
  return [...names];
}

function kitTool(script, env, name) {
  const shape = Object.fromEntries(argumentNames(script, name).map((n) => [n, z.any()]));
  return createTool({
    id: name,
    description: `the script's tool ${name}`,
    inputSchema: z.object(shape).passthrough(),
    async execute(input, context) {
      const callId = context?.agent?.toolCallId ?? null;
      return scripted(env.tool(name, input ?? {}, callId));
    },
  });
}

function lastUserText(messages) {
  const users = (messages ?? []).filter((m) => m.role === "user");
  return users.length ? contentText(users[users.length - 1].content) : "";
}

function guardrails(env) {
  const input = {
    id: INPUT_GUARDRAIL,
    name: "input guardrail",
    async processInput({ messages, abort }) {
      const verdict = await scripted(env.hook("input_guardrail", { text: lastUserText(messages) }));
      if (verdict?.action === "block") abort(verdict.text ?? "blocked");
      return messages;
    },
  };
  const output = {
    id: OUTPUT_GUARDRAIL,
    name: "output guardrail",
    async processOutputResult({ messages, result, abort }) {
      const verdict = await scripted(env.hook("output_guardrail", { text: String(result?.text ?? "") }));
      if (verdict?.action === "block") abort(verdict.text ?? "blocked");
      if (verdict?.action === "replace") {
        const last = [...messages].reverse().find((m) => m.role === "assistant");
        const parts = last?.content?.parts ?? [];
        const texts = parts.filter((p) => p.type === "text");
        if (texts.length > 0) {
          texts.forEach((p, i) => { p.text = i === texts.length - 1 ? String(verdict.text ?? "") : ""; });
          if (typeof last.content.content === "string") last.content.content = String(verdict.text ?? "");
        }
      }
      return messages;
    },
  };
  return { inputProcessors: [input], outputProcessors: [output] };
}

// -- the runs -----------------------------------------------------------------------

const told = (outcome, stage, reply, error) => ({ outcome, stage, reply, error });

async function runOne(script, env, agent, thread, spec) {
  if (typeof spec?.input !== "string") {
    return told("unsupported", null, null, { type: "Unsupported", message: "the adapter translates only runs with an input" });
  }
  try {
    const result = await agent.generate(spec.input, {
      memory: { thread, resource: RESOURCE },
      maxSteps: Number(script.max_rounds ?? 8),
    });
    if (result?.tripwire) {
      const by = result.tripwire.processorId;
      const stage = by === INPUT_GUARDRAIL ? "input" : by === OUTPUT_GUARDRAIL ? "output" : null;
      return told("blocked", stage, result.tripwire.reason ?? null, null);
    }
    if (result?.error) {
      const error = result.error;
      return told("failed", null, null, { type: String(error?.name ?? "Error"), message: String(error?.message ?? error) });
    }
    return told("completed", null, result?.text == null ? null : String(result.text), null);
  } catch (exc) {
    return told("failed", null, null, { type: String(exc?.name ?? "Error"), message: String(exc?.message ?? exc) });
  }
}

serve({
  name: "mastra",
  version: `@mastra/core ${versionOf("@mastra/core")} (@mastra/memory ${versionOf("@mastra/memory")})`,
  profiles: ["save-policy"],
  policies: [],
  hooks: ["input_guardrail", "output_guardrail"],
  provides: [],
  async execute(script, kitEnv) {
    if (script?.profile !== "save-policy") {
      throw new Error(`profile: the mastra runtime runs only 'save-policy', not ${JSON.stringify(script?.profile)}`);
    }
    const env = oneAtATime(kitEnv);
    const thread = String(script.thread ?? "thread");
    const durable = Boolean(await kitEnv.store.has("state"));
    const storage = new KitStore(new KitMemoryStorage(env, thread, durable));
    const agent = new Agent({
      id: "memconform",
      name: "memconform",
      instructions: "",
      model: new KitLanguageModel(env),
      tools: Object.fromEntries(Object.keys(script.tools ?? {}).map((name) => [name, kitTool(script, env, name)])),
      memory: new Memory({ storage }),
      ...guardrails(env),
    });
    const runs = [];
    for (const spec of script.runs ?? []) {
      const outcome = await runOne(script, env, agent, thread, spec);
      runs.push(outcome);
      await env.emit("outcome", { outcome: outcome.outcome, stage: outcome.stage, error: outcome.error });
    }
    return { construction_error: null, thread, runs };
  },
});
