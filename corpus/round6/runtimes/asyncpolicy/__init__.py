"""Async event-stream save-policy runtime family: a correct base and ten single-bug variants."""

KIND = "runtime"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
