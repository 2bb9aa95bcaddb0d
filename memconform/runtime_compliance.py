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

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.adapters.libraries.description import Library, RuntimeEntry, declared
from memconform.adapters.node_frameworks import NODE_FRAMEWORKS
from memconform.compliance import (
    SEVERITIES,
    Finding,
    _cell,
    _failures,
    _first_line,
    _md,
    _rank,
    failure_notes,
    freeze,
    freeze_file,
    run_group,
)
from memconform.reports.compare import Table, render_comparison
from memconform.reports.exitcode import exit_code
from memconform.reports.results import Results, load_results

__all__ = [
    "KEPT",
    "PROFILE",
    "RUNTIME_TARGETS",
    "RuntimeRun",
    "RuntimeTarget",
    "kept_runtime_runs",
    "node_freeze",
    "node_targets",
    "prepare_node",
    "render_runtime_page",
    "run_runtime_target",
    "runtime_scripts",
    "runtime_targets",
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
    profile to why the framework is not judged on it.

    ``node`` is set for a framework in TypeScript or JavaScript: its npm package
    folder, relative to a checkout of the kit (``extra`` is then empty: the kit
    runs in its own environment and the framework in Node.js, from that folder's
    lock file); ``runtime`` is then a ``stdio:`` command whose file words are
    relative to the checkout too. ``needs`` names the environment variable
    holding the path of a framework built outside the kit (its built entry
    file), handed to the runtime in its command; ``policies`` are the save
    policies the framework has, under each of which the run also takes a
    fingerprint (``memconform fingerprint --policy``)."""

    name: str
    runtime: str
    extra: str
    label: str
    packages: tuple[str, ...]
    script: str
    hooks: str
    lacks: tuple[tuple[str, str], ...] = ()
    node: str = ""
    needs: str = ""
    policies: tuple[str, ...] = ()

    def command(self, runtime: str | None = None) -> str:
        """The ``memconform run`` line this target's results come from (with
        ``runtime`` in place of the target's own name, when given)."""
        named = shlex.quote(runtime or self.runtime)
        return f"memconform run --runtime {named} --profile {PROFILE} --fingerprint"

    def reproduce(self, rule: str | None = None) -> str:
        """Shell commands re-running this target (one rule, when given), from the
        root of a checkout of the kit."""
        run = f"v/bin/{self.command()}"
        if self.needs:  # the variable's value goes into the command, so double quotes
            command = self.runtime.removeprefix("stdio:")
            named = f'"stdio:env {self.needs}=${self.needs} {command}"'
            run = f"v/bin/memconform run --runtime {named} --profile {PROFILE} --fingerprint"
        if rule is not None:
            run += f" --rule {rule}"
        if self.node:
            install = f"(cd {self.node} && npm ci) && python3 -m venv v && v/bin/pip install ."
            return f"{install} && {run}"
        return f"python3 -m venv v && v/bin/pip install '.[{self.extra}]' && {run}"

    def runtime_at(self, source: Path) -> str:
        """The target's runtime name for a run outside ``source`` (a checkout of
        the kit): a Node target's words naming files of the checkout made absolute."""
        if not self.node:
            return self.runtime
        words = [str(source / w) if (source / w).is_file() else w
                 for w in shlex.split(self.runtime.removeprefix("stdio:"))]
        if self.needs:
            built = os.environ.get(self.needs, "")
            words = ["env", f"{self.needs}={os.path.abspath(built) if built else ''}", *words]
        return "stdio:" + shlex.join(words)

    def built(self) -> str:
        """Why a framework built outside the kit cannot run (its variable unset or
        naming no file), or ``""``."""
        if not self.needs:
            return ""
        value = os.environ.get(self.needs, "")
        if not value or not Path(value).is_file():
            return (f"set {self.needs} to the built entry file of the framework "
                    f"(now {value!r})")
        return ""


def runtime_targets(libraries: Iterable[Library]) -> tuple[RuntimeTarget, ...]:
    """The runtime targets ``libraries`` declare (each with its library's extra), in
    the libraries' order."""
    return tuple(
        RuntimeTarget(e.name, e.runtime, lib.extra, e.label, e.packages, e.script, e.hooks,
                      e.lacks)
        for lib in libraries for e in lib.runtime_targets
    )


def node_targets(entries: Iterable[RuntimeEntry]) -> tuple[RuntimeTarget, ...]:
    """The runtime targets of Node framework ``entries`` (no extra: see
    :attr:`RuntimeTarget.node`)."""
    return tuple(
        RuntimeTarget(e.name, e.runtime, "", e.label, e.packages, e.script, e.hooks, e.lacks,
                      e.node, e.needs, e.policies)
        for e in entries
    )


RUNTIME_TARGETS: tuple[RuntimeTarget, ...] = (
    *runtime_targets(declared()), *node_targets(NODE_FRAMEWORKS)
)
"""Every framework runtime on the page, as the framework runtime modules declare
them (:mod:`memconform.adapters.libraries.description`), then the Node
frameworks (:mod:`memconform.adapters.node_frameworks`). A framework's new
runtime slots in with one entry in its module (and its findings in
``findings.toml``)."""


def prepare_node(target: RuntimeTarget, source: Path, timeout: float = 600.0) -> str:
    """Install a Node target's packages (``npm ci`` in its folder of ``source``,
    unless its ``node_modules`` holds every locked version already); ``""`` when
    done, else why not."""
    folder = source / target.node
    if node_freeze(folder) and node_freeze(folder) == _installed(folder):
        return ""
    if shutil.which("npm") is None:
        return "npm is not on the PATH (Node.js 22 or later is needed)"
    try:
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=folder,
                              capture_output=True, text=True, check=False, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"npm ci in {target.node} failed: {exc}"
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        return f"npm ci in {target.node} exited {done.returncode}: {tail}"
    return ""


def _installed(folder: Path) -> str:
    """The packages of ``folder``'s lock file as installed in its ``node_modules``
    (:func:`node_freeze`'s lines, each with the installed version, ``-`` where
    missing): equal to the freeze when ``npm ci`` has nothing to do."""
    lines = []
    for line in node_freeze(folder).splitlines():
        name = line.partition("==")[0]
        manifest = folder / "node_modules" / name / "package.json"
        try:
            version = str(json.loads(manifest.read_text(encoding="utf-8")).get("version"))
        except (OSError, ValueError):
            version = "-"
        lines.append(f"{name}=={version}\n")
    return "".join(lines)


def node_freeze(folder: Path, needs: str = "") -> str:
    """The installed npm packages of ``folder`` as ``name==version`` lines, read
    from its lock file (what ``npm ci`` installs), sorted; ``""`` without one.
    With ``needs``, the framework the variable of that name points into (its
    nearest ``package.json``) comes first."""
    built = _built_package(os.environ.get(needs, "")) if needs else ""
    lock = folder / "package-lock.json"
    if not lock.is_file():
        return built
    packages = json.loads(lock.read_text(encoding="utf-8")).get("packages") or {}
    pinned = {
        path.rsplit("node_modules/", 1)[-1]: str(entry.get("version", "?"))
        for path, entry in packages.items()
        if path.startswith("node_modules/") and isinstance(entry, dict)
        and "/node_modules/" not in path
    }
    return built + "".join(f"{name}=={version}\n" for name, version in sorted(pinned.items()))


def _built_package(entry: str) -> str:
    """``name==version`` of the package holding the file ``entry`` (its nearest
    ``package.json`` upwards), or ``""``."""
    if not entry:
        return ""
    for folder in Path(entry).resolve().parents:
        manifest = folder / "package.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return ""
            return f"{data.get('name', '?')}=={data.get('version', '?')}\n"
    return ""


@dataclass(frozen=True)
class RuntimeRun:
    """What one runtime target's run left: its results and the ``pip freeze`` of
    its environment, or why there are none."""

    target: RuntimeTarget
    results: Results | None
    problem: str = ""
    freeze: str = ""
    fingerprints: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    """Policy -> the fingerprint taken with the scripts configuring it (the
    target's ``policies``)."""

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
    target: RuntimeTarget, venv: Path, results_file: Path, timeout: float,
    source: Path | None = None,
) -> RuntimeRun:
    """Run the kit on ``target`` inside ``venv``; keep its results (fingerprint
    included) in ``results_file`` and its environment's freeze beside them.

    A Node target (``venv`` unused) runs on the kit running this, its framework
    from its folder of ``source`` (installed by :func:`prepare_node`); its
    freeze is :func:`node_freeze`'s.

    The run's exit code says conformant (0) or not (1); anything else, or no
    results, or results without a fingerprint, is the run's ``problem``."""
    missing = target.built()
    if missing:
        return RuntimeRun(target, None, missing)
    root = (source or Path.cwd()).resolve()
    with tempfile.TemporaryDirectory(
        prefix=f"memconform-{target.name}-", ignore_cleanup_errors=True
    ) as work:
        out = Path(work) / "report"
        if target.node:
            kit = [sys.executable, "-m", "memconform"]
            line = target.command(target.runtime_at(root))
        else:
            kit, line = [str(venv / "bin" / "memconform")], target.command()
        command = [*kit, *shlex.split(line)[1:], "--out", str(out)]
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
        try:
            done = run_group(command, work, env, timeout)
            prints = {policy: _fingerprint(kit, target.runtime_at(root), policy, work, env,
                                           timeout) for policy in target.policies}
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
        for policy, taken in prints.items():
            if isinstance(taken, dict):
                _policy_file(results_file, policy).write_text(
                    json.dumps(taken, sort_keys=True, indent=2) + "\n", encoding="utf-8")
        frozen = node_freeze(root / target.node, target.needs) if target.node else freeze(venv)
        freeze_file(results_file).write_text(frozen, encoding="utf-8")
    results = load_results(results_file)
    problem = "" if done.returncode in (0, 1) else f"the run exited {done.returncode}"
    if not problem and results.fingerprint is None:
        problem = "the run took no fingerprint"
    unfinished = [f"{p}: {why}" for p, why in prints.items() if isinstance(why, str)]
    if not problem and unfinished:
        problem = "fingerprints not taken: " + "; ".join(unfinished)
    taken_prints = {p: f for p, f in prints.items() if isinstance(f, dict)}
    return RuntimeRun(target, results, problem, frozen, taken_prints)


def _fingerprint(
    kit: Sequence[str], runtime: str, policy: str, work: str, env: Mapping[str, str],
    timeout: float,
) -> dict[str, Any] | str:
    """``memconform fingerprint --policy policy`` of ``runtime``: its JSON, or why
    there is none. Exit 1 (a point differs from the policy) is a fingerprint."""
    out = Path(work) / f"fingerprint-{policy}.json"
    done = run_group([*kit, "fingerprint", "--runtime", runtime, "--policy", policy,
                      "--out", str(out)], work, env, timeout)
    if done.returncode not in (0, 1) or not out.is_file():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-3:])
        return f"exit {done.returncode}: {tail}"
    taken: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return taken


def _policy_file(results_file: Path, policy: str) -> Path:
    """Where the fingerprint under ``policy`` is kept beside ``results_file``."""
    return results_file.with_name(f"{results_file.stem}.fingerprint-{policy}.json")


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
            prints = {p: json.loads(_policy_file(path, p).read_text(encoding="utf-8"))
                      for p in target.policies if _policy_file(path, p).is_file()}
            runs.append(RuntimeRun(target, load_results(path), freeze=text, fingerprints=prints))
        except (OSError, ValueError) as exc:
            runs.append(RuntimeRun(target, None, f"kept results unreadable: {exc}"))
    return runs


def runtime_scripts(out: Path) -> dict[str, str]:
    """Target name -> its library-only reproduction script,
    ``reproduce/runtime_<script>.py`` under ``out`` (``.mjs`` for a Node
    target), where one exists."""
    found = {}
    for target in RUNTIME_TARGETS:
        relative = f"reproduce/runtime_{target.script}.{'mjs' if target.node else 'py'}"
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
    lines += ["| " + " | ".join(_md(cell) for cell in row) + " |"
              for row in _fingerprint_rows(fingerprint)]
    return lines


_SHOWN = ("appends", "stored", "outcome")
"""The projection's components a fingerprint row shows in columns of their own."""


def _fingerprint_rows(fingerprint: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """Per point: its name, batches appended, roles stored, outcome, and what
    differs from the nearest policy (the nearest policy's value of each shown
    component, the names of the others), ``—`` when nothing does."""
    rows = []
    for point in fingerprint["points"]:
        seen, ref = point["stored"], point["nearest"]
        differs = point["differs"]
        shown = "; ".join(f"{c}: {ref[c]}" for c in differs if c in _SHOWN)
        others = ", ".join(c for c in differs if c not in _SHOWN)
        note = "; ".join(x for x in (shown, others) if x) or "—"
        rows.append((str(point["name"]), str(seen["appends"]), str(seen["stored"]),
                     str(seen["outcome"]), note))
    return rows


_FINGERPRINT_HEADER = ("point", "batches appended", "stored", "outcome", "differs from nearest")


def _fingerprint_table(fingerprint: Mapping[str, Any] | None) -> Table | None:
    """The fingerprint as the HTML report's table for its framework."""
    if not fingerprint:
        return None
    distances = ", ".join(f"{name} {n}" for name, n in fingerprint["distances"].items())
    caption = (f"save-policy fingerprint, nearest policy {fingerprint['nearest']} "
               f"({fingerprint['distance']} of {len(fingerprint['points'])} points differ; "
               f"distances: {distances})")
    return Table(caption, _FINGERPRINT_HEADER, tuple(_fingerprint_rows(fingerprint)))


GLOSSARY: tuple[tuple[str, str], ...] = (
    ("message, turn, run", "The three save policies of document 000: message appends each "
     "completed message batch at once, turn each completed model-and-tool round, run "
     "the whole run in one batch once it has a response outcome; a failed run keeps what "
     "its policy had appended."),
    ("anvia-main/message, anvia-main/turn, anvia-main/run", "The reference simulator's "
     "variant reproducing the Anvia runtime's older main line under that policy: a tool "
     "call appended before its tools run, approvals answered during the run, an unknown "
     "policy name storing nothing."),
    ("reference simulator", "The kit's own runtime (memconform.simulator), which every "
     "rule passes; a fingerprint compares a framework with it under each policy."),
    ("nearest save policy", "The policy (or variant) whose reference run differs from the "
     "framework's at the fewest failure points of the fingerprint."),
    ("crash after append k", "The framework's process is killed (SIGKILL) right after the "
     "store acknowledged its k-th append."),
    ("unsupported", "Shown as n/a on the Markdown page: the scenario needs a hook or a save "
     "policy the framework does not have, so it was not run."),
    ("adapter-provided", "The rule passed only through something the kit's adapter supplies "
     "that the framework does not (its provides, such as message ids)."),
)
"""Every name the runtimes report uses that a reader may not know, defined there."""


def _summary(run: RuntimeRun, script: str | None) -> str:
    """One line per framework for the HTML report."""
    assert run.results is not None
    totals = run.results.totals
    parts = [_declared(run.results),
             f"nearest save policy {_nearest(run.results.fingerprint)}",
             f"pass {totals.get('pass', 0)}, fail or warn "
             f"{totals.get('fail', 0) + totals.get('warn', 0)}, adapter-provided "
             f"{totals.get('adapter-provided', 0)}, n/a {totals.get('unsupported', 0)}"]
    if script:
        parts.append(f"with the framework alone: {script}")
    return "; ".join(parts)


def _policy_lines(fingerprints: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Per policy the framework has: its fingerprint with the scripts configuring
    that policy, against the simulator under the same policy, point by point."""
    lines = [
        "Each fingerprint below was taken with the scripts configuring one of the "
        "framework's save policies and is compared with the reference simulator under "
        "that same policy: each differing point shows what the framework stored and, "
        "after it, what the reference stored.",
        "",
        "| scripts configure | points differing from that policy | nearest reference |",
        "|---|---|---|",
    ]
    notes = []
    for policy, taken in fingerprints.items():
        reference = (taken.get("references") or {}).get(policy, {})
        points = taken.get("points") or []
        differing = []
        for point in points:
            theirs = reference.get(point["name"], {})
            mine = point["stored"]
            components = [c for c in mine if mine.get(c) != theirs.get(c)]
            if components:
                differing.append(point["name"])
                said = "; ".join(f"{c}: {_md(mine[c])} ({policy}: {_md(theirs.get(c, '?'))})"
                                 for c in components)
                notes.append(f"- under {policy}, **{_md(point['name'])}**: {said}")
        lines.append(
            f"| {policy} | {len(differing)} of {len(points)}"
            + (f": {_md(', '.join(differing))}" if differing else "")
            + f" | {_md(str(taken.get('nearest')))} ({taken.get('distance')}) |"
        )
    return [*lines, "", *notes, *([""] if notes else [])]


def _failure_lines(
    run: RuntimeRun, findings: Mapping[tuple[str, str], Finding], script: str | None
) -> list[str]:
    assert run.results is not None
    failed = _failures(run.results)
    if not failed:
        return ["No save-policy rule failed.", ""]
    lines = []
    if script and run.target.node:
        lines += [f"With the framework alone, no kit: [{script}]({script}) "
                  f"(`node {script.rsplit('/', 1)[-1]}` with the framework installed: "
                  f"`npm ci` in {run.target.node}).", ""]
    elif script:
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
        "(`memconform/adapters/libraries/*_runtime.py`; for a TypeScript framework,",
        "`node/frameworks/` over the stdio runtime protocol, the framework installed by",
        "`npm ci` from the lock file there, whose versions the page shows and keeps as",
        "the freeze): its model calls go to the kit's",
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
        if run.fingerprints:
            lines += ["### Under each of its save policies", "", *_policy_lines(run.fingerprints)]
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
    if any(r.results is not None for r in runs):
        html = out / "runtimes.html"
        html.write_bytes(render_runtime_comparison(runs, findings, runtime_scripts(out)))
        written.append(html)
    return written


def render_runtime_comparison(
    runs: Sequence[RuntimeRun], findings: Mapping[tuple[str, str], Finding],
    scripts: Mapping[str, str] | None = None,
) -> bytes:
    """``runtimes.html``: the frameworks with results side by side, each column
    named by its framework, the runtime rules only, each failure with its
    finding and severity, a line per framework (what it declares, its nearest
    save policy, its totals, its framework-only script), its fingerprint, and
    the meaning of every policy name the page uses."""
    judged = [r for r in runs if r.results is not None]
    results = [r.results for r in judged if r.results is not None]
    return render_comparison(
        results,
        labels=[r.target.label for r in judged],
        subject="runtime",
        notes=[failure_notes(res, r.target.name, findings)
               for r, res in zip(judged, results, strict=True)],
        summaries=[_summary(r, (scripts or {}).get(r.target.name)) for r in judged],
        tables=[_fingerprint_table(res.fingerprint) for res in results],
        glossary=GLOSSARY,
    )
