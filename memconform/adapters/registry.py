"""Stores named by URL.

``open_store(url)`` resolves ``memory://``, ``sqlite:///path``,
``postgresql://…``, ``redis://…``, ``stdio:<command>``, ``module:factory``
(a vendor's Python adapter: ``package.module:callable``, called with the URL's
query as keyword arguments, each value a string:
``pkg.mod:open_store?path=/tmp/s.db&mode=wal`` calls
``open_store(path="/tmp/s.db", mode="wal")``) and any scheme another package registers in the
``memconform.stores`` entry-point group (the entry point names the scheme and
points at a callable taking the URL).

A URL that names nothing (an unknown scheme, a module or attribute that does
not exist) raises :class:`StoreURLError`, a usage error. A store module that
exists but does not import (a ``SyntaxError``, an ``ImportError`` inside it)
is a broken adapter: :class:`~memconform.harness.proxy.AdapterContractError`
for the method ``open``, naming the module and the cause.

Runtimes are named the same way: ``module:factory`` (called without
arguments), or one of the names in :data:`BUILTIN_RUNTIMES` (the adapters of
third-party agent frameworks, each behind its optional extra), which
:func:`resolve_runtime` turns into its ``module:factory``.

The kit's own stores are :data:`STORE_SCHEMES`. The third-party libraries'
schemes and runtime names are no list kept here: each library adapter module
declares its own (:mod:`memconform.adapters.libraries.description`), and
:data:`BUILTIN_SCHEMES` and :data:`BUILTIN_RUNTIMES` are read from those
declarations on first use.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from importlib.metadata import entry_points
from urllib.parse import parse_qsl

from memconform.adapters.libraries.description import (
    declared,
    runtime_factories,
    scheme_factories,
)
from memconform.adapters.urls import StoreURLError, redact_url

__all__ = [
    "BUILTIN_RUNTIMES",
    "BUILTIN_SCHEMES",
    "STORE_SCHEMES",
    "StoreURLError",
    "factory_arguments",
    "open_store",
    "redact_url",
    "resolve_runtime",
]

STORE_SCHEMES: dict[str, str] = {
    "memory": "memconform.adapters.memory:open_memory",
    "sqlite": "memconform.adapters.sqlite:open_sqlite",
    "postgresql": "memconform.adapters.postgresql:open_postgresql",
    "postgres": "memconform.adapters.postgresql:open_postgresql",
    "redis": "memconform.adapters.redis:open_redis",
    "stdio": "memconform.adapters.stdio:open_stdio",
}
"""The kit's own stores: scheme → ``module:callable`` taking the URL and returning a store."""

BUILTIN_SCHEMES: dict[str, str]
"""Scheme → ``module:callable`` taking the URL and returning a store: the kit's own
(:data:`STORE_SCHEMES`), then the third-party libraries' as their adapter modules
declare them (optional extras; :mod:`memconform.adapters.libraries.description`)."""

BUILTIN_RUNTIMES: dict[str, str]
"""Runtime name → ``module:factory`` building the runtime (called without
arguments): the third-party agent frameworks' as their adapter modules declare them."""


@functools.cache
def _tables() -> tuple[dict[str, str], dict[str, str]]:
    """:data:`BUILTIN_SCHEMES` and :data:`BUILTIN_RUNTIMES`, read once, on first use:
    reading them imports the library adapter modules (not their libraries), which
    opening one of the kit's own stores does not need."""
    libraries = declared()
    return {**STORE_SCHEMES, **scheme_factories(libraries)}, runtime_factories(libraries)


def __getattr__(name: str) -> dict[str, str]:
    """:data:`BUILTIN_SCHEMES` and :data:`BUILTIN_RUNTIMES` (from :func:`_tables`)."""
    if name == "BUILTIN_SCHEMES":
        return _tables()[0]
    if name == "BUILTIN_RUNTIMES":
        return _tables()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_runtime(name: str) -> str:
    """The ``module:factory`` a ``--runtime`` value names: a name in
    :data:`BUILTIN_RUNTIMES`, or the value itself (already ``module:factory``)."""
    return _tables()[1].get(name, name)


_MODULE_FACTORY = re.compile(r"^(?P<target>[A-Za-z_][\w.]*:[A-Za-z_][\w.]*)(?:\?(?P<query>.*))?$")


def _load(target: str) -> Callable[..., object]:
    module_name, _, attr = target.partition(":")
    try:
        obj: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise StoreURLError(
                f"cannot import {module_name!r}: {exc} (run from the folder that holds it, "
                "or put that folder on PYTHONPATH)"
            ) from exc
        raise _broken_module(module_name, exc) from exc
    except Exception as exc:  # SyntaxError, an ImportError inside, anything at import
        raise _broken_module(module_name, exc) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise StoreURLError(f"{module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise StoreURLError(f"{target!r} is not callable")
    return obj


def factory_arguments(query: str) -> dict[str, str]:
    """The keyword arguments a ``module:factory?query`` URL passes: each
    ``key=value`` pair (percent-decoded), a key given twice being an error."""
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    kwargs: dict[str, str] = {}
    for key, value in pairs:
        if not key.isidentifier():
            raise StoreURLError(f"query parameter {key!r} is not a keyword argument name")
        if key in kwargs:
            raise StoreURLError(f"query parameter {key!r} is given twice")
        kwargs[key] = value
    return kwargs


def _broken_module(module_name: str, exc: BaseException) -> Exception:
    from memconform.harness.proxy import AdapterContractError

    return AdapterContractError(
        "open", f"the store module {module_name!r} does not import: {type(exc).__name__}: {exc}"
    )


def open_store(url: str) -> object:
    """Open the store named by ``url``; raises :class:`StoreURLError` when it cannot."""
    named = _MODULE_FACTORY.match(url)
    if named and not url.startswith(("stdio:", "memory:")):
        try:
            kwargs = factory_arguments(named["query"] or "")
        except ValueError as exc:
            raise StoreURLError(f"bad query in {redact_url(url)}: {exc}") from None
        return _load(named["target"])(**kwargs)
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if not scheme:
        raise StoreURLError(f"not a store URL: {url!r} (try memory:// or sqlite:///path.db)")
    registered = {ep.name: ep for ep in entry_points(group="memconform.stores")}
    if scheme in registered:
        factory = registered[scheme].load()
    elif scheme in STORE_SCHEMES:
        factory = _load(STORE_SCHEMES[scheme])
    elif scheme in _tables()[0]:
        factory = _load(_tables()[0][scheme])
    else:
        known = ", ".join(sorted({*_tables()[0], *registered}))
        raise StoreURLError(
            f"unknown store scheme {scheme!r} in {redact_url(url)} (known: {known})"
        )
    return factory(url)
