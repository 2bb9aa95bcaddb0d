"""The TypeScript and JavaScript agent frameworks the kit judges as runtimes.

Each is a framework adapter under ``node/frameworks/`` speaking the stdio
runtime protocol (``spec/runtime-protocol.md``), run by ``memconform run
--runtime "stdio:node <file>"``; its npm package folder pins the framework by
exact version in a lock file, installed with ``npm ci``. The adapters' own
headers say what each drives, declares and supplies. These entries put them on
the runtimes page beside the Python frameworks
(:data:`memconform.runtime_compliance.RUNTIME_TARGETS`); ``packages`` are npm
package names, whose versions the page reads from the folder's lock file.
"""

from __future__ import annotations

from memconform.adapters.libraries.description import RuntimeEntry

__all__ = ["NODE_FRAMEWORKS"]

_OPENAI_AGENTS_JS_LACKS = (
    ("turns", "the session's windowed read (`getItems(limit)`) is the SDK's only history "
              "window, and the adapter does not translate the turns profile yet; the SDK "
              "keeps no turn records or digests"),
    ("strict-write", "the SDK has no task writes or digests apart from the session items"),
    ("candidates", "the SDK has no memory candidates to extract, gate or promote"),
    ("persisted-state", "the SDK keeps no working state or knowledge beside the session "
                        "(its run state can be serialised by the caller, not stored by it)"),
)

_LANGGRAPH_JS_LACKS = (
    ("turns", "the prebuilt agent keeps the thread's messages in checkpoints: no turn "
              "records, windows or digests"),
    ("strict-write", "the prebuilt agent has no task writes or digests apart from the "
                     "checkpointed messages"),
    ("candidates", "the prebuilt agent extracts no memory candidates (its long-term store "
                   "is written only by code the caller adds)"),
    ("persisted-state", "the prebuilt agent keeps no job record and writes no fact: its "
                        "graph state is the messages and the step budget, checkpointed as "
                        "its durability mode says; a record or a knowledge entry exists only "
                        "in nodes the caller writes, so those rules would judge the adapter"),
)
_LANGGRAPH_JS_HOOKS = (
    "The prebuilt agent has no input or output guardrail, no run-end hook and no "
    "cancellation hook, sets no retry policy on its model node, and its ToolNode's "
    "tool-error handling is a boolean (on by default): the points needing those hooks are "
    "not run."
)
_LANGGRAPH_JS_PACKAGES = ("@langchain/langgraph", "@langchain/langgraph-checkpoint",
                          "@langchain/core")
_MASTRA_LACKS = (
    ("turns", "Memory's history window (lastMessages, 10 by default) is a read the adapter "
              "does not translate to the turns profile yet; Mastra keeps no turn records or "
              "digests"),
    ("strict-write", "Mastra has no task writes or digests apart from the thread's messages"),
    ("candidates", "Mastra's working memory and semantic recall (both off by default) are "
                   "not memory candidates that are extracted, gated and promoted"),
    ("persisted-state", "Mastra's Memory keeps threads and their messages; working memory "
                        "(off by default) is one text or object per thread or resource that "
                        "the model rewrites, with no record, provenance, cap or gate"),
)

_ANVIA_LACKS = (
    ("turns", "the adapters translate the save-policy profile only: Anvia's history reads "
              "and turn bookkeeping are not judged yet"),
    ("strict-write", "not translated yet"),
    ("candidates", "not translated yet"),
    ("persisted-state", "not translated yet"),
)
_ANVIA_BUILT = (
    " Anvia is not on the npm registry: its core is built from github.com/anvia-hq/anvia "
    "outside the kit (`bash node/frameworks/anvia-build.sh DIR` builds both lines and "
    "prints the variables) and named by the variable in the command; `memconform "
    "compliance` keeps these results where the variable is unset."
)

NODE_FRAMEWORKS: tuple[RuntimeEntry, ...] = (
    RuntimeEntry(
        "openai-agents-js", "stdio:node node/frameworks/openai-agents-runtime.mjs",
        "OpenAI Agents SDK for JavaScript: run() with a Session",
        ("@openai/agents", "@openai/agents-core", "zod"), "openai_agents_js",
        "The SDK has run hooks, streaming, tool approvals and model retry settings, which "
        "the adapter does not translate yet: the points needing a run-end hook, "
        "cancellation, approval, streaming or retries are not run (never emulated).",
        _OPENAI_AGENTS_JS_LACKS,
        node="node/frameworks",
    ),
    *(
        RuntimeEntry(
            name, f"stdio:node node/frameworks/langgraph-runtime.mjs{word}",
            f"LangGraph.js: prebuilt ReAct agent, {mode}", _LANGGRAPH_JS_PACKAGES,
            "langgraph_js", _LANGGRAPH_JS_HOOKS, _LANGGRAPH_JS_LACKS, node="node/frameworks",
        )
        for name, word, mode in (
            ("langgraph-js", "", "default durability (async)"),
            ("langgraph-js-sync", " sync", "durability sync"),
            ("langgraph-js-exit", " exit", "durability exit"),
        )
    ),
    RuntimeEntry(
        "mastra", "stdio:node node/frameworks/mastra/mastra-runtime.mjs",
        "Mastra: Agent.generate() with its Memory", ("@mastra/core", "@mastra/memory", "zod"),
        "mastra",
        "Mastra has streaming, tool approvals (requireApproval), model retries (maxRetries) "
        "and abort signals, which the adapter does not translate yet, and no tool-error or "
        "run-end hook: those points are not run (never emulated).",
        _MASTRA_LACKS, node="node/frameworks/mastra",
    ),
    RuntimeEntry(
        "anvia", "stdio:node node/frameworks/anvia-runtime.mjs",
        "Anvia 1.0 RC (staging, 5a24bb23): Agent.generate() with its memory store",
        ("@anvia/core",), "anvia",
        "Anvia's public API has no hook that sees a tool error or a completed run and can "
        "end the run (its AgentHook with onToolError and onRunEnd is internal): those points "
        "are not run." + _ANVIA_BUILT,
        _ANVIA_LACKS, node="node/frameworks", needs="MEMCONFORM_ANVIA_CORE",
        policies=("message", "turn", "run"),
    ),
    RuntimeEntry(
        "anvia-main", "stdio:node node/frameworks/anvia-main-runtime.mjs",
        "Anvia main (ac59bee9): AgentBuilder, session prompt().send()",
        ("@anvia/core",), "anvia_main",
        "This line cannot suspend a run for approval nor resume one (a tool needing approval "
        "is answered during the run): the approval points are not run." + _ANVIA_BUILT,
        _ANVIA_LACKS, node="node/frameworks", needs="MEMCONFORM_ANVIA_MAIN_CORE",
        policies=("message", "turn", "run"),
    ),
)
"""Every Node framework runtime on the runtimes page, in the order it is shown
(after the Python frameworks)."""
