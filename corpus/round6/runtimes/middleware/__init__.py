"""Runtimes of the middleware family: turns and strict-write as middleware pipelines."""

KIND = "runtime"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
