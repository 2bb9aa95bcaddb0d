"""Live demonstrations: each variant's bug against the base, on the running Redis.

``python -m corpus.round5.stores.kvredis.demos`` from /work/main runs all ten
and prints one line per variant (OK when the base keeps the rule and the
variant visibly does not). Every demo uses fresh prefixes and deletes its keys.
"""

from __future__ import annotations

import importlib
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from corpus.round5.stores.kvredis.base import KVRedisStore
from memconform.contract import StoreError
from memconform.values import Fact, Message, same_value

PACKAGE = "corpus.round5.stores.kvredis"


def _prefix(tag: str) -> str:
    return f"blind5:demo:{tag}:{uuid.uuid4().hex[:10]}:"


@contextmanager
def opened(module: str, copies: int = 1) -> Iterator[list[Any]]:
    """``copies`` store objects of ``module`` on one fresh prefix (as several
    processes opening the same URL); every key under the prefix is deleted after."""
    make = importlib.import_module(f"{PACKAGE}.{module}").make
    prefix = _prefix(module.split("_", maxsplit=1)[0])
    stores = [make(prefix=prefix) for _ in range(copies)]
    try:
        yield stores
    finally:
        stores[0].purge()
        for store in stores:
            store.close()


def msg(mid: str, text: str = "", **kw: Any) -> Message:
    return Message(id=mid, role="user", text=text or f"text of {mid}", **kw)


def compare(name: str, run: Callable[[list[Any]], Any], copies: int = 1) -> tuple[Any, Any]:
    with opened("base", copies) as stores:
        base = run(stores)
    with opened(name, copies) as stores:
        variant = run(stores)
    print(f"    base:    {_shown(base)}")
    print(f"    variant: {_shown(variant)}")
    return base, variant


def _shown(value: Any) -> str:
    """Printable on any terminal: lone surrogates and other odd code points escaped."""
    return value if isinstance(value, str) and value.isascii() else ascii(value)


def _ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


# -- the ten demos ------------------------------------------------------------------------


def demo_v01() -> None:
    """ST-001/ST-002: one batch whose ids do not sort in append order."""

    def run(stores: list[KVRedisStore]) -> list[str]:
        (s,) = stores
        s.append("t", [msg("m9"), msg("m10"), msg("b"), msg("a")])
        return _ids(s.messages("t"))

    base, variant = compare("v01_snowflake_scores", run)
    assert base == ["m9", "m10", "b", "a"], base
    assert variant != base


def demo_v02() -> None:
    """ST-036: a reader polls while a writer appends large batches.

    The reader is another store object on the same prefix, as another process
    would be; every read must show whole batches only."""
    batch_size, batches = 2000, 12

    def run(stores: list[KVRedisStore]) -> str:
        writer, reader = stores
        done = threading.Event()
        seen: list[int] = []

        def write() -> None:
            try:
                for b in range(batches):
                    writer.append(
                        "t", [msg(f"b{b}-m{i}", "x" * 200) for i in range(batch_size)]
                    )
            finally:
                done.set()

        thread = threading.Thread(target=write)
        thread.start()
        while not done.is_set():
            try:
                seen.append(len(reader.messages("t", include_uncommitted=True)))
            except StoreError as exc:  # a row listed but not yet stored
                seen.append(-1)
                print(f"    (read failed: {exc})")
        thread.join()
        partial = [n for n in seen if n % batch_size]
        return f"{len(seen)} reads, {len(partial)} showed part of a batch {partial[:5]}"

    base, variant = compare("v02_pipeline_no_multi", run, copies=2)
    assert " 0 showed" in base, base
    assert " 0 showed" not in variant, variant


def demo_v03() -> None:
    """ST-027/ST-035: scope 'job:7' key 'step' against scope 'job' key '7:step'."""

    def run(stores: list[KVRedisStore]) -> Any:
        (s,) = stores
        s.write_state("job:7", "step", {"at": 1}, None)
        return s.read_state("job", "7:step")

    base, variant = compare("v03_raw_key_names", run)
    assert base is None, base
    assert variant is not None


def demo_v04() -> None:
    """ST-015: a lone surrogate is kept exactly (or refused), never replaced."""

    def run(stores: list[KVRedisStore]) -> Any:
        (s,) = stores
        s.append("t", [msg("m1", "half a pair: \ud83d!")])
        return s.messages("t")[0].text

    base, variant = compare("v04_encoding_replace", run)
    assert base == "half a pair: \ud83d!", base
    assert variant != base


def demo_v05() -> None:
    """ST-028: listing a scope of 300 facts gives 300 facts, one per subject."""

    def run(stores: list[KVRedisStore]) -> int:
        (s,) = stores
        for i in range(300):
            s.put_fact(
                "kb",
                Fact(f"subject-{i:03d}", f"statement {i}", "agent", "tool:search", "seen", "2025"),
            )
        return len(s.facts("kb"))

    base, variant = compare("v05_hscan_one_page", run)
    assert base == 300, base
    assert variant != base


def demo_v06() -> None:
    """ST-006/ST-019: 600 messages, one uncommitted: a plain read gives 599, no repeats."""

    def run(stores: list[KVRedisStore]) -> str:
        (s,) = stores
        s.append("t", [msg(f"m{i}") for i in range(600)])
        s.set_committed("t", ["m0"], False)
        got = _ids(s.messages("t"))
        return f"{len(got)} messages, {len(got) - len(set(got))} repeated"

    base, variant = compare("v06_window_page_overlap", run)
    assert base == "599 messages, 0 repeated", base
    assert variant != base


def demo_v07() -> None:
    """ST-033: two writers append 4-message batches to one thread at once.

    The writers are two store objects on one prefix, in two threads; every batch
    must stay whole and each writer's batches in order."""
    batches = 60

    def run(stores: list[KVRedisStore]) -> str:
        start = threading.Barrier(2)

        def write(w: int) -> None:
            start.wait()
            for b in range(batches):
                stores[w].append("t", [msg(f"w{w}-b{b:02d}-m{i}") for i in range(4)])

        threads = [threading.Thread(target=write, args=(w,)) for w in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = _ids(stores[0].messages("t"))
        broken = sum(
            1
            for i in range(0, len(got), 4)
            if len({m.rsplit("-", 1)[0] for m in got[i : i + 4]}) != 1
            or [m[-1] for m in got[i : i + 4]] != ["0", "1", "2", "3"]
        )
        return f"{len(got)} messages, {broken} of {len(got) // 4} slots not one whole batch"

    base, variant = compare("v07_watch_after_read", run, copies=2)
    assert base == f"{8 * batches} messages, 0 of {2 * batches} slots not one whole batch", base
    assert variant != base


def demo_v08() -> None:
    """SW-004/ST-017: another store object clears a flag; this one must see it."""

    def run(stores: list[KVRedisStore]) -> list[str]:
        a, b = stores
        a.append("t", [msg("m1"), msg("m2"), msg("m3")])
        a.messages("t")
        b.set_committed("t", ["m2"], False)
        return _ids(a.messages("t"))

    base, variant = compare("v08_cache_by_count", run, copies=2)
    assert base == ["m1", "m3"], base
    assert variant != base


def demo_v09() -> None:
    """ST-006: reading a thread of 8,200 messages without a limit gives all of them."""

    def run(stores: list[KVRedisStore]) -> str:
        (s,) = stores
        for b in range(9):
            s.append("t", [msg(f"b{b}-m{i}") for i in range(b * 1000, min(8200, b * 1000 + 1000))])
        try:
            return f"{len(s.messages('t'))} messages"
        except StoreError as exc:
            return f"StoreError: {str(exc)[:90]}"

    base, variant = compare("v09_lua_unpack_limit", run)
    assert base == "8200 messages", base
    assert variant != base


def demo_v10() -> None:
    """ST-025: a state value is read back exactly."""
    value = {"big": 2**60, "sum": 0.1 + 0.2, "whole": 2.0, "empty": []}

    def run(stores: list[KVRedisStore]) -> Any:
        (s,) = stores
        s.write_state("job", "plan", value, None)
        entry = s.read_state("job", "plan")
        return None if entry is None else entry.value

    base, variant = compare("v10_cjson_state", run)
    assert same_value(value, base), base
    assert not same_value(value, variant)


DEMOS: list[tuple[str, Callable[[], None]]] = [
    ("v01_snowflake_scores", demo_v01),
    ("v02_pipeline_no_multi", demo_v02),
    ("v03_raw_key_names", demo_v03),
    ("v04_encoding_replace", demo_v04),
    ("v05_hscan_one_page", demo_v05),
    ("v06_window_page_overlap", demo_v06),
    ("v07_watch_after_read", demo_v07),
    ("v08_cache_by_count", demo_v08),
    ("v09_lua_unpack_limit", demo_v09),
    ("v10_cjson_state", demo_v10),
]


def main() -> int:
    results = []
    for name, demo in DEMOS:
        print(f"{name}: {(demo.__doc__ or '').strip().splitlines()[0]}")
        try:
            demo()
        except Exception:  # report and go on with the next demo
            traceback.print_exc()
            results.append((name, "FAILED"))
        else:
            results.append((name, "OK"))
    print()
    for name, verdict in results:
        print(f"{verdict:6} {name}")
    return 0 if all(v == "OK" for _, v in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
