// The OpenAI Agents SDK for JavaScript as a runtime: the runtime page's
// findings, reproduced with the SDK alone (`@openai/agents`, as pinned in
// node/frameworks/package.json), offline, with a scripted model of its own and
// a session that keeps each addItems() call as it came.
//
// Run from the root of a checkout, after `npm ci` in node/frameworks:
//
//   node docs/reproduce/runtime_openai_agents_js.mjs
//
// Each check prints `<rule> reproduced: ...`; the script exits 1 if any
// behaviour is no longer what the page says.

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const frameworks = new URL("../../node/frameworks/package.json", import.meta.url);
const sdk = await import(pathToFileURL(createRequire(frameworks).resolve("@openai/agents")).href);
const { Agent, Runner, Usage, tool } = sdk;

/** A model answering from a list of steps: a step is a tool call, a reply, or an Error to throw. */
class ListModel {
  constructor(steps) {
    this.steps = [...steps];
  }

  async getResponse() {
    const step = this.steps.shift();
    if (step instanceof Error) throw step;
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
    if (step.call) {
      const { name, args, id } = step.call;
      return { usage, output: [{ type: "function_call", id, callId: id, name, arguments: JSON.stringify(args), status: "completed" }] };
    }
    return {
      usage,
      output: [{ type: "message", id: `msg-${this.steps.length}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: step.reply }] }],
    };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error("not used");
  }
}

/** A session keeping each addItems() call as one batch. */
class ListSession {
  constructor(id) {
    this.id = id;
    this.batches = [];
  }
  async getSessionId() { return this.id; }
  async getItems(limit) {
    const items = this.batches.flat();
    return limit === undefined ? items : items.slice(-limit);
  }
  async addItems(items) { this.batches.push([...items]); }
  async popItem() { throw new Error("not used"); }
  async clearSession() { throw new Error("not used"); }
}

const notify = tool({
  name: "notify_customer",
  description: "Tell the customer about an order.",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"], additionalProperties: false },
  strict: false,
  execute: async ({ order }) => `notified about ${order}`,
});

const toolRound = () => [
  { call: { name: "notify_customer", args: { order: "A-1" }, id: "call-1" } },
  { reply: "Order A-1 ships on Monday." },
];
const runner = new Runner({ tracingDisabled: true });
const roles = (batch) => batch.map((item) => (item.type === "function_call" ? "assistant"
  : item.type === "function_call_result" ? "tool" : item.role));

async function checks() {
  const results = [];

  // SP-001: with no policy to choose, one completed tool round is one batch.
  const whole = new ListSession("whole");
  const agent = new Agent({ name: "orders", model: new ListModel(toolRound()), tools: [notify] });
  await runner.run(agent, "When does A-1 ship?", { session: whole });
  const shapes = whole.batches.map((b) => `[${roles(b).join(",")}]`).join(" ");
  const failed = new ListSession("failed");
  const failing = new Agent({ name: "orders", model: new ListModel([toolRound()[0], new Error("provider down")]), tools: [notify] });
  let thrown = "";
  try {
    await runner.run(failing, "When does A-1 ship?", { session: failed });
  } catch (error) {
    thrown = error.message;
  }
  results.push(["SP-001", shapes === "[user,assistant,tool,assistant]" && failed.batches.length === 0 && thrown !== "",
    `a completed tool round was saved as ${shapes} (one addItems() call); a run whose second ` +
    `model call threw (${JSON.stringify(thrown)}) saved ${failed.batches.length} batches, not even the user's input`]);

  // SP-002: run() has no save-policy option, so no policy name can be refused.
  const named = new ListSession("named");
  const again = new Agent({ name: "orders", model: new ListModel([{ reply: "Hello." }]), tools: [] });
  await runner.run(again, "Hi", { session: named, savePolicy: "every-other-message" });
  results.push(["SP-002", named.batches.length === 1,
    "run() given an unknown savePolicy option went ahead and saved the run: the SDK has no save-policy setting to check it against"]);

  // SP-030: the items saved carry no run id or round.
  const two = new ListSession("two");
  const twice = new Agent({ name: "orders", model: new ListModel([...toolRound(), { reply: "A-2 ships on Tuesday." }]), tools: [notify] });
  await runner.run(twice, "When does A-1 ship?", { session: two });
  await runner.run(twice, "And A-2?", { session: two });
  const keys = [...new Set(two.batches.flat().flatMap((item) => Object.keys(item)))].sort();
  const stamped = keys.filter((k) => /run|round|turn/i.test(k));
  results.push(["SP-030", two.batches.length === 2 && stamped.length === 0,
    `${two.batches.length} addItems() calls over two runs, their items' keys ${JSON.stringify(keys)}: none names the run or the round that wrote it`]);
  return results;
}

let missed = 0;
for (const [rule, held, what] of await checks()) {
  console.log(`${rule} ${held ? "reproduced" : "NOT reproduced"}: ${what}`);
  if (!held) missed += 1;
}
process.exit(missed ? 1 : 0);
