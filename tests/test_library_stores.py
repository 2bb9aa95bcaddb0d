"""Each certified third-party store, judged in a virtual environment of its own.

For every extra, the adapter's own unit tests run inside that extra's
environment; for every target, ``memconform run --quick --store URL`` runs there
too and must give every store rule a verdict, with no ``error`` (an adapter that
breaks the contract is the kit's defect, not the library's). When the compliance
page keeps results for the target, every row the quick run ran must have the
page's outcome: the page stays true to the pinned versions. The rows a quick run
leaves out (stress sizes, generated checks, unclaimed promises) take most of a
full run on a slow library; ``memconform compliance`` runs them.

The environments live in ``.venvs/`` (reused while pyproject.toml is unchanged).
Installing needs a package index: without one these tests skip with the reason,
and with ``CI=true`` they fail instead. A target on a PostgreSQL or Redis server
(``MEMCONFORM_POSTGRESQL_URL``, ``MEMCONFORM_REDIS_URL``, as for the kit's own
server stores) is decided the same way when the server does not answer.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from memconform.compliance import (
    RUNTIME_EXTRAS,
    SERVERS,
    TARGETS,
    ComplianceError,
    Target,
    library_too_slow,
    prepare_venv,
    reproduction_scripts,
    run_target,
    server_url,
)
from memconform.reports import load_results
from memconform.reports.results import Results, ScenarioEvidence
from memconform.steps.common import PROMISES
from memconform.steps.generated_checks import __all__ as PROPERTY_CHECKS
from tests.adapters_support import in_ci, require_server

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = sorted({t.extra for t in TARGETS} | set(RUNTIME_EXTRAS))
"""Every extra with a store target or a runtime adapter (a runtime-only extra has
no store adapter, so no ``tests/libraries/test_<extra>.py``)."""
RULE_VERDICTS = {
    "pass", "fail", "warn", "unsupported", "inconclusive", "adapter-provided", "informational",
}

pytestmark = [pytest.mark.slow, pytest.mark.libraries]


def _venv(extra: str) -> Path:
    try:
        return prepare_venv(extra, ROOT / ".venvs", ROOT)
    except ComplianceError as exc:
        if in_ci():
            pytest.fail(f"{exc}\n(CI=true: every library must be installable)", pytrace=False)
        pytest.skip(f"the {extra!r} extra cannot be installed here: {exc}")


def _probe_postgresql(url: str) -> None:
    import psycopg

    with psycopg.connect(url, connect_timeout=3):
        pass


def _probe_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=3)
    try:
        client.ping()
    finally:
        client.close()


_PROBES = {"postgresql": ("PostgreSQL", _probe_postgresql), "redis": ("Redis", _probe_redis)}


def _require_server(target: Target) -> None:
    """Skip (fail under CI=true) when the target's server does not answer."""
    if target.server:
        what, probe = _PROBES[target.server]
        require_server(what, *SERVERS[target.server], probe)


@pytest.mark.parametrize("extra", EXTRAS)
def test_the_adapter_unit_tests_pass_in_the_librarys_own_environment(extra: str) -> None:
    venv = _venv(extra)
    stem = f"tests/libraries/test_{extra.replace('-', '_')}"
    test_files = sorted(str(p.relative_to(ROOT)) for p in
                        [ROOT / f"{stem}.py", ROOT / f"{stem}_runtime.py"] if p.is_file())
    assert test_files, f"no unit tests for the {extra!r} extra under tests/libraries/"
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         *test_files],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=900,
    )
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-30:])
    assert done.returncode == 0, tail
    assert " skipped" not in tail.splitlines()[-1], f"the library was not importable:\n{tail}"


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_every_store_rule_gets_a_verdict_and_the_adapter_never_errs(
    target: Target, tmp_path: Path
) -> None:
    _require_server(target)
    venv = _venv(target.extra)
    run = run_target(target, venv, tmp_path / "results.json", timeout=1500, quick=True)
    assert run.results is not None, run.problem
    assert run.problem == "", run.problem
    store_rules = [r for r in run.results.rules if r.profile == "store"]
    assert store_rules
    without = [f"{r.id}: {r.verdict} ({r.reason})" for r in store_rules
               if r.verdict not in RULE_VERDICTS and not library_too_slow(r)]
    assert without == [], "store rules without a verdict:\n" + "\n".join(without)
    errors = [f"{r.id}: {r.reason}" for r in run.results.rules
              if r.verdict == "error" and not library_too_slow(r)]
    assert errors == [], "the adapter broke the contract:\n" + "\n".join(errors)

    kept = ROOT / "docs" / "compliance" / f"{target.name}.json"
    if kept.is_file():
        before, now = _scenario_outcomes(load_results(kept)), _scenario_outcomes(run.results)
        # the quick run leaves rows out (stress sizes, unclaimed promises): each
        # rule is compared on the rows it ran, every one of which the page must hold;
        # a promise the store does not claim is measured by the page's run only
        claimed = set(run.results.header["store"]["capabilities"])
        now = {k: v for k, v in now.items() if k not in _unclaimed_promises(run.results, claimed)}
        ran = {nodeid for rows in now.values() for nodeid, _ in rows}
        before = {k: [row for row in rows if row[0] in ran] for k, rows in before.items()}
        # a rule the page does not know yet had no outcomes there: a new runtime
        # rule, which no store scenario scores, contradicts nothing on it
        # a scenario the page does not hold yet (one added to the suite since the
        # page was made) contradicts nothing on it unless it fails a rule the page
        # does not show failing: that is a finding the page must show; failing a rule the page
        # already fails adds a case, not a verdict
        page = load_results(kept)
        known = {s.nodeid for rule in page.rules for s in rule.scenarios}
        failing = {rule.id for rule in page.rules if rule.verdict in ("fail", "error")}
        fresh = [f"{k}: {nodeid} {outcome} (not on the page yet)"
                 for k, v in now.items() for nodeid, outcome in v
                 if nodeid not in known and outcome in ("failed", "error") and k not in failing]
        now = {k: [row for row in v if row[0] in known] for k, v in now.items()}
        changed = fresh + [f"{k}: page says {before.get(k)}, now {v}" for k, v in now.items()
                           if not _agree(before.get(k, []), v)]
        assert changed == [], (
            "the compliance page no longer matches the library; regenerate it with "
            f"'memconform compliance --out docs --target {target.name}':\n" + "\n".join(changed)
        )


SCRIPTS = reproduction_scripts(ROOT / "docs")


def _plain_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_library_only_script_reproduces_every_finding(name: str, tmp_path: Path) -> None:
    """The script runs as a library's maintainer would run it: ``python
    script.py``, from an empty folder, with no PYTHON* variable. Not in
    isolated mode: the script's own folder comes first on its import path, as
    it does for them, so a script named like the library it imports fails."""
    target = next(t for t in TARGETS if t.name == name)
    _require_server(target)
    venv = _venv(target.extra)
    script = ROOT / "docs" / SCRIPTS[name]
    # a script needing a server reads it as a maintainer would set it
    servers = {"DATABASE_URL": server_url("postgresql"), "REDIS_URL": server_url("redis")}
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(script)], env={**_plain_environment(), **servers},
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert " reproduced: " in done.stdout
    lines = done.stdout.splitlines()
    unreproduced = [rule for rule in _finding_rules(name)
                    if not any(line.startswith(f"{rule} reproduced: ") for line in lines)]
    assert unreproduced == [], f"findings the script does not reproduce: {unreproduced}"


def _finding_rules(target: str) -> list[str]:
    """The rules docs/findings.toml explains for ``target``."""
    with (ROOT / "docs" / "findings.toml").open("rb") as handle:
        data = tomllib.load(handle)
    return sorted({f["rule"] for f in data.get("finding", []) if f["target"] == target})


TIMED_FAILURE = "failed where timing met"
"""The outcome of a scenario failed by a multi-process check that found the
problem only where timing put the processes (``deterministic`` false on its
check): writers released at once, a reader polling."""


def _agree(page: list[tuple[str, str]], now: list[tuple[str, str]]) -> bool:
    """The same scenarios with the same outcomes, where an ``inconclusive`` on
    either side agrees with anything: whether a check on a store without a row
    point (ST-034's kill in the middle of a batch, ST-036's read during one)
    catches the moment it needs depends on the machine's load, and a check that
    could not observe contradicts nothing the page says. A failure found only
    where timing met agrees with a pass and with a failure: it is real (LlamaIndex
    interleaves two writers' batches when they stamp their rows at the same
    moment), and another run may not meet that moment."""
    if [nodeid for nodeid, _ in page] != [nodeid for nodeid, _ in now]:
        return False
    return all(a == b or "inconclusive" in (a, b) or TIMED_FAILURE in (a, b)
               for (_, a), (_, b) in zip(page, now, strict=True))


def _outcome(scenario: ScenarioEvidence) -> str:
    timed = any(
        isinstance(call, dict) and call.get("kind") == "check"
        and call.get("passed") is False and call.get("deterministic") is False
        for call in scenario.store_calls
    )
    return TIMED_FAILURE if scenario.outcome == "failed" and timed else str(scenario.outcome)


def _unclaimed_promises(results: Results, claimed: set[str]) -> set[str]:
    """The rules of the promises (durable, atomic-batch, concurrent-writers) the
    store does not claim, which only a run measuring unclaimed promises judges."""
    return {r.id for r in results.rules if r.capability in PROMISES - claimed}


def _scenario_outcomes(results: Results) -> dict[str, list[tuple[str, str]]]:
    """Each rule's hand-written scenario outcomes. Generated properties are left
    out: against a store whose answers depend on timing (LangGraph's fact order
    follows whole-second stamps) they may find a divergence in one run only."""
    return {
        rule.id: sorted(
            (s.nodeid, _outcome(s)) for s in rule.scenarios if s.scenario not in PROPERTY_CHECKS
        )
        for rule in results.rules
    }
