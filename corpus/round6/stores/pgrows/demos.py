"""Each variant's bug, live against the base: ``python -m corpus.round6.stores.pgrows.demos``.

Every demo makes the same calls on a base store and on the variant (each in a
schema of its own, dropped at the end) and prints both answers.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from corpus.round6.stores.pgrows import base as base_module
from corpus.round6.stores.pgrows.base import drop_schema
from memconform.contract import ConflictError, StoreError
from memconform.values import ErrorRecord, Fact, Message, TurnRecord

PACKAGE = "corpus.round6.stores.pgrows"
RUNS: list[str] = []


def open_pair(variant: str) -> tuple[Any, Any]:
    """A fresh base store and a fresh store of ``variant``."""
    tag = f"pgrows-demo-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    runs = (f"{tag}-base", f"{tag}-{variant}")
    RUNS.extend(runs)
    module = importlib.import_module(f"{PACKAGE}.{variant}")
    return base_module.make(run=runs[0]), module.make(run=runs[1])


def attempt(call: Callable[[], Any]) -> Any:
    try:
        answer = call()
    except (StoreError, KeyError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return "succeeded" if answer is None else answer


def show(title: str, on_base: Any, on_variant: Any) -> None:
    print(f"  {title}")
    print(f"    base:    {on_base}")
    print(f"    variant: {on_variant}")


def msg(mid: str, text: str = "", **fields: Any) -> Message:
    return Message(id=mid, role="user", text=text, **fields)


def fact(subject: str) -> Fact:
    return Fact(subject=subject, statement=f"about {subject}", writer="agent", source="chat",
                evidence="turn 3", written_at="2025-01-01T00:00:00Z")


# -- the demos ---------------------------------------------------------------------------


def demo_v01() -> None:
    base, variant = open_pair("v01_lower_scope")
    for store in (base, variant):
        store.write_state("Job-7", "step", {"done": 3}, None)
    show("read_state('job-7', 'step') after writing only under 'Job-7'",
         base.read_state("job-7", "step"), variant.read_state("job-7", "step"))


def demo_v02() -> None:
    base, variant = open_pair("v02_icu_subjects")
    for store in (base, variant):
        for subject in ("a", "B", "_x", "10", "9"):
            store.put_fact("user:1", fact(subject))
    show("facts('user:1') subjects (code-point order is 10, 9, B, _x, a)",
         [f.subject for f in base.facts("user:1")], [f.subject for f in variant.facts("user:1")])


def held_append(module: Any, store_a: Any, store_b: Any) -> list[str]:
    """Writer A (``store_a``) is held after the first row of its batch while
    writer B (``store_b``, another connection to the same schema) appends to
    the same thread, as a slow process would be; ``module`` is where the
    store's insert looks up the kit's row point."""
    reached, release = threading.Event(), threading.Event()
    rows_of_a = [0]

    def pause() -> None:
        if threading.current_thread().name == "writer-A":
            rows_of_a[0] += 1
            if rows_of_a[0] == 2:
                reached.set()
                release.wait(5)

    original = module.batch_row_pause
    module.batch_row_pause = pause
    try:
        a = threading.Thread(
            name="writer-A", target=lambda: store_a.append("shared", [msg("a1"), msg("a2")]))
        a.start()
        reached.wait(5)
        b = threading.Thread(
            name="writer-B", target=lambda: store_b.append("shared", [msg("b1"), msg("b2")]))
        b.start()
        b.join(0.7)  # the base makes B wait for A's lock; the variant lets it through
        release.set()
        a.join(5)
        b.join(5)
    finally:
        module.batch_row_pause = original
    return [m.id for m in store_a.messages("shared")]


def demo_v03() -> None:
    base, variant = open_pair("v03_identity_positions")
    module = importlib.import_module(f"{PACKAGE}.v03_identity_positions")
    answers = []
    for store, where in ((base, base_module), (variant, module)):
        second = type(store)(store.run)
        answers.append(held_append(where, store, second))
        second.close()
    show("thread after batch [a1, a2] (held after a1) and batch [b1, b2] ran at once",
         *answers)


def demo_v04() -> None:
    base, variant = open_pair("v04_replay_is_noop")
    answers = []
    for store in (base, variant):
        store.append("t", [msg("m1", "first draft")])
        outcome = attempt(lambda s=store: s.append("t", [msg("m1", "a different message")]))
        answers.append(f"{outcome!r}, thread holds {[m.text for m in store.messages('t')]}")
    show("append [m1] again with new text", *answers)


def demo_v05() -> None:
    base, variant = open_pair("v05_jsonb_dumps")
    answers = []
    for store in (base, variant):
        store.append("t", [msg("m1", parts=({"bytes": 2.0**64, "score": 0.5},))])
        part = store.messages("t")[0].parts[0]
        answers.append({k: f"{v!r} ({type(v).__name__})" for k, v in part.items()})
    show("parts [{'bytes': 2.0**64, 'score': 0.5}] read back", *answers)


def demo_v06() -> None:
    base, variant = open_pair("v06_timestamptz_recorded_at")
    record = ErrorRecord(run_id="r1", error={"type": "Timeout", "message": "tool"},
                         recorded_at="2025-03-01T09:30:00+01:00")
    for store in (base, variant):
        store.record_error("t", record)
    show("recorded_at of an error record stamped 2025-03-01T09:30:00+01:00",
         base.errors("t")[0].recorded_at, variant.errors("t")[0].recorded_at)


def demo_v07() -> None:
    base, variant = open_pair("v07_bpchar_ids")
    answers = []
    for store in (base, variant):
        store.append("t", [msg("m1")])
        outcome = attempt(lambda s=store: s.append("t", [msg("m1 ", "trailing space")]))
        answers.append(f"{outcome!r}, ids {[m.id for m in store.messages('t')]}")
    show("append id 'm1 ' to a thread holding 'm1'", *answers)


def demo_v08() -> None:
    """Eight threads read version 1 of one key, then all write expecting 1."""
    base, variant = open_pair("v08_cas_read_then_write")
    answers = []
    for store in (base, variant):
        wins = 0
        for round_no in range(12):
            key = f"k{round_no}"
            store.write_state("job", key, 0, None)
            barrier = threading.Barrier(8)
            won: list[int] = []

            def writer(n: int, s: Any = store, k: str = key, b: threading.Barrier = barrier,
                       w: list[int] = won) -> None:
                b.wait()
                try:
                    s.write_state("job", k, n, 1)
                    w.append(n)
                except ConflictError:
                    pass

            threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wins += len(won)
        answers.append(f"{wins} successful writes over 12 rounds (one per round is right)")
    show("8 concurrent write_state(expected_version=1) per round", *answers)


def demo_v09() -> None:
    base, variant = open_pair("v09_flags_executemany")
    answers = []
    for store in (base, variant):
        store.append("t", [msg("m1"), msg("m2")])
        outcome = attempt(lambda s=store: s.set_committed("t", ["m1", "nope"], False))
        answers.append(f"{outcome!r}; visible after: {[m.id for m in store.messages('t')]}")
    show("set_committed(['m1', 'nope'], False) on a thread holding m1, m2", *answers)


def demo_v10() -> None:
    base, variant = open_pair("v10_records_by_thread")
    for store in (base, variant):
        for turn, thread in (("t1", "zeta"), ("t2", "alpha"), ("t3", "zeta")):
            store.append_record(TurnRecord(turn_id=turn, thread_id=thread, outcome="completed"))
    show("records() after t1@zeta, t2@alpha, t3@zeta",
         [r.turn_id for r in base.records()], [r.turn_id for r in variant.records()])


DEMOS = [demo_v01, demo_v02, demo_v03, demo_v04, demo_v05, demo_v06, demo_v07, demo_v08,
         demo_v09, demo_v10]


def main() -> None:
    try:
        for demo in DEMOS:
            started = time.monotonic()
            print(f"{demo.__name__[5:]}:")
            demo()
            print(f"  ({time.monotonic() - started:.2f} s)")
    finally:
        for run in RUNS:
            drop_schema(run)


if __name__ == "__main__":
    main()
