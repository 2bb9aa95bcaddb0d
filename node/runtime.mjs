// The runtime side of the memconform runtime protocol (memconform.runtime/1,
// see spec/runtime-protocol.md) for Node.js 20 or later, with no dependencies.
//
// A runtime written in JavaScript or TypeScript imports `serve` and hands it
// an object:
//
//   import { serve } from "../runtime.mjs";
//   serve({
//     name: "my-agent", version: "1.0.0",
//     profiles: ["save-policy"],
//     policies: ["message", "turn", "run"],   // or null: none declared
//     hooks: null,                            // or the optional hooks it has
//     provides: [],                           // what the adapter adds itself
//     async execute(script, env) { ...; return observation; },
//   });
//
// `env` is the kit's world, every part of it a call to the kit:
//   await env.model(component, request)   -> { reply, tool_calls, payload, usage }
//   await env.tool(name, args, callId)    -> result
//   await env.hook(name, payload)         -> { action, text }
//   await env.emit(name, data)            -> an event on the kit's timeline
//   await env.ids.next(prefix), await env.clock.now(), await env.clock.advance(s)
//   await env.ledger(), await env.modelCalls(component)
//   await env.store.<method>(params)      -> the store protocol's result, e.g.
//        env.store.append({ thread_id, batch }), env.store.messages({ thread_id, limit })
//   await env.store.capabilities(), await env.store.has(capability)
// A call the script makes fail throws ScriptedFailure (its `error` is the
// scripted error object); a store's refusal throws StoreFailure (its `kind` is
// the store protocol's error kind). A runtime refusing the script's
// configuration (an unknown mode, a negative window) throws
// ConfigurationRefused before it runs anything, naming the setting: the kit
// reads it as a Python runtime's ValueError. Anything else thrown out of
// `execute` is answered as the runtime's own failure.
//
// The kit starts a fresh process for every script, so nothing needs resetting.
// Standard output carries protocol lines only: console.log is sent to
// standard error once `serve` runs.

import { createInterface } from "node:readline";

export const PROTOCOL = "memconform.runtime/1";

/** A failure the script asked for; `error` is the scripted error object. */
export class ScriptedFailure extends Error {
  constructor(error) {
    super(String(error?.message ?? ""));
    this.name = "ScriptedFailure";
    this.error = error;
  }
}

/** A store's refusal; `kind` is the store protocol's error kind. */
export class StoreFailure extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "StoreFailure";
    this.kind = kind;
  }
}

/** The runtime refuses the script's configuration; the message names the setting. */
export class ConfigurationRefused extends Error {
  constructor(message) {
    super(message);
    this.name = "ConfigurationRefused";
  }
}

class ProtocolGone extends Error {}

const STORE_METHODS = [
  "append", "messages", "set_committed", "record_error", "errors", "append_record",
  "records", "read_state", "write_state", "put_fact", "get_fact", "facts", "forget",
];

function writeLine(message) {
  return new Promise((resolve) => {
    process.stdout.write(`${JSON.stringify(message)}\n`, resolve);
  });
}

class Pipe {
  constructor() {
    this.input = createInterface({ input: process.stdin, crlfDelay: Infinity });
    this.lines = this.input[Symbol.asyncIterator]();
    this.calls = 0;
  }

  async read() {
    const next = await this.lines.next();
    if (next.done) throw new ProtocolGone("the kit closed the pipe");
    return JSON.parse(next.value);
  }

  async call(method, params = {}) {
    this.calls += 1;
    const call = this.calls;
    await writeLine({ call, method, params });
    const answer = await this.read();
    if (answer.call !== call) {
      throw new ProtocolGone(`the kit answered call ${answer.call}, not ${call}`);
    }
    if (!("error" in answer)) return answer.result;
    const { kind, message } = answer.error;
    if (kind === "scripted-failure") throw new ScriptedFailure(answer.error.error ?? { message });
    throw new StoreFailure(kind, message);
  }
}

function environment(pipe) {
  const store = {
    capabilities: () => pipe.call("store.capabilities"),
    has: (capability) => pipe.call("store.has", { capability }),
  };
  for (const method of STORE_METHODS) {
    store[method] = (params) => pipe.call(`store.${method}`, params);
  }
  return {
    model: (component, request) => pipe.call("model", { component, request }),
    modelCalls: (component = null) => pipe.call("model_calls", { component }),
    tool: (name, args, callId = null) => pipe.call("tool", { name, args, call_id: callId }),
    hook: (name, payload = null) => pipe.call("hook", { name, payload }),
    emit: (name, data = {}) => pipe.call("emit", { name, data }),
    ledger: () => pipe.call("ledger"),
    ids: { next: (prefix) => pipe.call("ids.next", { prefix }) },
    clock: {
      now: () => pipe.call("clock.now"),
      advance: (seconds) => pipe.call("clock.advance", { seconds }),
    },
    store,
  };
}

function declaration(runtime) {
  return {
    protocol: PROTOCOL,
    name: String(runtime.name ?? "node-runtime"),
    version: String(runtime.version ?? "0"),
    profiles: [...(runtime.profiles ?? [])],
    policies: runtime.policies == null ? null : [...runtime.policies],
    hooks: runtime.hooks == null ? null : [...runtime.hooks],
    provides: [...(runtime.provides ?? [])],
  };
}

// -- for framework adapters ---------------------------------------------------------

/**
 * `env` with every call queued behind the one before it: the protocol's pipe
 * carries one call at a time, and a framework's concurrent work (parallel tools,
 * a guardrail beside a model call) then reaches the kit in the order it asks.
 */
export function oneAtATime(env) {
  let tail = Promise.resolve();
  const one = (fn) => (...args) => {
    const result = tail.then(() => fn(...args));
    tail = result.then(() => undefined, () => undefined);
    return result;
  };
  const store = {};
  for (const [name, fn] of Object.entries(env.store)) store[name] = one(fn);
  return {
    model: one(env.model),
    modelCalls: one(env.modelCalls),
    tool: one(env.tool),
    hook: one(env.hook),
    emit: one(env.emit),
    ledger: one(env.ledger),
    ids: { next: one(env.ids.next) },
    clock: { now: one(env.clock.now), advance: one(env.clock.advance) },
    store,
  };
}

/**
 * A scripted failure as the error a provider, a tool or a hook would throw: an
 * Error named by the scripted `type`, with its message, its `status`, `body`
 * and `cause` when scripted, and the scripted object as `error`.
 */
export function thrown(failure) {
  const scripted = failure.error ?? {};
  const error = new Error(String(scripted.message ?? failure.message ?? ""));
  error.name = String(scripted.type ?? "Error");
  if (scripted.status !== undefined) error.status = scripted.status;
  if (scripted.body !== undefined) error.body = scripted.body;
  if (scripted.cause !== undefined) error.cause = scripted.cause;
  error.error = scripted;
  return error;
}

/** `await promise`, a ScriptedFailure rethrown as {@link thrown} makes it. */
export async function orThrown(promise) {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof ScriptedFailure) throw thrown(error);
    throw error;
  }
}

/** The store's refusals by kind, named as memconform.contract names them. */
export const STORE_ERRORS = {
  "duplicate-id": "DuplicateIdError",
  conflict: "ConflictError",
  "unsupported-value": "UnsupportedValueError",
  value: "ValueError",
  key: "KeyError",
};

/**
 * A StoreFailure as the store's own error: an Error named from
 * {@link STORE_ERRORS} (`StoreError` otherwise), the message and `kind` kept.
 */
export function storeThrown(failure) {
  const refused = new Error(failure.message);
  refused.name = STORE_ERRORS[failure.kind] ?? "StoreError";
  refused.kind = failure.kind;
  return refused;
}

/** `await promise` of a store call, a StoreFailure rethrown by {@link storeThrown}. */
export async function storeCall(promise) {
  try {
    return await promise;
  } catch (error) {
    if (!(error instanceof StoreFailure)) throw error;
    throw storeThrown(error);
  }
}

/** Answer the kit's requests with `runtime` until it says `close`. */
export async function serve(runtime) {
  console.log = console.error; // stdout is the protocol's
  console.info = console.error;
  const pipe = new Pipe();
  for (;;) {
    let request;
    try {
      request = await pipe.read();
    } catch {
      process.exit(0);
    }
    const { id, method, params = {} } = request;
    if (method === "close") {
      await writeLine({ id, result: null });
      process.exit(0);
    }
    try {
      let result;
      if (method === "hello") result = declaration(runtime);
      else if (method === "execute") result = await runtime.execute(params.script, environment(pipe));
      else throw new Error(`unknown method ${JSON.stringify(method)}`);
      await writeLine({ id, result });
    } catch (error) {
      if (error instanceof ProtocolGone) process.exit(0);
      if (error instanceof ConfigurationRefused && method === "execute") {
        await writeLine({ id, error: { kind: "configuration", message: error.message } });
        continue;
      }
      await writeLine({ id, error: { kind: "internal", message: `${error?.name}: ${error?.message}` } });
    }
  }
}
