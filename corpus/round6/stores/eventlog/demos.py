"""Live demonstrations: each variant against the base, same calls, both answers printed.

Run with ``python -m corpus.round6.stores.eventlog.demos``.
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus.round6.stores.eventlog import base
from memconform.values import ErrorRecord, Fact, Message

PACKAGE = "corpus.round6.stores.eventlog"


def msg(ident: str, text: str = "", **fields: Any) -> Message:
    return Message(id=ident, role=fields.pop("role", "user"), text=text or ident, **fields)


def fact(subject: str, statement: str = "holds") -> Fact:
    return Fact(subject, statement, "agent", "chat", "turn 1", "2026-01-01T00:00:00Z")


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def attempt(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


def open_pair(module: str, folder: Path) -> tuple[Any, Any, str]:
    variant = importlib.import_module(f"{PACKAGE}.{module}")
    good = base.make(path=str(folder / "base.db"))
    bad = variant.make(path=str(folder / "variant.db"))
    return good, bad, str(folder / "variant.db")


def show(label: str, good: Any, bad: Any) -> None:
    print(f"  {label}")
    print(f"    base:    {good}")
    print(f"    variant: {bad}")


# -- one demo per variant -------------------------------------------------------------


def demo_v01(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        for i in range(70):
            store.put_fact("kb", fact(f"s{i:02d}", f"statement {i}"))
        return store.get_fact("kb", "s63"), len(store.facts("kb"))

    (g_fact, g_count), (b_fact, b_count) = run(good), run(bad)
    show("70 facts in one scope: get_fact('s63') (written by event 64)",
         g_fact and g_fact.statement, b_fact and b_fact.statement)
    show("len(facts())", g_count, b_count)


def demo_v02(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        store.append("A", [msg("m1")])
        again = attempt(lambda: store.append("A", [msg("m1")]))
        store.append("B", [msg("m1")])
        return again, ids(store.messages("B"))

    (g_again, g_b), (b_again, b_b) = run(good), run(bad)
    show("append [m1] to A twice: second call", g_again, b_again)
    show("append [m1] to B, then messages('B')", g_b, b_b)


def demo_v03(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        store.append("t", [msg("m1", round=0, run_id="", turn_id="")])
        m = store.messages("t")[0]
        return (m.round, m.run_id, m.turn_id)

    show("(round, run_id, turn_id) of a message appended with (0, '', '')", run(good), run(bad))


def demo_v04(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        store.append("t", [msg("m1"), msg("m2"), msg("m3")])
        store.append("t", [msg("hidden", committed=False)])
        return ids(store.messages("t", limit=2))

    show("m1 m2 m3 + uncommitted 'hidden': messages(limit=2)", run(good), run(bad))


def demo_v05(good: Any, bad: Any, folder: Path) -> None:
    variant = importlib.import_module(f"{PACKAGE}.v05_mtime_cache")

    def run(reader: Any, writer: Any) -> Any:
        reader.append("t", [msg("m1")])
        first = ids(reader.messages("t"))
        writer.append("t", [msg("m2")])  # another instance (as another process would)
        return first, ids(reader.messages("t"))

    good_writer = base.make(path=str(folder / "base.db"))
    bad_writer = variant.make(path=str(folder / "variant.db"))
    show("reader appends m1 and reads; a second instance appends m2; reader reads again",
         run(good, good_writer), run(bad, bad_writer))


def demo_v06(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        store.record_error("jobX1", ErrorRecord("r1", {"type": "Timeout", "message": "x"}))
        store.record_error("Alpha", ErrorRecord("r2", {"type": "Refused", "message": "y"}))
        return (
            [e.run_id for e in store.errors("job_1")],
            [e.run_id for e in store.errors("alpha")],
        )

    (g1, g2), (b1, b2) = run(good), run(bad)
    show("errors in 'jobX1' and 'Alpha'; errors('job_1')", g1, b1)
    show("errors('alpha')", g2, b2)


def demo_v07(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        a1 = store.write_state("job", "a", 1, None)
        b1 = store.write_state("job", "b", 1, None)
        a2 = store.write_state("job", "a", 2, a1.version)
        return a1.version, b1.version, a2.version

    show("versions of: a first write, b first write, a second write", run(good), run(bad))


def demo_v08(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        store.append("long", [msg(f"m{i:04d}") for i in range(1200)])
        everything = store.messages("long")
        return len(everything), everything[0].id

    show("1,200 messages, messages() without a limit: (count, first id)", run(good), run(bad))


def demo_v09(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        store.append("t", [msg("m1"), msg("m2"), msg("m3")])
        store.damage("t")
        return attempt(lambda: ids(store.messages("t")))

    show("m1 m2 m3, the middle event damaged: messages()", run(good), run(bad))


def demo_v10(good: Any, bad: Any, folder: Path) -> None:
    def run(store: Any) -> Any:
        store.put_fact("kb", fact("tz"))
        return store.forget("kb", "tz"), store.forget("kb", "tz"), store.get_fact("kb", "tz")

    show("put 'tz', forget it twice: (first, second, get_fact)", run(good), run(bad))


DEMOS: list[tuple[str, Callable[[Any, Any, Path], None]]] = [
    ("v01_snapshot_early", demo_v01),
    ("v02_replay_key", demo_v02),
    ("v03_compact_payload", demo_v03),
    ("v04_window_then_flags", demo_v04),
    ("v05_mtime_cache", demo_v05),
    ("v06_like_category", demo_v06),
    ("v07_stream_revision", demo_v07),
    ("v08_ring_projection", demo_v08),
    ("v09_skip_poison", demo_v09),
    ("v10_forget_history", demo_v10),
]


def main() -> None:
    for module, demo in DEMOS:
        variant = importlib.import_module(f"{PACKAGE}.{module}")
        print(f"{module}: {(variant.__doc__ or '').splitlines()[0]}")
        with tempfile.TemporaryDirectory(prefix="eventlog-demo-") as tmp:
            good, bad, _ = open_pair(module, Path(tmp))
            demo(good, bad, Path(tmp))
        print()


if __name__ == "__main__":
    main()
