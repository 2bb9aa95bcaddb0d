"""The runtime compliance page: written from kept runs, each framework with its
declaration, its fingerprint (nearest policy, what differs, the points not run),
its findings or the kit's reason, and the profiles it has no feature for; the
kept results regenerate docs/runtimes.md with no difference."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from memconform.catalogue import load_catalogue
from memconform.cli import main
from memconform.compliance import TARGETS, Finding, load_findings
from memconform.reports import build_results, write_reports
from memconform.reports.results import Results
from memconform.runtime_compliance import (
    RUNTIME_TARGETS,
    RuntimeRun,
    kept_runtime_runs,
    render_runtime_comparison,
    render_runtime_page,
    runtime_scripts,
    write_runtime_page,
)
from tests.reports.factory import catalogue, header, outcome

DOCS = Path(__file__).resolve().parent.parent / "docs"
FREEZE = "openai==3.57.0\nopenai-agents==0.24.0\npydantic==2.14.4\n"


def _projection(appends: str, stored: str, outcome_text: str) -> dict[str, str]:
    return {"appends": appends, "stored": stored, "outcome": outcome_text, "errors": "none",
            "reply": "stored", "effects": "none", "context": "user"}


def _fingerprint() -> dict[str, Any]:
    clean = _projection("[user] [assistant]", "user,assistant", "completed")
    failed = _projection("[user]", "user", "failed: ModelError")
    kept = _projection("none", "none", "failed: ModelError")
    return {
        "schema": "memconform.fingerprint/1", "runtime": "openai-agents", "save_policy": None,
        "components": ["appends", "stored", "outcome", "errors", "reply", "effects", "context"],
        "nearest": "message", "distance": 1, "distances": {"message": 1, "turn": 2, "run": 2},
        "points": [
            {"name": "none", "doc": "the run completes", "stored": clean, "nearest": clean,
             "differs": []},
            {"name": "model call 1 fails", "doc": "the first model call fails",
             "stored": failed, "nearest": kept, "differs": ["appends", "stored"]},
        ],
        "differences": [], "references": {},
        "unsupported": [{"name": "run-end hook fails", "doc": "the run-end hook raises",
                         "needs": ["run_end"]}],
    }


def _results(fail: str | None = None, policies: list[str] | None = None) -> Results:
    declares = {"profiles": ["save-policy"], "policies": policies}
    records = [outcome(["SP-001"], name="sp one", runtime_declares=declares)]
    if fail is not None:
        records.append(outcome([fail], "failed", name=f"broken {fail}"))
    head = header(subject="runtime", store="sqlite:///<temporary file>", runtime="x:y")
    results = build_results(records, catalogue(), head)
    return dataclasses.replace(results, fingerprint=_fingerprint())


def _runs() -> list[RuntimeRun]:
    first, second, third = RUNTIME_TARGETS[:3]
    return [
        RuntimeRun(first, _results(policies=[]), freeze=FREEZE),
        RuntimeRun(second, _results(fail="SP-001")),
        RuntimeRun(third, None, "no results (exit 3): the runtime could not be built"),
    ]


def test_the_page_shows_each_framework_its_fingerprint_and_its_findings() -> None:
    second = RUNTIME_TARGETS[1]
    finding = Finding(second.name, "SP-001", "the input is | written first", "lib/run.py: f",
                      "partial-write")
    page = render_runtime_page(_runs(), {(second.name, "SP-001"): finding},
                               {second.name: "reproduce/runtime_langgraph.py"})
    for target in RUNTIME_TARGETS[:3]:
        assert target.label in page
    assert "openai-agents==0.24.0, openai==3.57.0" in page
    assert "no save policy (scenarios configuring one are n/a)" in page
    assert "no save-policy setting (every scenario runs)" in page
    assert "no results (exit 3): the runtime could not be built" in page
    assert "| message (1 of 2 points differ) |" in page
    assert ("| model call 1 fails | [user] | user | failed: ModelError "
            "| appends: none; stored: none |") in page
    assert "run-end hook fails (needs run_end)" in page
    assert "- **SP-001** (fail; partial write): the input is \\| written first" in page
    assert "[reproduce/runtime_langgraph.py](reproduce/runtime_langgraph.py)" in page
    assert (f"v/bin/memconform run --runtime {second.runtime} --profile save-policy "
            "--fingerprint --rule SP-001") in page
    row = next(line for line in page.splitlines() if line.startswith("| SP-001 |"))
    assert row.split("|")[3:5] == [" pass ", " **FAIL** "]
    assert "- **persisted-state**:" in page
    assert "ST-001" not in page  # store rules belong to the stores' page


def test_a_failure_without_a_finding_shows_the_kits_reason() -> None:
    page = render_runtime_page(_runs(), {})
    line = next(line for line in page.splitlines() if line.startswith("- **SP-001**"))
    assert "(fail; not yet judged): not yet explained; the kit says:" in line


def test_the_page_and_the_comparison_are_written(tmp_path: Path) -> None:
    written = write_runtime_page(_runs(), {}, tmp_path)
    assert [p.name for p in written] == ["runtimes.md", "runtimes.html"]
    assert "<html" in (tmp_path / "runtimes.html").read_text(encoding="utf-8")


def test_the_html_report_is_a_page_a_chooser_reads() -> None:
    """Plain framework names as columns, the runtime rules only, each failure with
    its finding and severity, a line per framework, its fingerprint, and the
    meaning of the policy names used."""
    second = RUNTIME_TARGETS[1]
    finding = Finding(second.name, "SP-001", "the input is written first", "lib/run.py: f",
                      "partial-write")
    html = render_runtime_comparison(_runs(), {(second.name, "SP-001"): finding},
                                     {second.name: "reproduce/runtime_langgraph.py"})
    text = html.decode("utf-8")
    for target in RUNTIME_TARGETS[:2]:
        assert f"#{RUNTIME_TARGETS.index(target) + 1} {target.label}" in text
    assert "x:y" not in text.split('id="matrix"')[1]  # no internal runtime name heads a column
    assert "the input is written first" in text
    assert "partial write" in text
    assert "nearest save policy message (1 of 2 points differ)" in text
    assert "with the framework alone: reproduce/runtime_langgraph.py" in text
    assert "<td>model call 1 fails</td><td>[user]</td><td>user</td>" in text
    assert "appends: none; stored: none" in text
    assert "<dt>anvia-main/message, anvia-main/turn, anvia-main/run</dt>" in text
    assert "<dt>message, turn, run</dt>" in text
    assert "ST-001" not in text  # store rules belong to the stores' report


def test_runtimes_is_rewritten_from_kept_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "runtimes"
    (path, *_) = write_reports(_results(fail="SP-001"), tmp_path / "run")
    kept.mkdir()
    (kept / f"{RUNTIME_TARGETS[0].name}.json").write_bytes(path.read_bytes())
    (kept / f"{RUNTIME_TARGETS[0].name}.freeze.txt").write_text(FREEZE, encoding="utf-8")
    code = main(["compliance", "--from-results", "--runtimes", "--out", str(tmp_path)])
    assert code == 3, "targets without kept results count as broken"
    page = (tmp_path / "runtimes.md").read_text(encoding="utf-8")
    assert "**SP-001** (fail; not yet judged)" in page
    assert "openai-agents==0.24.0" in page
    assert page.count("no kept results") == len(RUNTIME_TARGETS) - 1
    assert not (tmp_path / "compliance.md").exists(), "--runtimes leaves the stores' page"
    assert "runtimes.html" in capsys.readouterr().out


def test_a_finding_may_name_a_runtime_target(tmp_path: Path) -> None:
    path = tmp_path / "findings.toml"
    path.write_text("[[finding]]\ntarget = 'openai-agents'\nrule = 'SP-001'\n"
                    "severity = 'partial-write'\ntext = 'x'\nwhere = 'y'\n", encoding="utf-8")
    names = {t.name for t in TARGETS} | {t.name for t in RUNTIME_TARGETS}
    assert ("openai-agents", "SP-001") in load_findings(path, {"SP-001"}, names)
    code = main(["compliance", "--from-results", "--runtimes", "--out", str(tmp_path)])
    assert code == 3  # no kept results; the finding itself was accepted


def test_an_unknown_target_names_the_stores_and_the_runtimes(
    capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compliance", "--target", "nope", "--from-results"]) == 5
    err = capsys.readouterr().err
    assert "openai-agents-sqlite" in err
    assert "runtimes: openai-agents, langgraph" in err


def test_every_runtime_target_names_a_known_runtime_and_an_extra_of_the_kit() -> None:
    import tomllib

    from memconform.adapters.registry import BUILTIN_RUNTIMES

    project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))
    extras = project["project"]["optional-dependencies"]
    for target in RUNTIME_TARGETS:
        assert ":" not in target.name  # a file name on every system
        if target.node:  # a Node framework: its stdio command's files and its lock exist
            assert target.runtime.startswith("stdio:node ")
            assert not target.extra
            assert (Path(target.node) / "package-lock.json").is_file()
            assert all(Path(w).is_file() for w in target.runtime.split() if w.endswith(".mjs"))
            continue
        assert target.runtime in BUILTIN_RUNTIMES
        assert target.extra in extras
    names = [t.name for t in RUNTIME_TARGETS]
    assert len(set(names)) == len(names)
    assert not set(names) & {t.name for t in TARGETS}


def test_every_framework_extra_is_on_the_page() -> None:
    """The extras whose runtime adapters the library tests run are the extras
    of the page's runtime targets: a framework runtime that lands slots in with a
    target entry, and an entry names no extra those tests leave out."""
    from memconform.compliance import RUNTIME_EXTRAS

    assert {t.extra for t in RUNTIME_TARGETS if not t.node} == set(RUNTIME_EXTRAS)



def test_the_kept_results_regenerate_the_runtime_page_without_a_difference() -> None:
    runs = kept_runtime_runs(DOCS, RUNTIME_TARGETS)
    names = {t.name for t in TARGETS} | {t.name for t in RUNTIME_TARGETS}
    findings = load_findings(DOCS / "findings.toml", load_catalogue().ids, names)
    page = render_runtime_page(runs, findings, runtime_scripts(DOCS))
    assert page == (DOCS / "runtimes.md").read_text(encoding="utf-8"), (
        "docs/runtimes.md is stale: run 'memconform compliance --from-results --out docs'"
    )
    html = render_runtime_comparison(runs, findings, runtime_scripts(DOCS))
    assert html == (DOCS / "runtimes.html").read_bytes(), (
        "docs/runtimes.html is stale: run "
        "'memconform compliance --from-results --runtimes --out docs'"
    )
