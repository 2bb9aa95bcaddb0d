// A save-policy agent runtime in plain JavaScript (Node.js 20, no dependencies)
// for the memconform runtime protocol (spec/runtime-protocol.md), built on
// ../runtime.mjs. It runs the save-policy profile of document 000: an agent
// loop (input guardrail, model rounds with tools, output guardrail, run-end
// hook) whose messages reach the store under one of three save policies:
//
//   message  every completed batch as soon as it completes
//   turn     one batch per completed round (an unfinished round is dropped)
//   run      one batch of the whole run, once it has a response outcome
//
// Run it under the kit:
//
//   memconform run --runtime "stdio:node node/examples/save-policy-runtime.mjs" \
//       --profile save-policy --out /tmp/rt-node
//
// The module exports `makeRuntime(defects)`: with an empty set (the default)
// it is a conforming runtime; a set of defect names switches on deliberate,
// realistic bugs (see save-policy-runtime-broken.mjs), so the kit can be seen
// catching them. It serves itself only when run as the main program.
//
// Everything the agent touches goes through `env` (the kit's world): the fake
// model, the scripted tools and hooks, ids, the clock and the store.

import { pathToFileURL } from "node:url";
import { ScriptedFailure, StoreFailure, serve } from "../runtime.mjs";

const POLICY_NAMES = ["message", "turn", "run"];
const DEFAULT_POLICY = "message";
const MODEL = "agent"; // the fake-model component of this profile
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/** The exception type each store refusal kind stands for. */
const STORE_ERROR_TYPES = {
  store: "StoreError",
  "duplicate-id": "DuplicateIdError",
  conflict: "ConflictError",
  "unsupported-value": "UnsupportedValueError",
  value: "ValueError",
  key: "KeyError",
};

// -- small helpers ---------------------------------------------------------------

/** Ends a run as failed (or cancelled) with `error` as the run's error. */
class RunFailure extends Error {
  constructor(error, { cancelled = false } = {}) {
    super(String(error?.message ?? ""));
    this.name = "RunFailure";
    this.error = error;
    this.cancelled = cancelled;
  }
}

/** A script this runtime cannot read (the kit never sends one). */
class ScriptProblem extends Error {
  constructor(message) {
    super(message);
    this.name = "ScriptError";
  }
}

/** The error object a failure hands to the caller and the error record. */
function errorOf(failure) {
  if (failure instanceof RunFailure) return failure.error;
  if (failure instanceof ScriptedFailure) {
    const { type, ...rest } = failure.error ?? {};
    return { type: type ? String(type) : "Error", ...rest };
  }
  const type = STORE_ERROR_TYPES[failure.kind] ?? "StoreError";
  const message = type === "KeyError" ? pyRepr(failure.message) : failure.message;
  return { type, message: String(message ?? "") };
}

/** Whether a thrown value is one the run turns into its failure (anything else
 *  is this runtime's bug or the kit stopping it, and goes up unchanged). */
function isRunEnding(thrown) {
  return thrown instanceof RunFailure || thrown instanceof ScriptedFailure ||
    thrown instanceof StoreFailure;
}

/** A Python-style quoted string, for messages naming a configured value. */
function pyRepr(text) {
  const s = String(text);
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r")
    .replace(/\t/g, "\\t");
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
}

/** JSON text with sorted keys, ", "/": " separators and ASCII escapes: how a
 *  non-text tool result is written into the transcript. */
function canonicalJson(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "null";
  if (typeof value === "string") {
    let out = '"';
    for (const ch of value) {
      for (let i = 0; i < ch.length; i += 1) {
        const code = ch.charCodeAt(i);
        const c = ch[i];
        if (c === '"') out += '\\"';
        else if (c === "\\") out += "\\\\";
        else if (c === "\n") out += "\\n";
        else if (c === "\r") out += "\\r";
        else if (c === "\t") out += "\\t";
        else if (c === "\b") out += "\\b";
        else if (c === "\f") out += "\\f";
        else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, "0")}`;
        else out += c;
      }
    }
    return `${out}"`;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(", ")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${canonicalJson(k)}: ${canonicalJson(value[k])}`).join(", ")}}`;
}

/** What a tool result reads as, for the model and in the transcript. */
function resultText(part) {
  if ("error" in part) return String(part.error);
  return typeof part.result === "string" ? part.result : canonicalJson(part.result);
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function withoutKey(object, key) {
  const { [key]: _dropped, ...rest } = object;
  return rest;
}

// -- the script ------------------------------------------------------------------

/** The parts of a save-policy script this runtime reads, with their defaults. */
function readScript(script) {
  if (!isObject(script)) throw new ScriptProblem("script: expected an object");
  const { thread } = script;
  if (typeof thread !== "string" || thread === "") {
    throw new ScriptProblem("thread: expected a non-empty thread id");
  }
  if (script.variant != null) {
    throw new ScriptProblem(`variant: this runtime reproduces no variant, got ${pyRepr(script.variant)}`);
  }
  const policy = script.save_policy ?? DEFAULT_POLICY;
  if (typeof policy !== "string") throw new ScriptProblem("save_policy: expected text");
  const stream = script.stream ?? false;
  if (!Array.isArray(script.runs) || script.runs.length === 0) {
    throw new ScriptProblem("runs: expected a non-empty list of runs");
  }
  const runs = script.runs.map((raw, index) => {
    if (!isObject(raw) || ("input" in raw) === ("resume" in raw)) {
      throw new ScriptProblem(`runs[${index}]: give exactly one of 'input' or 'resume'`);
    }
    const resume = "resume" in raw ? {
      approved: Boolean(raw.resume?.approved),
      reason: raw.resume?.reason ?? "",
      continuation: raw.resume?.continuation ?? null,
    } : null;
    return {
      index,
      input: resume ? null : String(raw.input),
      resume,
      stream: Boolean(raw.stream ?? stream),
      cancelBeforeModelCall: raw.cancel_before_model_call ?? null,
    };
  });
  if (runs[0].resume && !runs[0].resume.continuation) {
    throw new ScriptProblem("runs[0].resume: the first run has nothing to resume");
  }
  return {
    thread,
    policy,
    maxRounds: script.max_rounds ?? 8,
    maxRetries: script.max_retries ?? 2,
    runs,
  };
}

// -- the thread in the store -----------------------------------------------------

/** The one thread a script works on, as the agent sees the store. */
function threadStore(env, threadId) {
  return {
    load: () => env.store.messages({ thread_id: threadId, limit: null, include_uncommitted: false }),
    async append(batch) {
      if (batch.length === 0) return; // nothing completed: nothing to send
      await env.store.append({ thread_id: threadId, batch });
    },
    keepsErrors: () => env.store.has("errors"),
    recordError: (record) => env.store.record_error({ thread_id: threadId, record }),
  };
}

// -- the save policies -----------------------------------------------------------
//
// A policy hears about each moment of a run and decides what to append. It never
// changes what the run does. The moments, in run order:
//   inputAccepted(user)           the input guardrail let the input through
//   approvalAnswered(approval)    a resumed run answered a pending approval
//   approvedToolsRan(results)     ... and the approved tools produced results
//   toolsRequested(assistant)     the model asked for tools; none has run yet
//   roundDone(messages)           the round's tool call and its results
//   answerReady(answer)           the final answer, after the output guardrail
//   responseOutcome(runMessages)  the run-end hook let the outcome stand
//   suspended(round, runMessages) the run stops to wait for an approval
// A failed or cancelled run hears nothing more: what it had not appended is lost.

const POLICIES = {
  /** Each completed batch goes to the store at once. */
  message(thread, defects) {
    let deferredInput = [];
    return {
      async inputAccepted(user) {
        if (defects.has("message-defers-input")) deferredInput = [user];
        else await thread.append([user]);
      },
      approvalAnswered: (approval) => thread.append([approval]),
      async approvedToolsRan(results) {
        for (const result of results) await thread.append([result]);
      },
      async toolsRequested() {},
      roundDone: (messages) => thread.append(messages),
      answerReady: (answer) => thread.append([answer]),
      async responseOutcome() {
        // the defect: the input held back until the run had an outcome
        await thread.append(deferredInput);
        deferredInput = [];
      },
      suspended: (round) => thread.append(round),
    };
  },

  /** A round is stored whole once it completes; the input opens the first one. */
  turn(thread) {
    let openRound = [];
    const hold = (messages) => { openRound.push(...messages); };
    const close = async (messages = []) => {
      const batch = [...openRound, ...messages];
      openRound = [];
      await thread.append(batch);
    };
    return {
      async inputAccepted(user) { hold([user]); },
      async approvalAnswered(approval) { hold([approval]); },
      approvedToolsRan: (results) => close(results),
      async toolsRequested() {},
      roundDone: (messages) => close(messages),
      async answerReady(answer) { hold([answer]); },
      responseOutcome: () => close(),
      suspended: (round) => close(round),
    };
  },

  /** Nothing is stored until the run has a response outcome; then all of it. */
  run(thread) {
    return {
      async inputAccepted() {},
      async approvalAnswered() {},
      async approvedToolsRan() {},
      async toolsRequested() {},
      async roundDone() {},
      async answerReady() {},
      // the run's one batch carries the round it is appended in, the run's last
      responseOutcome: (runMessages) => thread.append(lastRound(runMessages)),
      suspended: (_round, runMessages) => thread.append(lastRound(runMessages)),
    };
  },
};

function lastRound(messages) {
  const round = messages.length ? messages[messages.length - 1].round : null;
  return messages.map((m) => ({ ...m, round }));
}

// -- the agent -------------------------------------------------------------------

/** One script's worth of agent: every run of the script, in order, on one thread. */
class SavePolicyAgent {
  constructor(script, env, defects) {
    this.script = readScript(script);
    this.env = env;
    this.defects = defects;
    this.thread = threadStore(env, this.script.thread);
    this.suspension = null; // { view, pending } left by a run waiting for approval
  }

  /** The configuration error refusing the policy name, or null. */
  configurationError() {
    const { policy } = this.script;
    if (POLICY_NAMES.includes(policy)) return null;
    return {
      type: "ConfigurationError",
      field: "save_policy",
      message: `save_policy must be one of ${POLICY_NAMES.join(", ")}, got ${pyRepr(policy)}`,
    };
  }

  async execute() {
    const refusal = this.configurationError();
    const runs = [];
    if (refusal === null) {
      for (const spec of this.script.runs) runs.push(await this.runOne(spec));
    }
    return {
      save_policy: this.script.policy,
      thread: this.script.thread,
      variant: null,
      construction_error: refusal,
      runs,
    };
  }

  // -- one run ----------------------------------------------------------------

  async runOne(spec) {
    const run = {
      spec,
      id: await this.env.ids.next("run"),
      policy: POLICIES[this.script.policy](this.thread, this.defects),
      view: [], // what the model is shown: history, then the run's messages
      made: [], // the run's new messages, in order
      events: [],
      modelCalls: [],
      round: 1,
      modelCallCount: 0,
    };
    await this.emit(run, "run_started", { run_index: spec.index });
    let result;
    try {
      result = spec.resume ? await this.resumeRun(run) : await this.startRun(run);
    } catch (thrown) {
      if (!isRunEnding(thrown)) throw thrown;
      result = await this.failRun(run, thrown);
    }
    return {
      run_id: run.id,
      kind: spec.resume ? "resume" : "input",
      ...result,
      events: run.events,
      model_calls: run.modelCalls,
      new_messages: run.made,
    };
  }

  /** A new run: history, the input guardrail, the input, then the loop. */
  async startRun(run) {
    const { input } = run.spec;
    run.view = await this.thread.load();
    let verdict;
    try {
      verdict = await this.env.hook("input_guardrail", { run_id: run.id, text: input });
    } catch (error) {
      await this.newMessage(run, "user", input); // the failed run's record holds the prompt
      throw error;
    }
    if (verdict.action === "block") {
      if (this.defects.has("blocked-input-stored")) {
        // the defect: the refused input is kept "for the transcript" anyway
        await this.thread.append([await this.newMessage(run, "user", input)]);
      }
      return this.finish(run, "blocked", { stage: "input", reply: verdict.text ?? null });
    }
    const user = await this.newMessage(run, "user", input);
    await run.policy.inputAccepted(user);
    return this.loop(run);
  }

  /** A resumed run: the pending approval is answered (an approval message, then
   *  the tool's result, both tool messages), then the loop goes on. */
  async resumeRun(run) {
    const answer = run.spec.resume;
    let suspension = this.suspension;
    this.suspension = null;
    if (suspension === null && answer.continuation) {
      suspension = await this.suspensionFromStore(answer.continuation);
    }
    if (suspension === null) {
      throw new ScriptProblem(`runs[${run.spec.index}].resume: no suspended run to resume`);
    }
    run.view = [...suspension.view];
    const results = [];
    for (const call of suspension.pending) {
      const decision = answer.approved ? "approved" : "denied";
      const note = answer.reason ? `: ${answer.reason}` : "";
      const approval = await this.newMessage(run, "tool", `approval ${decision}${note}`, [
        { type: "tool_approval", call_id: call.id, approved: answer.approved },
      ]);
      await run.policy.approvalAnswered(approval);
      const part = answer.approved ? await this.runTool(run, call) : {
        type: "tool_result", call_id: call.id, name: call.name,
        error: `ToolApprovalDenied: ${answer.reason || "not approved"}`,
      };
      results.push(await this.newMessage(run, "tool", resultText(part), [part]));
    }
    await run.policy.approvedToolsRan(results);
    return this.loop(run);
  }

  /** A suspended run rebuilt from the store alone (a fresh process): the model's
   *  view is the thread as stored; the pending calls are the named run's stored
   *  tool calls that have neither a result nor an approval answer yet. */
  async suspensionFromStore(continuation) {
    const { run_id: runId, tool_call_ids: wanted } = continuation;
    const view = await this.thread.load();
    const partsOf = (message) => (message.parts ?? []).filter(isObject);
    const answered = new Set();
    for (const message of view) {
      for (const part of partsOf(message)) {
        if (part.type === "tool_result" || part.type === "tool_approval") {
          answered.add(String(part.call_id));
        }
      }
    }
    const pending = [];
    for (const message of view) {
      if (message.role !== "assistant" || message.run_id !== runId) continue;
      for (const part of partsOf(message)) {
        if (part.type !== "tool_call") continue;
        if (Array.isArray(wanted) && !wanted.includes(part.id)) continue;
        if (!answered.has(String(part.id))) pending.push({ ...part });
      }
    }
    if (pending.length === 0) {
      throw new RunFailure({
        type: "NothingToResumeError",
        message: `run ${pyRepr(runId)} has no pending tool call in the store`,
      });
    }
    return { view, pending };
  }

  /** Model rounds until an answer, a suspension or a failure. */
  async loop(run) {
    for (;;) {
      if (run.round > this.script.maxRounds) {
        throw new RunFailure({
          type: "MaxRoundsError",
          message: `the run needed more than ${this.script.maxRounds} rounds`,
        });
      }
      const step = await this.askModel(run);
      const reply = String(step.reply || "");
      const requested = step.tool_calls || [];
      if (requested.length === 0) return this.answer(run, reply);

      const calls = [];
      for (const raw of requested) calls.push(await this.toolCall(raw, calls.length));
      const callParts = calls.map((call) => withoutKey(call, "needs_approval"));
      const assistant = await this.newMessage(run, "assistant", reply, callParts);
      if (calls.some((call) => call.needs_approval)) return this.suspend(run, assistant, calls);

      await run.policy.toolsRequested(assistant);
      const results = [];
      for (const call of calls) results.push(await this.runTool(run, call));
      const tool = await this.newMessage(run, "tool", results.map(resultText).join("\n"), results);
      await run.policy.roundDone([assistant, tool]);
      run.round += 1;
    }
  }

  /** One tool call the model asked for, with an id (made up when it has none). */
  async toolCall(raw, index) {
    if (!isObject(raw) || typeof raw.name !== "string") {
      throw new ScriptProblem(`model.${MODEL}: tool_calls[${index}] needs a 'name'`);
    }
    return {
      type: "tool_call",
      id: raw.id || (await this.env.ids.next("call")),
      name: raw.name,
      args: "args" in raw ? raw.args : {},
      needs_approval: Boolean(raw.needs_approval),
    };
  }

  /** One model call of the round; a transient provider failure is retried. */
  async askModel(run) {
    run.modelCallCount += 1;
    if (run.spec.cancelBeforeModelCall === run.modelCallCount) {
      throw new RunFailure(
        { type: "RunCancelledError", message: `cancelled before model call ${run.modelCallCount}` },
        { cancelled: true },
      );
    }
    for (let attempt = 1; ; attempt += 1) {
      const context = run.view.map(({ id, role, text, parts }) => ({ id, role, text, parts: [...(parts ?? [])] }));
      run.modelCalls.push({ round: run.round, attempt, context });
      let step;
      try {
        step = await this.env.model(MODEL, { run_id: run.id, round: run.round, attempt, messages: context });
      } catch (thrown) {
        const transient = thrown instanceof ScriptedFailure &&
          RETRYABLE_STATUSES.has(thrown.error?.status);
        if (transient && attempt <= this.script.maxRetries) continue;
        throw thrown;
      }
      if (run.spec.stream) {
        for (const word of String(step.reply || "").split(/\s+/).filter(Boolean)) {
          await this.emit(run, "chunk", { round: run.round, text: word });
        }
      }
      return step;
    }
  }

  /** Run one tool. A tool that throws gives an error result, unless the
   *  tool-error hook terminates the run (which then ends cancelled). */
  async runTool(run, call) {
    const part = { type: "tool_result", call_id: String(call.id), name: String(call.name) };
    try {
      part.result = await this.env.tool(part.name, call.args, part.call_id);
    } catch (thrown) {
      if (!(thrown instanceof ScriptedFailure)) throw thrown;
      const error = errorOf(thrown);
      const verdict = await this.env.hook("tool_error", { run_id: run.id, tool: part.name, error });
      if (verdict.action === "terminate") {
        const reason = verdict.text || `the tool-error hook terminated ${part.name}`;
        throw new RunFailure(
          { type: "RunCancelledError", message: String(reason), tool: part.name },
          { cancelled: true },
        );
      }
      part.error = `ToolCallError: ${error.message ?? ""}`;
    }
    return part;
  }

  /** Stop for approval: calls needing none still run, the round so far is handed
   *  to the policy (the pending call without a result) and the run is suspended. */
  async suspend(run, assistant, calls) {
    const pending = calls.filter((call) => call.needs_approval);
    await run.policy.toolsRequested(assistant);
    const done = [];
    for (const call of calls) if (!call.needs_approval) done.push(await this.runTool(run, call));
    const round = [assistant];
    if (done.length > 0) {
      round.push(await this.newMessage(run, "tool", done.map(resultText).join("\n"), done));
    }
    await run.policy.suspended(round, [...run.made]);
    this.suspension = { view: [...run.view], pending };
    return this.finish(run, "suspended", {
      pending_tool_calls: pending.map((call) => withoutKey(call, "needs_approval")),
      continuation: { run_id: run.id, tool_call_ids: pending.map((call) => call.id) },
    });
  }

  /** The final answer: output guardrail, the policy, the run-end hook, the outcome. */
  async answer(run, modelText) {
    let verdict;
    try {
      verdict = await this.env.hook("output_guardrail", { run_id: run.id, text: modelText });
    } catch (error) {
      await this.newMessage(run, "assistant", modelText); // and the answer it was shown
      throw error;
    }
    let text = modelText;
    let stage = null;
    if (verdict.action === "replace" || verdict.action === "block") {
      text = String(verdict.text || "");
      if (verdict.action === "block") stage = "output";
    }
    const answer = await this.newMessage(run, "assistant", text);
    await run.policy.answerReady(answer);
    const end = await this.env.hook("run_end", { run_id: run.id, reply: text });
    if (end.action === "cancel") {
      throw new RunFailure(
        { type: "RunCancelledError", message: "cancelled by the run-end hook" },
        { cancelled: true },
      );
    }
    await run.policy.responseOutcome([...run.made]);
    return this.finish(run, stage === null ? "completed" : "blocked", { stage, reply: text });
  }

  /** A failed or cancelled run: the run_error hook, the error record, the outcome.
   *  Neither cleanup step may replace the run's error. */
  async failRun(run, failure) {
    const error = errorOf(failure);
    const cancelled = failure instanceof RunFailure && failure.cancelled;
    try {
      await this.env.hook("run_error", { run_id: run.id, error });
    } catch (thrown) {
      if (!(thrown instanceof ScriptedFailure)) throw thrown;
    }
    if (this.defects.has("run-stores-failed-run") && this.script.policy === "run") {
      // the defect: a failed run is flushed as if it had completed
      try { await this.thread.append([...run.made]); } catch (thrown) {
        if (!isRunEnding(thrown)) throw thrown;
      }
    }
    if (!this.defects.has("error-record-skipped") && (await this.thread.keepsErrors())) {
      try {
        await this.thread.recordError({
          run_id: run.id,
          error,
          messages: [...run.made],
          scope: this.script.thread,
          recorded_at: await this.env.clock.now(),
        });
      } catch (thrown) {
        if (!isRunEnding(thrown)) throw thrown; // a refused record keeps the run's error
      }
    }
    return this.finish(run, cancelled ? "cancelled" : "failed", { error });
  }

  // -- bookkeeping ------------------------------------------------------------

  /** A new message of the run: a fresh id, the run id and the current round. */
  async newMessage(run, role, text, parts = []) {
    const message = {
      id: await this.env.ids.next("msg"),
      role,
      text,
      parts,
      run_id: run.id,
      round: run.round,
      turn_id: null,
      committed: true,
      metadata: {},
    };
    run.made.push(message);
    run.view.push(message);
    return message;
  }

  /** An event on the kit's timeline, kept in the run's observation too. */
  async emit(run, name, data) {
    const event = { run_id: run.id, ...data };
    await this.env.emit(name, event);
    run.events.push({ name, ...event });
  }

  /** Report the outcome to the caller (the `outcome` event) and describe the run. */
  async finish(run, outcome, { stage = null, reply = null, error = null, ...extra } = {}) {
    await this.emit(run, "outcome", { outcome, stage, error });
    return { outcome, stage, reply, error, pending_tool_calls: [], ...extra };
  }
}

/** The runtime object `serve` answers with; `defects` switches deliberate bugs on. */
export function makeRuntime(defects = new Set()) {
  return {
    name: defects.size === 0 ? "node-save-policy-example" : "node-save-policy-example-broken",
    version: "1.0.0",
    profiles: ["save-policy"],
    policies: [...POLICY_NAMES],
    hooks: null,
    provides: [],
    execute: (script, env) => new SavePolicyAgent(script, env, defects).execute(),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  serve(makeRuntime());
}
