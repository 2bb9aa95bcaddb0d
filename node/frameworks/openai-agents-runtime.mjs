#!/usr/bin/env node
// The OpenAI Agents SDK for JavaScript (`@openai/agents`, pinned in
// package.json: 0.20.0, with agents-core 0.20.0) as a memconform runtime,
// over the stdio runtime protocol (spec/runtime-protocol.md):
//
//   memconform run --runtime "stdio:node node/frameworks/openai-agents-runtime.mjs" --profile save-policy
//
// It judges what the SDK itself does with a Session when `run()` completes,
// fails or is blocked: it is the JavaScript twin of the Python adapter
// memconform/adapters/libraries/openai_agents_runtime.py. Run `npm ci` in
// node/frameworks first. (The SDK's own package declares no Node engine; its
// dependency `openai` 7.x declares node >= 22. It loads and runs on Node 20.)
//
// What it drives
// --------------
// Each run of the script is one `run(agent, input, {session, maxTurns})` of a
// default `Runner` (`maxTurns` is the script's `max_rounds`, the kit's default 8
// when absent; tracing disabled: the trace exporter would post to the
// OpenAI API; nothing else of the run changes). The SDK's defaults are kept:
// no custom error handlers, no retry settings (the SDK retries no model call
// by default), the input guardrail runs in parallel with the first model call,
// no `sessionInputCallback`, no `outputGuardrailBlockedMessage`.
//
// - Model: `KitModel` implements the SDK's `Model` interface. Every
//   `getResponse` is one `env.model("agent", {messages})`, the messages being
//   the SDK's input items as kit messages ({role, text, parts}, grouped as the
//   Session groups them, below).
//   The scripted step becomes a ModelResponse: a `message` output item for the
//   reply (when there is one or there are no calls), a `function_call` item per
//   tool call. A scripted failure is thrown out of `getResponse` as a
//   provider's error: an Error named by the scripted type, with its message,
//   `status` and `error` (the scripted object) kept. Streaming is not
//   translated (`getStreamedResponse` throws; `stream` is not declared).
// - Tools: each scripted tool is an SDK `tool()` (non-strict JSON schema whose
//   properties are the argument names the script's model passes); `execute`
//   calls `env.tool(name, args, callId)`. A tool's scripted failure is thrown
//   out of `execute` (an Error named by the scripted type).
// - Session: `KitSession` implements the SDK's `Session` interface, nothing
//   optional. `getItems(limit)` is one `env.store.messages({thread_id, limit})`;
//   `addItems(items)` is one `env.store.append({thread_id, batch})` of exactly
//   the items the SDK handed over, at the moment it hands them over (an empty
//   call appends nothing). The items become kit messages as the kit's message
//   model has them (docs/runtime-guide.md, "Messages, tool calls and tool
//   results"): a user/assistant/system `message` item is a message; the
//   `function_call` items of one model response (after its assistant text, if
//   any) are one assistant message with a `tool_call` part each; consecutive
//   `function_call_result` items are one tool message with a `tool_result` part
//   each (text: one result per line). Grouping never crosses another item nor
//   one `addItems` call. The items themselves travel in the message's metadata
//   ("openai_agents_items"), so `getItems` gives the SDK back exactly what it
//   wrote. A store's refusal is thrown as the store's error (`StoreError`,
//   `DuplicateIdError`, ... by its kind). `popItem` and `clearSession` would
//   remove stored messages, which the kit's store cannot do: they throw (the
//   SDK's runner calls neither on these paths).
// - Hooks: `input_guardrail` is the agent's input guardrail and
//   `output_guardrail` its output guardrail (`block` trips the wire; any other
//   action lets it through, since an SDK guardrail cannot replace the output;
//   a scripted failure is thrown inside the guardrail). `tool_error` is each
//   tool's `errorFunction`: `allow` hands the error to the SDK's default
//   handler (a tool made with no `errorFunction`, whose execute rethrows it),
//   `terminate` rethrows it (as `errorFunction: null` does), a scripted
//   failure is thrown inside the handler.
//
// Declarations
// ------------
// profiles ["save-policy"]; policies [] (it implements none: the SDK has no
// save-policy setting, so the scenarios configuring one are unsupported and the
// rest are judged against the SDK's one behaviour, as for the Python SDK's
// adapter; no save-policy class is claimed); hooks ["input_guardrail",
// "output_guardrail", "tool_error"] (run-end hooks, cancellation, approvals,
// streaming and retries exist in the SDK but are not wired: those points are
// unsupported, never emulated); provides ["ids"].
//
// What the adapter supplies
// -------------------------
// - `ids` (declared): every stored message's id is `env.ids.next("msg")`, since
//   the SDK's input items carry none and the Session has nothing else to key on.
// - The output items' ids (`env.ids.next("item")`) and a tool call's id when the
//   script gives none (`env.ids.next("call")`): what a provider's response
//   carries; they are the model's, not stored ids.
// - No run ids, rounds or turn ids: stored messages have run_id/round null.
// - The observation: per run what `run()` returned (completed, its
//   `finalOutput`) or threw (an input/output tripwire: blocked at input/output
//   with the guardrail's text from the tripwire's `outputInfo`; anything else:
//   failed, with the thrown error's name and message), and an `outcome` event
//   on the timeline once `run()` has settled.
// - Calls to the kit are made one at a time (the protocol's pipe is
//   sequential); concurrent SDK work (the parallel guardrail, parallel tools)
//   reaches the kit in the order it asks.

import { readFileSync } from "node:fs";
import { oneAtATime, orThrown, serve, storeCall } from "../runtime.mjs";
import {
  Agent,
  InputGuardrailTripwireTriggered,
  OutputGuardrailTripwireTriggered,
  Runner,
  Usage,
  tool,
} from "@openai/agents";

const versionOf = (name) =>
  JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), "utf8")).version;
const SDK_VERSION = versionOf("@openai/agents");
const CORE_VERSION = versionOf("@openai/agents-core");

const MODEL_COMPONENT = "agent";
const ITEM_KEY = "openai_agents_items";

// -- items and kit messages -------------------------------------------------------------

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part.text === "string" ? part.text
        : part && typeof part.refusal === "string" ? part.refusal : ""))
      .join("");
  }
  if (content && typeof content === "object" && typeof content.text === "string") return content.text;
  return content == null ? "" : String(content);
}

function parseArgs(text) {
  try {
    return JSON.parse(text || "{}");
  } catch {
    return text;
  }
}

/** The kit role, text and parts of one SDK item. */
function itemRoles(item) {
  const kind = item.type ?? "message";
  if (kind === "function_call") {
    return ["assistant", "", [{ type: "tool_call", id: item.callId, name: item.name, args: parseArgs(item.arguments) }]];
  }
  if (kind === "function_call_result") {
    const output = textOf(item.output);
    return ["tool", output, [{ type: "tool_result", call_id: item.callId, name: item.name, result: output }]];
  }
  if (kind === "message") {
    const role = ["user", "system"].includes(item.role) ? item.role : "assistant";
    return [role, textOf(item.content), []];
  }
  return ["assistant", "", [{ type: String(kind) }]];
}

const plain = (item) => JSON.parse(JSON.stringify(item));

/**
 * SDK items as kit messages, in order. The SDK keeps one item per tool call and
 * one per result where the kit's message model has one assistant message holding
 * a model response's calls (after its text, if any) and one tool message holding
 * their results (text: one result per line). So, within the items given (one
 * `addItems` batch, or one model request), an assistant message item followed by
 * function calls, consecutive function calls, and consecutive results each make
 * one message; nothing is moved across another item. Each message keeps the
 * items it stands for.
 */
function groupItems(items) {
  const groups = [];
  for (const item of items) {
    const [role, text, parts] = itemRoles(item);
    const last = groups[groups.length - 1];
    const kind = item.type ?? "message";
    const lastKind = last?.items[last.items.length - 1].type ?? "message";
    const joinsCalls = kind === "function_call" && last && last.role === "assistant"
      && (lastKind === "function_call" || (lastKind === "message" && last.items.length === 1));
    const joinsResults = kind === "function_call_result" && last && lastKind === "function_call_result";
    if (joinsCalls || joinsResults) {
      last.parts.push(...parts);
      last.items.push(item);
      if (joinsResults) last.text = `${last.text}\n${text}`;
      continue;
    }
    groups.push({ role, text, parts: [...parts], items: [item] });
  }
  return groups;
}

/** What the model is shown: the request's items as kit messages. */
function requestMessages(items) {
  return groupItems(items).map(({ role, text, parts }) => ({ role, text, parts }));
}

// -- the SDK's Model over the kit's fake model --------------------------------------------

class KitModel {
  constructor(env) {
    this.env = env;
  }

  async getResponse(request) {
    const { env } = this;
    const items = typeof request.input === "string"
      ? [{ type: "message", role: "user", content: request.input }]
      : request.input.map(plain);
    const step = await orThrown(env.model(MODEL_COMPONENT, { messages: requestMessages(items) }));
    const output = [];
    const reply = String(step?.reply ?? "");
    const calls = step?.tool_calls ?? [];
    if (reply || calls.length === 0) {
      output.push({
        id: await env.ids.next("item"), type: "message", role: "assistant", status: "completed",
        content: [{ type: "output_text", text: reply }],
      });
    }
    for (const call of calls) {
      const callId = String(call.id ?? (await env.ids.next("call")));
      output.push({
        id: callId, type: "function_call", callId, name: String(call.name),
        arguments: JSON.stringify(call.args ?? {}), status: "completed",
      });
    }
    const u = step?.usage ?? {};
    const usage = new Usage({
      requests: 1,
      inputTokens: Number(u.input_tokens ?? 0),
      outputTokens: Number(u.output_tokens ?? 0),
      totalTokens: Number(u.total_tokens ?? (Number(u.input_tokens ?? 0) + Number(u.output_tokens ?? 0))),
    });
    return { usage, output, responseId: undefined };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error("the adapter does not translate streaming");
  }
}

// -- the SDK's Session over the kit's store ------------------------------------------------

class KitSession {
  constructor(env, thread) {
    this.env = env;
    this.thread = thread;
  }

  async getSessionId() {
    return this.thread;
  }

  async getItems(limit) {
    const stored = await storeCall(this.env.store.messages({ thread_id: this.thread, limit: limit ?? null }));
    return stored.flatMap((message) => {
      const items = message?.metadata?.[ITEM_KEY];
      if (Array.isArray(items)) return items.map(plain);
      if (message.role === "assistant") {
        return { type: "message", role: "assistant", status: "completed",
          content: [{ type: "output_text", text: message.text }] };
      }
      return { type: "message", role: message.role === "tool" ? "user" : message.role, content: message.text };
    });
  }

  async addItems(items) {
    if (!items || items.length === 0) return;
    const batch = [];
    for (const { role, text, parts, items: held } of groupItems(items.map(plain))) {
      batch.push({
        id: await this.env.ids.next("msg"), role, text, parts,
        run_id: null, round: null, turn_id: null, committed: true,
        metadata: { [ITEM_KEY]: held },
      });
    }
    await storeCall(this.env.store.append({ thread_id: this.thread, batch }));
  }

  async popItem() {
    throw new Error("popItem: the kit's store never removes a stored message");
  }

  async clearSession() {
    throw new Error("clearSession: the kit's store never removes stored messages");
  }
}

// -- the agent --------------------------------------------------------------------------

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

function kitTool(script, env, name) {
  const parameters = {
    type: "object",
    properties: Object.fromEntries(argumentNames(script, name).map((n) => [n, {}])),
    required: [],
    additionalProperties: true,
  };
  const description = `the script's tool ${name}`;
  return tool({
    name,
    description,
    parameters,
    strict: false,
    async execute(input, _context, details) {
      const callId = details?.toolCall?.callId ?? null;
      const args = typeof input === "string" ? parseArgs(input) : input;
      const result = await orThrown(env.tool(name, args ?? {}, callId));
      return typeof result === "string" ? result : JSON.stringify(result);
    },
    async errorFunction(context, error, details) {
      const verdict = await orThrown(env.hook("tool_error", {
        tool: name, error: { type: error?.name ?? "Error", message: String(error?.message ?? error) },
      }));
      if (verdict?.action === "terminate") throw error; // as with errorFunction: null
      // the SDK's default handler: a tool made without errorFunction meeting the same error
      const shipped = tool({
        name, description, parameters, strict: false,
        execute() {
          throw error;
        },
      });
      const input = details?.toolCall?.arguments ?? "{}";
      return shipped.invoke(context, input, details);
    },
  });
}

function guardrailText(input) {
  if (typeof input === "string") return input;
  return (input ?? []).map((item) => textOf(item?.content)).join("\n");
}

function buildAgent(script, env) {
  return new Agent({
    name: "memconform",
    model: new KitModel(env),
    tools: Object.keys(script.tools ?? {}).map((name) => kitTool(script, env, name)),
    inputGuardrails: [{
      name: "input",
      async execute({ input }) {
        const verdict = await orThrown(env.hook("input_guardrail", { text: guardrailText(input) }));
        return { outputInfo: verdict, tripwireTriggered: verdict?.action === "block" };
      },
    }],
    outputGuardrails: [{
      name: "output",
      async execute({ agentOutput }) {
        const verdict = await orThrown(env.hook("output_guardrail", { text: String(agentOutput) }));
        return { outputInfo: verdict, tripwireTriggered: verdict?.action === "block" };
      },
    }],
  });
}

// -- the runs -------------------------------------------------------------------------

const report = (outcome, stage, reply, error) => ({ outcome, stage, reply, error });

function verdictText(exc) {
  const info = exc?.result?.output?.outputInfo;
  return info && typeof info === "object" && "text" in info ? info.text ?? null : null;
}

async function runOne(script, env, thread, spec) {
  if (typeof spec?.input !== "string") {
    return report("unsupported", null, null, { type: "Unsupported", message: "the adapter translates only runs with an input" });
  }
  const runner = new Runner({ tracingDisabled: true });
  try {
    const result = await runner.run(buildAgent(script, env), spec.input, {
      session: new KitSession(env, thread),
      maxTurns: Number(script.max_rounds ?? 8),
    });
    return report("completed", null, result.finalOutput == null ? null : String(result.finalOutput), null);
  } catch (exc) {
    if (exc instanceof InputGuardrailTripwireTriggered) return report("blocked", "input", verdictText(exc), null);
    if (exc instanceof OutputGuardrailTripwireTriggered) return report("blocked", "output", verdictText(exc), null);
    return report("failed", null, null, { type: String(exc?.name ?? "Error"), message: String(exc?.message ?? exc) });
  }
}

serve({
  name: "openai-agents-js",
  version: `@openai/agents ${SDK_VERSION} (agents-core ${CORE_VERSION})`,
  profiles: ["save-policy"],
  policies: [],
  hooks: ["input_guardrail", "output_guardrail", "tool_error"],
  provides: ["ids"],
  async execute(script, kitEnv) {
    if (script?.profile !== "save-policy") {
      throw new Error(`profile: the openai-agents-js runtime runs only 'save-policy', not ${JSON.stringify(script?.profile)}`);
    }
    const env = oneAtATime(kitEnv);
    const thread = String(script.thread ?? "thread");
    const runs = [];
    for (const spec of script.runs ?? []) {
      const told = await runOne(script, env, thread, spec);
      runs.push(told);
      await env.emit("outcome", { outcome: told.outcome, stage: told.stage, error: told.error });
    }
    return { construction_error: null, thread, runs };
  },
});
