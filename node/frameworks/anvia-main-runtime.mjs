// The Anvia TypeScript agent SDK's `main` line (`@anvia/core` with the older
// `AgentBuilder` API) as a memconform save-policy runtime, over the kit's stdio
// runtime protocol (spec/runtime-protocol.md).
//
//   CORE=/path/to/anvia-main/packages/core/dist/index.js
//   PATH=/path/to/node-24/bin:$PATH memconform run --profile save-policy \
//     --runtime "stdio:env MEMCONFORM_ANVIA_MAIN_CORE=$CORE node node/frameworks/anvia-main-runtime.mjs"
//
// The variable is given inside the command for the same reason as for
// anvia-runtime.mjs (the kit's fresh-process scenarios start the runtime with
// only PATH and TMPDIR set).
//
// What it drives
// --------------
// Anvia's own prompt loop on the `main` branch of github.com/anvia-hq/anvia
// (ac59bee9, "Version Packages"): `new AgentBuilder(id, model).tools(...)
// .hook(...).guardrails(...).memory(store, { savePolicy }).build()`, then per
// run `agent.session(thread).prompt(input).maxTurns(n).withCompletionRetries(
// { maxAttempts }).send()` (or `.stream()` for a streamed run). The core is
// imported from the file named by MEMCONFORM_ANVIA_MAIN_CORE (its built
// `dist/index.js`); nothing of Anvia lives in this repository.
//
// Translate, never help
// ---------------------
// The same rule as anvia-runtime.mjs: Anvia's loop decides when the store is
// loaded and appended to, what each append holds, when `recordError` is called,
// what the model is shown, what a tool error becomes and how a run ends. The
// adapter supplies only what an application supplies:
//
// - the model: a `CompletionModel` (and `streamCompletion`) whose every call is
//   `env.model("agent", { messages })`, the messages being Anvia's request
//   (`instructions` as a system message when set, then `chatHistory`, which on
//   this line already ends with the prompt). The scripted step becomes Anvia's
//   `CompletionResponse` (`choice`: a text part, then a `tool_call` part per
//   call with the scripted id as `id` and `callId`, `function: { name,
//   arguments }`); a call id is made with `env.ids.next("call")` only when the
//   script gives none. A scripted failure is thrown as the provider's Error
//   (`name` the scripted type, `status`, `body`, `cause` when scripted).
// - tools: one Anvia `Tool` per tool name the script knows, whose `call` is
//   `env.tool(name, args, callId)`; the call id is read from the `onToolCall`
//   hook Anvia calls just before the tool (the hook answers nothing, so the
//   tool runs). What a throwing tool becomes is Anvia's (its `toString()` as
//   the result), unless the kit's `tool_error` hook is scripted.
// - the memory store: a `MemoryStore` over `env.store`, as in anvia-runtime.mjs
//   (`load(context)` is `store.messages`, each `append` one `store.append` with
//   Anvia's run id and turn as `run_id` and `round`, the Anvia message kept in
//   `metadata.anvia_message`; `recordError` only when the kit's store declares
//   `errors`; `clear` throws). The session id is the script's thread.
// - configuration: `save_policy` as `memory(store, { savePolicy })` unchanged
//   (absent: Anvia's default); `max_rounds` (default 8) as the request's
//   `maxTurns`; `max_retries` (default 2) as `withCompletionRetries({
//   maxAttempts: max_retries + 1 })`, the rest Anvia's defaults. What Anvia
//   throws while the agent is built is the `construction_error`.
// - hooks: Anvia's public `PromptHook` has each of the kit's optional hooks
//   this line needs. `input_guardrail` / `output_guardrail` are Anvia
//   guardrails (one enforce policy), configured only when scripted. `tool_error`
//   is `onToolError` (configured only when scripted): the kit's `terminate` is
//   Anvia's `run.cancel(text)`, anything else lets Anvia's own handling go on.
//   `run_end` is `onRunEnd` (only when scripted): the kit's `cancel` is
//   `run.cancel(text)`. `run_error` is always `onRunError`, its answer
//   ignored. A cancellation before the N-th model call is `run.cancel(...)`
//   answered from `onTurnStart` at turn N (this line's public way to stop a
//   run; it has no abort signal).
// - streaming: `.stream()`; each `text_delta` event is a kit `chunk`; the
//   `final` event is the run's result, an `error` event its failure.
//
// What the caller is told is read off Anvia: `send()` returns a
// `PromptResponse` with no status, so a run is `blocked` (stage `input` or
// `output`) when its `guardrails` decisions hold an applied `block` at that
// boundary, otherwise `completed`, `output` being the reply; a thrown
// `PromptCancelledError` is `cancelled`, any other throw `failed`, each with the
// thrown error's own name and message (to the caller and in the error record). The
// run id is Anvia's, as Anvia hands it to the store or a guardrail (this line
// gives it to no hook and returns it only from a stream's `final` event); a run
// that ends before Anvia has handed it anywhere (no store call carried it) is
// told to the caller under a kit id (`env.ids.next("run")`), as the protocol
// needs one.
//
// Declarations
// ------------
// - policies ["message", "turn", "run"]: Anvia's `MemorySavePolicy`.
// - hooks ["input_guardrail", "output_guardrail", "tool_error", "run_end",
//   "cancel", "stream", "retry"]. Not declared: `approval`. This line cannot
//   suspend a run: a tool needing approval is answered during the run by the
//   agent's `approvals.handler` (or fails the run with
//   `ToolApprovalRequiredError`), and there is no continuation to resume from,
//   so the approval scenarios are `unsupported`.
// - provides ["ids"]: as anvia-runtime.mjs, a kit id per message.

import { serve } from "../runtime.mjs";
import { KitMessages, errorObject, importCore, kitCall, memoryStore } from "./anvia-shared.mjs";

const COMPONENT = "agent";

const { core: anvia, version: ANVIA_VERSION } = await importCore(
  "MEMCONFORM_ANVIA_MAIN_CORE", "anvia-main-runtime",
  { check: (core) => (typeof core.AgentBuilder === "function" ? null : "has no AgentBuilder (not the main line)") },
);

// -- values ------------------------------------------------------------------------------

function resultText(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");
}

/** A main-line Anvia message as the kit's role, text and parts. */
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
      case "tool_call":
        parts.push({
          type: "tool_call", id: part.id, name: part.function?.name, args: part.function?.arguments ?? {},
        });
        break;
      case "tool_result": {
        const text = resultText(part.content);
        parts.push({ type: "tool_result", call_id: part.id, name: part.toolName ?? null, result: text });
        texts.push(text);
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
    this.messages = new KitMessages(env, kitView);
    this.runId = null;
    this.toolCallId = null;
    this.cancelAt = null;
  }

  seen(runId) {
    if (runId != null && this.runId === null) this.runId = String(runId);
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
    const answer = await kitCall(env.model(COMPONENT, { messages }));
    const choice = [];
    const reply = String(answer?.reply ?? "");
    const calls = answer?.tool_calls ?? [];
    if (reply || calls.length === 0) choice.push({ type: "text", text: reply });
    for (const call of calls) {
      const id = String(call.id ?? (await env.ids.next("call")));
      choice.push({
        type: "tool_call", id, callId: id, function: { name: String(call.name), arguments: call.args ?? {} },
      });
    }
    return { choice, usage: zero(), finishReason: calls.length > 0 ? "tool_calls" : "stop", rawResponse: answer };
  }
  return {
    provider: "memconform",
    defaultModel: "scripted",
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
        if (part.type === "tool_call") yield { type: "tool_call", toolCall: part };
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

function tools(world) {
  const { env, script } = world;
  return toolNames(script).map((name) => ({
    name,
    definition: () => ({
      name,
      description: `the scripted tool ${name}`,
      parameters: { type: "object", additionalProperties: true },
    }),
    async call(args) {
      const callId = world.toolCallId;
      world.toolCallId = null;
      return kitCall(env.tool(name, args ?? {}, callId));
    },
  }));
}

function guardrails(world) {
  const { env, script } = world;
  const scripted = script.hooks ?? {};
  const input = [];
  const output = [];
  const ask = (name, payload) => kitCall(env.hook(name, payload));
  if ("input_guardrail" in scripted) {
    input.push(anvia.defineInputGuardrail({
      id: "memconform-input",
      async check(context, actions) {
        world.seen(context.run?.runId);
        const verdict = await ask("input_guardrail", { run_id: world.runId, text: context.inputText });
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
        world.seen(context.run?.runId);
        const verdict = await ask("output_guardrail", { run_id: world.runId, text: context.outputText });
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

function promptHook(world) {
  const { env, script } = world;
  const scripted = script.hooks ?? {};
  const hook = {
    onTurnStart({ turn, run }) {
      if (world.cancelAt !== null && turn === world.cancelAt) {
        return run.cancel(`cancelled before model call ${turn}`);
      }
      return undefined;
    },
    onToolCall({ toolCallId }) {
      world.toolCallId = toolCallId ?? null;
      return undefined;
    },
    async onRunError({ error }) {
      await kitCall(env.hook("run_error", { run_id: world.runId, error: errorObject(error) }));
      return undefined;
    },
  };
  if ("tool_error" in scripted) {
    hook.onToolError = async ({ toolName, error, run }) => {
      const verdict = await kitCall(env.hook("tool_error", {
        run_id: world.runId, tool: toolName, error: errorObject(error),
      }));
      if (verdict?.action === "terminate") return run.cancel(String(verdict.text ?? "terminated"));
      return undefined;
    };
  }
  if ("run_end" in scripted) {
    hook.onRunEnd = async ({ output, run }) => {
      const verdict = await kitCall(env.hook("run_end", { run_id: world.runId, reply: output }));
      if (verdict?.action === "cancel") return run.cancel(String(verdict.text ?? "cancelled by run_end"));
      return undefined;
    };
  }
  return hook;
}

// -- running -----------------------------------------------------------------------------

function blockedStage(decisions) {
  for (const decision of decisions ?? []) {
    if (decision.action === "block" && decision.applied) return decision.boundary;
  }
  return null;
}

function fromResult(world, result, runId) {
  const stage = blockedStage(result.guardrails);
  return {
    run_id: runId ?? world.runId,
    outcome: stage === null ? "completed" : "blocked",
    stage,
    reply: result.output,
    error: null,
    pending_tool_calls: [],
  };
}

function fromError(world, error) {
  return {
    run_id: world.runId,
    outcome: error instanceof anvia.PromptCancelledError ? "cancelled" : "failed",
    stage: null,
    reply: null,
    error: errorObject(error),
    pending_tool_calls: [],
  };
}

async function runOnce(world, agent, spec) {
  world.runId = null;
  world.toolCallId = null;
  world.cancelAt = spec.cancel_before_model_call ?? null;
  const events = [];
  const streamed = Boolean(spec.stream ?? world.script.stream);
  let told;
  try {
    const request = agent
      .session(world.thread)
      .prompt(String(spec.input))
      .maxTurns(world.script.max_rounds ?? 8)
      .withCompletionRetries({ maxAttempts: (world.script.max_retries ?? 2) + 1 });
    if (streamed) {
      let result;
      let failure;
      for await (const event of request.stream()) {
        if (event.type === "text_delta") {
          const chunk = { run_id: world.runId, round: event.turn ?? null, text: event.delta };
          await world.env.emit("chunk", chunk);
          events.push({ name: "chunk", ...chunk });
        } else if (event.type === "final") {
          result = event;
        } else if (event.type === "error") {
          failure = event.error;
        }
      }
      if (failure !== undefined) throw failure;
      if (result === undefined) throw new Error("stream ended with neither a final event nor an error");
      told = fromResult(world, result, result.runId);
    } else {
      told = fromResult(world, await request.send(), null);
    }
  } catch (error) {
    told = fromError(world, error);
  }
  // A run that fails before Anvia hands its id to the store or a guardrail has no
  // id the caller can read; the caller is then given a kit id for it.
  if (told.run_id == null) told.run_id = await world.env.ids.next("run");
  const event = { run_id: told.run_id, outcome: told.outcome, stage: told.stage, error: told.error };
  await world.env.emit("outcome", event);
  events.push({ name: "outcome", ...event });
  return { kind: "input", ...told, events };
}

async function execute(script, env) {
  const world = new World(script, env);
  const recordsErrors = Boolean(await env.store.has("errors"));
  let agent;
  try {
    const memoryOptions = {};
    if (script.save_policy != null) memoryOptions.savePolicy = script.save_policy;
    let builder = new anvia.AgentBuilder("memconform", model(world))
      .tools(tools(world))
      .hook(promptHook(world))
      .memory(memoryStore(world, recordsErrors, { loadScope: (a) => a, callScope: (a) => a?.context }),
        memoryOptions);
    const policy = guardrails(world);
    if (policy !== undefined) builder = builder.guardrails(policy);
    agent = builder.build();
  } catch (error) {
    return {
      construction_error: { ...errorObject(error), field: "save_policy" },
      runs: [],
      thread: world.thread,
    };
  }
  const runs = [];
  for (const spec of script.runs ?? []) {
    if (spec.resume != null) {
      // Not reached: without the `approval` hook the kit runs no resuming script.
      throw new Error("anvia-main-runtime: this line has no continuation to resume");
    }
    runs.push(await runOnce(world, agent, spec));
  }
  return { construction_error: null, runs, thread: world.thread, save_policy: script.save_policy ?? undefined };
}

serve({
  name: "anvia-main",
  version: `@anvia/core ${ANVIA_VERSION} (main)`,
  profiles: ["save-policy"],
  policies: ["message", "turn", "run"],
  hooks: ["input_guardrail", "output_guardrail", "tool_error", "run_end", "cancel", "stream", "retry"],
  provides: ["ids"],
  execute,
});
