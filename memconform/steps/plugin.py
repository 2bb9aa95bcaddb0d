"""The pytest plugin: fixtures, markers and outcome capture.

Loaded only when a session asks for it (see :mod:`memconform.pytest_entry`,
which declares the options and is the always-loaded entry point). Options:

- ``--memconform-store URL``: the store under test (default: SQLite in a temporary folder).
- ``--memconform-runtime module:factory``: the runtime under test (default: the simulator).
- ``--memconform-mutant NAME``: replace the store or runtime with a deliberately broken one.
- ``--memconform-subject``: ``store``, ``runtime`` or ``both`` (default: inferred).
  A run of one subject runs only the scenarios tagged with a rule of that
  subject; the others are deselected.
- ``--memconform-outcomes PATH``: write each scenario outcome as it ends, then
  how the session ended (see :mod:`memconform.outcome_log`).
- ``--memconform-timeout SECONDS``: how long one store call may take.
- ``--memconform-measure-unclaimed``: check the promises the store does not
  claim too (their rules are reported ``informational``, never counted).
- ``--memconform-max-timeouts N``: after N timeouts in a row of one store
  method the kit stops calling the store; every later scenario that needs it
  ends with ``error`` at once (``0``: never stop).
- ``--memconform-thoroughness``: ``fast`` (default) or ``thorough`` property search.
- ``--memconform-export-failures DIR``: write property counterexamples as features.
- ``--memconform-maxfail N``: stop after N scenarios failed or ended in
  ``error`` (those of rules the run judges: a store run does not stop for a
  runtime rule it does not score).
- ``--memconform-deadline SECONDS``: start no scenario once this many seconds
  have passed since the session began; the session stops early and says so.

Step modules (``memconform.steps.<profile>``) are loaded as plugins, so their
step definitions are visible to every feature.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import json
import os
import pkgutil
import re
import sys
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis.errors import Flaky, FlakyFailure

from memconform import measurement
from memconform.adapters.answers import limit_execute
from memconform.adapters.contract import Capability, provisions_of
from memconform.adapters.proxy import (
    DEFAULT_MAX_TIMEOUTS,
    DEFAULT_TIMEOUT,
    AdapterContractError,
    AdapterTimeoutError,
    HangGuard,
    RecordingStore,
    abandoned_calls,
    raised_by_adapter,
)
from memconform.adapters.registry import open_store
from memconform.catalogue import load_catalogue
from memconform.mutants import get_mutant
from memconform.outcome_log import OutcomeLog, write_collected
from memconform.pytest_entry import add_options
from memconform.second_conditions import CONDITIONS, TAG_PREFIX
from memconform.simulator.runtime import (
    ProfileNotDeclared,
    Runtime,
    Simulator,
    declared_policies,
    declared_profiles,
    profile_declared,
)
from memconform.steps.common import (
    HOW_PASSED,
    INCONCLUSIVE_PREFIX,
    POLICIES_RUN,
    UNSUPPORTED_PREFIX,
    CheckRecorder,
    CheckResult,
    Mismatch,
)
from memconform.timeline import Timeline

RULE_TAG = re.compile(r"^(SP|SW|TU|CA|PS|ST)-\d{3}$")
_NOT_STEP_MODULES = {"plugin", "common", "suite"}
_counter = itertools.count(1)
_RUN = uuid.uuid4().hex[:6]
"""Tells this run from earlier ones whose process had the same id: a server store
keeps their data, and process ids are reused."""


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def call_timeout(config: pytest.Config) -> float:
    """How long one store call may take (``--memconform-timeout``, else the default)."""
    given = config.getoption("--memconform-timeout")
    return DEFAULT_TIMEOUT if given is None else float(given)


def step_modules() -> list[str]:
    """The profile step modules shipped with the kit."""
    import memconform.steps as package

    return [
        f"memconform.steps.{info.name}"
        for info in pkgutil.iter_modules(package.__path__)
        if info.name not in _NOT_STEP_MODULES and not info.name.startswith("_")
    ]


_HANGS = pytest.StashKey[HangGuard]()
_STORE_FIXTURES = frozenset({"store", "raw_store", "store_url"})


def hang_guard(config: pytest.Config) -> HangGuard:
    """The session's :class:`HangGuard`, shared by every recording proxy."""
    guard = config.stash.get(_HANGS, None)
    if guard is None:
        given = config.getoption("--memconform-max-timeouts")
        guard = HangGuard(max(0, DEFAULT_MAX_TIMEOUTS if given is None else int(given)))
        config.stash[_HANGS] = guard
    return guard


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A run of one subject runs only the scenarios that score a rule of it: a
    scenario whose rules all belong to the other subject is deselected (a store
    run does not spend its time on runtime rules it reports ``not-scored``).
    Tests without rule tags (a vendor's own, beside the suite) are left alone.

    Stress-size scenarios (``@stress``: a batch of 10,000, a 16 MiB text) run
    after every other one, in their order. A store call the kit gives up waiting
    for keeps running in a thread no one can stop; run last, it cannot slow the
    calls, and so change the verdicts, of the rules judged after it.

    A scenario whose rules are all runtime rules of profiles the runtime under
    test does not declare is deselected too: those rules are ``unsupported``
    (see :mod:`memconform.reports.verdict`) and the runtime is never called
    for a profile it does not declare. A runtime that cannot be built, or
    whose declaration cannot be read, deselects nothing here: its scenarios
    end with the adapter's ``error``."""
    judged = _SESSION.judged
    if _subject_of(config) != "store":
        # a runtime rule of a profile the runtime does not declare is reported
        # unsupported without running: its scenarios never call the runtime
        judged = judged - _undeclared_rules(config)
    if judged != frozenset(load_catalogue().ids):
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            rules = {m.name for m in item.iter_markers() if RULE_TAG.match(m.name)}
            (kept if not rules or rules & judged else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    items.sort(key=lambda item: item.get_closest_marker("stress") is not None)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Once the kit has stopped calling a hung store, a scenario that needs the
    store ends with ``error`` before any of it runs."""
    stopped = hang_guard(item.config).stopped
    if stopped is not None and _STORE_FIXTURES & set(getattr(item, "fixturenames", ())):
        raise AdapterTimeoutError("store", f"not called: {stopped}")


EXECUTE_TIMEOUTS = 15
"""A runtime's ``execute`` may take this many store-call timeouts."""


def pytest_configure(config: pytest.Config) -> None:
    _SESSION.stopped = None
    limit_execute(EXECUTE_TIMEOUTS * call_timeout(config))
    deadline = config.getoption("--memconform-deadline")
    if deadline is not None:
        config.stash[_DEADLINE] = (time.monotonic() + float(deadline), float(deadline))
    path = config.getoption("--memconform-outcomes")
    if path and not hasattr(config, "workerinput"):
        _SESSION.log = OutcomeLog(Path(path))
    _SESSION.failures = 0
    # counted where every outcome arrives: not in an xdist worker
    worker = hasattr(config, "workerinput")
    _SESSION.maxfail = None if worker else config.getoption("--memconform-maxfail")
    subject = _subject_of(config)
    _SESSION.judged = frozenset(
        r.id for r in load_catalogue() if subject in ("both", r.subject)
    )
    for rule in load_catalogue():
        config.addinivalue_line("markers", f"{rule.id}: {rule.level} {rule.text[:80]}")
    for tag in ("golden", "variant", "property", "slow"):
        config.addinivalue_line("markers", f"{tag}: memconform scenario tag")
    config.addinivalue_line("markers", "stress: a stress-size scenario, run after the others")
    for condition in CONDITIONS:
        config.addinivalue_line(
            "markers", f"{TAG_PREFIX}{condition}: the row exercises this second condition"
        )
    for capability in Capability:
        config.addinivalue_line("markers", f"{capability.value}: needs this store capability")
    for module in step_modules():
        if not config.pluginmanager.has_plugin(module):
            config.pluginmanager.register(importlib.import_module(module), module)



# -- fixtures ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The URL of the store under test."""
    url = request.config.getoption("--memconform-store")
    if url:
        return str(url)
    return f"sqlite:///{tmp_path_factory.mktemp('store') / 'memconform.db'}"


@pytest.fixture(scope="session")
def raw_store(request: pytest.FixtureRequest, store_url: str) -> Iterator[object]:
    """The store under test, opened once per session (mutant applied).

    A store that cannot be opened is an adapter failure: every scenario that
    needs it ends with the verdict ``error`` naming the cause."""
    try:
        store = open_store(store_url)
    except AdapterContractError:
        raise
    except Exception as exc:
        raise AdapterContractError(
            "open", f"the store could not be opened: {type(exc).__name__}: {exc}"
        ) from exc
    mutant_name = request.config.getoption("--memconform-mutant")
    if mutant_name:
        mutant = get_mutant(mutant_name)
        if mutant.kind == "store":
            store = mutant.build(store)
    yield store
    close = getattr(store, "close", None)
    if callable(close) and hang_guard(request.config).stopped is None:
        close()  # a store the kit stopped calling is not called to close either


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> str:
    """A prefix unique to this scenario, this process and this run: use it in every
    thread id, scope and key so scenarios never see each other's data.

    Every namespace has the same width, so none is a prefix of another: a store
    that matches thread ids by prefix mixes the threads of one scenario (which
    the thread-id scenarios of ST-035 look for), never those of two scenarios
    running side by side."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "w0")
    return f"mc{os.getpid():07d}{_RUN}-{worker:0>5}-{next(_counter):06d}"


@pytest.fixture
def store(request: pytest.FixtureRequest, raw_store: object) -> Iterator[RecordingStore]:
    """The store under test behind the recording proxy, with a fresh timeline."""
    proxy = RecordingStore(
        raw_store, Timeline(), timeout=call_timeout(request.config),
        hangs=hang_guard(request.config),
    )
    request.node.stash[_TIMELINE] = proxy.timeline
    request.node.stash[_STORE_PROVIDES] = sorted(proxy.provides)
    yield proxy
    proxy.close()


@pytest.fixture
def runtime(request: pytest.FixtureRequest) -> Runtime:
    """The runtime under test (the simulator, a ``--runtime`` factory or a
    mutant), built afresh for every scenario, as a new deployment would be:
    nothing a runtime keeps in its own memory (an id counter, a cached history)
    carries over from one scenario to the next, so no verdict depends on which
    scenarios ran before it or were selected. The instance built at collection
    (:func:`_runtime_under_test`) only answers what the runtime declares."""
    _runtime_under_test(request.config)  # a runtime that cannot be built fails here
    return _build_runtime(request.config)


@pytest.fixture
def runtime_factory(request: pytest.FixtureRequest) -> Callable[[], Runtime]:
    """Builds further fresh instances of the runtime under test, for the parts
    of a scenario the kit runs on a new instance (a resume, a later run)."""
    return lambda: _build_runtime(request.config)


def _runtime_under_test(config: pytest.Config) -> Runtime:
    """The runtime under test, built once per process and kept (collection
    reads its profiles, the ``runtime`` fixture hands it to the scenarios);
    one that cannot be built, or whose declaration cannot be read, raises
    :class:`AdapterContractError` each time it is asked for."""
    built = config.stash.get(_RUNTIME, None)
    if built is None:
        built = _build_runtime(config)
        config.stash[_RUNTIME] = built
    return built


def _undeclared_rules(config: pytest.Config) -> frozenset[str]:
    """The runtime rules of the profiles the runtime under test does not declare
    (none when it cannot be built or its declaration cannot be read)."""
    try:
        runtime = _runtime_under_test(config)
    except AdapterContractError:
        return frozenset()
    return frozenset(r.id for r in load_catalogue()
                     if r.subject == "runtime" and not profile_declared(runtime, r.profile))


def _build_runtime(config: pytest.Config) -> Runtime:
    mutant_name = config.getoption("--memconform-mutant")
    if mutant_name:
        mutant = get_mutant(mutant_name)
        if mutant.kind == "runtime":
            mutated: Runtime = mutant.build()  # type: ignore[assignment]
            _runtime_declares(config, mutated)
            return mutated
    target = config.getoption("--memconform-runtime")
    if target:
        from memconform.adapters.registry import resolve_runtime

        target = resolve_runtime(str(target))
        module_name, _, attr = target.partition(":")
        try:
            factory: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                factory = getattr(factory, part)
            built: Runtime = factory()
        except Exception as exc:
            raise AdapterContractError(
                "runtime", f"{target} could not be built: {type(exc).__name__}: {exc}"
            ) from exc
        _runtime_provides(config, built)
        _runtime_declares(config, built)
        return built
    simulator = Simulator()
    _runtime_declares(config, simulator)
    return simulator


def _runtime_declares(config: pytest.Config, runtime: object) -> None:
    """Keep what the runtime declares it implements (its profiles and save
    policies, ``None`` for policies it does not declare) for the outcome
    records, from which the report claims runtime conformance classes; a
    declaration the kit cannot read is the adapter's error."""
    try:
        profiles = declared_profiles(runtime)
    except (TypeError, ValueError) as exc:
        raise AdapterContractError("profiles", str(exc)) from None
    except Exception as exc:
        raise AdapterContractError("profiles", f"raised {type(exc).__name__}: {exc}") from None
    try:
        policies = declared_policies(runtime)
    except (TypeError, ValueError) as exc:
        raise AdapterContractError("policies", str(exc)) from None
    except Exception as exc:
        raise AdapterContractError("policies", f"raised {type(exc).__name__}: {exc}") from None
    config.stash[_RUNTIME_DECLARES] = {
        "profiles": sorted(profiles),
        "policies": None if policies is None else sorted(policies),
    }


def _runtime_provides(config: pytest.Config, runtime: object) -> None:
    """Keep what the runtime adapter supplies itself for the outcome records; an
    unknown provision name is the adapter's error."""
    try:
        config.stash[_RUNTIME_PROVIDES] = sorted(p.value for p in provisions_of(runtime))
    except ValueError as exc:
        raise AdapterContractError("provides", f"the runtime {exc}") from None


@pytest.fixture(scope="session")
def subject(request: pytest.FixtureRequest) -> str:
    """What this run judges: ``store``, ``runtime`` or ``both`` (the default)."""
    return _subject_of(request.config)


def _subject_of(config: pytest.Config) -> str:
    chosen = config.getoption("--memconform-subject")
    if chosen:
        return str(chosen)
    if config.getoption("--memconform-runtime"):
        return "runtime"
    if config.getoption("--memconform-store"):
        return "store"
    return "both"


# -- code coverage ----------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """While a scenario runs, what it reaches is recorded under its rules
    (only when the run measures code coverage; see :mod:`memconform.measurement`)."""
    rules = [m.name for m in item.iter_markers() if RULE_TAG.match(m.name)]
    if not rules or not measurement.active():
        return (yield)
    measurement.switch(measurement.scenario_context(rules, item.nodeid))
    try:
        return (yield)
    finally:
        measurement.switch("")


@pytest.fixture
def check_recorder(request: pytest.FixtureRequest) -> CheckRecorder:
    """The checks of this scenario row (see :func:`memconform.steps.common.decides`)."""
    recorder = CheckRecorder()
    request.node.stash[_CHECKS] = recorder
    return recorder


# -- outcome capture ------------------------------------------------------------------

_STEP = pytest.StashKey[str]()
_GHERKIN = pytest.StashKey[tuple[str, str, list[str]]]()
_TIMELINE = pytest.StashKey[Timeline]()
_STORE_PROVIDES = pytest.StashKey[list[str]]()
_RUNTIME_PROVIDES = pytest.StashKey[list[str]]()
_RUNTIME_DECLARES = pytest.StashKey[dict[str, Any]]()
_RUNTIME = pytest.StashKey[Runtime]()
_CAPABILITY_TAGS = frozenset(c.value for c in Capability)


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    request.node.stash[_GHERKIN] = _gherkin(feature, scenario)


def _gherkin(feature: Any, scenario: Any) -> tuple[str, str, list[str]]:
    """(scenario title, ``features/<file>:<line>``, the scenario as Gherkin lines)
    of a pytest-bdd scenario, its outline values filled in."""
    where = f"features/{Path(str(feature.rel_filename)).as_posix()}:{scenario.line_number}"
    lines = [f"{scenario.keyword}: {scenario.name}"]
    lines += [f"  {step.keyword} {step.name}" for step in scenario.steps]
    return str(scenario.name), where, lines


def _gherkin_of(item: pytest.Item) -> tuple[str, str, list[str]] | None:
    """The item's scenario as the ``pytest_bdd_before_scenario`` hook saw it; for a
    scenario that never started (its setup failed) the unrendered template."""
    found = item.stash.get(_GHERKIN, None)
    if found is not None:
        return found
    try:
        from pytest_bdd.scenario import scenario_wrapper_template_registry
    except ImportError:  # pragma: no cover - an older or newer pytest-bdd
        return None
    function = getattr(item, "function", None)
    template = None if function is None else scenario_wrapper_template_registry.get(function)
    if template is None:
        return None
    return _gherkin(template.feature, template)


_CHECKS = pytest.StashKey[CheckRecorder]()


def pytest_bdd_before_step_call(
    request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any,
    step_func: Any, step_func_args: Any,
) -> None:
    recorder = request.node.stash.get(_CHECKS, None)
    if recorder is not None:
        recorder.step = f"{step.keyword} {step.name}"


def pytest_bdd_step_error(
    request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any,
    step_func: Any, step_func_args: Any, exception: Exception,
) -> None:
    request.node.stash[_STEP] = f"{step.keyword} {step.name}"


def _first_exception(call: pytest.CallInfo[None]) -> BaseException | None:
    """The exception a test ended with; a group (Hypothesis reports a flaky or a
    multiple failure as one) stands for its first member."""
    exc = call.excinfo.value if call.excinfo else None
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _classify(call: pytest.CallInfo[None], report: pytest.TestReport) -> tuple[str, str]:
    if report.passed:
        return "passed", ""
    if report.skipped:
        reason = ""
        if isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        if reason.startswith(UNSUPPORTED_PREFIX):
            return "unsupported", reason.removeprefix(UNSUPPORTED_PREFIX)
        if reason.startswith(INCONCLUSIVE_PREFIX):
            return "inconclusive", reason.removeprefix(INCONCLUSIVE_PREFIX)
        return "skipped", reason
    exc = _first_exception(call)
    chain = _chain(exc)
    for link in chain:
        if isinstance(link, ProfileNotDeclared):
            return "unsupported", str(link)
    for link in chain:
        if isinstance(link, AdapterContractError):
            return "error", str(link)
    if exc is not None and raised_by_adapter(exc) is not None:
        return "error", _adapter_raised(exc)
    if isinstance(exc, AssertionError):
        return "failed", str(exc)
    if isinstance(exc, Flaky):
        # The kit's generated operations are deterministic, so a run that went
        # differently on replay did so because the store answered differently:
        # a failure of the rules under test, not a crash of the kit.
        first = next(iter(exc.exceptions), exc) if isinstance(exc, FlakyFailure) else exc
        return "failed", (
            "the store answered differently when the same operations were replayed "
            f"(not repeatable): {type(first).__name__}: {first}"
        )
    for link in chain:
        if raised_by_adapter(link) is not None:
            return "error", _adapter_raised(link)
    if exc is not None and report.when == "call":
        return "crashed", f"{type(exc).__name__}: {exc}"
    return "crashed", str(report.longrepr)[-2000:]


def _chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling."""
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def _adapter_raised(exc: BaseException) -> str:
    """The reason of an ``error`` for an exception out of the adapter that no
    step judged: where the rule needs another answer, it is the adapter's."""
    return (
        f"{raised_by_adapter(exc)}: raised {type(exc).__name__}: {exc}, "
        "which no check of this scenario expects"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" or (report.when == "setup" and not report.passed):
        rules = sorted({m.name for m in item.iter_markers() if RULE_TAG.match(m.name)})
        exc = _first_exception(call)
        recorder = item.stash.get(_CHECKS, None)
        checks = [] if recorder is None or report.when != "call" else list(recorder.results)
        if rules and checks:
            verdicts = _rule_verdicts(rules, checks, exc, report, call,
                                      item.stash.get(_STEP, None), item.stash.get(HOW_PASSED, ""))
            _fail_report(report, checks)
        else:
            narrowed = getattr(exc, "rules", None)
            if rules and isinstance(narrowed, tuple) and set(narrowed) & set(rules):
                rules = sorted(set(narrowed) & set(rules))
                _export(item, rules, exc)
            outcome, message = _classify(call, report)
            if outcome == "passed":
                message = item.stash.get(HOW_PASSED, "")
            verdicts = [RuleVerdict(rule, outcome, message, item.stash.get(_STEP, None),
                                    exc, _decided_by(exc, report)) for rule in rules]
        timeline = item.stash.get(_TIMELINE, None)
        calls = [] if timeline is None else timeline.to_json()[-50:]
        gherkin = _gherkin_of(item)
        needs = sorted({m.name for m in item.iter_markers()} & _CAPABILITY_TAGS)
        provided = {
            "store": item.stash.get(_STORE_PROVIDES, []),
            "runtime": item.config.stash.get(_RUNTIME_PROVIDES, []),
        }
        for group in _grouped(verdicts):
            first = group[0]
            record = {
                "nodeid": item.nodeid,
                "scenario": getattr(item, "originalname", item.name)
                if gherkin is None else gherkin[0],
                "feature": None if gherkin is None else gherkin[1],
                "gherkin": [] if gherkin is None else gherkin[2],
                "rules": [v.rule for v in group],
                "outcome": first.outcome,
                "message": first.message,
                "failing_step": first.step,
                "expected": getattr(first.evidence, "expected", None),
                "observed": getattr(first.evidence, "observed", None),
                "decided_by": first.decided_by,
                "store_calls": calls,
                "needs": needs,
                "provided": provided,
                "policies": item.stash.get(POLICIES_RUN, []),
            }
            declares = item.config.stash.get(_RUNTIME_DECLARES, None)
            if declares is not None:
                record["runtime_declares"] = declares
            report.user_properties.append(("memconform", json.dumps(record)))
    return report


@dataclass(frozen=True)
class RuleVerdict:
    """What one row says about one of its rules: the scenario outcome for that
    rule, why, the failing step and mismatch (if any), and ``decided_by``:
    ``check`` when a check naming the rule decided it, ``scenario`` when the
    row as a whole did (a crash, an adapter error, a skip)."""

    rule: str
    outcome: str
    message: str
    step: str | None
    evidence: BaseException | None
    decided_by: str


def _decided_by(exc: BaseException | None, report: pytest.TestReport) -> str:
    """A row without recorded checks: its checks decide every rule of the row."""
    if report.passed or isinstance(exc, AssertionError):
        return "check"
    return "scenario"


def _rule_verdicts(
    rules: list[str], checks: list[CheckResult], exc: BaseException | None,
    report: pytest.TestReport, call: pytest.CallInfo[None], step: str | None,
    how: str = "",
) -> list[RuleVerdict]:
    """Each rule of the row judged by its own checks.

    A rule one of whose checks failed fails. An exception that is not a
    check's :class:`Mismatch` (the runtime or the kit crashed, an adapter broke
    the contract, the scenario was skipped) decides every other rule of the
    row. Otherwise a rule passes when a check of it ran and passed; when a
    premise of the row (a check deciding none of the row's rules) failed, or no
    check of the rule ran, the rule gets no verdict from this row (``skipped``).
    """
    if isinstance(exc, Mismatch) and exc.rules is not None:
        checks = [*checks, CheckResult(step or "", exc.rules, exc)]
        exc = None
    tagged = set(rules)
    premises = [c for c in checks if c.failure is not None and c.rules is not None
                and not tagged & set(c.rules)]
    out = []
    for rule in rules:
        own = [c for c in checks if c.rules is None or rule in c.rules]
        failed = [c for c in own if c.failure is not None]
        if failed:
            first = failed[0]
            assert first.failure is not None
            out.append(RuleVerdict(rule, "failed", str(first.failure), first.step,
                                   first.failure, "check"))
        elif exc is not None or not report.passed:
            outcome, message = _classify(call, report)
            out.append(RuleVerdict(rule, outcome, message, step, exc, _decided_by(exc, report)))
        elif premises:
            what = premises[0].failure.what if premises[0].failure is not None else ""
            out.append(RuleVerdict(
                rule, "skipped", f"not judged on this row: its premise failed ({what})",
                premises[0].step, None, "scenario"))
        elif own:
            out.append(RuleVerdict(rule, "passed", how, None, None, "check"))
        else:
            out.append(RuleVerdict(rule, "skipped", f"no check of {rule} ran on this row",
                                   None, None, "scenario"))
    return out


def _fail_report(report: pytest.TestReport, checks: list[CheckResult]) -> None:
    """A row whose checks failed fails in pytest too, listing every failed check."""
    failed = [c for c in checks if c.failure is not None]
    if not failed or not report.passed:
        return
    report.outcome = "failed"
    report.longrepr = "\n\n".join(
        f"{c.step} [{', '.join(c.rules or ('every rule of the row',))}]\n{c.failure}"
        for c in failed
    )


def _grouped(verdicts: list[RuleVerdict]) -> list[list[RuleVerdict]]:
    """Rules with the same outcome, reason and evidence share one record."""
    groups: dict[tuple[Any, ...], list[RuleVerdict]] = {}
    for v in verdicts:
        key = (v.outcome, v.message, v.step, id(v.evidence), v.decided_by)
        groups.setdefault(key, []).append(v)
    return list(groups.values())


def _export(item: pytest.Item, rules: list[str], exc: BaseException | None) -> None:
    """Write a property counterexample as a feature when ``--export-failures`` is set."""
    folder = item.config.getoption("--memconform-export-failures")
    steps = getattr(exc, "steps", None)
    if not folder or not isinstance(steps, list):
        return
    from memconform.properties.export import export_counterexample

    store = item.config.getoption("--memconform-store") or "the default store"
    mutant = item.config.getoption("--memconform-mutant")
    origin = f"{item.name} against {store}" + (f" (mutant {mutant})" if mutant else "")
    try:
        export_counterexample(Path(folder), item.name, rules, steps, origin)
    except (OSError, TypeError, ValueError) as exc_export:
        # the verdict stands on the failure itself; only its replayable copy is lost
        print(f"memconform: the counterexample of {item.name} could not be written: "
              f"{type(exc_export).__name__}: {exc_export}", file=sys.stderr)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    failing = False  # a scenario (one report, one record per group of its rules)
    for key, value in report.user_properties:
        if key != "memconform":
            continue
        record = json.loads(str(value))
        if _SESSION.log is not None:
            _SESSION.log.add(record)
        if record["outcome"] in ("failed", "error", "crashed") and set(record["rules"]) & (
            _SESSION.judged
        ):
            failing = True
    if failing:
        _count_failure()


def _count_failure() -> None:
    """One more failing scenario of a judged rule; at ``--memconform-maxfail``
    the session stops (with pytest-xdist, the controller stops the workers)."""
    _SESSION.failures += 1
    limit = _SESSION.maxfail
    session = _SESSION.session
    if limit is None or _SESSION.failures < limit or session is None:
        return
    plural = "" if limit == 1 else "s"
    reason = f"stopped after {limit} failing scenario{plural}"
    dsession = session.config.pluginmanager.getplugin("dsession")
    if dsession is not None:
        if not dsession.shouldstop:
            dsession.shouldstop = reason
    elif not session.shouldstop:
        session.shouldstop = reason


def pytest_sessionstart(session: pytest.Session) -> None:
    _SESSION.session = session


def pytest_collection_finish(session: pytest.Session) -> None:
    """Say which scenarios are due for each rule, beside the outcomes file: a
    run that stops early can then tell which rules it judged whole."""
    path = session.config.getoption("--memconform-outcomes")
    if not path:
        return
    write_collected(
        Path(path),
        (
            (item.nodeid, sorted({m.name for m in item.iter_markers() if RULE_TAG.match(m.name)}))
            for item in session.items
        ),
    )


class _SessionState:
    """What hooks without the config share: the outcomes file of this session
    (only where outcomes are gathered: not in an xdist worker) and why the
    session stopped early, when an interrupt said so."""

    log: OutcomeLog | None = None
    stopped: str | None = None
    session: pytest.Session | None = None
    failures = 0
    maxfail: int | None = None
    judged: frozenset[str] = frozenset()


_SESSION = _SessionState()
_DEADLINE = pytest.StashKey[tuple[float, float]]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Past the deadline, run nothing more: the session stops early and says why."""
    deadline = item.config.stash.get(_DEADLINE, None)
    if deadline is not None and time.monotonic() >= deadline[0]:
        item.session.shouldstop = f"the deadline of {deadline[1]:g} s passed"
        return True
    return None


def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    _SESSION.stopped = str(excinfo.value) or "interrupted"


def _stop_reason(session: pytest.Session) -> str | None:
    for reason in (session.shouldstop, session.shouldfail, _SESSION.stopped):
        if reason:
            return reason if isinstance(reason, str) else "stopped early"
    return None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    measurement.stop()  # xdist workers may end without running exit handlers
    if _SESSION.log is not None:
        _SESSION.log.close(int(exitstatus), _stop_reason(session))
        _SESSION.log = None
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


_EXIT_STATUS = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A store call the kit gave up waiting for may still be running in its
    thread; at interpreter shutdown it can hold the lock of a standard stream
    and abort the process (SIGABRT) after every outcome was written. Such a
    process ends here, with pytest's exit status, once its streams are flushed."""
    if abandoned_calls() and _EXIT_STATUS in config.stash:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(config.stash[_EXIT_STATUS])
