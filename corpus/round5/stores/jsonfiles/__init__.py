"""Round 5 red-team corpus: a store on plain JSON files, and ten broken variants of it."""

KIND = "store"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
QUERY = "path={tmp}/store"
