#!/usr/bin/env node
// LangGraph for JavaScript's prebuilt ReAct agent as a runtime: the findings of
// its save-policy run, reproduced with LangGraph.js alone (`@langchain/langgraph`
// and `@langchain/core`, the versions node/frameworks/package.json pins),
// offline, with a scripted chat model and an in-memory checkpointer
// (`MemorySaver`) that records what each checkpoint adds to the thread's
// messages, under each durability mode (the default "async", "sync", "exit").
//
// Run it from the repository root after `npm ci` in node/frameworks:
//
//   node docs/reproduce/runtime_langgraph_js.mjs
//
// (the packages are loaded from node/frameworks/node_modules, whatever the
// working directory). Each check prints `<rule> reproduced: ...` and the
// script exits 1 if any behaviour is no longer what it says.

import { createRequire } from "node:module";

const require = createRequire(new URL("../../node/frameworks/package.json", import.meta.url));
const { MemorySaver } = require("@langchain/langgraph");
const { createReactAgent } = require("@langchain/langgraph/prebuilt");
const { BaseChatModel } = require("@langchain/core/language_models/chat_models");
const { AIMessage, HumanMessage } = require("@langchain/core/messages");
const { tool } = require("@langchain/core/tools");

const ROLE = { human: "user", ai: "assistant", tool: "tool", system: "system" };
const roleOf = (message) => ROLE[message.getType()] ?? message.getType();
const shown = (batches) => batches.map((b) => `[${b.join(",")}]`).join(" ") || "none";

/** Answers each call with the next scripted step: an AIMessage, or an Error to throw. */
class ScriptedChat extends BaseChatModel {
  constructor(steps, log) {
    super({});
    this.steps = [...steps];
    this.log = log;
    this.seen = [];
  }

  _llmType() {
    return "scripted";
  }

  bindTools() {
    return this;
  }

  async _generate(messages) {
    this.seen.push(messages.map(roleOf));
    this.log.push(`model call ${this.seen.length}`);
    const step = this.steps.shift();
    if (step instanceof Error) throw step;
    return { generations: [{ text: String(step.content), message: step }] };
  }
}

/** MemorySaver keeping, for each put that adds messages, the roles it adds to the ones
 * the previous checkpoint held (one batch per such put) and the list it then holds. */
class RecordingSaver extends MemorySaver {
  constructor(log) {
    super();
    this.log = log;
    this.batches = [];
    this.snapshots = [];
    this.held = [];
  }

  async put(config, checkpoint, metadata, newVersions) {
    const messages = [...(checkpoint.channel_values?.messages ?? [])];
    if (messages.length > this.held.length) {
      const added = messages.slice(this.held.length).map(roleOf);
      this.batches.push(added);
      this.snapshots.push(messages);
      this.held = messages;
      this.log.push(`stored [${added}]`);
    }
    return super.put(config, checkpoint, metadata, newVersions);
  }
}

const calls = (...names) => new AIMessage({
  content: "",
  tool_calls: names.map((name) => ({ name, args: { order: "A-1" }, id: `call-${name}`, type: "tool_call" })),
});
const answer = (text) => new AIMessage({ content: text });
const ask = (text) => ({ messages: [new HumanMessage({ content: text })] });

function notifyCustomer(log) {
  return tool(async () => {
    log.push("tool notify_customer");
    return "notified";
  }, { name: "notify_customer", description: "Tell the customer about an order.", schema: { type: "object", properties: { order: {} } } });
}

function agent(steps, saver, log, options = {}) {
  const llm = new ScriptedChat(steps, log);
  const graph = createReactAgent({ llm, tools: [notifyCustomer(log)], checkpointer: saver, ...options.extra });
  return { graph, llm };
}

const MODES = [null, "sync", "exit"];
// LangGraph's default durability ("async", not passed), then sync and exit.

async function run(graph, given, mode, thread = "t") {
  const options = { configurable: { thread_id: thread } };
  if (mode !== null) options.durability = mode;
  try {
    await graph.invoke(given, options);
    return "completed";
  } catch (error) {
    return `raised ${error.name}: ${error.message}`;
  }
}

/** The tool calls a snapshot holds with no tool message answering them. */
function unanswered(messages) {
  const answered = new Set(messages.filter((m) => m.getType() === "tool").map((m) => m.tool_call_id));
  return messages.flatMap((m) => (m.getType() === "ai" ? (m.tool_calls ?? []).map((c) => c.id) : []))
    .filter((id) => !answered.has(id));
}

async function checks() {
  const results = [];
  const check = (rule, held, what) => results.push([rule, Boolean(held), what]);

  {
    const log = [];
    const { graph } = agent([answer("Fine.")], new RecordingSaver(log), log, { extra: { savePolicy: "no-such-policy" } });
    const outcome = await run(graph, ask("Hello"), null);
    check("SP-002", outcome === "completed",
      "createReactAgent takes no save-policy setting: given savePolicy \"no-such-policy\" it builds the graph "
      + `and the run ${outcome}, so no policy name is ever refused`);
  }

  for (const mode of MODES) {
    const name = mode ?? "async (default)";
    const log = [];
    const saver = new RecordingSaver(log);
    const { graph } = agent([calls("notify_customer"), answer("Shipped Monday."), answer("It shipped.")], saver, log);
    const outcome = await run(graph, ask("When does A-1 ship?"), mode);
    const want = mode === "exit" ? "[user,assistant,tool,assistant]" : "[user] [assistant] [tool] [assistant]";
    const open = saver.snapshots.map(unanswered).find((ids) => ids.length > 0) ?? [];
    const detail = open.length > 0 ? ` (the checkpoint after the model step holds the call ${open.join(", ")} `
      + "with no result: the tools run in the next step)" : "";
    check("SP-001", outcome === "completed" && shown(saver.batches) === want,
      `${name}: one completed tool round is saved as ${shown(saver.batches)}, not as message batches `
      + `([user] [assistant,tool] [assistant])${detail}`);

    await run(graph, ask("Did it?"), mode);
    const stamped = saver.held.flatMap((m) => Object.keys({ ...m.additional_kwargs, ...m.response_metadata }))
      .filter((key) => /run|round/i.test(key));
    check("SP-030", saver.held.length === 6 && stamped.length === 0,
      `${name}: after two runs the ${saver.held.length} saved messages carry no run id or round `
      + "(nothing in their fields names either): the runs' messages cannot be told apart");
  }

  return results;
}

let failed = 0;
for (const [rules, held, what] of await checks()) {
  console.log(`${rules} ${held ? "reproduced" : "NOT reproduced"}: ${what}`);
  if (!held) failed += 1;
}
process.exit(failed ? 1 : 0);
