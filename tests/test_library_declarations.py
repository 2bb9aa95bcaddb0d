"""The library adapters describe themselves, and the kit reads nothing else.

Each module of :mod:`memconform.adapters.libraries` adapting a library declares
its ``LIBRARY`` (:mod:`memconform.adapters.libraries.description`); the
registry's schemes and runtime names, the compliance targets, the runtime
extras and targets are read from those declarations. Here:

- the tables hold exactly what they held when they were kept by hand (a literal
  copy taken from the hand-kept tables), in the same order: the pages list
  targets in this order, and a usage message lists the runtime names in it;
- each declared extra and its pins are pyproject.toml's entry of that name, and
  every library extra there has a declaring module (pyproject.toml cannot be
  generated from the declarations);
- a library module planted in the package appears in the registry, the
  targets and the extras check with nothing else changed: adding a library
  touches its own module, its extra and its docs only;
- every adapter module imports without its library.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import memconform.adapters.libraries
from memconform.adapters import registry
from memconform.adapters.libraries.description import LIBRARY_PACKAGE, Library, declared
from memconform.adapters.registry import BUILTIN_RUNTIMES, BUILTIN_SCHEMES, open_store
from memconform.compliance import RUNTIME_EXTRAS, TARGETS, runtime_extras, store_targets
from memconform.runtime_compliance import RUNTIME_TARGETS, runtime_targets

ROOT = Path(__file__).resolve().parent.parent
KIT_EXTRAS = frozenset({"postgresql", "redis", "test"})
"""The extras of pyproject.toml that hold no third-party library adapter."""

_LIB = "memconform.adapters.libraries."

SCHEMES = [
    ("memory", "memconform.adapters.memory:open_memory"),
    ("sqlite", "memconform.adapters.sqlite:open_sqlite"),
    ("postgresql", "memconform.adapters.postgresql:open_postgresql"),
    ("postgres", "memconform.adapters.postgresql:open_postgresql"),
    ("redis", "memconform.adapters.redis:open_redis"),
    ("stdio", "memconform.adapters.stdio:open_stdio"),
    ("openai-agents+sqlite", _LIB + "openai_agents:open_sqlite_session"),
    ("openai-agents+sqlalchemy", _LIB + "openai_agents:open_sqlalchemy_session"),
    ("openai-agents+postgresql", _LIB + "openai_agents:open_postgresql_session"),
    ("openai-agents+redis", _LIB + "openai_agents:open_redis_session"),
    ("langgraph+sqlite", _LIB + "langgraph:open_langgraph_sqlite"),
    ("langgraph+postgresql", _LIB + "langgraph:open_langgraph_postgresql"),
    ("google-adk+memory", _LIB + "google_adk:open_in_memory"),
    ("google-adk+sqlite", _LIB + "google_adk:open_database"),
    ("google-adk+postgresql", _LIB + "google_adk:open_postgresql"),
    ("langchain+sql", _LIB + "langchain:open_sql_history"),
    ("langchain+file", _LIB + "langchain:open_file_history"),
    ("langchain+postgresql", _LIB + "langchain:open_postgres_history"),
    ("llama-index+sqlite", _LIB + "llama_index:open_sqlalchemy_chat_store"),
    ("agent-framework+memory", _LIB + "agent_framework:open_in_memory_history"),
    ("agent-framework+redis", _LIB + "agent_framework:open_redis_history"),
]

RUNTIMES = [
    ("openai-agents", _LIB + "openai_agents_runtime:openai_agents_runtime"),
    ("langgraph", _LIB + "langgraph_runtime:langgraph_runtime"),
    ("langgraph:async", _LIB + "langgraph_runtime:langgraph_async_runtime"),
    ("langgraph:sync", _LIB + "langgraph_runtime:langgraph_sync_runtime"),
    ("langgraph:exit", _LIB + "langgraph_runtime:langgraph_exit_runtime"),
    ("pydantic-ai", _LIB + "pydantic_ai_runtime:pydantic_ai_runtime"),
    ("google-adk", _LIB + "google_adk_runtime:google_adk_runtime"),
]

STORE_TARGETS = [
    ("openai-agents-sqlite", "openai-agents", "openai-agents+sqlite:///{dir}/store.db",
     "OpenAI Agents SDK: SQLiteSession", ""),
    ("openai-agents-sqlalchemy", "openai-agents", "openai-agents+sqlalchemy:///{dir}/store.db",
     "OpenAI Agents SDK: SQLAlchemySession on SQLite", ""),
    ("langgraph-sqlite", "langgraph", "langgraph+sqlite:///{dir}/store.db",
     "LangGraph: SqliteSaver checkpoints and SqliteStore", ""),
    ("google-adk-memory", "google-adk", "google-adk+memory://",
     "Google ADK: InMemorySessionService", ""),
    ("google-adk-sqlite", "google-adk", "google-adk+sqlite:///{dir}/store.db",
     "Google ADK: DatabaseSessionService on SQLite", ""),
    ("langchain-sql", "langchain", "langchain+sql:///{dir}/store.db",
     "LangChain: SQLChatMessageHistory on SQLite", ""),
    ("langchain-file", "langchain", "langchain+file:///{dir}/histories",
     "LangChain: FileChatMessageHistory", ""),
    ("llama-index-sqlite", "llama-index", "llama-index+sqlite:///{dir}/store.db",
     "LlamaIndex: SQLAlchemyChatStore on SQLite", ""),
    ("langchain-postgresql", "langchain", "langchain+postgresql://{server}?schema=mcl_{run}",
     "LangChain: PostgresChatMessageHistory (langchain-postgres)", "postgresql"),
    ("langgraph-postgresql", "langgraph", "langgraph+postgresql://{server}?schema=mcg_{run}",
     "LangGraph: PostgresSaver checkpoints and PostgresStore", "postgresql"),
    ("openai-agents-postgresql", "openai-agents",
     "openai-agents+postgresql://{server}?schema=mco_{run}",
     "OpenAI Agents SDK: SQLAlchemySession on PostgreSQL", "postgresql"),
    ("google-adk-postgresql", "google-adk", "google-adk+postgresql://{server}?schema=mca_{run}",
     "Google ADK: DatabaseSessionService on PostgreSQL", "postgresql"),
    ("openai-agents-redis", "openai-agents", "openai-agents+redis://{server}?prefix=mco:{run}:",
     "OpenAI Agents SDK: RedisSession", "redis"),
    ("agent-framework-memory", "agent-framework", "agent-framework+memory://",
     "Microsoft Agent Framework: InMemoryHistoryProvider", ""),
    ("agent-framework-redis", "agent-framework",
     "agent-framework+redis://{server}?prefix=mcf-{run}",
     "Microsoft Agent Framework: RedisHistoryProvider (agent-framework-redis)", "redis"),
]

_LANGGRAPH_PACKAGES = ("langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
                       "langchain-core")
_LANGGRAPH_TEXTS = "b1e2423cff2003e0b0ed9165fe0cfe66a69cae296e743a4a153053c640cad2a7"

FRAMEWORK_TARGETS = [
    # name, runtime, extra, label, packages, script, then the sha-256 of
    # repr((hooks, lacks)): those texts are long, and the runtimes page, which
    # tests/test_runtime_compliance.py regenerates with no diff, shows them whole.
    ("openai-agents", "openai-agents", "openai-agents", "OpenAI Agents SDK: Runner with a Session",
     ("openai-agents", "openai"), "openai_agents",
     "f1ea7dc768b0179539801730547712a935901b8d012c1692132907fa54d1c02e"),
    ("langgraph", "langgraph", "langgraph",
     "LangGraph: prebuilt ReAct agent, default durability (async)", _LANGGRAPH_PACKAGES,
     "langgraph", _LANGGRAPH_TEXTS),
    ("langgraph-sync", "langgraph:sync", "langgraph",
     "LangGraph: prebuilt ReAct agent, durability sync", _LANGGRAPH_PACKAGES, "langgraph",
     _LANGGRAPH_TEXTS),
    ("langgraph-exit", "langgraph:exit", "langgraph",
     "LangGraph: prebuilt ReAct agent, durability exit", _LANGGRAPH_PACKAGES, "langgraph",
     _LANGGRAPH_TEXTS),
    ("pydantic-ai", "pydantic-ai", "pydantic-ai",
     "pydantic-ai: Agent saved through its ConversationStore",
     ("pydantic-ai-slim", "pydantic-graph"), "pydantic_ai",
     "31f30fc14a8e2877d85ffe59f254c4175deda3a133e7d89ef3907fe8e392f6a5"),
    ("google-adk", "google-adk", "google-adk", "Google ADK: Runner with a SessionService",
     ("google-adk", "google-genai"), "google_adk",
     "2044869dd9bdce1942dabffffc5e01f9e07b220cc6b889f25556155f6d2c15b2"),
]


def test_the_store_schemes_are_as_they_were() -> None:
    assert list(BUILTIN_SCHEMES.items()) == SCHEMES


def test_the_runtime_names_are_as_they_were() -> None:
    assert list(BUILTIN_RUNTIMES.items()) == RUNTIMES


def test_the_store_targets_are_as_they_were() -> None:
    assert [(t.name, t.extra, t.url, t.label, t.server) for t in TARGETS] == STORE_TARGETS


def test_the_runtime_extras_are_as_they_were() -> None:
    assert RUNTIME_EXTRAS == ("openai-agents", "langgraph", "pydantic-ai", "google-adk")


def test_the_runtime_targets_are_as_they_were() -> None:
    assert [
        (t.name, t.runtime, t.extra, t.label, t.packages, t.script,
         hashlib.sha256(repr((t.hooks, t.lacks)).encode()).hexdigest())
        for t in runtime_targets(declared())
    ] == FRAMEWORK_TARGETS
    # the page's targets are these, then the Node frameworks' (never a library's)
    assert [t.name for t in RUNTIME_TARGETS if not t.node] == [t[0] for t in FRAMEWORK_TARGETS]


# -- the declarations and pyproject.toml -------------------------------------------------


def _optional_dependencies() -> dict[str, list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras: dict[str, list[str]] = project["project"]["optional-dependencies"]
    return extras


def extras_problems(
    libraries: Sequence[Library], extras: Mapping[str, Sequence[str]]
) -> list[str]:
    """Where ``libraries``' extras and pins differ from pyproject.toml's ``extras``."""
    problems = []
    for lib in libraries:
        if lib.extra not in extras:
            problems.append(f"{lib.module}: extra {lib.extra!r} is not in pyproject.toml")
        elif list(lib.pins) != list(extras[lib.extra]):
            problems.append(f"{lib.module}: pins {list(lib.pins)} != pyproject.toml's "
                            f"{lib.extra} = {list(extras[lib.extra])}")
    declaring = {lib.extra for lib in libraries}
    problems += [f"pyproject.toml's extra {name!r} has no declaring module"
                 for name in extras if name not in KIT_EXTRAS and name not in declaring]
    return problems


def test_each_declared_extra_and_its_pins_are_pyprojects() -> None:
    assert extras_problems(declared(), _optional_dependencies()) == []


def test_the_declarations_name_each_scheme_runtime_target_and_row_once() -> None:
    libraries = declared()
    schemes = [s for lib in libraries for s, _ in lib.schemes]
    runtimes = [r for lib in libraries for r, _ in lib.runtimes]
    stores = [t for lib in libraries for t in lib.store_targets]
    frameworks = [t for lib in libraries for t in lib.runtime_targets]
    assert len(set(schemes)) == len(schemes)
    assert not set(schemes) & set(registry.STORE_SCHEMES)
    assert len(set(runtimes)) == len(runtimes)
    assert len({t.row for t in stores}) == len(stores)
    names = [t.name for t in stores] + [t.name for t in frameworks]
    assert len(set(names)) == len(names)
    for lib in libraries:
        assert lib.module.startswith(f"{LIBRARY_PACKAGE}.")
        module = sys.modules[lib.module]
        for _, factory in (*lib.schemes, *lib.runtimes):
            assert callable(getattr(module, factory)), (lib.module, factory)
        for target in lib.store_targets:
            assert target.url.split(":", 1)[0] in dict(lib.schemes), target.name
        for target in lib.runtime_targets:
            assert target.runtime in dict(lib.runtimes), target.name


def test_modules_of_one_extra_agree_on_its_pins_and_place() -> None:
    by_extra: dict[str, set[tuple[tuple[str, ...], int]]] = {}
    for lib in declared():
        by_extra.setdefault(lib.extra, set()).add((lib.pins, lib.order))
    assert all(len(found) == 1 for found in by_extra.values()), by_extra


# -- a planted library ------------------------------------------------------------------

_PLANTED = """
from memconform.adapters.libraries.description import Library, RuntimeEntry, StoreEntry


class Planted:
    def __init__(self, url):
        self.url = url


def open_planted(url):
    return Planted(url)


def planted_runtime():
    return "a runtime"


LIBRARY = Library(
    module=__name__,
    extra="planted-extra",
    pins=("planted==1.0",),
    order=99,
    schemes=(("planted+memory", open_planted.__name__),),
    runtimes=(("planted", planted_runtime.__name__),),
    store_targets=(StoreEntry(99, "planted-memory", "planted+memory://", "Planted: memory"),),
    runtime_targets=(RuntimeEntry("planted", "planted", "Planted: runtime", ("planted",),
                                  "planted", "No hooks."),),
)
"""


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A library module ``planted_library`` in the library package (a folder added to
    its path), the declarations read afresh; everything undone afterwards."""
    (tmp_path / "planted_library.py").write_text(textwrap.dedent(_PLANTED), encoding="utf-8")
    package = memconform.adapters.libraries
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    name = f"{LIBRARY_PACKAGE}.planted_library"
    declared.cache_clear()
    registry._tables.cache_clear()
    try:
        yield name
    finally:
        sys.modules.pop(name, None)
        monkeypatch.undo()
        declared.cache_clear()
        registry._tables.cache_clear()


def test_a_planted_library_is_read_from_its_module_alone(planted: str) -> None:
    libraries = declared()
    assert [lib.module for lib in libraries][-1] == planted
    # the registry opens its scheme and names its runtime
    assert registry.BUILTIN_SCHEMES["planted+memory"] == f"{planted}:open_planted"
    assert type(open_store("planted+memory://")).__name__ == "Planted"
    assert registry.resolve_runtime("planted") == f"{planted}:planted_runtime"
    assert list(registry.BUILTIN_SCHEMES)[: len(SCHEMES)] == [s for s, _ in SCHEMES]
    # the compliance pages list its targets, after every target of today
    stores = store_targets(libraries)
    assert [t.name for t in stores] == [*(t[0] for t in STORE_TARGETS), "planted-memory"]
    assert stores[-1].extra == "planted-extra"
    frameworks = runtime_targets(libraries)
    assert [t.name for t in frameworks] == [*(t[0] for t in FRAMEWORK_TARGETS), "planted"]
    assert runtime_extras(libraries) == (*RUNTIME_EXTRAS, "planted-extra")
    # and the extras check asks for its extra in pyproject.toml
    extras: dict[str, Any] = _optional_dependencies()
    assert extras_problems(libraries, extras) == [
        f"{planted}: extra 'planted-extra' is not in pyproject.toml"]
    extras["planted-extra"] = ["planted==1.0"]
    assert extras_problems(libraries, extras) == []
    extras["planted-extra"] = ["planted==2.0"]
    assert "pins" in extras_problems(libraries, extras)[0]


def test_an_extra_without_a_declaring_module_is_found() -> None:
    extras: dict[str, Any] = {**_optional_dependencies(), "orphan": ["orphan==1.0"]}
    assert extras_problems(declared(), extras) == [
        "pyproject.toml's extra 'orphan' has no declaring module"]


# -- importable without the libraries ----------------------------------------------------

_WITHOUT_LIBRARIES = """
import importlib, importlib.abc, pkgutil, sys

BLOCKED = {"agents", "openai", "langgraph", "langchain_core", "langchain_community",
           "langchain_postgres", "google", "llama_index", "agent_framework",
           "pydantic_ai", "sqlalchemy", "aiosqlite", "psycopg", "redis"}

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked: {name}")
        return None

sys.meta_path.insert(0, Blocker())
import memconform.adapters.libraries as package
from memconform.adapters.libraries.description import discover
for info in pkgutil.iter_modules(package.__path__, "memconform.adapters.libraries."):
    importlib.import_module(info.name)
print(len(discover()))
"""


def test_every_library_module_imports_without_its_library() -> None:
    done = subprocess.run([sys.executable, "-c", _WITHOUT_LIBRARIES], capture_output=True,
                          text=True, check=False, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(declared()) == 10
