"""The ``langgraph+sqlite`` adapter: how it translates, not whether LangGraph conforms.

The library behaviours the kit reports as findings are pinned here too, so a
change in LangGraph (or an adapter that starts hiding one) shows up as a test
failure.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite", reason="needs the langgraph extra")

from memconform.adapters.libraries.langgraph import (
    MESSAGE_MODULE,
    UNDECODED,
    LangGraphSQLiteStore,
    langgraph_path,
    open_langgraph_sqlite,
)
from memconform.adapters.registry import StoreURLError, open_store
from memconform.contract import StoreError
from memconform.steps.store import full_message
from memconform.values import Fact, Message


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "store.db"


@pytest.fixture
def store(db: Path) -> Iterator[LangGraphSQLiteStore]:
    opened = open_langgraph_sqlite(f"langgraph+sqlite:///{db}")
    yield opened
    opened.close()


def _full(mid: str = "full-1") -> Message:
    return replace(full_message("Checking the weather.\x00 \u202eRTL\u202c 😀"), id=mid)


def _user(mid: str, text: str) -> Message:
    return Message(id=mid, role="user", text=text)


def _fact(subject: str, statement: str = "vim") -> Fact:
    return Fact(
        subject=subject,
        statement=statement,
        writer="tool:web",
        source="https://example.org/page",
        evidence="quoted from the page",
        written_at="2026-01-01T00:00:00Z",
        kind="preference",
        trust="untrusted",
        origin="copied",
        recheck_at="2027-01-01T00:00:00Z",
        metadata={"confidence": 0.5, "tags": ["a", "b"]},
    )


# -- opening ---------------------------------------------------------------------------


def test_the_registry_opens_the_scheme_and_creates_parent_folders(db: Path) -> None:
    opened = open_store(f"langgraph+sqlite:///{db}")
    try:
        assert isinstance(opened, LangGraphSQLiteStore)
        assert db.parent.is_dir()
        assert opened.capabilities == {"durable", "atomic-batch", "concurrent-writers", "knowledge"}
        assert "langgraph==" in opened.version
        assert "langgraph-checkpoint-sqlite==" in opened.version
    finally:
        opened.close()


def test_path_parsing_mirrors_the_sqlite_urls(tmp_path: Path) -> None:
    assert langgraph_path(f"langgraph+sqlite:///{tmp_path}/a.db") == f"{tmp_path}/a.db"
    assert langgraph_path(f"langgraph+sqlite:////{tmp_path}/a.db") == f"/{tmp_path}/a.db"
    assert langgraph_path("langgraph+sqlite:///relative.db") == "relative.db"


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///x.db",
        "langgraph+sqlite:",
        "langgraph+sqlite://",
        "langgraph+sqlite:///",
        "langgraph+sqlite:relative.db",
        "langgraph+sqlite:///:memory:",
    ],
)
def test_a_bad_url_is_refused(url: str) -> None:
    with pytest.raises(StoreURLError):
        open_langgraph_sqlite(url)


def test_a_missing_library_names_the_extra(monkeypatch: pytest.MonkeyPatch, db: Path) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.sqlite", None)
    with pytest.raises(StoreURLError, match=r"memconform\[langgraph\]"):
        open_langgraph_sqlite(f"langgraph+sqlite:///{db}")
    assert not db.parent.exists()


# -- transcript ------------------------------------------------------------------------


def test_every_field_and_every_role_round_trip(store: LangGraphSQLiteStore) -> None:
    batch = [
        _full(),
        Message(id="u", role="user", text="  hi  ", metadata={"timestamp": "2020"}),
        Message(id="t", role="tool", text="settings/\n", parts=({"exit": 0},)),
        Message(id="s", role="system", text="", run_id="r", round=0, turn_id="T0"),
        Message(id="h", role="user", text="hidden", committed=False),
    ]
    store.append("A", batch)
    assert store.messages("A") == batch


def test_messages_live_in_the_graph_checkpoints(store: LangGraphSQLiteStore, db: Path) -> None:
    store.append("A", [Message(id="m1", role="user", text="hello")])
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 'A'").fetchone()
    conn.close()
    assert rows[0] > 0
    state = store._graph.get_state({"configurable": {"thread_id": "A"}})
    (native,) = state.values["messages"]
    assert (type(native).__name__, native.id, native.content) == ("HumanMessage", "m1", "hello")


def test_windows_take_the_newest_messages_oldest_first(store: LangGraphSQLiteStore) -> None:
    for start in (1, 4, 7):
        batch = [Message(id=f"m{i}", role="user", text=str(i)) for i in range(start, start + 3)]
        store.append("A", batch)
    ids = [m.id for m in store.messages("A")]
    assert ids == [f"m{i}" for i in range(1, 10)]
    assert [m.id for m in store.messages("A", 4)] == ["m6", "m7", "m8", "m9"]
    assert [m.id for m in store.messages("A", 25)] == ids
    assert store.messages("A", 0) == []
    with pytest.raises(ValueError, match="limit"):
        store.messages("A", -1)
    assert store.provides == {"window"}  # the slice is the adapter's, not LangGraph's


def test_threads_are_apart_and_an_unknown_thread_is_empty(store: LangGraphSQLiteStore) -> None:
    store.append("A", [Message(id="m1", role="user", text="in A")])
    store.append("B", [Message(id="m1", role="user", text="in B")])
    assert [m.text for m in store.messages("A")] == ["in A"]
    assert [m.text for m in store.messages("B")] == ["in B"]
    assert store.messages("never") == []


def test_an_empty_batch_changes_nothing(store: LangGraphSQLiteStore) -> None:
    store.append("A", [])
    assert store.messages("A") == []
    store.append("A", [Message(id="m1", role="user", text="x")])
    store.append("A", [])
    assert [m.id for m in store.messages("A")] == ["m1"]


def test_a_read_is_a_fresh_copy(store: LangGraphSQLiteStore) -> None:
    store.append("A", [_full()])
    first = store.messages("A")
    first[0].metadata["changed"] = True  # type: ignore[index]
    first[0].parts[0]["changed"] = True
    first.clear()
    assert store.messages("A") == [_full()]


def test_a_new_process_sees_what_was_written(db: Path) -> None:
    url = f"langgraph+sqlite:///{db}"
    first = open_langgraph_sqlite(url)
    first.append("A", [_full()])
    first.put_fact("U", _fact("editor"))
    first.close()
    second = open_langgraph_sqlite(url)
    try:
        assert second.messages("A") == [_full()]
        assert second.get_fact("U", "editor") == _fact("editor")
    finally:
        second.close()


# -- library behaviour the adapter leaves visible ----------------------------------------


def test_add_messages_replaces_a_repeated_id_instead_of_refusing(
    store: LangGraphSQLiteStore,
) -> None:
    store.append("A", [Message(id="m1", role="user", text="first")])
    store.append("A", [_user("m1", "again"), _user("m2", "x")])
    store.append("A", [_user("d", "one"), _user("d", "two")])
    assert [(m.id, m.text) for m in store.messages("A")] == [
        ("m1", "again"),
        ("m2", "x"),
        ("d", "two"),
    ]


def test_the_checkpoint_serializer_replaces_a_lone_surrogate(
    store: LangGraphSQLiteStore,
) -> None:
    store.append("A", [Message(id="s", role="user", text="broken \ud800 pair")])
    assert store.messages("A")[0].text == "broken ? pair"


# -- knowledge -------------------------------------------------------------------------


def test_an_integer_msgpack_cannot_write_is_refused_and_nothing_kept(
    store: LangGraphSQLiteStore,
) -> None:
    from memconform.contract import UnsupportedValueError

    store.append("t", [Message(id="a", role="user", text="kept")])
    huge = Message(id="b", role="user", text="", metadata={"n": -(2**63) - 1})
    with pytest.raises(UnsupportedValueError, match="msgpack"):
        store.append("t", [huge])
    assert [m.id for m in store.messages("t")] == ["a"]


def test_facts_keep_provenance_supersede_and_forget(store: LangGraphSQLiteStore) -> None:
    assert store.get_fact("U", "editor") is None
    assert store.facts("U") == []
    store.put_fact("U", _fact("editor", "vim"))
    store.put_fact("U", _fact("editor", "emacs"))
    assert store.get_fact("U", "editor") == _fact("editor", "emacs")
    assert store.facts("U") == [_fact("editor", "emacs")]
    assert store.forget("U", "editor") is True
    assert store.forget("U", "editor") is False
    assert store.get_fact("U", "editor") is None
    assert store.facts("U") == []


def test_knowledge_scopes_are_apart(store: LangGraphSQLiteStore) -> None:
    store.put_fact("U", _fact("editor", "vim"))
    store.put_fact("V", _fact("editor", "emacs"))
    assert store.forget("V", "editor") is True
    assert store.get_fact("U", "editor") == _fact("editor", "vim")
    assert store.facts("V") == []


def test_listing_pages_through_every_fact(store: LangGraphSQLiteStore) -> None:
    subjects = {f"s{i:03d}" for i in range(230)}
    for subject in sorted(subjects):
        store.put_fact("U", _fact(subject))
    listed = [f.subject for f in store.facts("U")]
    assert len(listed) == len(subjects)
    assert set(listed) == subjects


def test_listing_keeps_the_search_order_newest_update_first(
    store: LangGraphSQLiteStore,
) -> None:
    store.put_fact("U", _fact("editor"))
    time.sleep(1.1)  # SqliteStore stamps updated_at with whole seconds
    store.put_fact("U", _fact("timezone"))
    assert [f.subject for f in store.facts("U")] == ["timezone", "editor"]


def test_damage_makes_the_middle_message_of_the_latest_checkpoint_unreadable(
    store: LangGraphSQLiteStore, db: Path
) -> None:
    """The hook of ST-037 edits the latest checkpoint row of the thread; LangGraph
    then reads ``None`` in place of the damaged message, without an error."""
    for b in range(3):
        store.append("t", [_user(f"m{b}{i}", f"text {b}{i}") for i in range(3)])
    store.append("u", [_user("o", "other")])
    with sqlite3.connect(db) as conn:
        before = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 't'").fetchone()
    conn.close()
    store.damage("t")
    with sqlite3.connect(db) as conn:
        after = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 't'").fetchone()
        latest = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = 't'"
            " ORDER BY checkpoint_id DESC LIMIT 1"
        ).fetchone()[0]
    conn.close()
    assert before == after
    assert bytes(latest).count(MESSAGE_MODULE) == 8  # one of nine no longer names its class
    read = store.messages("t")
    assert [m.id for m in read] == ["m00", "m01", "m02", "m10", "", "m12", "m20", "m21", "m22"]
    assert read[4] == UNDECODED
    assert [m.id for m in store.messages("u")] == ["o"]
    with pytest.raises(StoreError):
        store.damage("never-written")
