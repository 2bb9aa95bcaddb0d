"""The runtime compliance page: real agent frameworks, each run by the kit as a
runtime in a virtual environment of its own, and the frameworks x rules matrix
written from those runs.

``memconform compliance`` handles the targets of :data:`RUNTIME_TARGETS` beside
the stores of :data:`memconform.compliance.TARGETS`. For each runtime target it:

1. prepares ``<venvs>/<extra>`` as for a store (the kit and that one extra);
2. runs ``memconform run --runtime R --profile save-policy --fingerprint``
   there, in a fresh temporary folder (the runtime on the kit's temporary
   SQLite store, real kills included), and keeps the results, fingerprint
   included, as ``<out>/runtimes/<target>.json`` and the environment's ``pip
   freeze`` as ``<out>/runtimes/<target>.freeze.txt``;

then writes ``<out>/runtimes.md`` (the matrix; per framework its save-policy
fingerprint, the failure points it was not run at, the profiles it has no
feature for, and one line per failure with its finding) and
``<out>/runtimes.html`` (the comparison report). ``--from-results`` rewrites
both from the kept results without running anything.

Findings are kept with the stores' in ``<out>/findings.toml`` (``target`` is a
runtime target's name) and follow the same rule: written only after checking,
in the framework's installed code, that the behaviour is the framework's and
not the adapter's translation. A library-only reproduction script
(``<out>/reproduce/runtime_<script>.py``, the framework's public API only, no
import of the kit) goes with them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.compliance import (
    SEVERITIES,
    Finding,
    _cell,
    _failures,
    _first_line,
    _md,
    _rank,
    freeze,
    freeze_file,
    run_group,
)
from memconform.reports.compare import render_comparison
from memconform.reports.exitcode import exit_code
from memconform.reports.results import Results, load_results

__all__ = [
    "KEPT",
    "PROFILE",
    "RUNTIME_TARGETS",
    "RuntimeRun",
    "RuntimeTarget",
    "kept_runtime_runs",
    "render_runtime_page",
    "run_runtime_target",
    "runtime_scripts",
    "write_runtime_page",
]

PROFILE = "save-policy"
"""The profile every framework is judged on first: what it saves when a run fails."""

KEPT = "runtimes"
"""The folder (under the page's) holding each target's kept results and freeze."""


@dataclass(frozen=True)
class RuntimeTarget:
    """One framework runtime as ``memconform run --runtime`` names it.

    ``name`` is the target's (and its kept files'); ``runtime`` the name
    ``--runtime`` takes; ``packages`` the distributions whose versions the page
    shows (from the run's ``pip freeze``); ``script`` the stem of its library-only
    reproduction script (``reproduce/runtime_<script>.py``; durability modes of
    one framework share one); ``hooks`` says, of the failure points the
    fingerprint could not run, which hooks the framework has and the adapter does
    not translate yet and which it lacks; ``lacks`` maps each other runtime
    profile to why the framework is not judged on it."""

    name: str
    runtime: str
    extra: str
    label: str
    packages: tuple[str, ...]
    script: str
    hooks: str
    lacks: tuple[tuple[str, str], ...] = ()

    def command(self) -> str:
        """The ``memconform run`` line this target's results come from."""
        return f"memconform run --runtime {self.runtime} --profile {PROFILE} --fingerprint"

    def reproduce(self, rule: str | None = None) -> str:
        """Shell commands re-running this target (one rule, when given), from the
        root of a checkout of the kit."""
        run = f"v/bin/{self.command()}"
        if rule is not None:
            run += f" --rule {rule}"
        return f"python3 -m venv v && v/bin/pip install '.[{self.extra}]' && {run}"


_OPENAI_LACKS = (
    ("turns", "the SDK keeps a session's items and nothing else: no turn records, windows "
              "or digests beyond the items themselves"),
    ("strict-write", "the SDK has no task writes or digests apart from the session items"),
    ("candidates", "the SDK has no memory candidates to extract, gate or promote"),
    ("persisted-state", "the SDK keeps no working state or knowledge beside the session "
                        "(its run state can be serialised by the caller, not stored by it)"),
)
_LANGGRAPH_LACKS = (
    ("turns", "the prebuilt agent keeps the thread's messages in checkpoints: no turn "
              "records, windows or digests"),
    ("strict-write", "the prebuilt agent has no task writes or digests apart from the "
                     "checkpointed messages"),
    ("candidates", "the prebuilt agent extracts no memory candidates (its long-term store "
                   "is written only by code the caller adds)"),
    ("persisted-state", "the prebuilt agent keeps no job record and writes no fact. Its graph "
                        "state is the messages and the step budget, checkpointed as its "
                        "durability mode says; a record with steps, statuses and values "
                        "exists only in a graph the caller builds, whose nodes decide what it "
                        "holds (LangGraph would checkpoint it, let a person edit it with "
                        "update_state and stop after a node with interrupt_after), so the "
                        "record rules would judge the adapter's nodes, not LangGraph. Its "
                        "long-term store (BaseStore) is written only by the caller's code (a "
                        "node, or a tool given the store through InjectedStore): an item is a "
                        "JSON value under a namespace and key, replaced by a put on that key, "
                        "removed by delete, stamped with the store's own created_at and "
                        "updated_at (wall clock) and, where the store supports a TTL, "
                        "deleted once it expires; no "
                        "provenance, recheck date, trust, origin, cap, confirmation gate or "
                        "instruction check is LangGraph's"),
)
_LANGGRAPH_HOOKS = (
    "The prebuilt agent has no input or output guardrail, no run-end hook and no "
    "cancellation hook, and sets no retry policy on its model node: the points needing "
    "them are not run."
)
_LANGGRAPH_PACKAGES = ("langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
                       "langchain-core")

_PYDANTIC_LACKS = (
    ("turns", "pydantic-ai keeps a conversation's messages and nothing else: no turn "
              "records, windows or digests"),
    ("strict-write", "pydantic-ai has no task writes or digests apart from the conversation"),
    ("candidates", "pydantic-ai extracts no memory candidates"),
    ("persisted-state", "pydantic-ai keeps no working state or knowledge beside the "
                        "conversation store (its step persistence is a separate package, "
                        "not installed with the pinned extra)"),
)
_ADK_LACKS = (
    ("turns", "a session keeps events and nothing else: no turn records, windows or digests"),
    ("strict-write", "ADK has no task writes or digests apart from the session's events"),
    ("candidates", "ADK extracts no memory candidates of its own"),
    ("persisted-state", "ADK keeps no job record and writes no fact of its own. Session "
                        "state holds what application code assigns (context.state, or an "
                        "agent's output_key text), carried as the state_delta of the event it "
                        "came with and persisted when the session service appends that event "
                        "(temp: keys never), so a record's shape, what a step records and "
                        "what a failed step leaves would be the adapter's code, not ADK's (a "
                        "tool's assignments made before it raised are kept: they travel with "
                        "the error response its on_tool_error_callback gives). Its SQLite and "
                        "database session services refuse an append to a session another "
                        "writer changed since it was read (StaleSessionError) and never "
                        "re-read. ADK does resume on its own: with ResumabilityConfig("
                        "is_resumable=True) (experimental in this version) a SequentialAgent "
                        "(deprecated there in favour of Workflow) logs which sub-agent runs "
                        "in the session's events, and run_async given the invocation's id "
                        "rebuilds its progress from those events, the conversation history, "
                        "not from a record; whether a resumed sub-agent calls its tool again "
                        "is the model's answer to the history it is shown, and this "
                        "profile's scripts do not script the model, so the adapter would "
                        "decide it. The resume scenarios (PS-006, PS-007, PS-009) could "
                        "judge the rest, but a runtime declares this profile whole, so the "
                        "record, hand-off, knowledge and export scenarios would run and fail "
                        "for want of a feature instead of being n/a. The MemoryService is "
                        "storage ADK calls only when application code does (add_memory, "
                        "delete_memory by id) or a memory tool searches it: a MemoryEntry "
                        "has no subject, no provenance beyond author and timestamp, no "
                        "recheck date, trust or origin, and ADK has no cap, confirmation "
                        "gate or instruction check, so every durable-knowledge rule would "
                        "judge the adapter"),
)

RUNTIME_TARGETS: tuple[RuntimeTarget, ...] = (
    RuntimeTarget(
        "openai-agents", "openai-agents", "openai-agents",
        "OpenAI Agents SDK: Runner with a Session", ("openai-agents", "openai"),
        "openai_agents",
        "The SDK has run hooks, streaming (Runner.run_streamed), tool approvals and model "
        "retry settings, which the adapter does not translate yet: the points needing a "
        "run-end hook, cancellation, approval, streaming or retries are not run (never "
        "emulated).",
        _OPENAI_LACKS,
    ),
    RuntimeTarget(
        "langgraph", "langgraph", "langgraph",
        "LangGraph: prebuilt ReAct agent, default durability (async)", _LANGGRAPH_PACKAGES,
        "langgraph", _LANGGRAPH_HOOKS, _LANGGRAPH_LACKS,
    ),
    RuntimeTarget(
        "langgraph-sync", "langgraph:sync", "langgraph",
        "LangGraph: prebuilt ReAct agent, durability sync", _LANGGRAPH_PACKAGES,
        "langgraph", _LANGGRAPH_HOOKS, _LANGGRAPH_LACKS,
    ),
    RuntimeTarget(
        "langgraph-exit", "langgraph:exit", "langgraph",
        "LangGraph: prebuilt ReAct agent, durability exit", _LANGGRAPH_PACKAGES,
        "langgraph", _LANGGRAPH_HOOKS, _LANGGRAPH_LACKS,
    ),
    RuntimeTarget(
        "pydantic-ai", "pydantic-ai", "pydantic-ai",
        "pydantic-ai: Agent saved through its ConversationStore",
        ("pydantic-ai-slim", "pydantic-graph"), "pydantic_ai",
        "pydantic-ai has no input or output guardrail (an output validator can ask the model "
        "again or fail the run, not block an answer) and retries no failed model request "
        "unless a capability asks it to (the agent has none): the points needing them are "
        "not run.",
        _PYDANTIC_LACKS,
    ),
    RuntimeTarget(
        "google-adk", "google-adk", "google-adk",
        "Google ADK: Runner with a SessionService", ("google-adk", "google-genai"),
        "google_adk",
        "ADK's retry options configure the Gemini client, which the kit's fake model "
        "replaces, so the adapter translates no retry: the point needing one is not run.",
        _ADK_LACKS,
    ),
)
"""Every framework runtime on the page. A framework's new runtime slots in with
one entry here (and its findings in ``findings.toml``)."""


@dataclass(frozen=True)
class RuntimeRun:
    """What one runtime target's run left: its results and the ``pip freeze`` of
    its environment, or why there are none."""

    target: RuntimeTarget
    results: Results | None
    problem: str = ""
    freeze: str = ""

    def versions(self) -> str:
        """The target's packages as the run had them (``name==version, ...``)."""
        pinned = {}
        for line in self.freeze.splitlines():
            name, sep, version = line.partition("==")
            if sep:
                pinned[name.strip().lower().replace("_", "-")] = version.strip()
        found = [f"{p}=={pinned[p]}" for p in self.target.packages if p in pinned]
        return ", ".join(found) or "?"


# -- runs ---------------------------------------------------------------------------


def run_runtime_target(
    target: RuntimeTarget, venv: Path, results_file: Path, timeout: float
) -> RuntimeRun:
    """Run the kit on ``target`` inside ``venv``; keep its results (fingerprint
    included) in ``results_file`` and its environment's freeze beside them.

    The run's exit code says conformant (0) or not (1); anything else, or no
    results, or results without a fingerprint, is the run's ``problem``."""
    with tempfile.TemporaryDirectory(
        prefix=f"memconform-{target.name}-", ignore_cleanup_errors=True
    ) as work:
        out = Path(work) / "report"
        command = [str(venv / "bin" / "memconform"), *target.command().split()[1:],
                   "--out", str(out)]
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
        try:
            done = run_group(command, work, env, timeout)
        except subprocess.TimeoutExpired:
            return RuntimeRun(
                target, None, f"the run took longer than {timeout:.0f} s and was killed"
            )
        produced = out / "results.json"
        if not produced.is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-10:])
            return RuntimeRun(target, None, f"no results (exit {done.returncode}): {tail}")
        results_file.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(produced, results_file)
        frozen = freeze(venv)
        freeze_file(results_file).write_text(frozen, encoding="utf-8")
    results = load_results(results_file)
    problem = "" if done.returncode in (0, 1) else f"the run exited {done.returncode}"
    if not problem and results.fingerprint is None:
        problem = "the run took no fingerprint"
    return RuntimeRun(target, results, problem, frozen)


def kept_runtime_runs(out: Path, targets: Sequence[RuntimeTarget]) -> list[RuntimeRun]:
    """The runs as kept under ``<out>/runtimes/`` (for ``--from-results``)."""
    runs = []
    for target in targets:
        path = out / KEPT / f"{target.name}.json"
        if not path.is_file():
            runs.append(RuntimeRun(target, None, "no kept results"))
            continue
        try:
            frozen = freeze_file(path)
            text = frozen.read_text(encoding="utf-8") if frozen.is_file() else ""
            runs.append(RuntimeRun(target, load_results(path), freeze=text))
        except (OSError, ValueError) as exc:
            runs.append(RuntimeRun(target, None, f"kept results unreadable: {exc}"))
    return runs


def runtime_scripts(out: Path) -> dict[str, str]:
    """Target name -> its library-only reproduction script,
    ``reproduce/runtime_<script>.py`` under ``out``, where one exists."""
    found = {}
    for target in RUNTIME_TARGETS:
        relative = f"reproduce/runtime_{target.script}.py"
        if (out / relative).is_file():
            found[target.name] = relative
    return found


# -- the page -----------------------------------------------------------------------


def _declared(results: Results) -> str:
    """What the runtime declared, as the page says it."""
    runtime = results.header.get("runtime") or {}
    declares = runtime.get("declares") if isinstance(runtime, Mapping) else None
    if not isinstance(declares, Mapping):
        return "nothing"
    policies = declares.get("policies")
    said = ("no save-policy setting (every scenario runs)" if policies is None
            else f"save policies: {', '.join(policies)}" if policies
            else "no save policy (scenarios configuring one are n/a)")
    return f"{', '.join(declares.get('profiles') or []) or 'no profile'}; {said}"


def _nearest(fingerprint: Mapping[str, Any] | None) -> str:
    if not fingerprint:
        return "—"
    points = len(fingerprint.get("points") or [])
    return f"{fingerprint['nearest']} ({fingerprint['distance']} of {points} points differ)"


def _fingerprint_lines(fingerprint: Mapping[str, Any]) -> list[str]:
    """The fingerprint's table: what was stored at each point, and how it differs
    from the nearest policy."""
    distances = ", ".join(f"{name} {n}" for name, n in fingerprint["distances"].items())
    lines = [
        f"Nearest save policy: **{fingerprint['nearest']}**, "
        f"{fingerprint['distance']} of {len(fingerprint['points'])} points differ "
        f"(distances: {distances}). Each point's batches appended, roles stored at the "
        "end and outcome; the last column names what differs from the nearest policy, "
        "which is shown under it.",
        "",
        "| point | batches appended | stored | outcome | differs from nearest |",
        "|---|---|---|---|---|",
    ]
    for point in fingerprint["points"]:
        seen, ref = point["stored"], point["nearest"]
        differs = point["differs"]
        note = "—"
        if differs:
            note = "; ".join(f"{c}: {_md(ref[c])}" for c in differs
                             if c in ("appends", "stored", "outcome"))
            others = [c for c in differs if c not in ("appends", "stored", "outcome")]
            note = "; ".join([x for x in (note, ", ".join(others)) if x])
        lines.append(
            f"| {_md(point['name'])} | {_md(seen['appends'])} | {_md(seen['stored'])} "
            f"| {_md(seen['outcome'])} | {note} |"
        )
    return lines


def _failure_lines(
    run: RuntimeRun, findings: Mapping[tuple[str, str], Finding], script: str | None
) -> list[str]:
    assert run.results is not None
    failed = _failures(run.results)
    if not failed:
        return ["No save-policy rule failed.", ""]
    lines = []
    if script:
        lines += [f"With the framework alone, no kit: [{script}]({script}) "
                  "(`python " + script.rsplit("/", 1)[-1] + "` in an environment holding "
                  "the framework).", ""]
    name = run.target.name
    for rule in sorted(failed, key=lambda r: (_rank(findings.get((name, r.id))), r.id)):
        finding = findings.get((name, rule.id))
        if finding is None:
            text = f"not yet explained; the kit says: {_first_line(rule.reason)}"
            severity = "not yet judged"
        else:
            text = f"{finding.text} (`{finding.where}`)"
            severity = SEVERITIES[finding.severity]
        lines.append(f"- **{rule.id}** ({rule.verdict}; {severity}): {_md(text)}")
        lines.append(f"  Reproduce: `{run.target.reproduce(rule.id)}`")
    return [*lines, ""]


def render_runtime_page(
    runs: Sequence[RuntimeRun],
    findings: Mapping[tuple[str, str], Finding],
    scripts: Mapping[str, str] | None = None,
) -> str:
    """``runtimes.md``: one column per framework runtime, one row per rule any of
    them scored; per framework its fingerprint, the points not run, the profiles
    it has no feature for, and its findings."""
    judged = [r for r in runs if r.results is not None]
    lines = [
        "# Compliance of agent frameworks as runtimes",
        "",
        "Generated by `memconform compliance` from real runs of the kit, each framework in",
        "a virtual environment of its own holding only its extra (the versions are those",
        "of the run). A framework is driven through its public API by the kit's adapter",
        "(`memconform/adapters/libraries/*_runtime.py`): its model calls go to the kit's",
        "fake model, its tools to the kit's tools, its native hooks to the script's, and",
        "every write it makes to its memory goes to the kit's store through the recording",
        "proxy as the framework made it. Each is judged on the save-policy profile first:",
        "what it leaves in memory when a run completes, fails, is blocked or is killed",
        "(`memconform run --runtime R --profile save-policy --fingerprint`, on the kit's",
        "temporary SQLite store). `n/a` means the scenario needs a hook or a save policy",
        "the framework does not have. The side-by-side HTML report is",
        "[runtimes.html](runtimes.html); each run's results (fingerprint included) and",
        "the `pip freeze` of its environment are under [runtimes/](runtimes/). The",
        "third-party stores are on [compliance.md](compliance.md).",
        "",
        "A fingerprint runs the same failure points on the framework and on the kit's",
        "reference simulator under each save policy and counts the points where they",
        "differ. Its crash points (`crash after append k`) SIGKILL the framework's process",
        "right after the store acknowledged its k-th append, as the references are killed:",
        "only an append changes the thread, and a framework's other writes (LangGraph's",
        "checkpoint bookkeeping in the store's working state) leave it as the append before",
        "them did, so counting them would compare kills at places the references do not",
        "have. The save-policy scenarios still kill after every acknowledged write.",
        "",
        "| runtime | framework versions | declares | nearest save policy | pass | fail or warn "
        "| n/a | exit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        label = f"{run.target.label} (`{run.target.runtime}`)"
        if run.results is None:
            lines.append(f"| {label} | — | — | — | — | — | — | {_md(run.problem)} |")
            continue
        totals = run.results.totals
        note = f" ({_md(run.problem)})" if run.problem else ""
        lines.append(
            f"| {label} | {_md(run.versions())} | {_declared(run.results)} "
            f"| {_md(_nearest(run.results.fingerprint))} | {totals.get('pass', 0)} "
            f"| {totals.get('fail', 0) + totals.get('warn', 0)} "
            f"| {totals.get('unsupported', 0)} | {exit_code(run.results)}{note} |"
        )
    order: dict[str, str] = {}
    cells: list[dict[str, str]] = []
    for run in judged:
        assert run.results is not None
        by_rule: dict[str, str] = {}
        for rule in run.results.rules:
            if rule.verdict == "not-scored" or rule.subject != "runtime":
                continue
            order.setdefault(rule.id, rule.level)
            by_rule[rule.id] = rule.verdict
        cells.append(by_rule)
    lines += ["", "## Rules", ""]
    if judged:
        lines.append("| rule | level | " + " | ".join(r.target.name for r in judged) + " |")
        lines.append("|---|---|" + "---|" * len(judged))
        for rule_id, level in order.items():
            row = [_cell(c.get(rule_id, "")) for c in cells]
            lines.append(f"| {rule_id} | {level} | " + " | ".join(row) + " |")
    else:
        lines.append("No runtime has results yet.")
    lines.append("")
    for run in judged:
        assert run.results is not None
        target = run.target
        lines += [f"## {target.label} (`{target.runtime}`)", ""]
        fingerprint = run.results.fingerprint
        lines += ["### Save-policy fingerprint", ""]
        if fingerprint:
            lines += [*_fingerprint_lines(fingerprint), ""]
            unsupported = fingerprint.get("unsupported") or []
            if unsupported:
                lines += ["Failure points not run (the hook they need is not declared): "
                          + "; ".join(f"{_md(p['name'])} (needs {', '.join(p['needs'])})"
                                      for p in unsupported) + ". " + target.hooks, ""]
        else:
            lines += ["No fingerprint was taken.", ""]
        lines += ["### Findings", ""]
        lines += _failure_lines(run, findings, (scripts or {}).get(target.name))
        if target.lacks:
            lines += ["### Other profiles", "",
                      "Not judged, each for the reason given.", ""]
            lines += [f"- **{profile}**: {_md(why)}." for profile, why in target.lacks]
            lines.append("")
    lines += [
        "## Regenerate",
        "",
        "From a checkout of the kit: `memconform compliance --out docs --runtimes` (every",
        "runtime target) or `memconform compliance --out docs --target NAME`;",
        "`--from-results` rewrites this page and the stores' from the kept results without",
        "running anything.",
        "",
    ]
    return "\n".join(lines)


def write_runtime_page(
    runs: Sequence[RuntimeRun], findings: Mapping[tuple[str, str], Finding], out: Path
) -> list[Path]:
    """Write ``runtimes.md`` and (when any run has results) ``runtimes.html``."""
    out.mkdir(parents=True, exist_ok=True)
    page = out / "runtimes.md"
    page.write_text(render_runtime_page(runs, findings, runtime_scripts(out)), encoding="utf-8")
    written = [page]
    judged = [r.results for r in runs if r.results is not None]
    if judged:
        html = out / "runtimes.html"
        html.write_bytes(render_comparison(judged))
        written.append(html)
    return written
