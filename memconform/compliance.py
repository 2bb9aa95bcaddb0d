"""The compliance page: real third-party stores, each judged in a virtual
environment of its own, and the stores x rules matrix written from those runs.

``memconform compliance`` (run from a checkout of the kit) does, for each
target in :data:`TARGETS`:

1. prepare ``<venvs>/<extra>``: a virtual environment holding the kit and that
   one extra (and nothing of any other library, so that no library's pins change
   another's result); it is rebuilt when ``pyproject.toml`` changes;
2. run ``memconform run --store URL --measure-unclaimed --timeout 60`` there, in a fresh
   temporary folder (the promises a store does not claim are measured too and
   shown as ``informational``), and keep the results as
   ``<out>/compliance/<target>.json`` and the environment's ``pip freeze`` as
   ``<out>/compliance/<target>.freeze.txt``;

then writes ``<out>/compliance.md`` (the matrix, and one line per failure: the
finding and the command that reproduces it) and ``<out>/compliance.html`` (the
comparison report: stores by name, store rules only with their text, and every
failure's finding and severity). ``--from-results`` rewrites both from the kept results
without running anything.

Findings are one-line explanations of a failure, kept in ``<out>/findings.toml``
and written by whoever checked, in the library's own code, that the failure is
the library's behaviour and not the adapter's translation::

    [[finding]]
    target = "langgraph-sqlite"
    rule = "ST-..."
    text = "what the library does"
    where = "package/module.py: function"

A failure without a finding is still listed, with the kit's own reason, and is
marked as not yet explained.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import tomllib
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path

from memconform.adapters.libraries.description import Library, declared
from memconform.harness.proxy import TIMED_OUT
from memconform.reports.compare import Note, render_comparison
from memconform.reports.exitcode import exit_code
from memconform.reports.results import Results, RuleResult, load_results

__all__ = [
    "LEFT_OUT",
    "RUNTIME_EXTRAS",
    "SERVERS",
    "SEVERITIES",
    "TARGETS",
    "ComplianceError",
    "Decision",
    "Finding",
    "Target",
    "TargetRun",
    "failure_notes",
    "freeze",
    "freeze_file",
    "kept_runs",
    "load_decisions",
    "load_findings",
    "prepare_venv",
    "render_page",
    "render_store_comparison",
    "reproduction_scripts",
    "run_group",
    "run_target",
    "runtime_extras",
    "server_url",
    "store_targets",
    "verdict_line",
    "write_page",
]


CALL_TIMEOUT = 60.0
"""Seconds one store call of a library may take (the kit's default is 20). A
library is judged on a machine it shares with other runs (CI runs the library
targets beside the kit's own tests), and a correct library that writes a
1,000-message batch row by row needs several seconds of CPU there; the verdict
must not depend on how busy the machine was. A call carrying a large batch gets
this once per started thousand messages, as in every run."""


SERVERS: dict[str, tuple[str, str]] = {
    "postgresql": ("MEMCONFORM_POSTGRESQL_URL", "postgresql://postgres@127.0.0.1:5432/test"),
    "redis": ("MEMCONFORM_REDIS_URL", "redis://127.0.0.1:6379/0"),
}
"""Server kind -> (the variable naming its URL, the URL when it is unset): the
same variables the kit's own PostgreSQL and Redis tests read."""


def server_url(kind: str) -> str:
    """The URL of the ``kind`` server (:data:`SERVERS`)."""
    variable, default = SERVERS[kind]
    return os.environ.get(variable) or default


@dataclass(frozen=True)
class Target:
    """One third-party store: ``url`` may hold ``{dir}``, a fresh empty folder,
    ``{run}``, a name no other run uses (a schema, a key prefix), and
    ``{server}``, the address of the ``server`` it needs (``host:port/db`` with
    any user, from :func:`server_url`)."""

    name: str
    extra: str
    url: str
    label: str
    server: str = ""
    """``"postgresql"`` or ``"redis"`` when the store lives on that server."""

    def store_url(self, folder: Path, run: str = "run") -> str:
        """The URL with ``{dir}``, ``{run}`` and ``{server}`` filled in."""
        url = self.url.replace("{dir}", str(folder)).replace("{run}", run)
        if self.server:
            url = url.replace("{server}", server_url(self.server).split("://", 1)[1])
        return url

    def reproduce(self, rule: str | None = None) -> str:
        """Shell commands that re-run this target (one rule, when given), from the
        root of a checkout of the kit (the kit is not published on a package index)."""
        url = self.store_url(Path("/tmp/memconform-store"), "repro")
        run = (f"v/bin/memconform run --store {shlex.quote(url)} --measure-unclaimed "
               f"--timeout {CALL_TIMEOUT:g}")
        if rule is not None:
            run += f" --rule {rule}"
        return f"python3 -m venv v && v/bin/pip install '.[{self.extra}]' && {run}"


def store_targets(libraries: Iterable[Library]) -> tuple[Target, ...]:
    """The store targets ``libraries`` declare (each with its library's extra), by
    their row on the page."""
    entries = sorted(((entry, lib.extra) for lib in libraries for entry in lib.store_targets),
                     key=lambda pair: pair[0].row)
    return tuple(Target(e.name, extra, e.url, e.label, e.server) for e, extra in entries)


def runtime_extras(libraries: Iterable[Library]) -> tuple[str, ...]:
    """The extras of the ``libraries`` that declare a runtime, in their order."""
    return tuple(dict.fromkeys(lib.extra for lib in libraries if lib.runtimes))


TARGETS: tuple[Target, ...] = store_targets(declared())
"""Every certified third-party store, as the library adapter modules declare them
(:mod:`memconform.adapters.libraries.description`). ``{dir}`` is an absolute
path, so a file URL reads ``scheme:////abs/path`` (three slashes, then the
path), as SQLAlchemy spells it."""

LEFT_OUT: tuple[tuple[str, str], ...] = (
    ("pydantic-ai: InMemoryConversationStore",
     "pydantic-ai-slim 2.68.0 ships one concrete ConversationStore, kept in memory and "
     "documented as being for tests and examples; the stores people deploy are written by "
     "the application on its five storage primitives. Its save/load logic is judged on "
     "the runtime page, over the kit's own store."),
    ("mem0 (mem0ai 2.2.1)",
     "add() asks an LLM to extract facts and to decide what to add, update or delete "
     "(infer=True, the default), and every write and search embeds text: with a fake model "
     "and embedder the kit would judge its own fakes' decisions. With infer=False it keeps "
     "raw texts in a vector store, with no subject a fact belongs to, so the knowledge "
     "rules (one fact per subject, deletion by subject) would rest on what an adapter "
     "made up."),
    ("Microsoft Agent Framework: FileHistoryProvider",
     "Marked experimental in agent-framework-core 1.23.0 (it warns with "
     "ExperimentalWarning), and its own documentation says it does no cross-process "
     "locking; not judged in this round. The in-memory provider (every local session's "
     "default) and the Redis provider are."),
    ("Microsoft Agent Framework: its memory and context providers",
     "MemoryContextProvider has a model extract and consolidate topics from transcripts; "
     "the Mem0, Azure AI Search and Cosmos DB providers search facts kept by an embedding "
     "model or a hosted service. None keeps memory without a model or a service."),
)
"""Widely used agent-memory stores judged and left off the page, each with why."""

RUNTIME_EXTRAS: tuple[str, ...] = runtime_extras(declared())
"""Every extra holding an agent framework the kit judges as a runtime (the
extras of the ``*_runtime`` modules of :mod:`memconform.adapters.libraries`,
whose runtimes :data:`memconform.adapters.registry.BUILTIN_RUNTIMES` names).
An extra here may have no store target (``pydantic-ai`` keeps no store the kit
certifies); its runtime adapter's unit tests still run in its own environment."""


class ComplianceError(Exception):
    """A target could not be prepared or run (the message says which and why)."""


SEVERITIES: dict[str, str] = {
    "silent-loss": "silent loss or alteration",
    "partial-write": "partial write",
    "loud-refusal": "loud refusal",
    "kit-decision": "a decision of the kit",
    "kit-side": "the kit's side, not the library's",
}
"""A finding's severity, worst first: what was acknowledged is lost or altered
without a word; a failed write leaves part of itself; the library refuses loudly
what the rule says it must accept; the library's choice differs from one the kit
made where the documents leave room; the failure was checked and is the kit's or
its adapter's (a check run on a hook the framework does not have), not the
library's, and stays listed until the kit no longer shows it."""


@dataclass(frozen=True)
class Finding:
    """A one-line explanation of one target's failure of one rule."""

    target: str
    rule: str
    text: str
    where: str
    severity: str = "kit-decision"

    @property
    def rank(self) -> int:
        """0 for the worst severity."""
        return list(SEVERITIES).index(self.severity)


@dataclass(frozen=True)
class Decision:
    """A library behaviour judged outside the Store contract, with the reason."""

    title: str
    text: str
    where: str


@dataclass(frozen=True)
class TargetRun:
    """What one target's run left: its results, or why there are none."""

    target: Target
    results: Results | None
    problem: str = ""


# -- virtual environments ---------------------------------------------------------


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (parallel test workers share venvs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stamp(source: Path, extra: str) -> str:
    project = (source / "pyproject.toml").read_bytes()
    return hashlib.sha256(project + b"\0" + extra.encode()).hexdigest()


def _uv() -> str | None:
    """The ``uv`` executable beside the kit's Python (the ``test`` extra installs
    it) or on ``PATH``; ``None`` when there is none."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else shutil.which("uv")


def prepare_venv(extra: str, venvs: Path, source: Path) -> Path:
    """A virtual environment with the kit (editable, from ``source``) and
    ``extra``; reused while its stamp matches ``pyproject.toml``.

    With ``uv`` at hand (:func:`_uv`) the environment is made and filled by it,
    with pip seeded into it (``pip freeze`` and the reproduce commands use it):
    the same pinned versions in seconds instead of a minute. Without it, by
    ``venv`` and pip. Raises :class:`ComplianceError` with the installer's last
    lines when installing fails (for example without access to a package index).
    """
    venv = venvs / extra
    stamp_file = venv / "memconform-stamp"
    want = _stamp(source, extra)
    with _locked(venvs / f"{extra}.lock"):
        if stamp_file.is_file() and stamp_file.read_text(encoding="utf-8") == want:
            return venv
        if venv.exists():
            shutil.rmtree(venv)
        python = str(venv / "bin" / "python")
        uv = _uv()
        steps = [
            [uv, "venv", "-q", "--seed", "--python", sys.executable, str(venv)],
            [uv, "pip", "install", "-q", "--python", python, "-e", f"{source}[{extra}]"],
        ] if uv else [
            [sys.executable, "-m", "venv", str(venv)],
            [python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
             "-e", f"{source}[{extra}]"],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
                raise ComplianceError(
                    f"cannot prepare the {extra!r} environment ({shlex.join(step[:4])} "
                    f"exited {done.returncode}):\n{tail}"
                )
        stamp_file.write_text(want, encoding="utf-8")
    return venv


def freeze(venv: Path) -> str:
    """``pip freeze`` of ``venv`` without the kit itself: every distribution and
    version the library's run had, kept beside its results."""
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "freeze", "--exclude-editable",
         "--disable-pip-version-check"],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise ComplianceError(f"pip freeze in {venv} exited {done.returncode}: {done.stderr}")
    return done.stdout


def freeze_file(results_file: Path) -> Path:
    """Where the ``pip freeze`` of a kept run's environment is kept."""
    return results_file.with_name(results_file.stem + ".freeze.txt")


# -- runs ---------------------------------------------------------------------------


def run_target(
    target: Target, venv: Path, results_file: Path, timeout: float, *, quick: bool = False
) -> TargetRun:
    """Run the kit on ``target`` inside ``venv``; keep its results in ``results_file``.

    ``quick`` runs ``memconform run --quick`` without measuring the promises the
    store does not claim: the hand-written rows a commit can be gated on in
    minutes (the kit's own CI), never the page's results, which are full runs.

    The run's own exit code says conformant (0) or not (1); anything else, or
    no results at all, is reported as the run's ``problem``. An ``error`` exit
    (3) whose every ``error`` verdict is a library call the kit gave up waiting
    for (:func:`library_too_slow`) is the library's finding, not a problem.
    """
    # the run stops itself at its deadline and reports what it did not reach as
    # not-run; the hard limit behind it (the deadline, the call timeout and a
    # margin) is for a run that cannot stop, whose whole process group is killed
    deadline = max(timeout - 2 * CALL_TIMEOUT, timeout / 2)
    with tempfile.TemporaryDirectory(
        prefix=f"memconform-{target.name}-", ignore_cleanup_errors=True
    ) as work:
        folder = Path(work) / "store"
        folder.mkdir()
        out = Path(work) / "report"
        url = target.store_url(folder, uuid.uuid4().hex[:16])
        command = [
            str(venv / "bin" / "memconform"), "run", "--store", url,
            "--out", str(out), "--timeout", f"{CALL_TIMEOUT:g}", "--deadline", f"{deadline:g}",
            *(["--quick"] if quick else ["--measure-unclaimed"]),
        ]
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
        try:
            done = run_group(command, work, env, timeout)
        except subprocess.TimeoutExpired:
            return TargetRun(
                target, None,
                f"the run did not stop at its deadline of {deadline:.0f} s and was killed "
                f"after {timeout:.0f} s",
            )
        finally:
            if target.server:
                _drop(venv, url, env)
        produced = out / "results.json"
        if not produced.is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-10:])
            return TargetRun(target, None, f"no results (exit {done.returncode}): {tail}")
        results_file.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(produced, results_file)
        freeze_file(results_file).write_text(freeze(venv), encoding="utf-8")
    results = load_results(results_file)
    errors = [r for r in results.rules if r.verdict == "error"]
    slow_only = done.returncode == 3 and errors and all(map(library_too_slow, errors))
    problem = "" if done.returncode in (0, 1) or slow_only else f"the run exited {done.returncode}"
    return TargetRun(target, results, problem)


def run_group(
    command: list[str], cwd: str, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``command`` in a process group of its own, its output captured; past
    ``timeout`` seconds the whole group (the run's suite and the processes its
    checks started) is killed and :class:`subprocess.TimeoutExpired` raised."""
    with subprocess.Popen(
        command, cwd=cwd, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def _drop(venv: Path, url: str, env: Mapping[str, str]) -> None:
    """Remove the schema or keys a server target's run left (in the library's own
    environment, which has the driver). Raises :class:`ComplianceError` when it cannot."""
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "memconform.adapters.libraries.servers", "drop",
         url], capture_output=True, text=True, check=False, env=dict(env), timeout=120,
    )
    if done.returncode != 0:
        raise ComplianceError(f"cannot clean up after {url}: {done.stderr.strip()[-500:]}")


def library_too_slow(rule: RuleResult) -> bool:
    """Whether ``rule``'s ``error`` is a store call the kit gave up waiting for
    (a library that rewrites its whole file per message takes minutes over a
    10,000-message batch): the library's, shown on the page, not the adapter's."""
    return rule.verdict == "error" and TIMED_OUT in (rule.reason or "")


# -- findings -----------------------------------------------------------------------


def load_findings(
    path: Path, rule_ids: Set[str], targets: Set[str] | None = None
) -> dict[tuple[str, str], Finding]:
    """Findings by ``(target, rule)``; a missing file means none. ``targets`` are
    the target names a finding may name (default: the stores of :data:`TARGETS`;
    the command line adds the runtime targets).

    Raises :class:`ComplianceError` for a malformed file, an unknown target or
    rule, or the same pair twice.
    """
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ComplianceError(f"{path}: {exc}") from None
    names = {t.name for t in TARGETS} if targets is None else targets
    found: dict[tuple[str, str], Finding] = {}
    for n, raw in enumerate(data.get("finding", [])):
        where = f"{path}: finding {n + 1}"
        if not isinstance(raw, dict) or set(raw) != {
            "target", "rule", "severity", "text", "where"
        }:
            raise ComplianceError(
                f"{where}: needs exactly target, rule, severity, text and where"
            )
        if not all(isinstance(v, str) and v.strip() for v in raw.values()):
            raise ComplianceError(f"{where}: every field must be non-empty text")
        if raw["severity"] not in SEVERITIES:
            raise ComplianceError(
                f"{where}: severity {raw['severity']!r} is not one of {', '.join(SEVERITIES)}"
            )
        finding = Finding(raw["target"], raw["rule"], " ".join(raw["text"].split()),
                          raw["where"], raw["severity"])
        if finding.target not in names:
            raise ComplianceError(f"{where}: unknown target {finding.target!r}")
        if finding.rule not in rule_ids:
            raise ComplianceError(f"{where}: unknown rule {finding.rule!r}")
        if (finding.target, finding.rule) in found:
            raise ComplianceError(f"{where}: {finding.target} {finding.rule} is explained twice")
        found[(finding.target, finding.rule)] = finding
    return found


def load_decisions(path: Path) -> list[Decision]:
    """The ``[[decision]]`` entries of ``path`` (none when it is missing).

    Raises :class:`ComplianceError` for an entry without exactly a non-empty
    ``title``, ``text`` and ``where``.
    """
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ComplianceError(f"{path}: {exc}") from None
    decisions = []
    for n, raw in enumerate(data.get("decision", [])):
        if not isinstance(raw, dict) or set(raw) != {"title", "text", "where"} or not all(
            isinstance(v, str) and v.strip() for v in raw.values()
        ):
            raise ComplianceError(
                f"{path}: decision {n + 1}: needs exactly a non-empty title, text and where"
            )
        decisions.append(Decision(raw["title"], " ".join(raw["text"].split()), raw["where"]))
    return decisions


def reproduction_scripts(out: Path) -> dict[str, str]:
    """Target name -> the library-only script that reproduces its findings,
    ``reproduce/store_<target with underscores>.py`` under ``out``, where one
    exists (the prefix keeps a script from taking the name of the library it
    imports: run as ``python agent_framework_redis.py``, its own folder comes
    first on the import path and the script would import itself)."""
    found = {}
    for target in TARGETS:
        relative = f"reproduce/store_{target.name.replace('-', '_')}.py"
        if (out / relative).is_file():
            found[target.name] = relative
    return found


# -- the page -----------------------------------------------------------------------

_CELL = {
    "pass": "pass", "fail": "**FAIL**", "error": "**ERROR**", "unsupported": "n/a",
    "not-run": "not run", "warn": "warn", "xfail": "xfail", "inconclusive": "inconclusive",
    "adapter-provided": "adapter", "informational": "info",
}


def _failures(results: Results) -> list[RuleResult]:
    """The rules a run failed, and the unclaimed promises it measured failing."""
    return [r for r in results.rules if r.verdict in ("fail", "error", "warn")
            or (r.verdict == "informational" and r.measured in ("fail", "warn", "error"))]


def _rank(finding: Finding | None) -> int:
    """Sort key: the worst severity first, unexplained failures last."""
    return len(SEVERITIES) if finding is None else finding.rank


_SEVERAL_PROCESSES = ("ST-033", "ST-036")
"""The rules behind the verdict line's first words: writers at once, and readers
while a writer appends."""


def verdict_line(
    results: Results, target: Target, findings: Mapping[tuple[str, str], Finding]
) -> str:
    """One line for people choosing a store: whether several processes at once
    are safe (writers together, ST-033, and readers while a writer appends,
    ST-036; measured even where not claimed), then the failures by severity,
    worst first."""
    by_id = {r.id: r for r in results.rules}
    outcomes: dict[str, str | None] = {}
    for rule_id in _SEVERAL_PROCESSES:
        rule = by_id.get(rule_id)
        outcomes[rule_id] = None if rule is None else (
            rule.measured if rule.verdict == "informational" else rule.verdict
        )
    failing = [k for k, v in outcomes.items() if v in ("fail", "warn", "error")]
    if failing:
        parts = [f"not safe for several processes at once ({', '.join(failing)})"]
    elif all(v == "pass" for v in outcomes.values()):
        parts = [f"safe for several processes at once ({', '.join(outcomes)})"]
    elif all(v is None for v in outcomes.values()):
        parts = ["several processes at once not measured"]
    else:
        parts = ["several processes at once not fully judged (" + ", ".join(
            f"{k}: {v or 'not run'}" for k, v in outcomes.items()) + ")"]
    grouped: dict[str, list[str]] = {}
    for rule in _failures(results):
        finding = findings.get((target.name, rule.id))
        name = SEVERITIES[finding.severity] if finding else "not yet judged"
        grouped.setdefault(name, []).append(rule.id)
    for name in [*SEVERITIES.values(), "not yet judged"]:
        if name in grouped:
            parts.append(f"{name}: {', '.join(sorted(grouped[name]))}")
    if len(parts) == 1:
        parts.append("no rule failed")
    return "; ".join(parts) + "."


def _cell(verdict: str) -> str:
    """A verdict as a matrix cell; an informational one keeps what was measured."""
    if verdict.startswith("informational ("):
        return f"info: {_CELL.get(verdict[15:-1], verdict[15:-1])}"
    return _CELL.get(verdict, "—")


def _first_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _md(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render_page(
    runs: Sequence[TargetRun],
    findings: Mapping[tuple[str, str], Finding],
    decisions: Sequence[Decision] = (),
    scripts: Mapping[str, str] | None = None,
) -> str:
    """``compliance.md``: one column per target, one row per rule any target scored,
    what each adapter supplies itself, the findings and the decisions."""
    judged = [r for r in runs if r.results is not None]
    lines = [
        "# Compliance of third-party stores",
        "",
        "Generated by `memconform compliance` from real runs of the kit, each store in a",
        "virtual environment of its own holding only its library (the versions are those",
        "of the run). Every rule whose subject is the store is judged; `n/a` means the",
        "rule needs what the store does not offer: a capability it does not declare",
        "(not claimed, not failed), or a hook the kit needs to reach it (ST-037 needs a",
        "way to make one stored row unreadable; the rule's reason in the results says",
        "which);",
        "`adapter` means the rule held only through something the kit's adapter supplies",
        "itself where the library lacks it (a window, timestamps), so it is no pass for",
        "the library. The side-by-side HTML report is [compliance.html](compliance.html);",
        "each run's full results, and the `pip freeze` of its environment",
        "(`<store>.freeze.txt`), are under [compliance/](compliance/).",
        "",
        "| store | library versions | capabilities | adapter supplies | pass | adapter "
        "| fail | n/a | exit |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        if run.results is None:
            lines.append(
                f"| {run.target.label} | — | — | — | — | — | — | — | {_md(run.problem)} |"
            )
            continue
        store = run.results.header.get("store") or {}
        totals = run.results.totals
        caps = ", ".join(store.get("capabilities") or []) or "core only"
        note = f" ({_md(run.problem)})" if run.problem else ""
        supplies = ", ".join(store.get("provides") or []) or "nothing"
        lines.append(
            f"| {run.target.label} | {_md(str(store.get('version') or '?'))} | {caps} "
            f"| {supplies} | {totals.get('pass', 0)} | {totals.get('adapter-provided', 0)} "
            f"| {totals.get('fail', 0)} "
            f"| {totals.get('unsupported', 0)} | {exit_code(run.results)}{note} |"
        )
    lines += ["", "## In one line", ""]
    for run in judged:
        assert run.results is not None
        lines.append(f"- **{run.target.label}**: {verdict_line(run.results, run.target, findings)}")
    order: dict[str, tuple[str, str]] = {}
    cells: list[dict[str, str]] = []
    for run in judged:
        assert run.results is not None
        by_rule: dict[str, str] = {}
        for rule in run.results.rules:
            if rule.verdict == "not-scored":
                continue
            order.setdefault(rule.id, (rule.level, rule.text))
            by_rule[rule.id] = (
                f"informational ({rule.measured})" if rule.verdict == "informational"
                and rule.measured else rule.verdict
            )
        cells.append(by_rule)
    lines += ["", "## Rules", ""]
    if judged:
        lines.append("| rule | level | " + " | ".join(r.target.name for r in judged) + " |")
        lines.append("|---|---|" + "---|" * len(judged))
        for rule_id, (level, _) in order.items():
            row = [_cell(c.get(rule_id, "")) for c in cells]
            lines.append(f"| {rule_id} | {level} | " + " | ".join(row) + " |")
    else:
        lines.append("No store has results yet.")
    lines += ["", "## Findings", ""]
    any_failure = False
    for run in judged:
        assert run.results is not None
        failed = _failures(run.results)
        if not failed:
            continue
        any_failure = True
        lines += [f"### {run.target.label} (`{run.target.name}`)", ""]
        script = (scripts or {}).get(run.target.name)
        if script:
            lines += [f"With the library alone, no kit: [{script}]({script}) "
                      "(`python " + script.rsplit("/", 1)[-1] + "` in an environment "
                      "holding the library).", ""]
        for rule in sorted(failed, key=lambda r: _rank(findings.get((run.target.name, r.id)))):
            finding = findings.get((run.target.name, rule.id))
            if finding is None:
                text = f"not yet explained; the kit says: {_first_line(rule.reason)}"
                severity = "not yet judged"
            else:
                text = f"{finding.text} (`{finding.where}`)"
                severity = SEVERITIES[finding.severity]
            what = (f"informational: not claimed, measured {rule.measured}"
                    if rule.verdict == "informational" else rule.verdict)
            lines.append(f"- **{rule.id}** ({what}; {severity}): {_md(text)}")
            lines.append(f"  Reproduce: `{run.target.reproduce(rule.id)}`")
        lines.append("")
    if not any_failure:
        lines += ["No store failed a rule.", ""]
    if decisions:
        lines += ["## Decisions", "",
                  "Library behaviours checked by hand that no rule scores, with what the kit "
                  "makes of them and why.", ""]
        for decision in decisions:
            lines.append(f"- **{_md(decision.title)}.** {_md(decision.text)} "
                         f"(`{_md(decision.where)}`)")
        lines.append("")
    lines += ["## Stores not on this page", "",
              "Other agent-memory stores that were considered, and why they are not judged:",
              ""]
    lines += [f"- **{_md(name)}**: {_md(why)}" for name, why in LEFT_OUT]
    lines += [
        "",
        "## Regenerate",
        "",
        "From a checkout of the kit: `memconform compliance --out docs` (every target) or",
        "`memconform compliance --out docs --target NAME`; `--from-results` rewrites the",
        "page from the kept results without running anything.",
        "",
    ]
    return "\n".join(lines)


def write_page(
    runs: Sequence[TargetRun],
    findings: Mapping[tuple[str, str], Finding],
    out: Path,
    decisions: Sequence[Decision] = (),
) -> list[Path]:
    """Write ``compliance.md`` and (when any run has results) ``compliance.html``."""
    out.mkdir(parents=True, exist_ok=True)
    page = out / "compliance.md"
    page.write_text(
        render_page(runs, findings, decisions, reproduction_scripts(out)), encoding="utf-8"
    )
    written = [page]
    if any(r.results is not None for r in runs):
        html = out / "compliance.html"
        html.write_bytes(render_store_comparison(runs, findings, decisions))
        written.append(html)
    return written


def failure_notes(
    results: Results, name: str, findings: Mapping[tuple[str, str], Finding]
) -> dict[str, Note]:
    """Every failure of ``results`` (as listed on the page) as a comparison
    note: the finding of target ``name`` and its severity, or the kit's reason
    marked not yet judged."""
    notes = {}
    for rule in _failures(results):
        finding = findings.get((name, rule.id))
        if finding is None:
            notes[rule.id] = Note("not yet judged", len(SEVERITIES),
                                  f"not yet explained; the kit says: {_first_line(rule.reason)}")
        else:
            notes[rule.id] = Note(SEVERITIES[finding.severity], finding.rank, finding.text,
                                  finding.where)
    return notes


def render_store_comparison(
    runs: Sequence[TargetRun],
    findings: Mapping[tuple[str, str], Finding],
    decisions: Sequence[Decision] = (),
) -> bytes:
    """``compliance.html``: the runs with results side by side, each column
    named by its store (never by the temporary path it ran in), the store rules
    only, each failure with its finding and severity, the one-line verdict per
    store and the decisions."""
    judged = [(r.target, r.results) for r in runs if r.results is not None]
    return render_comparison(
        [results for _, results in judged],
        labels=[f"{target.label} ({target.name})" for target, _ in judged],
        subject="store",
        notes=[failure_notes(results, target.name, findings) for target, results in judged],
        summaries=[verdict_line(results, target, findings) for target, results in judged],
        decisions=[(d.title, d.text, d.where) for d in decisions],
    )


def kept_runs(out: Path, targets: Sequence[Target]) -> list[TargetRun]:
    """The runs as kept under ``<out>/compliance/`` (for ``--from-results``)."""
    runs = []
    for target in targets:
        path = out / "compliance" / f"{target.name}.json"
        if not path.is_file():
            runs.append(TargetRun(target, None, "no kept results"))
            continue
        try:
            runs.append(TargetRun(target, load_results(path)))
        except (OSError, ValueError) as exc:
            runs.append(TargetRun(target, None, f"kept results unreadable: {exc}"))
    return runs
