"""v07: a provider's error body is reduced only when it names ``message``.

The bug: the digester reduces a provider's JSON error body by looking for ``message``
and ``error.message`` only, the two forms of the provider the team integrated first.
A body of another provider (``{"detail": ...}``, ``{"error": "..."}``,
``{"errors": ["..."]}``) is not recognised: the reason falls back to the enclosing
error's own message, often a bare ``HTTP 422``, or keeps the raw JSON body when the body
was inlined in the message.

The situation that shows it: a model or tool task failing with an error body (or a
message ending in a JSON body) whose reason is under ``detail``, ``errors[0]`` or a
plain ``error`` text. OpenAI- and Anthropic-shaped bodies digest as in the base.

Why a team would ship it: the two shapes it tested cover the big providers; the others
arrived with a later integration.

Rules broken: SW-018.
"""

from __future__ import annotations

from .base import MiddlewareRuntime, StrictWriteApp
from .redaction import Digester


class NarrowDigester(Digester):
    # --- the bug ---
    # only the first provider's body shapes are known
    body_keys = ("message", "error.message")


class NarrowApp(StrictWriteApp):
    digester_class = NarrowDigester


class Runtime(MiddlewareRuntime):
    strict_app = NarrowApp


def make() -> Runtime:
    return Runtime()
