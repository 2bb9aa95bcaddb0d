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
is a broken adapter: :class:`~memconform.adapters.proxy.AdapterContractError`
for the method ``open``, naming the module and the cause.

Runtimes are named the same way: ``module:factory`` (called without
arguments), or one of the names in :data:`BUILTIN_RUNTIMES` (the adapters of
third-party agent frameworks, each behind its optional extra), which
:func:`resolve_runtime` turns into its ``module:factory``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from importlib.metadata import entry_points
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "BUILTIN_RUNTIMES",
    "BUILTIN_SCHEMES",
    "StoreURLError",
    "factory_arguments",
    "open_store",
    "redact_url",
    "resolve_runtime",
]

BUILTIN_SCHEMES: dict[str, str] = {
    "memory": "memconform.adapters.memory:open_memory",
    "sqlite": "memconform.adapters.sqlite:open_sqlite",
    "postgresql": "memconform.adapters.postgresql:open_postgresql",
    "postgres": "memconform.adapters.postgresql:open_postgresql",
    "redis": "memconform.adapters.redis:open_redis",
    "stdio": "memconform.adapters.stdio:open_stdio",
    # Third-party libraries (optional extras; see memconform.adapters.libraries).
    "openai-agents+sqlite": "memconform.adapters.libraries.openai_agents:open_sqlite_session",
    "openai-agents+sqlalchemy": (
        "memconform.adapters.libraries.openai_agents:open_sqlalchemy_session"
    ),
    "openai-agents+postgresql": (
        "memconform.adapters.libraries.openai_agents:open_postgresql_session"
    ),
    "openai-agents+redis": "memconform.adapters.libraries.openai_agents:open_redis_session",
    "langgraph+sqlite": "memconform.adapters.libraries.langgraph:open_langgraph_sqlite",
    "langgraph+postgresql": "memconform.adapters.libraries.langgraph:open_langgraph_postgresql",
    "google-adk+memory": "memconform.adapters.libraries.google_adk:open_in_memory",
    "google-adk+sqlite": "memconform.adapters.libraries.google_adk:open_database",
    "google-adk+postgresql": "memconform.adapters.libraries.google_adk:open_postgresql",
    "langchain+sql": "memconform.adapters.libraries.langchain:open_sql_history",
    "langchain+file": "memconform.adapters.libraries.langchain:open_file_history",
    "langchain+postgresql": "memconform.adapters.libraries.langchain:open_postgres_history",
    "llama-index+sqlite": "memconform.adapters.libraries.llama_index:open_sqlalchemy_chat_store",
    "agent-framework+memory": (
        "memconform.adapters.libraries.agent_framework:open_in_memory_history"
    ),
    "agent-framework+redis": "memconform.adapters.libraries.agent_framework:open_redis_history",
}
"""Scheme → ``module:callable`` taking the URL and returning a store."""

BUILTIN_RUNTIMES: dict[str, str] = {
    # Third-party agent frameworks (optional extras; see memconform.adapters.libraries).
    "openai-agents": "memconform.adapters.libraries.openai_agents_runtime:openai_agents_runtime",
    # LangGraph's prebuilt ReAct agent under its default durability, then each mode by name.
    "langgraph": "memconform.adapters.libraries.langgraph_runtime:langgraph_runtime",
    "langgraph:async": "memconform.adapters.libraries.langgraph_runtime:langgraph_async_runtime",
    "langgraph:sync": "memconform.adapters.libraries.langgraph_runtime:langgraph_sync_runtime",
    "langgraph:exit": "memconform.adapters.libraries.langgraph_runtime:langgraph_exit_runtime",
    # A pydantic-ai Agent saved through its ConversationStore as pydantic-ai documents it.
    "pydantic-ai": "memconform.adapters.libraries.pydantic_ai_runtime:pydantic_ai_runtime",
    # Google ADK's Runner with an LlmAgent over a session service.
    "google-adk": "memconform.adapters.libraries.google_adk_runtime:google_adk_runtime",
}
"""Runtime name → ``module:factory`` building the runtime (called without arguments)."""


def resolve_runtime(name: str) -> str:
    """The ``module:factory`` a ``--runtime`` value names: a name in
    :data:`BUILTIN_RUNTIMES`, or the value itself (already ``module:factory``)."""
    return BUILTIN_RUNTIMES.get(name, name)


_MODULE_FACTORY = re.compile(r"^(?P<target>[A-Za-z_][\w.]*:[A-Za-z_][\w.]*)(?:\?(?P<query>.*))?$")


class StoreURLError(ValueError):
    """A store URL names no known scheme or cannot be opened as written."""


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for reports and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


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
    from memconform.adapters.proxy import AdapterContractError

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
    elif scheme in BUILTIN_SCHEMES:
        factory = _load(BUILTIN_SCHEMES[scheme])
    else:
        known = ", ".join(sorted({*BUILTIN_SCHEMES, *registered}))
        raise StoreURLError(
            f"unknown store scheme {scheme!r} in {redact_url(url)} (known: {known})"
        )
    return factory(url)
