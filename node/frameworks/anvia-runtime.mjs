// The Anvia TypeScript agent SDK (`@anvia/core`) as a memconform save-policy
// runtime, over the kit's stdio runtime protocol (spec/runtime-protocol.md).
//
//   CORE=/path/to/anvia/packages/core/dist/index.js
//   PATH=/path/to/node-24/bin:$PATH memconform run --profile save-policy \
//     --runtime "stdio:env MEMCONFORM_ANVIA_CORE=$CORE node node/frameworks/anvia-runtime.mjs"
//
// The variable is given inside the command as well because the kit starts the
// runtime of its fresh-process scenarios (resumes, kills) from a child whose
// environment holds only PATH and TMPDIR; with the variable only in the kit's
// environment those scenarios end `error` ("set MEMCONFORM_ANVIA_CORE").
//
// What it drives
// --------------
// Anvia's own agent loop, `new Agent({ id, model, tools, guardrails, lifecycle,
// memory: { store, savePolicy }, maxTurns, retries })` and `agent.generate(...)`
// (or `agent.stream(...)` for a streamed run), from the core built out of
// github.com/anvia-hq/anvia at 5a24bb23 (branch `staging`, tag v1.0.0-rc.9,
// `@anvia/core` 1.0.0-rc.9: the "1.0 RC runtime" whose save policies
// `message` / `turn` / `run` document 000 takes). The core is imported from the
// file named by MEMCONFORM_ANVIA_CORE (its built `dist/index.js`); nothing of
// Anvia lives in this repository. That core needs Node >= 22.19 (its `undici`
// 8 dependency does not load on Node 20; Anvia's CI runs Node 24).
//
// Translate, never help
// ---------------------
// Anvia runs as shipped: its loop decides when the memory store is loaded and
// appended to, what goes in each append, when `recordError` is called, what the
// model is shown, what a tool error becomes, when a run is blocked, suspended,
// cancelled or failed. The adapter supplies only the pieces an application
// supplies, each a thin translation onto the kit's environment:
//
// - the model: a `CompletionModel` (and `StreamingCompletionModel`) whose every
//   call is `env.model("agent", { messages })`, the messages being Anvia's
//   request (`instructions` as a system message when set, then `chatHistory`)
//   as kit `{ role, text, parts }`. The scripted step becomes Anvia's
//   `CompletionResponse` (`choice`: a text part for the reply, a `tool-call`
//   part per call, with the scripted call id as `toolCallId` and `callId`; the
//   adapter makes a call id with `env.ids.next("call")` only when the script
//   gives none, as any provider names its calls). A scripted failure is thrown
//   as the provider's exception: an Error whose `name` is the scripted `type`,
//   with its `message` and, when scripted, `status`, `body` and `cause`.
//   Streaming yields the reply as one `text_delta`, each call as one
//   `tool_call`, then `final`.
// - tools: one Anvia `Tool` per tool name the script knows (its `tools` and
//   every name its model calls), any JSON arguments, whose `call` is
//   `env.tool(name, args, callId)`. Anvia does not pass the call id to a tool;
//   the adapter reads it from Anvia's `lifecycle.onToolStart` event just before
//   the call (Anvia runs tools one at a time by default). A scripted tool
//   failure is thrown as the tool's Error (`name` the scripted type). A call the
//   script marks `needs_approval` is Anvia's native approval: the tool's
//   `requiresApproval` is a function answering true for those call ids.
// - the memory store: a `MemoryStore` over `env.store`. `load` is
//   `store.messages(thread, all)`; each `append` is one `store.append` of one
//   batch, one kit message per Anvia message, with the run id and turn Anvia
//   passed to that append as `run_id` and `round` and the Anvia message itself
//   in `metadata.anvia_message` (so `load` hands Anvia back exactly what it
//   appended); `recordError` (defined only when the kit's store declares
//   `errors`, as a store without an error table has none) is one
//   `store.record_error` with Anvia's run id, its error (`type` = name,
//   `message`, `status` when set) and its messages; `recorded_at` is left null
//   (Anvia gives none). `clear` throws: the kit's store never removes. A store
//   refusal is thrown as the store's own exception (`StoreError`,
//   `DuplicateIdError`, ... as memconform.contract names them), the message kept.
//   The memory scope is `{ sessionId: script.thread }`.
// - configuration: `save_policy` is passed as `memory.savePolicy` unchanged
//   (absent: not passed, Anvia's default); `max_rounds` (default 8) as
//   `maxTurns`; `max_retries` (default 2) as `retries: { maxAttempts:
//   max_retries + 1 }` (Anvia's README: maxAttempts counts every attempt), its
//   delays and retry rules Anvia's defaults. What Anvia throws while the agent
//   is constructed is the `construction_error`.
// - hooks: `input_guardrail` and `output_guardrail` are Anvia input/output
//   guardrails (one enforce policy), configured only when the script scripts
//   that guardrail (an agent without one is Anvia's default, and an enforced
//   output guardrail changes how Anvia streams: it holds the deltas back until
//   the guardrail passed): `block` is Anvia's block action with the hook's text
//   as its message, `replace` its rewrite, a scripted failure is thrown inside
//   the check. `run_error` (a hook every save-policy runtime has) is always
//   `lifecycle.onError`; Anvia itself ignores its failure.
// - a run cancelled before its N-th model call: the caller aborts the run's
//   `abortSignal` (Anvia's public cancellation) from a request middleware
//   (`onCompletionRequest`, which Anvia calls just before each model call) at
//   turn N.
// - streaming: `agent.stream(...)`; each `text_delta` event Anvia yields is a
//   `chunk` event on the kit's timeline.
// - a resume passes `{ continuation, response: { type: "tool-approval",
//   approved, reason } }` to `agent.generate`, the continuation being the one
//   Anvia returned with the suspended result (handed to the kit as the run's
//   `continuation` and back unchanged).
//
// What the caller is told (each run's outcome, stage, reply, error, pending
// calls) is what `generate` returned or threw, read off Anvia's own result:
// `status` completed / blocked (with `stage`) / suspended, `text` as the reply;
// a thrown `AgentRunCancelledError` is `cancelled`, any other throw `failed`,
// with the thrown error's name and message. The adapter claims nothing about
// what the model saw or which messages a run made: the kit reads both off its
// timeline.
//
// Declarations
// ------------
// - policies ["message", "turn", "run"]: Anvia's `MemorySavePolicy`.
// - hooks ["input_guardrail", "output_guardrail", "cancel", "approval",
//   "stream", "retry"]: Anvia's public API has each natively (guardrails,
//   abortSignal, requiresApproval + continuations, agent.stream, retries).
//   Not declared: `tool_error` and `run_end`. Anvia's public API has no hook
//   that sees a tool error or a completed run and can end the run (a throwing
//   tool's error always becomes an `error-text` result; `lifecycle.onFinish`
//   is an observer); the `AgentHook` with `onToolError` / `onRunEnd` is
//   internal (`@anvia/core/internal/agent`, used by Anvia's Studio), so the
//   scenarios needing those hooks are `unsupported`.
// - provides ["ids"]: Anvia's messages carry no ids (an assistant message has
//   one only when a provider returns a message id, which the kit's model does
//   not), so the adapter gives each message a kit id (`env.ids.next("msg")`)
//   when it is first appended or recorded, and keeps it for that message
//   object. Run ids are Anvia's (`runId`), rounds Anvia's append `turn`.

import { serve } from "../runtime.mjs";
import {
  KitMessages, asThrown, errorObject, importCore, memoryStore,
} from "./anvia-shared.mjs";

const COMPONENT = "agent";

const { core: anvia, version: ANVIA_VERSION } = await importCore(
  "MEMCONFORM_ANVIA_CORE", "anvia-runtime", { hint: "; Anvia needs >= 22.19" },
);

// -- values ------------------------------------------------------------------------------

function toolOutputText(output) {
  // As Anvia's own toolOutputToText.
  switch (output?.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "content":
      return output.value.map((p) => (p.type === "text" ? p.text : `[file:${p.mediaType}]`)).join("\n");
    case "execution-denied":
      return output.reason ?? "Tool execution was denied.";
    default:
      return "";
  }
}

/** An Anvia message as the kit's role, text and parts. */
function kitView(message) {
  const { role, content } = message;
  if (typeof content === "string") return { role, text: content, parts: [] };
  const parts = [];
  const texts = [];
  for (const part of content ?? []) {
    switch (part.type) {
      case "text":
        texts.push(part.text);
        break;
      case "tool-call":
        parts.push({ type: "tool_call", id: part.toolCallId, name: part.toolName, args: part.input });
        break;
      case "tool-result": {
        const out = { type: "tool_result", call_id: part.toolCallId, name: part.toolName };
        const text = toolOutputText(part.output);
        if (String(part.output?.type).startsWith("error") || part.output?.type === "execution-denied") {
          out.error = text;
        } else {
          out.result = part.output?.type === "json" ? part.output.value : text;
        }
        parts.push(out);
        texts.push(text);
        break;
      }
      case "tool-approval-response": {
        const out = { type: "tool_approval", call_id: part.toolCallId, approved: part.approved };
        if (part.reason !== undefined) out.reason = part.reason;
        parts.push(out);
        break;
      }
      default:
        parts.push({ type: String(part.type) });
    }
  }
  return { role, text: texts.join(role === "tool" ? "\n" : ""), parts };
}

// -- the run's world ---------------------------------------------------------------------

class World {
  constructor(script, env) {
    this.script = script;
    this.env = env;
    this.thread = String(script.thread);
    this.messages = new KitMessages(env, kitView); // Anvia message object -> its kit message
    this.runId = null; // Anvia's id of the run under way (lifecycle.onStart)
    this.toolCallId = null; // the call Anvia is about to run (lifecycle.onToolStart)
    this.turn = 0; // the model call Anvia is about to make (request middleware)
    this.cancelAt = null;
    this.abort = null;
  }
}

function model(world) {
  const { env } = world;
  const zero = () => ({
    inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0,
  });
  async function step(request) {
    const messages = [];
    if (request.instructions) messages.push({ role: "system", text: request.instructions, parts: [] });
    for (const message of request.chatHistory ?? []) messages.push(kitView(message));
    let answer;
    try {
      answer = await env.model(COMPONENT, { messages });
    } catch (error) {
      throw asThrown(error);
    }
    const choice = [];
    const reply = String(answer?.reply ?? "");
    const calls = answer?.tool_calls ?? [];
    if (reply || calls.length === 0) choice.push({ type: "text", text: reply });
    for (const call of calls) {
      const id = String(call.id ?? (await env.ids.next("call")));
      choice.push({
        type: "tool-call", toolCallId: id, callId: id, toolName: String(call.name), input: call.args ?? {},
      });
    }
    return {
      choice,
      usage: zero(),
      finishReason: calls.length > 0 ? "tool-calls" : "stop",
      rawResponse: answer,
    };
  }
  return {
    provider: "memconform",
    modelId: "scripted",
    capabilities: {
      streaming: true, tools: true, toolChoice: true, imageInput: false, documentInput: false,
      outputSchema: false, reasoning: false,
    },
    async completion(request) {
      return step(request);
    },
    async *streamCompletion(request) {
      const response = await step(request);
      for (const part of response.choice) {
        if (part.type === "text" && part.text) yield { type: "text_delta", delta: part.text };
        if (part.type === "tool-call") yield { type: "tool_call", toolCall: part };
      }
      yield { type: "final", response };
    },
  };
}

function toolNames(script) {
  const names = new Set(Object.keys(script.tools ?? {}));
  for (const step of script.model?.[COMPONENT] ?? []) {
    for (const call of step?.tool_calls ?? []) if (call?.name) names.add(String(call.name));
  }
  return [...names];
}

function approvalIds(script) {
  const ids = new Set();
  for (const step of script.model?.[COMPONENT] ?? []) {
    for (const call of step?.tool_calls ?? []) if (call?.needs_approval && call.id) ids.add(String(call.id));
  }
  return ids;
}

function tools(world) {
  const { env, script } = world;
  const needApproval = approvalIds(script);
  return toolNames(script).map((name) => {
    const tool = {
      name,
      definition: () => ({
        name,
        description: `the scripted tool ${name}`,
        parameters: { type: "object", additionalProperties: true },
      }),
      async call(args) {
        const callId = world.toolCallId;
        world.toolCallId = null;
        try {
          return await env.tool(name, args ?? {}, callId);
        } catch (error) {
          throw asThrown(error);
        }
      },
    };
    if (needApproval.size > 0) {
      tool.requiresApproval = (_args, context) => needApproval.has(String(context.toolCallId));
    }
    return tool;
  });
}

function guardrails(world) {
  const { env, script } = world;
  const scripted = script.hooks ?? {};
  const input = [];
  const output = [];
  const ask = async (name, payload) => {
    try {
      return await env.hook(name, payload);
    } catch (error) {
      throw asThrown(error);
    }
  };
  if ("input_guardrail" in scripted) {
    input.push(anvia.defineInputGuardrail({
      id: "memconform-input",
      async check(context, actions) {
        const verdict = await ask("input_guardrail", { run_id: context.run.runId, text: context.inputText });
        if (verdict?.action === "block") {
          return actions.block({ reason: "input_guardrail", message: verdict.text ?? undefined });
        }
        if (verdict?.action === "replace") return actions.rewrite({ inputText: String(verdict.text ?? "") });
        return actions.allow();
      },
    }));
  }
  if ("output_guardrail" in scripted) {
    output.push(anvia.defineOutputGuardrail({
      id: "memconform-output",
      async check(context, actions) {
        const verdict = await ask("output_guardrail", { run_id: context.run.runId, text: context.outputText });
        if (verdict?.action === "block") {
          return actions.block({ reason: "output_guardrail", message: verdict.text ?? undefined });
        }
        if (verdict?.action === "replace") return actions.rewrite({ outputText: String(verdict.text ?? "") });
        return actions.allow();
      },
    }));
  }
  if (input.length === 0 && output.length === 0) return undefined;
  return anvia.defineGuardrailPolicy({ id: "memconform", input, output });
}

function lifecycle(world) {
  const { env } = world;
  const hooks = {
    onStart(event) {
      world.runId = event.runId;
    },
    onToolStart(event) {
      world.toolCallId = event.toolCallId ?? null;
    },
  };
  {
    hooks.onError = async (event) => {
      try {
        await env.hook("run_error", { run_id: event.runId, error: errorObject(event.error) });
      } catch (error) {
        throw asThrown(error);
      }
    };
  }
  return hooks;
}

const cancellation = (world) => ({
  onCompletionRequest({ turn }) {
    world.turn = turn;
    if (world.cancelAt !== null && turn === world.cancelAt && world.abort) {
      world.abort.abort(`cancelled before model call ${turn}`);
    }
    return undefined;
  },
});

// -- running -----------------------------------------------------------------------------

async function tell(world, told, events) {
  const event = { run_id: told.run_id, outcome: told.outcome, stage: told.stage, error: told.error };
  await world.env.emit("outcome", event);
  events.push({ name: "outcome", ...event });
}

function fromResult(result) {
  const told = {
    run_id: result.runId ?? null,
    outcome: result.status,
    stage: result.status === "blocked" ? result.stage : null,
    reply: result.status === "suspended" ? null : result.text,
    error: null,
    pending_tool_calls: [],
  };
  if (result.status === "suspended") {
    const interaction = result.interaction;
    told.pending_tool_calls = [{ id: interaction.toolCallId, name: interaction.toolName }];
    told.continuation = { anvia: result.continuation };
  }
  return told;
}

function fromError(world, error) {
  return {
    run_id: world.runId,
    outcome: error instanceof anvia.AgentRunCancelledError ? "cancelled" : "failed",
    stage: null,
    reply: null,
    error: errorObject(error),
    pending_tool_calls: [],
  };
}

async function runOnce(world, agent, spec, state) {
  world.runId = null;
  world.toolCallId = null;
  world.cancelAt = spec.cancel_before_model_call ?? null;
  world.abort = new AbortController();
  const events = [];
  let options;
  if (spec.resume != null) {
    const response = { type: "tool-approval", approved: Boolean(spec.resume.approved) };
    if (spec.resume.reason !== undefined) response.reason = String(spec.resume.reason);
    const continuation = spec.resume.continuation?.anvia ?? state.continuation ?? undefined;
    options = { continuation, response };
  } else {
    options = { prompt: String(spec.input), session: { sessionId: world.thread } };
  }
  options.abortSignal = world.abort.signal;
  options.middlewares = [cancellation(world)];
  const streamed = Boolean(spec.stream ?? world.script.stream);
  let told;
  try {
    let result;
    if (streamed) {
      let failure;
      for await (const event of agent.stream(options)) {
        if (event.type === "text_delta") {
          const chunk = { run_id: world.runId, round: event.turn ?? world.turn, text: event.delta };
          await world.env.emit("chunk", chunk);
          events.push({ name: "chunk", ...chunk });
        } else if (event.type === "final") {
          result = event.result;
        } else if (event.type === "error") {
          failure = event.error;
        }
      }
      if (failure !== undefined) throw failure;
      if (result === undefined) throw new Error("agent.stream ended with neither a result nor an error");
    } else {
      result = await agent.generate(options);
    }
    told = fromResult(result);
    state.continuation = result.status === "suspended" ? result.continuation : null;
  } catch (error) {
    told = fromError(world, error);
  }
  await tell(world, told, events);
  return { kind: spec.resume != null ? "resume" : "input", ...told, events };
}

async function execute(script, env) {
  const world = new World(script, env);
  const recordsErrors = Boolean(await env.store.has("errors"));
  const memory = {
    store: memoryStore(world, recordsErrors, { loadScope: (a) => a?.scope, callScope: (a) => a?.scope }),
  };
  if (script.save_policy != null) memory.savePolicy = script.save_policy;
  let agent;
  try {
    const options = {
      id: "memconform",
      model: model(world),
      tools: tools(world),
      lifecycle: lifecycle(world),
      memory,
      maxTurns: script.max_rounds ?? 8,
      retries: { maxAttempts: (script.max_retries ?? 2) + 1 },
    };
    const policy = guardrails(world);
    if (policy !== undefined) options.guardrails = policy;
    agent = new anvia.Agent(options);
  } catch (error) {
    return {
      construction_error: { ...errorObject(error), field: "save_policy" },
      runs: [],
      thread: world.thread,
    };
  }
  const runs = [];
  const state = { continuation: null };
  for (const spec of script.runs ?? []) runs.push(await runOnce(world, agent, spec, state));
  return { construction_error: null, runs, thread: world.thread, save_policy: script.save_policy ?? undefined };
}

serve({
  name: "anvia",
  version: `@anvia/core ${ANVIA_VERSION}`,
  profiles: ["save-policy"],
  policies: ["message", "turn", "run"],
  hooks: ["input_guardrail", "output_guardrail", "cancel", "approval", "stream", "retry"],
  provides: ["ids"],
  execute,
});
