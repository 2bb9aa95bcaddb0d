"""The server URLs of the library adapters' production backends, and their clean-up.

A library store on PostgreSQL is named by ``<scheme>://user@host:port/db?schema=NAME``
(any libpq URL after the scheme's ``+``): every table the library creates lives in
the schema ``NAME`` (the connection's ``search_path``), which the adapter creates
when absent, so runs with different schema names never see each other's rows.
The schema name is required and limited to lower-case letters, digits and ``_``
(it travels in libpq's ``options``, where it needs no quoting that way).

A library store on Redis is named by ``<scheme>://host:port/db?prefix=PREFIX``:
every key the library writes starts with ``PREFIX`` (the library's own key
prefix option).

``python -m memconform.adapters.libraries.servers drop URL`` removes what a run
left: the schema (``DROP SCHEMA … CASCADE``) or every key under the prefix. It
runs in the library's own environment, which has the driver.
"""

from __future__ import annotations

import re
import sys
from urllib.parse import parse_qsl, urlencode, urlsplit

from memconform.adapters.urls import StoreURLError, redact_url

__all__ = [
    "drop",
    "ensure_schema",
    "postgresql_target",
    "redis_target",
    "search_path_option",
]

_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _split(url: str, scheme: str, option: str) -> tuple[str, str, str]:
    """(server URL with ``server_scheme`` put back later, the option's value, rest)."""
    prefix = f"{scheme}://"
    if not url.lower().startswith(prefix):
        raise StoreURLError(f"not a {scheme} URL: {redact_url(url)}")
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    values = [v for k, v in query if k == option]
    if len(values) != 1 or not values[0]:
        raise StoreURLError(f"a {scheme} URL needs one {option}=…: {redact_url(url)}")
    kept = [(k, v) for k, v in query if k != option]
    rest = parts._replace(scheme="", query=urlencode(kept)).geturl()
    return rest, values[0], parts.netloc


def postgresql_target(url: str, scheme: str) -> tuple[str, str]:
    """``(libpq URL, schema)`` of ``<scheme>://…?schema=NAME``.

    Raises :class:`StoreURLError` for another scheme, a missing or malformed schema.
    """
    rest, schema, _ = _split(url, scheme, "schema")
    if not _SCHEMA.fullmatch(schema):
        raise StoreURLError(
            f"schema= takes lower-case letters, digits and '_' (at most 63): {redact_url(url)}"
        )
    return "postgresql:" + rest, schema


def redis_target(url: str, scheme: str) -> tuple[str, str]:
    """``(redis URL, key prefix)`` of ``<scheme>://…?prefix=PREFIX``."""
    rest, prefix, _ = _split(url, scheme, "prefix")
    return "redis:" + rest, prefix


def search_path_option(schema: str) -> str:
    """libpq ``options`` that put ``schema`` first on the connection's search path."""
    return f"-c search_path={schema}"


def ensure_schema(conninfo: str, schema: str) -> None:
    """Create ``schema`` when absent. Several processes may open one URL at once:
    an advisory lock serialises the ``CREATE SCHEMA IF NOT EXISTS``."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(conninfo, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"memconform:{schema}",))
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))


def drop(url: str) -> None:
    """Remove the schema or the keys a library store named by ``url`` holds."""
    scheme = url.split("://", 1)[0].lower()
    if scheme.endswith("+redis"):
        import redis

        server, prefix = redis_target(url, scheme)
        client = redis.Redis.from_url(server)
        try:
            keys = list(client.scan_iter(match=_glob_escape(prefix) + "*", count=1000))
            for start in range(0, len(keys), 1000):
                client.delete(*keys[start : start + 1000])
        finally:
            client.close()
        return
    import psycopg
    from psycopg import sql

    conninfo, schema = postgresql_target(url, scheme)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


if __name__ == "__main__":  # pragma: no cover - run by memconform compliance
    if len(sys.argv) != 3 or sys.argv[1] != "drop":
        sys.exit("usage: python -m memconform.adapters.libraries.servers drop URL")
    drop(sys.argv[2])
