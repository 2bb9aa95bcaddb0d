"""The SQLite store: URL handling, schema, exactness, the window index, and the
multi-process promises (durable, concurrent writers, atomic batch), including
a deliberately broken store that the concurrency check must reject."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memconform.adapters.registry import StoreURLError, open_store
from memconform.adapters.sqlite import SQLiteStore, open_sqlite, sqlite_path
from memconform.contract import DuplicateIdError, StoreError, UnsupportedValueError
from memconform.steps.contract_checks import (
    check_atomic_batch,
    check_concurrent_writers,
    check_durable,
)
from memconform.values import Message


def _batch(n: int, prefix: str = "m", start: int = 0) -> list[Message]:
    return [Message(id=f"{prefix}{i}", role="user", text=f"t{i}") for i in range(start, start + n)]


@pytest.fixture
def db(tmp_path: Path) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "s.db")
    yield store
    store.close()


def test_url_forms() -> None:
    assert sqlite_path("sqlite:///rel/x.db") == "rel/x.db"
    assert sqlite_path("sqlite:////abs/x.db") == "/abs/x.db"
    assert sqlite_path("sqlite:///abs/x.db?timeout=5") == "abs/x.db"
    with pytest.raises(ValueError, match="not a sqlite URL"):
        sqlite_path("postgresql://x")
    with pytest.raises(ValueError, match="names no file"):
        sqlite_path("sqlite:///")


def test_registry_opens_sqlite_and_creates_the_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    store = open_store(f"sqlite:///{tmp_path / 'a' / 'b.db'}?timeout=2&synchronous=normal")
    assert isinstance(store, SQLiteStore)
    assert (tmp_path / "a" / "b.db").exists()
    store.close()
    with pytest.raises(ValueError, match="synchronous"):
        open_sqlite(f"sqlite:///{tmp_path / 'c.db'}?synchronous=off")


def test_a_folder_that_does_not_exist_is_refused_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    with pytest.raises(StoreURLError, match=f"the folder '{missing}' does not exist"):
        open_store(f"sqlite:///{missing / 'x.db'}")
    assert not (tmp_path / "no").exists()


def test_schema_wal_and_every_capability(db: SQLiteStore) -> None:
    conn = sqlite3.connect(db.path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"messages", "error_records", "turn_records", "state", "facts"} <= tables
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert db.capabilities == {
        "commit-flags",
        "errors",
        "turn-records",
        "state",
        "knowledge",
        "durable",
        "atomic-batch",
        "concurrent-writers",
    }


def test_window_query_uses_the_thread_position_index(db: SQLiteStore) -> None:
    conn = sqlite3.connect(db.path)
    plan = " ".join(
        str(r[-1])
        for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM messages WHERE thread_id = ? AND committed = 1"
            " ORDER BY position DESC LIMIT 6",
            ("t",),
        )
    )
    conn.close()
    assert "messages_window" in plan
    assert "TEMP B-TREE" not in plan


def test_nul_round_trips_and_lone_surrogate_is_refused(db: SQLiteStore) -> None:
    db.append("t", [Message(id="n", role="user", text="a\x00b\x00")])
    assert db.messages("t")[0].text == "a\x00b\x00"
    with pytest.raises(UnsupportedValueError, match="lone surrogate"):
        db.append("t", [*_batch(2, "x"), Message(id="s", role="user", text="\udc00")])
    assert [m.id for m in db.messages("t")] == ["n"]


def test_json_columns_keep_lone_surrogates_and_numbers(db: SQLiteStore) -> None:
    message = Message(
        id="j",
        role="tool",
        text="",
        parts=({"v": "\ud800", "f": 0.1, "big": 2**63},),
        metadata={"neg": -0.0, "nested": [{"a": None}]},
    )
    db.append("t", [message])
    assert db.messages("t") == [message]


def test_duplicates_within_and_across_batches(db: SQLiteStore) -> None:
    db.append("t", _batch(2))
    with pytest.raises(DuplicateIdError):
        db.append("t", [*_batch(1, "n"), *_batch(1)])
    with pytest.raises(DuplicateIdError):
        db.append("t", [*_batch(1, "q"), *_batch(1, "q")])
    db.append("u", _batch(2))
    assert [m.id for m in db.messages("t")] == ["m0", "m1"]


def test_reopen_keeps_everything(tmp_path: Path) -> None:
    first = SQLiteStore(tmp_path / "r.db")
    first.append("t", _batch(3))
    first.write_state("job", "k", {"v": 1}, None)
    first.close()
    second = SQLiteStore(tmp_path / "r.db")
    assert [m.id for m in second.messages("t")] == ["m0", "m1", "m2"]
    entry = second.read_state("job", "k")
    assert entry is not None
    assert entry.version == 1
    second.close()


def test_two_instances_on_one_file_interleave_batches_whole(tmp_path: Path) -> None:
    a, b = SQLiteStore(tmp_path / "two.db"), SQLiteStore(tmp_path / "two.db")
    a.append("t", _batch(2, "a"))
    b.append("t", _batch(2, "b"))
    a.append("t", _batch(1, "a", 2))
    assert [m.id for m in b.messages("t")] == ["a0", "a1", "b0", "b1", "a2"]
    a.close()
    b.close()


@pytest.mark.slow
def test_multi_process_checks_pass_on_sqlite(tmp_path: Path, db: SQLiteStore) -> None:
    url = f"sqlite:///{db.path}"
    durable = check_durable(url, "d", capabilities=db.capabilities)
    assert durable.passed, durable.evidence
    concurrent = check_concurrent_writers(url, "c", writers=3)
    assert concurrent.passed, concurrent.evidence
    assert concurrent.deterministic
    atomic = check_atomic_batch(url, "k", capabilities=db.capabilities)
    assert atomic.passed, atomic.evidence
    assert atomic.deterministic
    assert "wholly absent" in atomic.evidence


@pytest.mark.slow
def test_concurrency_check_rejects_an_unlocked_file_store(tmp_path: Path) -> None:
    url = f"tests.bad_store_adapters:unlocked_file_store?path={tmp_path / 'unlocked.json'}"
    result = check_concurrent_writers(url, "c", writers=2, batches=2)
    assert not result.passed
    assert "lost acknowledged" in result.evidence
    atomic = check_atomic_batch(url, "k", capabilities={"durable"})
    assert atomic.passed  # it writes the file once per batch: killed mid-batch, nothing lands
    assert atomic.deterministic


@pytest.mark.slow
def test_atomic_check_rejects_a_store_writing_row_by_row(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'split.db'}"
    SQLiteStore(tmp_path / "split.db").close()
    result = check_atomic_batch(url, "k", capabilities={"durable"}, mutant="store-split-batch")
    assert not result.passed
    assert "partly stored: 3 of 6" in result.evidence


@pytest.mark.slow
def test_durable_check_rejects_a_process_local_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'local.db'}"
    result = check_durable(
        url, "d", capabilities={"durable"}, mutant="store-process-scoped-threads"
    )
    assert not result.passed
    assert "messages" in result.evidence


def test_check_reports_an_adapter_error_when_the_store_cannot_open(tmp_path: Path) -> None:
    result = check_durable("tests.bad_store_adapters:no_such_factory", "d", capabilities=())
    assert not result.passed
    assert result.adapter_error is not None
    assert result.adapter_error[0] == "open"


@pytest.mark.slow
def test_a_store_refusing_the_writers_fails_the_check_without_an_adapter_error(
    tmp_path: Path,
) -> None:
    url = f"tests.bad_store_adapters:refusing_file_store?path={tmp_path / 'refusing.json'}"
    result = check_durable(url, "d", capabilities={"durable"})
    assert not result.passed
    assert result.adapter_error is None
    assert "refused" in result.evidence


def test_a_damaged_row_makes_a_read_reaching_it_raise_store_error(db: SQLiteStore) -> None:
    db.append("t", _batch(5))
    db.append("u", _batch(1, "o"))
    with pytest.raises(StoreError):
        db.damage("empty")
    db.damage("t")
    parts = [
        row[0]
        for row in sqlite3.connect(db.path).execute(
            "SELECT parts FROM messages WHERE thread_id = 't' ORDER BY position"
        )
    ]
    assert parts == ["[]", "[]", "[not json", "[]", "[]"]
    with pytest.raises(StoreError, match="cannot be decoded"):
        db.messages("t")
    with pytest.raises(StoreError):
        db.messages("t", 3)
    assert [m.id for m in db.messages("t", 2)] == ["m3", "m4"]
    assert [m.id for m in db.messages("u")] == ["o0"]
