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
)
"""Every Node framework runtime on the runtimes page, in the order it is shown
(after the Python frameworks)."""
