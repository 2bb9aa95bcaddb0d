"""Round 6, family eventlog: an event-sourced store on SQLite, one append-only events table."""

KIND = "store"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
QUERY = "path={tmp}/events.db"
