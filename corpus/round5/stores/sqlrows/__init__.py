"""Round 5, family sqlrows: a SQL store on SQLite with one table per kind of record."""

KIND = "store"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
QUERY = "path={tmp}/store.db"
