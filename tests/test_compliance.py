"""The compliance page: written from kept runs, one line per failure with its
finding (or the kit's reason when none is written yet) and a command to
reproduce it; findings are validated; a target that cannot be prepared says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.cli import main
from memconform.compliance import (
    TARGETS,
    ComplianceError,
    Finding,
    TargetRun,
    load_decisions,
    load_findings,
    prepare_venv,
    render_page,
    write_page,
)
from memconform.reports import build_results, write_reports
from memconform.reports.results import Results
from tests.reports.factory import catalogue, header, outcome, store_outcomes

RULES = {"ST-001", "ST-002", "ST-003", "ST-004"}


def _results(fail: str | None = None) -> Results:
    records = store_outcomes()
    if fail is not None:
        records.append(outcome([fail], "failed", name=f"broken {fail}"))
    head = header(store="langgraph+sqlite:///tmp/x/store.db", store_version="langgraph==9.9")
    return build_results(records, catalogue(), head)


def _runs() -> list[TargetRun]:
    first, second, third = TARGETS[:3]
    return [
        TargetRun(first, _results()),
        TargetRun(second, _results(fail="ST-001")),
        TargetRun(third, None, "no results (exit 3): cannot open the store"),
    ]


def test_the_page_lists_every_target_and_explains_every_failure() -> None:
    second = TARGETS[1]
    finding = Finding(second.name, "ST-001", "the window is | taken from the oldest end",
                      "lib/store.py: window")
    page = render_page(_runs(), {(second.name, "ST-001"): finding})
    for target in TARGETS[:3]:
        assert target.label in page
    assert "langgraph==9.9" in page
    assert "no results (exit 3): cannot open the store" in page
    assert "- **ST-001** (fail; a decision of the kit): the window is \\| taken from" in page
    assert f"pip install '.[{second.extra}]'" in page  # from a checkout's root
    assert "memconform[" not in page
    assert "--rule ST-001" in page
    row = next(line for line in page.splitlines() if line.startswith("| ST-001 |"))
    assert row.split("|")[3:5] == [" pass ", " **FAIL** "]
    assert "| ST-004 | MUST | n/a | n/a |" in page


def test_findings_are_sorted_by_severity_under_a_one_line_verdict_per_store() -> None:
    target = TARGETS[0]
    records = store_outcomes()
    records += [outcome([rule], "failed", name=f"broken {rule}") for rule in ("ST-001", "ST-003")]
    run = TargetRun(target, build_results(records, catalogue(), header()))
    findings = {
        (target.name, "ST-001"): Finding(target.name, "ST-001", "kit", "a.py", "kit-decision"),
        (target.name, "ST-003"): Finding(target.name, "ST-003", "lost", "b.py", "silent-loss"),
    }
    page = render_page([run], findings)
    assert page.index("- **ST-003** (warn; silent loss or alteration): lost") < page.index(
        "- **ST-001** (fail; a decision of the kit): kit"
    )
    line = next(x for x in page.splitlines() if x.startswith(f"- **{target.label}**"))
    assert line.endswith(
        "several processes at once not measured; silent loss or alteration: ST-003; "
        "a decision of the kit: ST-001."
    )


def test_a_failure_without_a_finding_shows_the_kits_reason() -> None:
    page = render_page(_runs(), {})
    line = next(line for line in page.splitlines() if line.startswith("- **ST-001**"))
    assert "not yet explained" in line


def test_the_page_and_the_comparison_are_written(tmp_path: Path) -> None:
    written = write_page(_runs(), {}, tmp_path)
    assert [p.name for p in written] == ["compliance.md", "compliance.html"]
    assert "<html" in (tmp_path / "compliance.html").read_text(encoding="utf-8")


def test_the_comparison_names_stores_and_shows_store_rules_with_findings(
    tmp_path: Path,
) -> None:
    second = TARGETS[1]
    finding = Finding(second.name, "ST-001", "the batch is <written> row by row",
                      "lib/store.py: add", "partial-write")
    write_page(_runs(), {(second.name, "ST-001"): finding}, tmp_path)
    page = (tmp_path / "compliance.html").read_text(encoding="utf-8")
    columns = page[page.index("<table id=\"compare-table\">"):]
    columns = columns[: columns.index("</thead>")]
    for target in TARGETS[:2]:  # by name, never by the path the run had
        assert f"{target.label} ({target.name})</th>" in columns
    assert "/tmp/x/store.db" not in page
    assert 'data-verdicts="not-scored' not in page  # the runtime rules stay out
    for rule_id in ("SP-001", "SP-002", "SP-003", "SW-001"):
        assert f"<td>{rule_id}</td>" not in page
    assert page.count('<tr class="rule"') == len(RULES)
    assert "<td>Rule ST-002 holds.</td>" in page  # the rule's text
    table = page[page.index('<section id="findings">'):page.index('<section id="matrix">')]
    assert "partial write" in table
    assert "the batch is &lt;written&gt; row by row" in table
    assert "<code>lib/store.py: add</code>" in table
    assert "Finding (partial write): the batch is &lt;written&gt; row by row" in page
    assert f"{second.label} ({second.name})</strong>: several processes at once not " \
        "measured; partial write: ST-001." in page


def test_the_comparison_sorts_findings_by_severity_and_marks_the_unjudged() -> None:
    from memconform.compliance import render_store_comparison

    target = TARGETS[0]
    records = store_outcomes()
    records += [outcome([rule], "failed", name=f"broken {rule}") for rule in ("ST-001", "ST-003")]
    records.append(outcome(["ST-002"], "failed", name="broken ST-002"))
    run = TargetRun(target, build_results(records, catalogue(), header()))
    findings = {
        (target.name, "ST-001"): Finding(target.name, "ST-001", "kit", "a.py", "kit-decision"),
        (target.name, "ST-003"): Finding(target.name, "ST-003", "lost", "b.py", "silent-loss"),
    }
    page = render_store_comparison([run], findings).decode()
    table = page[page.index('<section id="findings">'):page.index('<section id="matrix">')]
    worst, kit, unjudged = (table.index(f"<td>{r}</td>") for r in ("ST-003", "ST-001", "ST-002"))
    assert worst < kit < unjudged
    assert "silent loss or alteration" in table
    assert "not yet judged" in table
    assert "not yet explained; the kit says:" in table


def test_the_page_is_rewritten_from_kept_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "compliance"
    (path, *_) = write_reports(_results(fail="ST-001"), tmp_path / "run")
    kept.mkdir()
    (kept / f"{TARGETS[0].name}.json").write_bytes(path.read_bytes())
    code = main(["compliance", "--from-results", "--out", str(tmp_path)])
    assert code == 3, "targets without kept results count as broken"
    page = (tmp_path / "compliance.md").read_text(encoding="utf-8")
    assert "**ST-001** (fail; not yet judged)" in page
    assert page.count("no kept results") == len(TARGETS) - 1
    assert "compliance.html" in capsys.readouterr().out


def _toml(target: str, rule: str, text: str, severity: str = "partial-write") -> str:
    return (f"[[finding]]\ntarget = '{target}'\nrule = '{rule}'\nseverity = '{severity}'\n"
            f"text = '{text}'\nwhere = 'y'\n")


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("[[finding]]\ntarget = 'langgraph-sqlite'\nrule = 'ST-001'\n", "exactly"),
        (_toml("nope", "ST-001", "x"), "target"),
        (_toml("langgraph-sqlite", "XX-1", "x"), "unknown rule"),
        (_toml("langgraph-sqlite", "ST-001", " "), "non-empty"),
        ("[[finding", "Expected"),
        (_toml("langgraph-sqlite", "ST-001", "x") + _toml("langgraph-sqlite", "ST-001", "z"),
         "twice"),
        (_toml("langgraph-sqlite", "ST-001", "x", severity="bad"),
         "severity 'bad' is not one of"),
    ],
)
def test_malformed_findings_are_refused(tmp_path: Path, text: str, complaint: str) -> None:
    path = tmp_path / "findings.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ComplianceError, match=complaint):
        load_findings(path, RULES)


def test_findings_load_by_target_and_rule(tmp_path: Path) -> None:
    path = tmp_path / "findings.toml"
    path.write_text(
        "[[finding]]\ntarget = 'langgraph-sqlite'\nrule = 'ST-001'\nseverity = 'silent-loss'\n"
        "text = '''a repeated id\n   replaces the stored message'''\nwhere = 'm.py: f'\n",
        encoding="utf-8",
    )
    found = load_findings(path, RULES)
    assert found[("langgraph-sqlite", "ST-001")].text == "a repeated id replaces the stored message"
    assert found[("langgraph-sqlite", "ST-001")].severity == "silent-loss"
    assert load_findings(tmp_path / "absent.toml", RULES) == {}


def test_decisions_load_and_show_on_the_page(tmp_path: Path) -> None:
    path = tmp_path / "findings.toml"
    path.write_text(
        "[[decision]]\ntitle = 'Replace is outside the contract'\n"
        "text = '''set_messages deletes\n  then inserts'''\nwhere = 'm.py: f'\n",
        encoding="utf-8",
    )
    decisions = load_decisions(path)
    assert [(d.title, d.text) for d in decisions] == [
        ("Replace is outside the contract", "set_messages deletes then inserts")
    ]
    page = render_page(_runs(), {}, decisions)
    assert "## Decisions" in page
    assert "- **Replace is outside the contract.** set_messages deletes then inserts" in page
    write_page(_runs(), {}, tmp_path, decisions)
    html = (tmp_path / "compliance.html").read_text(encoding="utf-8")
    assert "<li><strong>Replace is outside the contract.</strong> set_messages deletes then " \
        "inserts (<code>m.py: f</code>)</li>" in html
    assert load_decisions(tmp_path / "absent.toml") == []
    path.write_text("[[decision]]\ntitle = 'x'\ntext = ' '\nwhere = 'y'\n", encoding="utf-8")
    with pytest.raises(ComplianceError, match="non-empty"):
        load_decisions(path)


def test_a_target_that_cannot_be_installed_says_why(tmp_path: Path) -> None:
    source = tmp_path / "kit"
    source.mkdir()
    (source / "pyproject.toml").write_text("[project]\nname = 'x'\nversion = [\n", "utf-8")
    with pytest.raises(ComplianceError, match="cannot prepare the 'langchain' environment"):
        prepare_venv("langchain", tmp_path / "venvs", source)


def test_every_target_names_a_known_scheme_and_an_extra_of_the_kit() -> None:
    import tomllib

    from memconform.adapters.registry import BUILTIN_SCHEMES

    project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))
    extras = project["project"]["optional-dependencies"]
    for target in TARGETS:
        assert target.url.split(":", 1)[0] in BUILTIN_SCHEMES
        assert target.extra in extras
    assert len({t.name for t in TARGETS}) == len(TARGETS)


def test_measure_unclaimed_reaches_the_suite_and_every_reproduce_line(tmp_path: Path) -> None:
    from memconform.cli import _parser, _pytest_args

    args = _parser().parse_args(["run", "--store", "memory://", "--measure-unclaimed"])
    assert "--memconform-measure-unclaimed" in _pytest_args(args, None, tmp_path / "o.jsonl")
    plain = _parser().parse_args(["run", "--store", "memory://"])
    assert "--memconform-measure-unclaimed" not in _pytest_args(plain, None, tmp_path / "o")
    assert all("--measure-unclaimed" in t.reproduce() for t in TARGETS)


def test_the_freeze_of_an_environment_names_every_distribution() -> None:
    import sys

    from memconform.compliance import freeze, freeze_file

    frozen = freeze(Path(sys.prefix))
    assert "pytest==" in frozen
    assert "memconform" not in frozen  # the kit itself is editable, left out
    assert freeze_file(Path("c/langgraph-sqlite.json")) == Path("c/langgraph-sqlite.freeze.txt")


def test_the_kept_results_regenerate_the_page_without_a_difference() -> None:
    from memconform.catalogue import load_catalogue
    from memconform.compliance import (
        kept_runs,
        load_decisions,
        render_store_comparison,
        reproduction_scripts,
    )

    docs = Path(__file__).resolve().parent.parent / "docs"
    from memconform.runtime_compliance import RUNTIME_TARGETS

    runs = kept_runs(docs, TARGETS)
    names = {t.name for t in TARGETS} | {t.name for t in RUNTIME_TARGETS}
    findings = load_findings(docs / "findings.toml", load_catalogue().ids, names)
    page = render_page(runs, findings, load_decisions(docs / "findings.toml"),
                       reproduction_scripts(docs))
    assert page == (docs / "compliance.md").read_text(encoding="utf-8"), (
        "docs/compliance.md is stale: run 'memconform compliance --from-results --out docs'"
    )
    html = render_store_comparison(runs, findings, load_decisions(docs / "findings.toml"))
    assert html == (docs / "compliance.html").read_bytes(), (
        "docs/compliance.html is stale: run 'memconform compliance --from-results --out docs'"
    )


def test_a_run_past_its_time_is_killed_with_every_process_it_started(tmp_path: Path) -> None:
    """A target run that does not stop is killed with its whole process group:
    nothing it started lives on writing into the folder being removed."""
    import os
    import subprocess
    import sys

    from memconform.compliance import run_group

    grandchild = (
        "import os, pathlib, time; pathlib.Path('pid').write_text(str(os.getpid())); "
        "time.sleep(60)"
    )
    child = (
        "import subprocess, sys, time, pathlib; "
        f"subprocess.Popen([sys.executable, '-c', {grandchild!r}]); "
        "[time.sleep(0.01) for _ in range(3000) if not pathlib.Path('pid').exists()]; "
        "print('both running', flush=True); time.sleep(60)"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        run_group([sys.executable, "-c", child], str(tmp_path), dict(os.environ), 5.0)
    pid = int((tmp_path / "pid").read_text())
    # the pipes it shared with the group reached their end, so it has exited
    stat = Path(f"/proc/{pid}/stat")
    assert not stat.exists() or stat.read_text().split(") ", 1)[1].startswith("Z")


def test_every_kept_finding_explains_a_failure_of_its_targets_kept_run() -> None:
    """A finding whose rule the kept run no longer fails is stale: the page
    would hide it, and its text would describe a failure nobody sees."""
    from memconform.catalogue import load_catalogue
    from memconform.compliance import kept_runs
    from memconform.runtime_compliance import RUNTIME_TARGETS, kept_runtime_runs

    docs = Path(__file__).resolve().parent.parent / "docs"
    names = {t.name for t in TARGETS} | {t.name for t in RUNTIME_TARGETS}
    findings = load_findings(docs / "findings.toml", load_catalogue().ids, names)
    runs = [*kept_runs(docs, TARGETS), *kept_runtime_runs(docs, RUNTIME_TARGETS)]
    failing = {
        (run.target.name, rule.id)
        for run in runs if run.results is not None
        for rule in run.results.rules
        if rule.verdict in ("fail", "error", "warn")
        or (rule.verdict == "informational" and rule.measured in ("fail", "error", "warn"))
    }
    stale = sorted(k for k in findings if k not in failing)
    assert stale == [], f"findings for rules their target's kept run does not fail: {stale}"


def test_every_kept_result_was_made_with_the_catalogue_the_kit_ships() -> None:
    """A kept result made with another catalogue judged other rule texts: the
    pages would show verdicts on rules the kit no longer states. Rerun the
    target (``memconform compliance --target NAME``, ``--runtimes`` for a
    framework) to replace it."""
    import json

    from memconform.catalogue import load_catalogue

    docs = Path(__file__).resolve().parent.parent / "docs"
    shipped = load_catalogue().digest
    stale = []
    kept = [*(docs / "compliance").glob("*.json"), *(docs / "runtimes").glob("*.json")]
    for path in sorted(kept):
        header = json.loads(path.read_text(encoding="utf-8")).get("header")
        if header is None:  # a fingerprint, which states no rule
            continue
        made_with = header["catalogue"]["hash"]
        if made_with != shipped:
            stale.append(f"{path.relative_to(docs)}: catalogue {made_with}, "
                         f"the kit ships {shipped}")
    assert stale == [], "kept results made with another catalogue:\n" + "\n".join(stale)
