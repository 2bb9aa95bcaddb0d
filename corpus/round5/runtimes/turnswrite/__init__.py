"""Runtimes of the turnswrite family: turns and strict-write, one correct base and ten bugs."""

KIND = "runtime"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
