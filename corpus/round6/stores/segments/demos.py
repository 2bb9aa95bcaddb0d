"""Live demonstrations: each variant's bug next to the base store.

Each demo runs the same public store calls on a fresh base store and on a
fresh variant store (each in its own folder under /tmp, removed afterwards)
and prints both answers. The multi-process demo forks a writer and holds it
inside its batch with the kit's own row point (``MEMCONFORM_PAUSE``).

Run from /work/main: ``python -m corpus.round6.stores.segments.demos``.
"""

from __future__ import annotations

import importlib
import os
import shutil
import signal
import tempfile
import traceback
from collections.abc import Callable
from typing import Any

from corpus.round6.stores.segments import base
from memconform.harness.faults import PAUSE_ENV, pause_env_value
from memconform.values import ErrorRecord, Fact, Message

Factory = Callable[..., Any]
PACKAGE = "corpus.round6.stores.segments"


def _variant(name: str) -> Factory:
    return importlib.import_module(f"{PACKAGE}.{name}").make  # type: ignore[no-any-return]


def _msg(mid: str, text: str = "") -> Message:
    return Message(id=mid, role="user", text=text or f"text of {mid}")


def _ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def _attempt(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as exc:  # a demo shows what the store raised
        return f"raised {type(exc).__name__}: {str(exc)[:70]}"


def _both(variant: str, sequence: Callable[[Factory, str], Any]) -> None:
    """Run ``sequence(factory, folder)`` on the base and on the variant; print both."""
    doc = importlib.import_module(f"{PACKAGE}.{variant}").__doc__ or ""
    print(f"== {variant}: {doc.splitlines()[0]}")
    for label, factory in (("base", base.make), ("variant", _variant(variant))):
        folder = tempfile.mkdtemp(prefix="segments-demo-", dir="/tmp")
        try:
            answer = _attempt(lambda f=factory, d=folder: sequence(f, d + "/data"))
            print(f"   {label:8}-> {answer}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)


# -- the demos -------------------------------------------------------------------------


def demo_v01(factory: Factory, path: str) -> Any:
    """A writer is held after the first row of a 3-message batch, then killed."""
    factory(path=path).append("t", [_msg("before")])
    reached_r, reached_w = os.pipe()
    hold_r, hold_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer
        try:
            os.environ[PAUSE_ENV] = pause_env_value(1, reached_w, hold_r)
            factory(path=path).append("t", [_msg("b1"), _msg("b2"), _msg("b3")])
        finally:
            os._exit(0)
    os.read(reached_r, 16)
    during = _ids(factory(path=path).messages("t"))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    for fd in (reached_r, reached_w, hold_r, hold_w):
        os.close(fd)
    after = _ids(factory(path=path).messages("t"))
    return {"read while held": during, "read after the kill": after}


def demo_v02(factory: Factory, path: str) -> Any:
    """A message of 1.2 MB, then one small message."""
    store = factory(path=path)
    store.append("t", [_msg("small")])
    store.append("t", [_msg("big", "x" * 1_200_000)])
    first = _ids(store.messages("t"))
    store.append("t", [_msg("next")])
    return {"after the big append": first, "after one more": _ids(store.messages("t"))}


def demo_v03(factory: Factory, path: str) -> Any:
    """600 messages over several 64 KiB segments, the newest 250 hidden, a window of 10."""
    store = factory(path=path, segment_bytes=str(64 * 1024))
    for start in range(0, 600, 50):
        store.append("t", [_msg(f"m{i:03d}", "y" * 200) for i in range(start, start + 50)])
    store.set_committed("t", [f"m{i:03d}" for i in range(350, 600)], False)
    window = _ids(store.messages("t", limit=10))
    return f"{len(window)} messages: {window[:1]} .. {window[-1:]}"


def demo_v04(factory: Factory, path: str) -> Any:
    """m1 is hidden, then a retry appends m1 again."""
    store = factory(path=path)
    store.append("t", [_msg("m1")])
    store.set_committed("t", ["m1"], False)
    retry = _attempt(lambda: store.append("t", [_msg("m1", "retried")]))
    return {"retry": retry, "ids": _ids(store.messages("t", include_uncommitted=True))}


def demo_v05(factory: Factory, path: str) -> Any:
    """An error record holds a stored and an unstored message; the stored one is then hidden."""
    store = factory(path=path)
    store.append("t", [_msg("a")])
    store.record_error("t", ErrorRecord("run1", {"type": "E", "message": "m"},
                                        (_msg("a"), _msg("b"))))
    store.set_committed("t", ["a"], False)
    record = store.errors("t")[0]
    return [(m.id, m.committed) for m in record.messages]


def demo_v06(factory: Factory, path: str) -> Any:
    """One state key written 257 times, then read; then a 258th write."""
    store = factory(path=path)
    version = None
    for n in range(257):
        version = store.write_state("job", "k", n, version).version
    read = store.read_state("job", "k")
    again = _attempt(lambda: store.write_state("job", "k", "next", 257).version)
    return {"last write": version, "read": read.version if read else None, "258th write": again}


def _fact(subject: str) -> Fact:
    return Fact(subject, f"about {subject}", "agent", "chat", "said so", "2026-01-01T00:00:00Z")


def demo_v07(factory: Factory, path: str) -> Any:
    """A fact in scope 'user/42'; the facts of scope 'user' are listed."""
    store = factory(path=path)
    store.put_fact("user/42", _fact("city"))
    store.put_fact("user", _fact("name"))
    return {"facts('user')": [f.subject for f in store.facts("user")],
            "get_fact('user', '42/city')": _attempt(
                lambda: getattr(store.get_fact("user", "42/city"), "subject", None))}


def demo_v08(factory: Factory, path: str) -> Any:
    """Threads 'job:1' and 'job/1' get one message each."""
    store = factory(path=path)
    store.append("job:1", [_msg("a")])
    second = _attempt(lambda: store.append("job/1", [_msg("b")]))
    return {"job/1 append": second, "job:1": _ids(store.messages("job:1")),
            "job/1": _ids(store.messages("job/1"))}


def demo_v09(factory: Factory, path: str) -> Any:
    """Handle B reads between flag changes of handle A; A's 32nd flag change compacts
    the thread; A hides m2 and appends m3; B reads again."""
    a, b = factory(path=path), factory(path=path)
    a.append("t", [_msg("m0"), _msg("m1"), _msg("m2")])
    first = None
    for n in range(32):
        a.set_committed("t", ["m1"], n % 2 == 1)  # ends with m1 committed
        if n == 11:
            first = _ids(b.messages("t"))
    a.set_committed("t", ["m2"], False)
    a.append("t", [_msg("m3")])
    return {"B before": first, "A after": _ids(a.messages("t")),
            "B after": _attempt(lambda: _ids(b.messages("t")))}


def demo_v10(factory: Factory, path: str) -> Any:
    """Three messages, the middle one damaged on disk, then a read."""
    store = factory(path=path)
    store.append("t", [_msg("m1"), _msg("m2"), _msg("m3")])
    store.damage("t")
    return _attempt(lambda: _ids(store.messages("t")))


DEMOS = {
    "v01_commitless_tail": demo_v01,
    "v02_bounded_segment_read": demo_v02,
    "v03_tail_window": demo_v03,
    "v04_visible_ids_only": demo_v04,
    "v05_error_message_refs": demo_v05,
    "v06_counted_versions": demo_v06,
    "v07_fact_paths": demo_v07,
    "v08_sanitized_folders": demo_v08,
    "v09_compaction_in_place": demo_v09,
    "v10_skip_bad_frame": demo_v10,
}


def main() -> None:
    for variant, sequence in DEMOS.items():
        try:
            _both(variant, sequence)
        except Exception:  # one broken demo must not hide the others
            traceback.print_exc()


if __name__ == "__main__":
    main()
