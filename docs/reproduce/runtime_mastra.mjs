// Mastra as a runtime: the findings of the save-policy run of
// node/frameworks/mastra/mastra-runtime.mjs, reproduced with Mastra alone
// (@mastra/core, @mastra/memory and zod as pinned in
// node/frameworks/mastra/package.json), offline: a tiny scripted
// LanguageModelV2, Mastra's own InMemoryStore, its Agent and Memory with their
// defaults. Nothing of the kit is imported.
//
// Run it from the root of a checkout, after `npm ci` in node/frameworks/mastra
// (Mastra needs Node.js 22.13 or later):
//
//   node docs/reproduce/runtime_mastra.mjs
//
// Each check prints `<rule> reproduced: ...` (or `NOT reproduced`) with what it
// saw; a rule the page leaves n/a (one of a save policy Mastra does not have)
// says so. The script exits 0 when every finding reproduced, 1 otherwise.

import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { join } from "node:path";

// The packages are resolved from node/frameworks/mastra/node_modules (this
// file lives outside the package folder, so bare imports would not find them).
const MODULES = fileURLToPath(new URL("../../node/frameworks/mastra/node_modules/", import.meta.url));
async function load(pkg, subpath = ".") {
  const root = join(MODULES, pkg);
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  let entry = manifest.exports?.[subpath] ?? manifest.exports;
  if (entry && typeof entry === "object") entry = entry.import ?? entry.default;
  if (entry && typeof entry === "object") entry = entry.default;
  if (typeof entry !== "string") throw new Error(`cannot find the ESM entry of ${pkg} ${subpath}; run npm ci in node/frameworks/mastra`);
  return import(pathToFileURL(join(root, entry)).href);
}

const { Agent } = await load("@mastra/core", "./agent");
const { InMemoryStore, MemoryStorage } = await load("@mastra/core", "./storage");
const { createTool } = await load("@mastra/core", "./tools");
const { Memory } = await load("@mastra/memory");
const { z } = await load("zod");

// Mastra logs provider and processor errors to the console; keep the output to the checks.
console.error = () => {};
console.warn = () => {};

const MEMORY_METHODS = ["getThreadById", "saveThread", "updateThread", "listMessages", "saveMessages", "updateMessages", "deleteMessages"];

/** Mastra's in-memory store, every memory-domain call logged as it happens. */
async function watchedStore(log, { refuseSave = false } = {}) {
  const store = new InMemoryStore();
  const memory = await store.getStore("memory");
  for (const name of MEMORY_METHODS) {
    const original = memory[name].bind(memory);
    memory[name] = async (args) => {
      log.push({ kind: "store", name, args });
      if (name === "saveMessages" && refuseSave) {
        const refused = new Error("the database refused the write");
        refused.name = "StoreError";
        throw refused;
      }
      return original(args);
    };
  }
  return { store, memory };
}

/** A LanguageModelV2 answering from a list of steps; a step `{fail}` throws. */
function scriptedModel(steps, log) {
  let call = 0;
  return {
    specificationVersion: "v2", provider: "fake", modelId: "scripted", supportedUrls: {},
    async doGenerate({ prompt }) {
      const step = steps[call++];
      log.push({ kind: "model", call, prompt });
      if (!step) throw new Error("the script has no more steps");
      if (step.fail) {
        const error = new Error(step.fail);
        error.name = "ModelError";
        throw error;
      }
      const content = [];
      if (step.text !== undefined) content.push({ type: "text", text: step.text });
      for (const [i, c] of (step.calls ?? []).entries()) {
        content.push({ type: "tool-call", toolCallId: c.id ?? `call-${call}-${i}`, toolName: c.name, input: JSON.stringify(c.args ?? {}) });
      }
      return {
        content,
        finishReason: step.calls?.length ? "tool-calls" : "stop",
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        warnings: [],
      };
    },
    async doStream() {
      throw new Error("not used by generate()");
    },
  };
}

function notifyTool(log, { fails = false } = {}) {
  return createTool({
    id: "notify_customer",
    description: "Tell the customer about an order.",
    inputSchema: z.object({ order: z.string() }),
    async execute(input) {
      log.push({ kind: "tool", input });
      if (fails) {
        const error = new Error("mail server said no");
        error.name = "ToolCallError";
        throw error;
      }
      return "notified";
    },
  });
}

const TOOL_ROUND = [
  { calls: [{ id: "call-1", name: "notify_customer", args: { order: "A-1" } }] },
  { text: "The customer has been told that order A-1 ships on Monday." },
];
const INPUT = "Please tell the customer that order A-1 ships on Monday.";

async function scenario({ steps, toolFails = false, refuseSave = false, outputProcessors, runs = [INPUT], options } = {}) {
  const log = [];
  const { store, memory } = await watchedStore(log, { refuseSave });
  const agent = new Agent({
    id: "orders", name: "orders", instructions: "",
    model: scriptedModel(steps, log),
    tools: { notify_customer: notifyTool(log, { fails: toolFails }) },
    memory: new Memory({ storage: store, ...(options ?? {}) }),
    ...(outputProcessors ? { outputProcessors } : {}),
  });
  const outcomes = [];
  for (const input of runs) {
    try {
      const result = await agent.generate(input, { memory: { thread: "orders", resource: "customer" } });
      outcomes.push({ returned: result });
    } catch (error) {
      outcomes.push({ threw: error });
    }
  }
  const stored = (await memory.listMessages({ threadId: "orders", perPage: false })).messages;
  return { log, outcomes, stored };
}

const saves = (log) => log.filter((e) => e.kind === "store" && e.name === "saveMessages");
const modelCallsBefore = (log, entry) => log.slice(0, log.indexOf(entry)).filter((e) => e.kind === "model").length;
const partTypes = (message) => (message.content?.parts ?? []).map((p) => p.type === "tool-invocation" ? `tool-invocation:${p.toolInvocation.state}` : p.type);
const describe = (messages) => messages.map((m) => `${m.role}(${partTypes(m).join(",")})`).join(" ");

// The rules the runtimes page charges to Mastra (it declares no save policy, so
// it is judged on the scenarios configuring none, message being the default);
// the other checks show what the rules of a configured policy, n/a on the page,
// would meet.
const SCORED = new Set(["SP-001", "SP-002", "SP-005", "SP-006", "SP-007", "SP-012", "SP-030"]);

async function checks() {
  const results = [];
  const add = (rule, held, what) =>
    results.push([SCORED.has(rule) ? rule : `${rule} (n/a on the page)`, Boolean(held), what]);

  // A completed run whose input and answer are empty text leaves nothing stored.
  const empty = await scenario({ steps: [{ text: "" }], runs: [""] });
  const emptyWhat = `generate("") answered "" and returned; saveMessages calls ${saves(empty.log).length}, the thread holds ${empty.stored.length} message(s)`;
  const lost = saves(empty.log).length === 0 && empty.stored.length === 0 && empty.outcomes[0].returned;
  add("SP-005", lost, `the accepted input, being empty text, is never stored: ${emptyWhat}`);
  add("SP-006", lost, `the run's batches are all left out (the same cause as SP-005): ${emptyWhat}`);
  add("SP-007", lost, `the final answer, being empty text, is never stored: ${emptyWhat}`);
  add("SP-012", lost, `nothing of the completed run stays stored for the next run: ${emptyWhat}`);

  // A completed run with one tool round.
  const done = await scenario({ steps: TOOL_ROUND });
  const doneSaves = saves(done.log);
  const onlySave = doneSaves[0];
  const savedMessages = onlySave?.args.messages ?? [];
  const oneAtEnd = doneSaves.length === 1 && modelCallsBefore(done.log, onlySave) === 2;
  const what = `${doneSaves.length} saveMessages call(s); the first after ${onlySave ? modelCallsBefore(done.log, onlySave) : "?"} of 2 model calls, holding ${describe(savedMessages)}`;
  add("SP-001", oneAtEnd, `no save policy to choose and the default writes the whole run at once: ${what}`);
  add("SP-008", oneAtEnd, `no write per round either: ${what}`);
  add("SP-025", oneAtEnd && savedMessages.some((m) => partTypes(m).includes("tool-invocation:result")), `tool calls and their results are written together with everything else at the end of the run: ${what}`);
  const threadFirst = done.log.findIndex((e) => e.name === "saveThread") < done.log.indexOf(onlySave);
  add("SP-010", threadFirst && oneAtEnd, `before any message is written Mastra writes its thread record (saveThread at the start of the run), then the run's messages once: ${done.log.filter((e) => e.kind === "store" && e.name.startsWith("save")).map((e) => e.name).join(", ")}`);

  // The first model call fails.
  const first = await scenario({ steps: [{ fail: "model call 1 failed" }] });
  const firstSaved = saves(first.log)[0]?.args.messages ?? [];
  const firstThrew = first.outcomes[0].threw;
  const keptError = firstSaved.length === 2 && partTypes(firstSaved[1]).includes("error");
  add("SP-009", keptError && firstThrew, `a run failing at its first model call still writes the input and an assistant message holding the error: ${describe(firstSaved)}; generate() threw ${firstThrew?.name}: ${firstThrew?.message}`);

  // The second model call fails, then a second run.
  const second = await scenario({ steps: [TOOL_ROUND[0], { fail: "model call 2 failed" }, { text: "Partly." }], runs: [INPUT, "Did it work?"] });
  const secondSaves = saves(second.log);
  const failedSaved = secondSaves[0]?.args.messages ?? [];
  const failedRun = failedSaved.length === 2 && partTypes(failedSaved[1]).includes("tool-invocation:result") && partTypes(failedSaved[1]).includes("error");
  add("SP-011", failedRun && second.outcomes[0].threw, `the failed run's work is written when it fails: ${describe(failedSaved)}; generate() threw ${second.outcomes[0].threw?.name}`);

  // Nothing records a failure apart from the transcript.
  const errorMethods = Object.getOwnPropertyNames(MemoryStorage.prototype).filter((n) => /error/i.test(n));
  const failureCalls = [...new Set(first.log.filter((e) => e.kind === "store").map((e) => e.name))];
  add("SP-013", errorMethods.length === 0 && keptError, `MemoryStorage has no method to record a run's failure (methods naming an error: ${JSON.stringify(errorMethods)}); a failed run calls only ${failureCalls.join(", ")}`);
  add("SP-014", errorMethods.length === 0 && keptError, `the failure is kept only as an 'error' part of a stored assistant message: ${JSON.stringify(firstSaved[1]?.content?.parts?.find((p) => p.type === "error")?.error ?? null)}`);

  // An output processor trips the wire.
  const blocker = {
    id: "output-guardrail", name: "output guardrail",
    processOutputResult({ messages, abort }) {
      abort("I cannot share that.");
      return messages;
    },
  };
  const blocked = await scenario({ steps: TOOL_ROUND, outputProcessors: [blocker] });
  const blockedResult = blocked.outcomes[0].returned;
  const nothingKept = saves(blocked.log).length === 0 && blocked.stored.length === 0;
  const toolRan = blocked.log.some((e) => e.kind === "tool");
  const blockedWhat = `tool ran: ${toolRan}; tripwire ${JSON.stringify(blockedResult?.tripwire?.reason ?? null)}; saveMessages calls ${saves(blocked.log).length}; thread holds ${blocked.stored.length} message(s)`;
  add("SP-019", nothingKept && blockedResult?.tripwire, `a run blocked by an output processor is reported with nothing written before: ${blockedWhat}`);
  add("SP-026", nothingKept && toolRan, `the blocked run's input, tool round and the block's text are not stored: ${blockedWhat}`);

  // The message write is refused.
  const refused = await scenario({ steps: TOOL_ROUND, refuseSave: true });
  const refusedError = refused.outcomes[0].threw;
  const refusedCalls = refused.log.filter((e) => e.kind === "model").length;
  add("SP-020", refusedError && refusedError.name !== "StoreError" && refusedCalls === 2,
    `the store's StoreError reaches the caller as ${refusedError?.name} (${refusedError?.id}): ${refusedError?.message}; the refused write came after ${refusedCalls} model calls`);

  // A tool throws.
  const throwing = await scenario({ steps: TOOL_ROUND, toolFails: true });
  const throwingSaves = saves(throwing.log);
  const invocation = throwingSaves[0]?.args.messages?.[1]?.content?.parts?.find((p) => p.type === "tool-invocation")?.toolInvocation;
  add("SP-023", throwingSaves.length === 1 && invocation?.errorText === "mail server said no" && throwing.outcomes[0].returned,
    `the run goes on and is written once at its end (${throwingSaves.length} write); the thrown ToolCallError is kept as errorText ${JSON.stringify(invocation?.errorText)}, without its type`);

  // What a stored message says of its run.
  const keys = [...new Set(done.stored.flatMap((m) => Object.keys(m)))].sort();
  add("SP-030", !keys.some((k) => /run|round|step/i.test(k)), `stored messages carry the keys ${JSON.stringify(keys)}: none names the run or the round that wrote it`);

  // No save-policy setting to refuse.
  let constructed;
  try {
    new Memory({ storage: new InMemoryStore(), options: { savePolicy: "sometimes" } });
    new Agent({ id: "x", name: "x", instructions: "", model: scriptedModel([], []), savePolicy: "sometimes" });
    constructed = "both constructed";
  } catch (error) {
    constructed = `refused: ${error.message}`;
  }
  add("SP-002", constructed === "both constructed", `Memory and Agent have no save-policy setting, so an unknown policy name is not refused: ${constructed}`);

  return results;
}

let failed = 0;
for (const [rule, held, what] of await checks()) {
  process.stdout.write(`${rule} ${held ? "reproduced" : "NOT reproduced"}: ${what}\n`);
  if (!held) failed += 1;
}
process.exit(failed ? 1 : 0);
