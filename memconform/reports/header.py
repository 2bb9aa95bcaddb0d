"""The header of a results file: what was judged and how, from what the
command line gives (:func:`normalise_header`), and the day the run started
(:func:`start_day`, which decides whether a baseline entry has expired).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from memconform.catalogue import Catalogue
from memconform.reports.escaping import redact_identity
from memconform.reports.results import json_safe

__all__ = ["normalise_header", "start_day"]

_HEADER_KEYS = {
    "kit", "kit_version", "catalogue", "subject", "store", "store_url", "store_type",
    "store_version", "capabilities", "store_provides", "runtime", "runtime_version",
    "runtime_provides", "runtime_declares", "mutant", "seed",
    "python", "os", "environment", "started", "finished", "selection", "certify", "mode",
    "stopped_early",
}


def _opt_text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _selection(raw: Any, catalogue: Catalogue) -> dict[str, list[str]] | None:
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        profiles = sorted({str(p) for p in raw.get("profiles") or ()})
        ids = {str(r) for r in raw.get("rules") or ()}
    elif isinstance(raw, str):
        profiles, ids = [], {raw}
    else:
        profiles, ids = [], {str(r) for r in raw}
    order = {r.id: n for n, r in enumerate(catalogue)}
    return {"profiles": profiles, "rules": sorted(ids, key=lambda i: (order.get(i, len(order)), i))}


def _declares(raw: Any) -> dict[str, Any]:
    """``{"declares": raw}`` when the header says what the runtime declares
    (a mapping), else nothing: the outcome records may say it instead."""
    return {"declares": json_safe(raw)} if isinstance(raw, Mapping) else {}


def normalise_header(header: Mapping[str, Any], catalogue: Catalogue) -> dict[str, Any]:
    """The header as results files carry it, from what the command line gives.

    Accepts ``kit`` (``{"name", "version"}``) or ``kit_version``; ``store`` as a
    URL or ``{"url", "type", "version", "capabilities", "provides"}`` with
    ``store_type``, ``store_version``, ``capabilities`` and ``store_provides``
    beside it; ``runtime`` as an identity or ``{"identity", "version",
    "provides", "declares"}`` (or ``runtime_version``, ``runtime_provides``,
    ``runtime_declares``: what the runtime declares, when it was built before
    any scenario ran);
    ``python``/``os`` or ``environment``;
    ``started``/``finished`` ISO times; ``selection`` as ``None``, a list of
    rule ids or ``{"profiles", "rules"}``; ``certify`` or ``mode``; ``seed``;
    ``mutant``; ``stopped_early`` (why the run ended before its end, if so).
    The catalogue version, hash and size come from ``catalogue`` itself. The
    store URL is redacted again. Other keys are kept under ``extra``.
    """
    subject = header.get("subject", "both")
    if subject not in ("store", "runtime", "both"):
        raise ValueError(f"header subject must be store, runtime or both, not {subject!r}")
    kit = header.get("kit")
    kit_version = kit.get("version") if isinstance(kit, Mapping) else header.get("kit_version")
    store = header.get("store")
    store_info: Mapping[str, Any] = store if isinstance(store, Mapping) else {}
    url = store_info.get("url") if store_info else (store or header.get("store_url"))
    capabilities = store_info.get("capabilities", header.get("capabilities")) or ()
    runtime = header.get("runtime")
    runtime_info: Mapping[str, Any] = runtime if isinstance(runtime, Mapping) else {}
    environment = header.get("environment")
    env: Mapping[str, Any] = environment if isinstance(environment, Mapping) else {}
    mode = header.get("mode") or ("certify" if header.get("certify") else "run")
    extra = {k: json_safe(v) for k, v in header.items() if k not in _HEADER_KEYS}
    seed = header.get("seed")
    return {
        "kit": {"name": "memconform", "version": _opt_text(kit_version)},
        "catalogue": {
            "version": catalogue.version,
            "hash": catalogue.digest,
            "rules": len(catalogue),
        },
        "subject": subject,
        "store": {
            "url": None if url is None else redact_identity(str(url)),
            "type": _opt_text(store_info.get("type", header.get("store_type"))),
            "version": _opt_text(store_info.get("version", header.get("store_version"))),
            "capabilities": sorted({str(c) for c in capabilities}),
            "provides": sorted(
                {str(p) for p in store_info.get("provides", header.get("store_provides")) or ()}
            ),
        },
        "runtime": {
            **_declares(runtime_info.get("declares", header.get("runtime_declares"))),
            "identity": _opt_text(runtime_info.get("identity") if runtime_info else runtime),
            "version": _opt_text(runtime_info.get("version", header.get("runtime_version"))),
            "provides": sorted(
                {str(p) for p in runtime_info.get("provides", header.get("runtime_provides"))
                 or ()}
            ),
        },
        "mutant": _opt_text(header.get("mutant")),
        "seed": seed if isinstance(seed, int) and not isinstance(seed, bool) else _opt_text(seed),
        "environment": {
            "python": _opt_text(env.get("python", header.get("python"))),
            "os": _opt_text(env.get("os", header.get("os"))),
        },
        "started": _opt_text(header.get("started")),
        "finished": _opt_text(header.get("finished")),
        "selection": _selection(header.get("selection"), catalogue),
        "mode": mode if mode in ("certify", "quick") else "run",
        "stopped_early": _opt_text(header.get("stopped_early")),
        "extra": extra,
    }


def start_day(header: Mapping[str, Any]) -> date | None:
    """The day the run started (``None``: not known), for baseline expiry."""
    started = header.get("started")
    if not started:
        return None
    try:
        return datetime.fromisoformat(str(started).replace("Z", "+00:00")).date()
    except ValueError:
        try:
            return date.fromisoformat(str(started)[:10])
        except ValueError:
            return None
