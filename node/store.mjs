#!/usr/bin/env node
// A small in-memory store for Node.js 20 that speaks the memconform stdio
// protocol (memconform.stdio/1, see spec/stdio-protocol.md). No dependencies.
//
//   memconform run --store "stdio:node node/store.mjs"
//
// It shows what a store in another language needs to do, and it is tested by
// the kit like any other store. What it keeps: the required methods, commit
// flags, error records, turn records, working state with compare-and-set,
// knowledge, and atomic batches. It does not declare `durable` (everything is
// lost when the process ends) nor `concurrent-writers` (each process has its
// own memory, so two writers never share a thread).
//
// Exactness: JSON.parse would turn 12345678901234567890 into a double and 1.0
// into 1, so this file carries its own small JSON reader that keeps every
// number as its source text and gives it back unchanged. Objects are read into
// Maps, so a key such as "__proto__" is an ordinary key. Strings hold any
// UTF-16 text; message text with a lone surrogate is refused as
// `unsupported-value`, because it is not Unicode text.

import { createInterface } from "node:readline";

const PROTOCOL = "memconform.stdio/1";
const NAME = "memconform-node-example";
const VERSION = "1.0.0";
const CAPABILITIES = [
  "commit-flags",
  "errors",
  "turn-records",
  "state",
  "knowledge",
];
const ROLES = new Set(["user", "assistant", "tool", "system"]);

// -- JSON that keeps numbers exactly -------------------------------------------

class RawNumber {
  constructor(text) {
    this.text = text;
  }
}

class StoreFailure extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

function parseJson(text) {
  let i = 0;
  const fail = (what) => {
    throw new StoreFailure("internal", `bad JSON at offset ${i}: ${what}`);
  };
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i += 1;
  };
  const literal = (word, value) => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail(`unexpected ${JSON.stringify(text[i] ?? "end")}`);
  };
  const string = () => {
    i += 1; // opening quote
    let out = "";
    for (;;) {
      const c = text[i];
      if (c === undefined) fail("unterminated string");
      if (c === '"') {
        i += 1;
        return out;
      }
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else if (e in ESCAPES) {
          out += ESCAPES[e];
          i += 2;
        } else {
          fail("bad escape");
        }
      } else {
        if (c < " ") fail("control character in string");
        out += c;
        i += 1;
      }
    }
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === "{") {
      i += 1;
      const map = new Map();
      space();
      if (text[i] === "}") {
        i += 1;
        return map;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail("expected a key");
        const key = string();
        space();
        if (text[i] !== ":") fail("expected ':'");
        i += 1;
        map.set(key, value());
        space();
        if (text[i] === ",") {
          i += 1;
        } else if (text[i] === "}") {
          i += 1;
          return map;
        } else {
          fail("expected ',' or '}'");
        }
      }
    }
    if (c === "[") {
      i += 1;
      const list = [];
      space();
      if (text[i] === "]") {
        i += 1;
        return list;
      }
      for (;;) {
        list.push(value());
        space();
        if (text[i] === ",") {
          i += 1;
        } else if (text[i] === "]") {
          i += 1;
          return list;
        } else {
          fail("expected ',' or ']'");
        }
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true", true);
    if (c === "f") return literal("false", false);
    if (c === "n") return literal("null", null);
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (!match) fail(`unexpected ${JSON.stringify(c ?? "end")}`);
    i += match[0].length;
    return new RawNumber(match[0]);
  };
  const result = value();
  space();
  if (i !== text.length) fail("trailing characters");
  return result;
}

function toJson(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`;
}

// -- argument checks ----------------------------------------------------------------

function field(params, name, kind) {
  if (!params.has(name)) throw new StoreFailure("value", `params: missing field '${name}'`);
  const v = params.get(name);
  const ok =
    kind === "string" ? typeof v === "string"
    : kind === "boolean" ? typeof v === "boolean"
    : kind === "array" ? Array.isArray(v)
    : kind === "object" ? v instanceof Map
    : true;
  if (!ok) throw new StoreFailure("value", `params: field '${name}' must be ${kind}`);
  return v;
}

function integer(v, name) {
  if (v === null) return null;
  if (!(v instanceof RawNumber) || !/^-?\d+$/.test(v.text)) {
    throw new StoreFailure("value", `${name} must be an integer or null`);
  }
  return BigInt(v.text);
}

function checkMessage(m, where) {
  if (!(m instanceof Map)) throw new StoreFailure("value", `${where} is not an object`);
  if (typeof m.get("id") !== "string") throw new StoreFailure("value", `${where}: id must be a string`);
  if (!ROLES.has(m.get("role"))) throw new StoreFailure("value", `${where}: unknown role`);
  const text = m.get("text");
  if (typeof text !== "string") throw new StoreFailure("value", `${where}: text must be a string`);
  if (!text.isWellFormed()) {
    throw new StoreFailure("unsupported-value", `${where}: text holds a lone surrogate`);
  }
}

function compareCodePoints(a, b) {
  const x = [...a];
  const y = [...b];
  for (let k = 0; k < Math.min(x.length, y.length); k += 1) {
    const d = x[k].codePointAt(0) - y[k].codePointAt(0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

const committed = (m) => m.get("committed") !== false;
const UNREADABLE = Symbol("a stored message the store cannot read");

// -- the store ----------------------------------------------------------------------

class MemoryStore {
  constructor() {
    this.threads = new Map(); // thread id -> { list: [message Map], index: Map<id, position> }
    this.errorRecords = new Map(); // thread id -> [record]
    this.turnRecords = []; // [record]
    this.state = new Map(); // scope -> Map<key, { value, version: BigInt }>
    this.knowledge = new Map(); // scope -> Map<subject, fact>
  }

  thread(id) {
    let t = this.threads.get(id);
    if (!t) {
      t = { list: [], index: new Map() };
      this.threads.set(id, t);
    }
    return t;
  }

  append(p) {
    const threadId = field(p, "thread_id", "string");
    const batch = field(p, "batch", "array");
    const t = this.threads.get(threadId);
    const seen = new Set();
    batch.forEach((m, k) => {
      checkMessage(m, `message ${k}`);
      const id = m.get("id");
      if (seen.has(id) || (t && t.index.has(id))) {
        throw new StoreFailure("duplicate-id", `message id ${JSON.stringify(id)} is already in the thread`);
      }
      seen.add(id);
    });
    if (batch.length === 0) return null;
    const target = this.thread(threadId);
    for (const m of batch) {
      target.index.set(m.get("id"), target.list.length);
      target.list.push(m);
    }
    return null;
  }

  messages(p) {
    const threadId = field(p, "thread_id", "string");
    const limit = integer(p.has("limit") ? p.get("limit") : null, "limit");
    if (limit !== null && limit < 0n) throw new StoreFailure("value", `limit must be >= 0, got ${limit}`);
    const all = p.get("include_uncommitted") === true;
    const stored = this.threads.get(threadId)?.list ?? [];
    // newest first until the window is full: a read whose window reaches an
    // unreadable entry fails loudly; one that stops before it is answered
    const want = limit === null ? Infinity : Number(limit);
    const picked = [];
    for (let k = stored.length - 1; k >= 0 && picked.length < want; k--) {
      const m = stored[k];
      if (m === UNREADABLE) {
        throw new StoreFailure("store", `stored message ${k} of thread ${JSON.stringify(threadId)} cannot be read`);
      }
      if (all || committed(m)) picked.push(m);
    }
    return picked.reverse();
  }

  set_committed(p) {
    const threadId = field(p, "thread_id", "string");
    const ids = field(p, "message_ids", "array");
    const flag = field(p, "committed", "boolean");
    const t = this.threads.get(threadId);
    const missing = ids.filter((id) => !t || !t.index.has(id));
    if (missing.length > 0) {
      throw new StoreFailure("key", `unknown message ids in thread ${JSON.stringify(threadId)}: ${JSON.stringify(missing)}`);
    }
    if (ids.some((id) => t.list[t.index.get(id)] === UNREADABLE)) {
      throw new StoreFailure("store", "a named message cannot be read");
    }
    for (const id of ids) t.list[t.index.get(id)].set("committed", flag);
    return null;
  }

  record_error(p) {
    const threadId = field(p, "thread_id", "string");
    const record = field(p, "record", "object");
    if (!this.errorRecords.has(threadId)) this.errorRecords.set(threadId, []);
    this.errorRecords.get(threadId).push(record);
    return null;
  }

  errors(p) {
    return this.errorRecords.get(field(p, "thread_id", "string")) ?? [];
  }

  append_record(p) {
    const record = field(p, "record", "object");
    if (typeof record.get("thread_id") !== "string") {
      throw new StoreFailure("value", "a turn record needs a thread_id");
    }
    this.turnRecords.push(record);
    return null;
  }

  records(p) {
    const threadId = p.get("thread_id") ?? null;
    return this.turnRecords.filter((r) => threadId === null || r.get("thread_id") === threadId);
  }

  read_state(p) {
    const scope = field(p, "scope", "string");
    const key = field(p, "key", "string");
    const entry = this.state.get(scope)?.get(key);
    return entry ? { key, value: entry.value, version: new RawNumber(entry.version.toString()) } : null;
  }

  write_state(p) {
    const scope = field(p, "scope", "string");
    const key = field(p, "key", "string");
    if (!p.has("value")) throw new StoreFailure("value", "params: missing field 'value'");
    const expected = integer(p.get("expected_version") ?? null, "expected_version");
    if (!this.state.has(scope)) this.state.set(scope, new Map());
    const entries = this.state.get(scope);
    const current = entries.get(key);
    const stored = current ? current.version : null;
    if (stored !== expected) {
      throw new StoreFailure("conflict", `state ${scope}/${key}: expected version ${expected}, stored version is ${stored}`);
    }
    const entry = { value: p.get("value"), version: (stored ?? 0n) + 1n };
    entries.set(key, entry);
    return { key, value: entry.value, version: new RawNumber(entry.version.toString()) };
  }

  put_fact(p) {
    const scope = field(p, "scope", "string");
    const fact = field(p, "fact", "object");
    if (typeof fact.get("subject") !== "string") throw new StoreFailure("value", "a fact needs a subject");
    if (!this.knowledge.has(scope)) this.knowledge.set(scope, new Map());
    this.knowledge.get(scope).set(fact.get("subject"), fact);
    return null;
  }

  get_fact(p) {
    const scope = field(p, "scope", "string");
    return this.knowledge.get(scope)?.get(field(p, "subject", "string")) ?? null;
  }

  facts(p) {
    const facts = this.knowledge.get(field(p, "scope", "string"));
    if (!facts) return [];
    return [...facts.keys()].sort(compareCodePoints).map((s) => facts.get(s));
  }

  forget(p) {
    const scope = field(p, "scope", "string");
    return this.knowledge.get(scope)?.delete(field(p, "subject", "string")) ?? false;
  }

  // The optional hook (declared in hello): the thread's middle message becomes
  // an entry the store cannot read, as a damaged disk would leave it.
  damage(p) {
    const threadId = field(p, "thread_id", "string");
    const list = this.threads.get(threadId)?.list ?? [];
    if (list.length === 0) throw new StoreFailure("store", "the thread holds no message to damage");
    list[Math.floor(list.length / 2)] = UNREADABLE;
    return null;
  }
}

// -- the protocol loop ----------------------------------------------------------------

const store = new MemoryStore();
const METHODS = new Set([
  "append", "messages", "set_committed", "record_error", "errors", "append_record",
  "records", "read_state", "write_state", "put_fact", "get_fact", "facts", "forget", "damage",
]);
let greeted = false;

function answer(line) {
  let id = null;
  try {
    const request = parseJson(line);
    if (!(request instanceof Map)) throw new StoreFailure("internal", "a request must be an object");
    const rawId = request.get("id");
    if (!(rawId instanceof RawNumber)) throw new StoreFailure("internal", "a request needs an id");
    id = rawId;
    const method = request.get("method");
    const params = request.get("params") ?? new Map();
    if (!(params instanceof Map)) throw new StoreFailure("internal", "params must be an object");
    if (method === "hello") {
      if (params.get("protocol") !== PROTOCOL) {
        throw new StoreFailure("internal", `this store speaks ${PROTOCOL}`);
      }
      greeted = true;
      return {
        id,
        result: { protocol: PROTOCOL, name: NAME, version: VERSION, capabilities: CAPABILITIES, hooks: ["damage"] },
      };
    }
    if (!greeted) throw new StoreFailure("internal", "the session must start with hello");
    if (method === "close") return { id, result: null, close: true };
    if (!METHODS.has(method)) throw new StoreFailure("internal", `unknown method ${JSON.stringify(method)}`);
    return { id, result: store[method](params) };
  } catch (err) {
    const kind = err instanceof StoreFailure ? err.kind : "internal";
    return { id, error: { kind, message: String(err.message ?? err) } };
  }
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  const response = answer(line);
  const close = response.close === true;
  delete response.close;
  process.stdout.write(`${toJson(response)}\n`, () => {
    if (close) process.exit(0);
  });
  if (close) input.close();
});
input.on("close", () => {
  process.stdout.write("", () => process.exit(0));
});
