"""Code coverage of the code under test (``memconform run --coverage PACKAGE``).

A run asked to measure names the packages to measure (the vendor's adapter or
runtime) and a folder for coverage.py's data. Every process of the run that
executes code under test measures it, line and branch, into a data file of its
own in that folder:

- the pytest process and its xdist workers start measuring as soon as the
  kit's pytest plugin is imported (:func:`start_from_environment`, reading
  :data:`ENVIRONMENT`), before the kit imports anything it might measure;
- the kit's own child processes (the multi-process store checks, the
  fresh-process resume) get a scrubbed environment, so they are told by an
  argument (:func:`child_argument`) and start measuring in their entry point
  (:func:`start_from_argument`) before they open the store. Their data is
  written when they end normally.

Lines are recorded under a *context*: while a scenario runs, the context is
:func:`scenario_context` of its rule tags and node id, and a child started
during the scenario inherits it; elsewhere (imports, opening and closing the
store for the session) the context is empty. So the rules that reached a line
are the tags of the scenarios whose context recorded it (:func:`rules_of`).

A process the kit kills (SIGKILL, or a child that hung past its timeout)
never writes its data: what only it reached cannot be measured. The parent
notes each such kill with :func:`note_killed`, and the report says so.

Nothing here does anything unless a run asked for measurement: without it
:func:`switch`, :func:`note_killed` and :func:`child_argument` return at once.
"""

from __future__ import annotations

import ast
import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DATA_NAME",
    "ENVIRONMENT",
    "KILLED_PREFIX",
    "RULE_CONTEXT",
    "Measurement",
    "active",
    "child_argument",
    "child_options",
    "definition_lines",
    "killed_notes",
    "note_killed",
    "package_names",
    "rules_of",
    "scenario_context",
    "start",
    "start_from_argument",
    "start_from_argv",
    "start_from_environment",
    "stop",
    "summarise",
    "switch",
]

ENVIRONMENT = "MEMCONFORM_COVERAGE"
"""Set by ``memconform run --coverage`` for the pytest process it starts (and so
for its xdist workers): the JSON of a :class:`Measurement`."""

DATA_NAME = ".coverage"
"""coverage.py's data file name in the data folder; each process adds a suffix."""

KILLED_PREFIX = "killed-"
"""Name prefix of the files (one per process) noting the processes the kit killed."""

RULE_CONTEXT = r"^[A-Z]{2}-\d{3}"
"""Regular expression matching the contexts recorded while a scenario ran."""

_RULE_ID = re.compile(r"[A-Z]{2}-\d{3}")
_QUIET = [
    "module-not-imported", "module-not-measured", "no-data-collected", "already-imported",
    "couldnt-parse", "no-ctracer", "module-not-python", "include-ignored", "dynamic-conflict",
]
"""coverage.py warnings that say nothing about the code under test (a worker
that never imported a package, a module imported before measuring began)."""


@dataclass(frozen=True)
class Measurement:
    """What to measure and where its data goes; ``context`` is the context a
    child process starts in (empty for the pytest processes)."""

    packages: tuple[str, ...]
    data_dir: str
    context: str = ""

    def to_json(self) -> str:
        """This measurement as one JSON string (an environment value or argument)."""
        return json.dumps(
            {"packages": list(self.packages), "data": self.data_dir, "context": self.context}
        )

    @classmethod
    def from_json(cls, text: str) -> Measurement:
        """Read :meth:`to_json`'s string; raises ``ValueError`` when malformed."""
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("data"), str):
            raise ValueError(f"not a measurement: {text[:200]!r}")
        packages = data.get("packages")
        if not isinstance(packages, list) or not all(isinstance(p, str) for p in packages):
            raise ValueError(f"not a measurement: {text[:200]!r}")
        return cls(tuple(packages), data["data"], str(data.get("context") or ""))


class _State:
    measurement: Measurement | None = None
    coverage: Any = None
    context: str = ""


def active() -> bool:
    """Whether this process is measuring."""
    return _State.coverage is not None


def start(measurement: Measurement) -> None:
    """Start measuring in this process (once; a second call does nothing).
    The data is saved by :func:`stop`, or when the process exits normally."""
    if _State.coverage is not None:
        return
    import coverage

    cov = coverage.Coverage(
        data_file=str(Path(measurement.data_dir) / DATA_NAME),
        data_suffix=True,
        branch=True,
        source_pkgs=list(measurement.packages),
        config_file=False,
        auto_data=True,
    )
    cov.set_option("run:disable_warnings", _QUIET)
    cov.start()
    _State.measurement, _State.coverage, _State.context = measurement, cov, ""
    if measurement.context:
        switch(measurement.context)


def stop() -> None:
    """Stop measuring and write this process's data file (if measuring)."""
    cov, _State.coverage = _State.coverage, None
    if cov is not None:
        cov.stop()
        cov.save()


def start_from_environment() -> None:
    """Start measuring when :data:`ENVIRONMENT` asks for it (the pytest processes)."""
    text = os.environ.get(ENVIRONMENT)
    if text:
        start(Measurement.from_json(text))


def start_from_argument(text: str | None) -> None:
    """Start measuring when a child was given :func:`child_argument`'s value."""
    if text:
        start(Measurement.from_json(text))


def start_from_argv(argv: Sequence[str], option: str = "--coverage") -> None:
    """Start measuring when ``argv`` holds ``option VALUE`` (:func:`child_options`);
    call it before the entry point's main function, whose own lines a
    measurement started inside it would miss."""
    for i, arg in enumerate(argv[:-1]):
        if arg == option:
            start_from_argument(argv[i + 1])
            return


def child_argument() -> str | None:
    """The argument telling a child process to measure under the current context
    (``None`` when this process is not measuring)."""
    if _State.measurement is None or _State.coverage is None:
        return None
    m = _State.measurement
    return Measurement(m.packages, m.data_dir, _State.context).to_json()


def switch(context: str) -> None:
    """Record what runs from now on under ``context`` (no-op when not measuring)."""
    if _State.coverage is None or context == _State.context:
        return
    _State.coverage.switch_context(context)
    _State.context = context


def scenario_context(rules: Iterable[str], nodeid: str) -> str:
    """The context of one scenario: its rule tags, then ``|`` and its node id."""
    return f"{' '.join(sorted(rules))}|{nodeid}"


def rules_of(context: str) -> list[str]:
    """The rule ids of a context made by :func:`scenario_context` (``[]`` for others)."""
    tags, bar, _ = context.partition("|")
    return _RULE_ID.findall(tags) if bar else []


def note_killed(what: str) -> None:
    """Note that the kit killed a child process (``what`` names it) under the current
    context: lines only that process reached cannot be measured."""
    m = _State.measurement
    if m is None or _State.coverage is None:
        return
    path = Path(m.data_dir) / f"{KILLED_PREFIX}{os.getpid()}.jsonl"
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"context": _State.context, "process": what}) + "\n")


def killed_notes(data_dir: Path) -> list[dict[str, str]]:
    """Every :func:`note_killed` note written into ``data_dir``, in a stable order."""
    notes: list[dict[str, str]] = []
    for path in sorted(data_dir.glob(f"{KILLED_PREFIX}*.jsonl")):
        notes += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return sorted(notes, key=lambda n: (n["context"], n["process"]))


def package_names(text: str) -> tuple[str, ...]:
    """``PACKAGE[,PACKAGE...]`` as names; raises ``ValueError`` for a name that is
    not a dotted Python module name."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    bad = [n for n in names if not all(part.isidentifier() for part in n.split("."))]
    if not names or bad:
        raise ValueError(f"not a package name: {(bad or [text])[0]!r}")
    return names


def child_options(option: str = "--coverage") -> Sequence[str]:
    """``[option, child_argument()]`` when measuring, else ``[]`` (for argv)."""
    argument = child_argument()
    return [] if argument is None else [option, argument]


# -- after the run: the coverage section of the results ----------------------------------


def definition_lines(source: str) -> set[int]:
    """Lines of the statements that run when a module is imported: those at module
    level and in class bodies (with their decorators), never those in a function."""
    found: set[int] = set()

    def visit(body: Sequence[ast.stmt]) -> None:
        for node in body:
            found.add(node.lineno)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.update(d.lineno for d in node.decorator_list)
            if isinstance(node, ast.ClassDef):
                visit(node.body)
            elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        visit([n for n in inner if isinstance(n, ast.stmt)])
                        for handler in inner:
                            if isinstance(handler, ast.ExceptHandler):
                                found.add(handler.lineno)
                                visit(handler.body)

    try:
        visit(ast.parse(source).body)
    except SyntaxError:
        return set()
    return found


def _display_path(filename: str, packages: Sequence[str]) -> str:
    """``filename`` from its package's folder on (``pkg/sub/mod.py``): the report
    never shows where the vendor keeps their files."""
    parts = Path(filename).parts
    for package in packages:
        names = package.split(".")
        for i in range(len(parts) - len(names), -1, -1):
            if list(parts[i : i + len(names)]) == names:
                return "/".join(parts[i:])
    return Path(filename).name


def _ranges(lines: Sequence[int], rules_by_line: dict[int, tuple[str, ...]]) -> list[Any]:
    """Runs of consecutive statements reached by the same rules."""
    runs: list[dict[str, Any]] = []
    previous: tuple[str, ...] = ()
    for line in lines:
        rules = rules_by_line.get(line, ())
        if rules and rules == previous:
            runs[-1]["to"] = line
        elif rules:
            runs.append({"from": line, "to": line, "rules": list(rules)})
        previous = rules
    return runs


def summarise(
    data_dir: Path, packages: Sequence[str], html_dir: Path | None
) -> dict[str, Any]:
    """Combine the data files of ``data_dir`` and return the ``coverage`` section
    of ``results.json``; write coverage.py's own HTML (with the source) into
    ``html_dir`` when given.

    Per file: statements and branches with how many the run executed (in any
    context); ``missing_lines`` (executed by nothing), ``setup_only_lines``
    (executed only outside scenarios, leaving out the lines every import runs),
    ``missing_branches`` (``[from, to]``, ``to`` negative for leaving the
    function) and ``reached`` (runs of consecutive statements with the rules
    that reached them). ``not_measured`` lists the processes the kit killed.
    """
    import coverage

    cov = coverage.Coverage(
        data_file=str(data_dir / DATA_NAME), branch=True, source_pkgs=list(packages),
        config_file=False,
    )
    cov.set_option("run:disable_warnings", _QUIET)
    cov.combine([str(data_dir)], keep=False)
    cov.load()
    files: list[dict[str, Any]] = []
    if cov.get_data().measured_files():
        with tempfile.TemporaryDirectory(prefix="memconform-coverage-") as tmp:
            report = Path(tmp) / "coverage.json"
            cov.json_report(outfile=str(report), show_contexts=True, ignore_errors=True)
            measured = json.loads(report.read_text(encoding="utf-8"))["files"]
        if html_dir is not None:
            cov.html_report(
                directory=str(html_dir), show_contexts=True, ignore_errors=True,
                title="memconform: the code under test, with the rules that reached each line",
            )
        for filename, data in sorted(measured.items()):
            files.append(_file_section(filename, data, packages))
    files.sort(key=lambda f: f["path"])
    notes = killed_notes(data_dir)
    return {
        "packages": list(packages),
        "source_html": None if html_dir is None or not files else f"{html_dir.name}/index.html",
        "totals": {
            key: sum(f[key] for f in files)
            for key in ("statements", "lines_covered", "branches", "branches_covered")
        },
        "files": files,
        "not_found": [
            p for p in packages
            if not any(f["path"].startswith(p.replace(".", "/") + "/") for f in files)
        ],
        "not_measured": [
            {
                "rules": rules_of(n["context"]),
                "scenario": n["context"].partition("|")[2] or None,
                "process": n["process"],
            }
            for n in notes
        ],
    }


def _file_section(filename: str, data: dict[str, Any], packages: Sequence[str]) -> dict[str, Any]:
    summary = data["summary"]
    executed = sorted(data["executed_lines"])
    missing = sorted(data["missing_lines"])
    rules_by_line = {
        int(line): tuple(sorted({r for c in contexts for r in rules_of(c)}))
        for line, contexts in data.get("contexts", {}).items()
    }
    try:
        source = Path(filename).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        source = ""
    imported = definition_lines(source)
    return {
        "path": _display_path(filename, packages),
        "statements": int(summary["num_statements"]),
        "lines_covered": int(summary["covered_lines"]),
        "branches": int(summary.get("num_branches", 0)),
        "branches_covered": int(summary.get("covered_branches", 0)),
        "missing_lines": missing,
        "setup_only_lines": [
            n for n in executed if not rules_by_line.get(n) and n not in imported
        ],
        "missing_branches": sorted([int(a), int(b)] for a, b in data.get("missing_branches", [])),
        "reached": _ranges(sorted(executed + missing), rules_by_line),
    }
