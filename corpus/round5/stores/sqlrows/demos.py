"""Live demonstrations: each variant against the base on the same calls.

``python -m corpus.round5.stores.sqlrows.demos`` (from /work/main) runs all ten
and prints one line per variant. Every demo uses fresh SQLite files under a
temporary folder in /tmp, removed afterwards.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memconform.contract import ConflictError, StoreError
from memconform.values import ErrorRecord, Fact, Message, same_value

PACKAGE = "corpus.round5.stores.sqlrows"
VARIANTS = [
    "v01_nocase_msgid",
    "v02_uuid_affinity",
    "v03_localtime_order",
    "v04_window_count_all",
    "v05_chunked_commit",
    "v06_error_per_run",
    "v07_json_affinity",
    "v08_cas_no_txn",
    "v09_paged_scan",
    "v10_like_scope",
]


@contextmanager
def folder() -> Iterator[str]:
    path = tempfile.mkdtemp(prefix="sqlrows-demo-", dir="/tmp")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def maker(module: str) -> Callable[..., Any]:
    return importlib.import_module(f"{PACKAGE}.{module}").make


def msg(i: int | str, **fields: Any) -> Message:
    return Message(id=f"m{i}", role="user", text=f"text {i}", **fields)


def both(module: str, run: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``run(store)`` on a fresh base store and a fresh variant store."""
    with folder() as tmp:
        base = maker("base")(path=os.path.join(tmp, "base.db"))
        variant = maker(module)(path=os.path.join(tmp, "variant.db"))
        try:
            return run(base), run(variant)
        finally:
            base.close()
            variant.close()


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except StoreError as exc:
        return f"raised {type(exc).__name__}"


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


# -- one demo per variant ------------------------------------------------------------


def demo_v01(module: str) -> tuple[Any, Any]:
    """Two ids differing only in case, in one thread (ST-035)."""

    def run(store: Any) -> Any:
        store.append("t", [Message(id="call_A", role="assistant", text="a")])
        refused = outcome(lambda: store.append("t", [Message(id="call_a", role="tool", text="b")]))
        return refused, ids(store.messages("t"))

    return both(module, run)


def demo_v02(module: str) -> tuple[Any, Any]:
    """Run and turn ids that look like numbers (ST-013)."""

    def run(store: Any) -> Any:
        store.append("t", [msg(1, run_id="007", turn_id="1e3")])
        (m,) = store.messages("t")
        return m.run_id, m.turn_id

    return both(module, run)


def demo_v03(module: str) -> tuple[Any, Any]:
    """A batch written at UTC+14, then one at UTC-11 (ST-002)."""
    saved = os.environ.get("TZ")

    def zone(tz: str | None) -> None:
        if tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = tz
        time.tzset()

    def run(store: Any) -> Any:
        try:
            zone("KIR-14")  # POSIX spelling of UTC+14 (Kiritimati)
            store.append("t", [msg("first")])
            zone("SST+11")  # UTC-11 (Pago Pago), a moment later
            store.append("t", [msg("second")])
        finally:
            zone(saved)
        return ids(store.messages("t")), ids(store.messages("t", 1))

    return both(module, run)


def demo_v04(module: str) -> tuple[Any, Any]:
    """A window of 5 over 10 messages, 2 of them uncommitted (ST-019)."""

    def run(store: Any) -> Any:
        store.append("t", [msg(i) for i in range(10)])
        store.set_committed("t", ["m2", "m3"], False)
        return ids(store.messages("t", 5))

    return both(module, run)


def demo_v05(module: str) -> tuple[Any, Any]:
    """A 150-message batch whose last id is already stored (ST-010, ST-001)."""

    def run(store: Any) -> Any:
        store.append("t", [msg("old")])
        batch = [msg(i) for i in range(149)] + [msg("old")]
        refused = outcome(lambda: store.append("t", batch))
        return refused, len(store.messages("t"))

    return both(module, run)


def demo_v06(module: str) -> tuple[Any, Any]:
    """Two error records of the same run (ST-022)."""

    def run(store: Any) -> Any:
        store.record_error("t", ErrorRecord("run-1", {"type": "ModelError", "message": "first"}))
        store.record_error("t", ErrorRecord("run-1", {"type": "StoreError", "message": "again"}))
        return [r.error["message"] for r in store.errors("t")]

    return both(module, run)


def demo_v07(module: str) -> tuple[Any, Any]:
    """Working-state values that are bare numbers (ST-025)."""
    values: list[Any] = [1.0, -0.0, 2**64, {"n": 1.0}]

    def run(store: Any) -> Any:
        read = []
        for i, value in enumerate(values):
            store.write_state("job", f"k{i}", value, None)
            entry = store.read_state("job", f"k{i}")
            read.append(entry.value)
        exact = [same_value(v, r) for v, r in zip(values, read, strict=True)]
        return [repr(r) for r in read], exact

    return both(module, run)


def _cas_worker(path: str, module: str, go: Any, rounds: int, out: Any) -> None:
    store = maker(module)(path=path)
    wins = 0
    go.wait()
    for _ in range(rounds):
        while True:
            entry = store.read_state("job", "counter")
            try:
                store.write_state(
                    "job", "counter", (entry.value if entry else 0) + 1,
                    entry.version if entry else None,
                )
            except ConflictError:
                continue
            wins += 1
            break
    store.close()
    out.put(wins)


def _cas_race(module: str, path: str, writers: int = 4, rounds: int = 40) -> tuple[int, int, int]:
    """``writers`` processes each add 1 to one key ``rounds`` times by compare-and-set;
    answers (acknowledged writes, stored version, stored value)."""
    ctx = multiprocessing.get_context("fork")
    go, out = ctx.Event(), ctx.Queue()
    store = maker(module)(path=path)  # creates the schema before the children open the file
    procs = [
        ctx.Process(target=_cas_worker, args=(path, module, go, rounds, out))
        for _ in range(writers)
    ]
    for p in procs:
        p.start()
    time.sleep(0.3)  # let every writer open the file before the start signal
    go.set()
    acknowledged = sum(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join()
    entry = store.read_state("job", "counter")
    store.close()
    return acknowledged, entry.version, entry.value


def demo_v08(module: str) -> tuple[Any, Any]:
    """Four processes incrementing one key by compare-and-set (ST-026)."""
    with folder() as tmp:
        base = _cas_race("base", os.path.join(tmp, "base.db"))
        variant = base
        for attempt in range(5):  # a race: retry a few times until it shows
            variant = _cas_race(module, os.path.join(tmp, f"variant{attempt}.db"))
            if variant[0] != variant[1]:
                break
    keys = ("acknowledged", "version", "value")
    return dict(zip(keys, base, strict=True)), dict(zip(keys, variant, strict=True))


def demo_v09(module: str) -> tuple[Any, Any]:
    """600 messages, one early one uncommitted, read without a limit (ST-006)."""

    def run(store: Any) -> Any:
        store.append("t", [msg(i) for i in range(600)])
        store.set_committed("t", ["m10"], False)
        return len(store.messages("t")), len(store.messages("t", include_uncommitted=True))

    return both(module, run)


def demo_v10(module: str) -> tuple[Any, Any]:
    """Facts in scopes ``team_a`` and ``team-a`` (ST-031, ST-035)."""

    def fact(statement: str) -> Fact:
        return Fact("lang", statement, "agent", "chat", "said so", "2026-01-01T00:00:00Z")

    def run(store: Any) -> Any:
        store.put_fact("team-a", fact("Dutch"))
        store.put_fact("team_a", fact("English"))
        listed = [f.statement for f in store.facts("team_a")]
        forgot = store.forget("team_a", "lang")
        left = store.get_fact("team-a", "lang")
        return listed, forgot, None if left is None else left.statement

    return both(module, run)


DEMOS: dict[str, Callable[[str], tuple[Any, Any]]] = {
    name: globals()[f"demo_{name[:3]}"] for name in VARIANTS
}

# What the rule says the base must answer, per demo.
RULE: dict[str, Callable[[Any], bool]] = {
    "v01_nocase_msgid": lambda b: b == (None, ["call_A", "call_a"]),
    "v02_uuid_affinity": lambda b: b == ("007", "1e3"),
    "v03_localtime_order": lambda b: b == (["mfirst", "msecond"], ["msecond"]),
    "v04_window_count_all": lambda b: b == [f"m{i}" for i in range(5, 10)],
    "v05_chunked_commit": lambda b: b == ("raised DuplicateIdError", 1),
    "v06_error_per_run": lambda b: b == ["first", "again"],
    "v07_json_affinity": lambda b: b[1] == [True] * 4,
    "v08_cas_no_txn": lambda b: b["acknowledged"] == b["version"] == b["value"] == 160,
    "v09_paged_scan": lambda b: b == (599, 600),
    "v10_like_scope": lambda b: b == (["English"], True, "Dutch"),
}


def main() -> int:
    failed = 0
    for name, demo in DEMOS.items():
        try:
            base, variant = demo(name)
            assert RULE[name](base), f"the base broke the rule: {base!r}"
            assert not same_value(base, variant), "the variant answered like the base"
            print(f"OK      {name}: base={base!r} variant={variant!r}")
        except Exception as exc:  # one line per variant, whatever broke
            failed += 1
            print(f"FAILED  {name}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
