"""Round 6 family graphstate: a graph / state-machine engine for candidates and persisted state."""

KIND = "runtime"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
