"""A divergence is exported at its smallest: the operations it needs, and long
texts cut to the shortest prefix that still diverges."""

from __future__ import annotations

from dataclasses import replace

from memconform.adapters.memory import MemoryStore
from memconform.harness.proxy import RecordingStore
from memconform.properties.shrink import minimise
from memconform.properties.store_model import replayed
from memconform.values import Message


class CutsAt1000(MemoryStore):
    """Keeps the first 1,000 characters of each text."""

    def append(self, thread_id: str, batch: list[Message]) -> None:  # type: ignore[override]
        super().append(thread_id, [replace(m, text=m.text[:1000]) for m in batch])


def test_a_long_text_is_cut_to_one_past_where_the_store_cuts() -> None:
    store = RecordingStore(CutsAt1000())
    steps = [
        {"op": "append", "thread": "A", "batch": [Message("a", "user", "short").to_json()]},
        {"op": "append", "thread": "A",
         "batch": [Message("b", "user", "\u00e9" * 65_536).to_json()]},
    ]
    found = replayed(store, steps)
    assert found is not None
    smallest = minimise(store, found)
    texts = [m["text"] for s in smallest.steps for m in s.get("batch", [])]
    assert [len(t) for t in texts] == [1001]
    store.close()


def test_minimising_stops_at_its_budget(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every replay goes through the recording proxy, whose timeline keeps each
    call: a long counterexample is minimised only as far as the budget goes."""
    from memconform.properties import shrink

    store = RecordingStore(CutsAt1000())
    filler = [{"op": "messages", "thread": "A"} for _ in range(300)]
    steps = [*filler, {"op": "append", "thread": "A",
                       "batch": [Message("b", "user", "x" * 5000).to_json()]}]
    found = replayed(store, steps)
    assert found is not None
    replays: list[int] = []
    real = shrink.replayed

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        replays.append(len(args[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(shrink, "replayed", counting)
    monkeypatch.setattr(shrink, "BUDGET", 2_000)
    shrink.minimise(store, found)
    assert sum(replays) <= 2_000
    store.close()
