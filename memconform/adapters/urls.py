"""What every store adapter says about a store URL: the usage error for a URL
that names nothing or cannot be opened as written (:class:`StoreURLError`),
and the URL as reports and logs show it (:func:`redact_url`, no password).

They live apart from :mod:`memconform.adapters.registry`, which re-exports
them, because the registry reads its table of library schemes from the
library adapters, and those raise :class:`StoreURLError` themselves.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["StoreURLError", "redact_url"]


class StoreURLError(ValueError):
    """A store URL names no known scheme or cannot be opened as written."""


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for reports and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()
