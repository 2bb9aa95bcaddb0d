// What the two Anvia adapters share (anvia-runtime.mjs for the 1.0 RC line,
// anvia-main-runtime.mjs for the main line): importing the core built outside
// the kit, Anvia's errors as the kit's error objects, the kit's failures as the
// errors a provider, tool or store would throw, and Anvia's memory store over
// the kit's store. Each line's own message shapes stay in its adapter, which
// hands its `kitView` (an Anvia message as the kit's role, text and parts) in.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { ScriptedFailure, StoreFailure, storeThrown, thrown } from "../runtime.mjs";

/** Where a stored kit message keeps the Anvia message it was made from. */
export const MESSAGE_KEY = "anvia_message";

/**
 * The core named by the environment variable `variable` (its built
 * `dist/index.js`) and its package version. A missing variable, a core that
 * does not load, or one `check` refuses (it returns the reason) ends the
 * process with the reason on stderr, prefixed by `label`.
 */
export async function importCore(variable, label, { hint = "", check = () => null } = {}) {
  const path = process.env[variable];
  const stop = (reason) => {
    process.stderr.write(`${label}: ${reason}\n`);
    process.exit(1);
  };
  if (!path) stop(`set ${variable} to the built @anvia/core dist/index.js`);
  let core;
  try {
    core = await import(pathToFileURL(path).href);
  } catch (error) {
    stop(`cannot import @anvia/core from ${path} (node ${process.version}${hint}): ` +
      `${error?.name}: ${String(error?.message).split("\n")[0]}`);
  }
  const refused = check(core);
  if (refused) stop(`${path} ${refused}`);
  let version = "unknown";
  try {
    version = JSON.parse(readFileSync(join(dirname(path), "..", "package.json"), "utf8")).version;
  } catch {}
  return { core, version };
}

/** An error Anvia threw or reported, as the kit's `{ type, message, status? }`. */
export function errorObject(error) {
  const out = {
    type: String(error?.name ?? "Error"),
    message: String(error?.message ?? error),
  };
  if (typeof error?.status === "number") out.status = error.status;
  return out;
}

/** A kit failure as the error its component would throw; anything else unchanged. */
export function asThrown(error) {
  if (error instanceof ScriptedFailure) return thrown(error);
  if (error instanceof StoreFailure) return storeThrown(error);
  return error;
}

/** `await promise` of a kit call, its failures rethrown by {@link asThrown}. */
export async function kitCall(promise) {
  try {
    return await promise;
  } catch (error) {
    throw asThrown(error);
  }
}

/** The stored kit message back as the Anvia message it was made from. */
export function anviaMessage(kit) {
  const kept = kit?.metadata?.[MESSAGE_KEY];
  if (kept && typeof kept === "object") return kept;
  return { role: kit.role, content: kit.text };
}

/**
 * The kit message of each Anvia message object: made once, with a kit id
 * (`env.ids.next("msg")`, since Anvia's messages carry none), the run id and
 * round given when it is first appended or recorded, and the Anvia message kept
 * in its metadata, so that `load` hands Anvia back exactly what it appended.
 */
export class KitMessages {
  constructor(env, kitView) {
    this.env = env;
    this.kitView = kitView;
    this.known = new WeakMap();
  }

  async of(message, runId, round) {
    const known = this.known.get(message);
    if (known !== undefined) return known;
    const view = this.kitView(message);
    const kit = {
      id: await this.env.ids.next("msg"),
      role: view.role,
      text: view.text,
      parts: view.parts,
      run_id: runId ?? null,
      round: round ?? null,
      turn_id: null,
      committed: true,
      metadata: { [MESSAGE_KEY]: message },
    };
    this.known.set(message, kit);
    return kit;
  }

  /** The Anvia message of a stored kit message, remembered as that message. */
  loaded(kit) {
    const message = anviaMessage(kit);
    this.known.set(message, kit);
    return message;
  }
}

/**
 * Anvia's memory store over the kit's: `load` reads the whole thread, each
 * `append` is one kit append of one batch stamped with Anvia's run id and
 * turn, `recordError` (only when the kit's store declares `errors`) one
 * `record_error`, and `clear` throws (the kit's store never removes). The
 * lines call the store differently: `loadScope` and `callScope` read the
 * memory scope (its `sessionId` is the thread) out of the arguments of `load`
 * and of the other calls. `world` holds the kit's `env`, the script's `thread`
 * and its {@link KitMessages}; its `seen(runId)`, when it has one, is told every
 * run id Anvia passes.
 */
export function memoryStore(world, recordsErrors, { loadScope, callScope }) {
  const { env, thread, messages } = world;
  const seen = (runId) => world.seen?.(runId);
  const threadOf = (scope) => String(scope?.sessionId ?? thread);
  const store = {
    async load(args) {
      const stored = await kitCall(env.store.messages({
        thread_id: threadOf(loadScope(args)), limit: null, include_uncommitted: false,
      }));
      return stored.map((kit) => messages.loaded(kit));
    },
    async append(args) {
      const { runId, turn } = args;
      seen(runId);
      const batch = [];
      for (const message of args.messages) batch.push(await messages.of(message, runId, turn));
      await kitCall(env.store.append({ thread_id: threadOf(callScope(args)), batch }));
    },
    async clear() {
      throw new Error("clear: the kit's store never removes stored messages");
    },
  };
  if (recordsErrors) {
    store.recordError = async (args) => {
      const { runId, error } = args;
      seen(runId);
      const kits = [];
      for (const message of args.messages) kits.push(await messages.of(message, runId, null));
      const scope = threadOf(callScope(args));
      await kitCall(env.store.record_error({
        thread_id: scope,
        record: { run_id: String(runId), error: errorObject(error), messages: kits, scope, recorded_at: null },
      }));
    };
  }
  return store;
}
