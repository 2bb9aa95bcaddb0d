"""Round 6, family segments: a log-structured store of checksummed segment files on disk."""

KIND = "store"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
QUERY = "path={tmp}/data"
