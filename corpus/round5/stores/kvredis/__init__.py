"""Round 5, key-value family on Redis: a correct base and ten broken variants."""

KIND = "store"
TARGETS: dict[str, tuple[str, ...]] = {"make": ()}
QUERY = "prefix=blind5:{tmp}:"


def cleanup(tmp: str) -> None:
    """Delete the keys one run left under its prefix."""
    import redis

    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    keys = list(client.scan_iter(match=f"blind5:{tmp}:*", count=1000))
    for start in range(0, len(keys), 500):
        client.delete(*keys[start:start + 500])
    client.close()
