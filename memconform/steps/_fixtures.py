"""The plugin's fixtures: the store and the runtime under test, and what a
scenario row needs beside them.

``store_url``, ``raw_store`` (opened once per session, mutant applied) and
``store`` (behind the recording proxy, a fresh timeline per scenario);
``runtime`` and ``runtime_factory`` (built afresh for every scenario, as a
new deployment would be); ``namespace`` (a prefix unique to the scenario);
``subject``; ``check_recorder`` (the checks of the row). What the store and
runtime adapters provide and what the runtime declares are kept in stashes
for the outcome records (:mod:`memconform.steps._capture`). Registered
through :mod:`memconform.steps.plugin`, which re-exports every fixture.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memconform.adapters.registry import open_store
from memconform.catalogue import load_catalogue
from memconform.contract import provisions_of
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.harness.runtime import (
    Runtime,
    declared_policies,
    declared_profiles,
    profile_declared,
)
from memconform.mutants import get_mutant
from memconform.simulator.runtime import Simulator
from memconform.steps._session import call_timeout, hang_guard, subject_of
from memconform.steps.common import CheckRecorder
from memconform.timeline import Timeline

__all__ = [
    "CHECKS",
    "RUNTIME_DECLARES",
    "RUNTIME_PROVIDES",
    "STORE_PROVIDES",
    "TIMELINE",
    "check_recorder",
    "namespace",
    "raw_store",
    "runtime",
    "runtime_factory",
    "store",
    "store_url",
    "subject",
    "undeclared_rules",
]

TIMELINE = pytest.StashKey[Timeline]()
"""The scenario's timeline (on the item), once it asked for the store."""
STORE_PROVIDES = pytest.StashKey[list[str]]()
"""What the store adapter supplies itself (on the item)."""
RUNTIME_PROVIDES = pytest.StashKey[list[str]]()
"""What the runtime adapter supplies itself (on the config)."""
RUNTIME_DECLARES = pytest.StashKey[dict[str, Any]]()
"""The profiles and save policies the runtime under test declares (on the config)."""
CHECKS = pytest.StashKey[CheckRecorder]()
"""The checks of the scenario row (on the item)."""
_RUNTIME = pytest.StashKey[Runtime]()

_counter = itertools.count(1)
_RUN = uuid.uuid4().hex[:6]
"""Tells this run from earlier ones whose process had the same id: a server store
keeps their data, and process ids are reused."""


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
    request.node.stash[TIMELINE] = proxy.timeline
    request.node.stash[STORE_PROVIDES] = sorted(proxy.provides)
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


def undeclared_rules(config: pytest.Config) -> frozenset[str]:
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
        from memconform.runtime_names import runtime_factory, runtime_target

        target = runtime_target(str(target))
        try:
            built: Runtime = runtime_factory(target)()
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
    config.stash[RUNTIME_DECLARES] = {
        "profiles": sorted(profiles),
        "policies": None if policies is None else sorted(policies),
    }


def _runtime_provides(config: pytest.Config, runtime: object) -> None:
    """Keep what the runtime adapter supplies itself for the outcome records; an
    unknown provision name is the adapter's error."""
    try:
        config.stash[RUNTIME_PROVIDES] = sorted(p.value for p in provisions_of(runtime))
    except ValueError as exc:
        raise AdapterContractError("provides", f"the runtime {exc}") from None


@pytest.fixture(scope="session")
def subject(request: pytest.FixtureRequest) -> str:
    """What this run judges: ``store``, ``runtime`` or ``both`` (the default)."""
    return subject_of(request.config)


@pytest.fixture
def check_recorder(request: pytest.FixtureRequest) -> CheckRecorder:
    """The checks of this scenario row (see :func:`memconform.steps.common.decides`)."""
    recorder = CheckRecorder()
    request.node.stash[CHECKS] = recorder
    return recorder
