"""Round 6, family pgrows: typed rows on PostgreSQL (psycopg 3), one schema per run."""

KIND = "store"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
QUERY = "run={tmp}"


def cleanup(tmp: str) -> None:
    """Drop the schema one run created (its name is derived from ``tmp``)."""
    from corpus.round6.stores.pgrows.base import drop_schema

    drop_schema(tmp)
