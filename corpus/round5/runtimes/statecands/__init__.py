"""Round 5 family statecands: a candidates package and a persisted-state agent, ten bugs."""

KIND = "runtime"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
