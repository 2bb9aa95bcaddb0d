"""The package's layers: imports point one way, and no module imports itself back.

The import graph is read from the source (every ``import`` of a ``memconform``
module, at module level or inside a function; ``if TYPE_CHECKING:`` blocks are
left out, since they run only under a type checker). A *room* is a subpackage
(``memconform.steps``) or a top-level module (``memconform.catalogue``); each
room sits on one floor of :data:`FLOORS`. A room may import rooms on lower
floors and modules of its own room; rooms on one floor are independent (the
simulator and the adapters never import each other).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import memconform

PACKAGE = Path(memconform.__file__).parent

FLOORS: tuple[frozenset[str], ...] = tuple(frozenset(f) for f in (
    # the vocabulary every layer speaks
    {"memconform", "values", "resources", "excerpt"},
    {"approvals"},
    {"timeline", "contract"},
    # the rule catalogue and the kit's process-wide services
    {"catalogue", "measurement", "outcome_log"},
    {"second_conditions", "sourcemap", "pytest_entry"},
    {"lint"},
    # what the kit wraps around a subject under test
    {"harness"},
    # the subjects: the reference runtime, and the adapters of real ones
    {"simulator", "adapters"},
    # deliberately broken subjects; the runtime names every command accepts
    # (they name both the simulator and the adapters, so sit above them)
    {"mutants", "runtime_names"},
    # verdicts and reports; generated checks
    {"reports", "properties", "runtime_server"},
    # the pytest-bdd steps, the plugin and the multi-process checks
    {"steps"},
    # commands built on whole runs
    {"fingerprint"},
    {"compliance"},
    {"runtime_compliance"},
    {"cli"},
    {"__main__"},
))


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["memconform", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(module: str) -> Iterator[str]:
    """The memconform modules ``module`` imports (a name imported from a package
    counts as its submodule when it is one)."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]

    def visit(node: ast.AST) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if (isinstance(child, ast.If) and isinstance(child.test, ast.Name)
                    and child.test.id == "TYPE_CHECKING"):
                continue
            if isinstance(child, ast.Import):
                yield from (a.name for a in child.names if a.name.split(".")[0] == "memconform")
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - child.level + 1]
                    target = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    target = child.module or ""
                if target.split(".")[0] == "memconform":
                    for alias in child.names:
                        sub = f"{target}.{alias.name}"
                        yield sub if sub in MODULES else target
            yield from visit(child)

    yield from visit(ast.parse(path.read_text(encoding="utf-8")))


GRAPH = {m: sorted(set(_imports(m)) - {m}) for m in MODULES}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def floor(name: str) -> int:
    for i, rooms in enumerate(FLOORS):
        if name in rooms:
            return i
    raise AssertionError(f"room {name!r} is on no floor: add it to FLOORS")


def test_every_room_is_on_a_floor() -> None:
    for module in MODULES:
        floor(room(module))


def upward(graph: dict[str, list[str]]) -> list[str]:
    """The imports of ``graph`` that run up a floor or sideways to another room."""
    return [
        f"{a} -> {b}" for a, targets in graph.items() for b in targets
        if room(a) != room(b) and floor(room(b)) >= floor(room(a))
    ]


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The import cycles of ``graph`` (its strongly connected components of more
    than one module, by Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return found


def test_imports_point_down() -> None:
    wrong = upward(GRAPH)
    assert not wrong, "imports that run up or sideways:\n" + "\n".join(wrong)


def test_no_import_cycles() -> None:
    assert not cycles(GRAPH), f"import cycles: {cycles(GRAPH)}"


def test_the_checks_can_fail() -> None:
    """A planted import from the simulator to an adapter is sideways, one from
    the harness to the steps runs up, and a pair importing each other is a cycle."""
    planted = {m: list(t) for m, t in GRAPH.items()}
    planted["memconform.simulator.runtime"].append("memconform.adapters.memory")
    planted["memconform.harness.proxy"].append("memconform.steps.plugin")
    assert upward(planted) == [
        "memconform.harness.proxy -> memconform.steps.plugin",
        "memconform.simulator.runtime -> memconform.adapters.memory",
    ]
    assert ["memconform.harness.proxy", "memconform.steps.plugin"] in cycles(planted) or any(
        "memconform.harness.proxy" in c for c in cycles(planted))


def test_the_graph_sees_imports_inside_functions() -> None:
    """Deferred imports count: the CLI (a package: every module of its room)
    imports its commands inside functions."""
    cli = [m for m in GRAPH if room(m) == "cli"]
    assert "memconform.cli" in cli
    assert any(room(t) == "compliance" for m in cli for t in GRAPH[m])
