"""What is under test, read before any scenario runs: the store opened once and
the runtime built once, for the results header.

A subject that cannot even be opened or built raises
:class:`~memconform.cli.exits.AdapterFailure` with the cause (the run then
fails fast, exit 3); a name that resolves to nothing is a
:class:`~memconform.cli.exits.UsageError`.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
from pathlib import Path
from typing import Any

from memconform import __version__
from memconform.cli.exits import AdapterFailure, UsageError

__all__ = ["probe_runtime", "probe_store", "store_identity", "subject_identity"]


def subject_identity(args: argparse.Namespace) -> dict[str, Any]:
    """What is under test: the redacted store URL and what the store declares.

    Opens the store once (and builds the runtime) before any scenario runs:
    one that cannot be opened raises :class:`AdapterFailure` with the cause."""
    from memconform.adapters.registry import redact_url

    found: dict[str, Any] = {"runtime": args.runtime or "memconform.simulator:Simulator"}
    if args.runtime:
        found["runtime_declares"], found["runtime_version"] = probe_runtime(
            args.runtime, getattr(args, "runtime_name", None)
        )
    if args.store is not None:
        found["store"] = redact_url(args.store)
        found.update(probe_store(args.store, args.timeout))
        return found
    found["store"] = "sqlite:///<temporary file>"
    with tempfile.TemporaryDirectory(prefix="memconform-probe-") as probe_dir:
        found.update(probe_store(f"sqlite:///{Path(probe_dir) / 'probe.db'}", args.timeout))
    return found


def probe_store(url: str, timeout: float) -> dict[str, Any]:
    """Open the store once to read its type, version and declared capabilities,
    waiting at most ``timeout`` seconds for all of it (a hung opening is the
    adapter's failure too)."""
    from concurrent.futures import Future

    done: Future[dict[str, Any]] = Future()

    def work() -> None:
        try:
            done.set_result(_probe_now(url, timeout))
        except Exception as exc:  # handed to the caller, never lost
            done.set_exception(exc)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt... from the store
            what = f"SystemExit({exc.code!r})" if isinstance(exc, SystemExit) else repr(exc)
            done.set_exception(AdapterFailure(
                f"cannot open the store: it raised {what} while the kit opened it, as if to "
                "end the kit's process"
            ))

    threading.Thread(target=work, name="memconform-probe", daemon=True).start()
    try:
        return done.result(timeout=timeout)
    except TimeoutError:
        raise AdapterFailure(
            f"cannot open the store: opening it did not finish within {timeout:g} s"
        ) from None


def _probe_now(url: str, timeout: float) -> dict[str, Any]:
    from memconform.adapters.registry import StoreURLError, open_store
    from memconform.harness.proxy import AdapterContractError, RecordingStore

    try:
        store = open_store(url)
    except StoreURLError as exc:
        raise UsageError(str(exc)) from None
    except AdapterContractError as exc:
        raise AdapterFailure(f"cannot open the store: {exc.problem}") from None
    except Exception as exc:
        raise AdapterFailure(f"cannot open the store: {type(exc).__name__}: {exc}") from None
    try:
        proxy = RecordingStore(store, timeout=timeout)
        proxy.close()
    except AdapterContractError as exc:
        raise AdapterFailure(str(exc)) from None
    except Exception as exc:
        raise AdapterFailure(
            f"capabilities: raised {type(exc).__name__}: {exc}"
        ) from None
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:
                raise AdapterFailure(f"close: raised {type(exc).__name__}: {exc}") from None
    return {
        "capabilities": sorted(proxy.capabilities),
        "store_provides": sorted(proxy.provides),
        **store_identity(store),
    }


def probe_runtime(target: str, name: str | None = None) -> tuple[dict[str, Any], str | None]:
    """Build the runtime named ``module:factory`` once, as the suite will, and
    return what it declares (``{"profiles", "policies"}``) and its version: the
    ``version`` text it names itself by (a framework adapter gives the
    framework's distribution versions), ``None`` without one. The version only
    labels the report; no verdict reads it.

    A name that resolves to nothing is a usage error, and so is a factory
    raising :class:`~memconform.adapters.urls.StoreURLError`: a framework
    adapter whose optional extra is not installed (one line naming the runtime,
    ``name`` as the command line gave it, and the extra to install). A module
    that does not import, a factory that raises anything else, an object without ``execute`` and
    ``profiles``, a ``profiles`` declaration that is not a set of known
    profile names, or a ``policies`` declaration naming an unknown save policy
    is the adapter's failure."""
    from memconform.adapters.urls import StoreURLError

    factory = _factory(target)
    try:
        runtime = factory()
    except StoreURLError as exc:  # the library is missing: its extra is not installed
        raise UsageError(f"the runtime {name or target} cannot be built: {exc}") from None
    except Exception as exc:
        raise AdapterFailure(
            f"the runtime factory {target!r} raised {type(exc).__name__}: {exc}"
        ) from None
    from memconform.harness.runtime import declared_policies, declared_profiles

    try:
        missing_parts = [n for n in ("execute", "profiles") if not hasattr(runtime, n)]
        if missing_parts:
            raise AdapterFailure(
                f"the runtime built by {target!r} has no {' and no '.join(missing_parts)}"
            )
        profiles = declared_profiles(runtime)
        policies = declared_policies(runtime)
    except ValueError as exc:
        raise AdapterFailure(f"the runtime built by {target!r}: {exc}") from None
    except Exception as exc:  # a declaration that raises is the adapter's failure
        raise AdapterFailure(
            f"the runtime built by {target!r} raised {type(exc).__name__} when asked what "
            f"it declares: {exc}"
        ) from None
    version = getattr(runtime, "version", None)
    return (
        {"profiles": sorted(profiles), "policies": None if policies is None else sorted(policies)},
        version if isinstance(version, str) and version else None,
    )


def _factory(target: str) -> Any:
    """The factory ``module:factory`` names, its module imported. A name that
    resolves to nothing is a usage error; a module that exists but does not
    import is the adapter's failure."""
    import importlib

    from memconform.runtime_names import runtime_factory

    if target.startswith("stdio:"):
        return runtime_factory(target)
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--runtime must be module:factory, not {target!r}")
    try:
        factory: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise UsageError(f"cannot import {module_name!r}: {exc}") from None
        raise AdapterFailure(
            f"the runtime module {module_name!r} does not import: {type(exc).__name__}: {exc}"
        ) from None
    except Exception as exc:
        raise AdapterFailure(
            f"the runtime module {module_name!r} does not import: {type(exc).__name__}: {exc}"
        ) from None
    for part in attr.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            raise UsageError(f"{module_name!r} has no attribute {attr!r}") from None
    return factory


def store_identity(store: object) -> dict[str, str]:
    """The type and version a results header names for ``store``.

    A store that names itself (a stdio store's ``hello`` answer: ``name`` and
    ``version``) is shown as it named itself, marked as an out-of-process
    store; otherwise the adapter's Python type. A store without a version of
    its own that ships with the kit is at the kit's version."""
    kind = type(store)
    own_name = getattr(store, "name", None)
    if isinstance(own_name, str) and own_name and kind.__module__ == "memconform.adapters.stdio":
        store_type = f"{own_name} (stdio)"
    else:
        store_type = f"{kind.__module__}.{kind.__qualname__}"
    version = str(getattr(store, "version", "") or "")
    if not version and kind.__module__.startswith("memconform."):
        version = __version__
    return {"store_type": store_type, "store_version": version}
