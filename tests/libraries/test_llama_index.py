"""The LlamaIndex ``SQLAlchemyChatStore`` adapter: how a Message becomes a
``ChatMessage`` and back, threads, windows, the URL, the fault point, and the
library behaviours the report lists (pinned here so a new version shows up)."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core.storage.chat_store.sql", reason="needs the llama-index extra")

from memconform.adapters.libraries.llama_index import (
    TABLE,
    LlamaIndexChatStore,
    open_sqlalchemy_chat_store,
)
from memconform.adapters.registry import StoreURLError, open_store
from memconform.contract import StoreError
from memconform.harness.faults import InjectedFault, arm_row_fault, disarm_row_fault
from memconform.steps.store import full_message
from memconform.values import Message
from tests.libraries.messages import ids as _ids

FULL = replace(
    full_message("  Checking the weather. \u202eRTL\u202c e\u0301 😀 \x00 "),
    metadata={"source": "kit", "score": 0.1, "flags": [False, None], "images": "not images"},
)


def _run(value: Any) -> Any:
    """Each call on a fresh event loop, as the kit may do."""
    return asyncio.run(value)


def _batch(prefix: str, n: int) -> list[Message]:
    return [Message(id=f"{prefix}{i}", role="user", text=f"{prefix} {i}") for i in range(1, n + 1)]


@pytest.fixture
def store(tmp_path: Path) -> LlamaIndexChatStore:
    return open_sqlalchemy_chat_store(f"llama-index+sqlite:///{tmp_path}/chat.db")


def test_every_field_round_trips(store: LlamaIndexChatStore) -> None:
    bare = Message(id="bare", role="tool", text="")
    _run(store.append("A", [FULL, bare]))
    assert _run(store.messages("A")) == [FULL, bare]


def test_message_is_a_plain_chat_message(store: LlamaIndexChatStore) -> None:
    _run(store.append("A", [FULL]))
    (chat,) = _run(store.chat_store.get_messages("A"))
    assert chat.role.value == "assistant"
    assert chat.content == FULL.text
    assert chat.additional_kwargs["id"] == "full-1"
    assert chat.additional_kwargs["turn_id"] == "T3"
    assert chat.additional_kwargs["metadata"]["source"] == "kit"


def test_a_new_store_on_the_same_file_reads_back(tmp_path: Path) -> None:
    url = f"llama-index+sqlite:///{tmp_path}/deep/er/chat.db"
    _run(open_sqlalchemy_chat_store(url).append("A", [FULL]))
    assert (tmp_path / "deep/er/chat.db").is_file()
    assert _run(open_store(url).messages("A")) == [FULL]  # type: ignore[attr-defined]


def test_threads_are_apart(store: LlamaIndexChatStore) -> None:
    _run(store.append("A", _batch("m", 2)))
    _run(store.append("B", [Message(id="m1", role="user", text="same id, in B")]))
    assert _ids(_run(store.messages("A"))) == ["m1", "m2"]
    assert [m.text for m in _run(store.messages("B"))] == ["same id, in B"]
    assert _run(store.messages("never written")) == []


def test_a_window_is_the_librarys_own_limit_the_oldest_n(store: LlamaIndexChatStore) -> None:
    """The adapter hands ``limit`` to ``get_messages`` as it is: the library's SQL
    ``LIMIT`` keeps the oldest N (ST-003) and a negative one means everything (ST-005)."""
    _run(store.append("A", _batch("a", 3)))
    _run(store.append("A", _batch("b", 2)))
    assert _ids(_run(store.messages("A"))) == ["a1", "a2", "a3", "b1", "b2"]
    assert _ids(_run(store.messages("A", 3))) == ["a1", "a2", "a3"]
    assert _ids(_run(store.messages("A", 9))) == ["a1", "a2", "a3", "b1", "b2"]
    assert _run(store.messages("A", 0)) == []
    assert _ids(_run(store.messages("A", -1))) == ["a1", "a2", "a3", "b1", "b2"]
    assert not hasattr(store, "provides")


def test_reads_are_copies(store: LlamaIndexChatStore) -> None:
    _run(store.append("A", [FULL]))
    got = _run(store.messages("A"))
    got[0].parts[0]["name"] = "changed"
    got.clear()
    assert _run(store.messages("A")) == [FULL]


def test_capabilities_and_version(store: LlamaIndexChatStore) -> None:
    assert store.capabilities == {"durable", "atomic-batch", "concurrent-writers"}
    assert "llama-index-core==" in store.version
    assert "aiosqlite==" in store.version
    assert store.chat_store.table_name == TABLE


def test_a_fault_at_the_row_point_stores_nothing(store: LlamaIndexChatStore) -> None:
    _run(store.append("A", _batch("m", 2)))
    arm_row_fault(2)
    try:
        with pytest.raises(InjectedFault):
            _run(store.append("A", _batch("f", 4)))
    finally:
        assert disarm_row_fault()
    assert _ids(_run(store.messages("A"))) == ["m1", "m2"]


# -- library behaviours the report lists as findings ----------------------------------


def test_library_keeps_repeated_ids(store: LlamaIndexChatStore) -> None:
    _run(store.append("A", _batch("m", 2)))
    _run(store.append("A", [Message(id="m2", role="user", text="again"), *_batch("d", 1)]))
    assert _ids(_run(store.messages("A"))) == ["m1", "m2", "m2", "d1"]


def test_library_refuses_an_empty_batch(store: LlamaIndexChatStore) -> None:
    with pytest.raises(StoreError, match="NOT NULL"):
        _run(store.append("A", []))
    assert _run(store.messages("A")) == []


def test_library_keeps_a_lone_surrogate(store: LlamaIndexChatStore) -> None:
    odd = Message(id="s", role="user", text="x\ud800y")
    _run(store.append("A", [odd]))
    assert _run(store.messages("A")) == [odd]


# -- URLs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("sqlite:////tmp/x.db", "not a llama-index\\+sqlite URL"),
        ("llama-index+sqlite:", "names a file"),
        ("llama-index+sqlite://", "names a file"),
        ("llama-index+sqlite:///", "names a file"),
        ("llama-index+sqlite:///:memory:", "names a file"),
    ],
)
def test_bad_urls_are_refused(url: str, problem: str) -> None:
    with pytest.raises(StoreURLError, match=problem):
        open_sqlalchemy_chat_store(url)


def test_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_sqlalchemy_chat_store("llama-index+sqlite:///rel/chat.db")
    assert store.path == "rel/chat.db"
    _run(store.append("A", _batch("m", 1)))
    assert (tmp_path / "rel/chat.db").is_file()


def test_missing_library_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_index.core.storage.chat_store.sql", None)
    with pytest.raises(StoreURLError, match=r"memconform\[llama-index\]"):
        open_sqlalchemy_chat_store(f"llama-index+sqlite:///{tmp_path}/sub/chat.db")
    assert not (tmp_path / "sub").exists()


def test_damage_writes_text_that_is_not_json_and_the_read_fails(
    store: LlamaIndexChatStore, tmp_path: Path
) -> None:
    """The hook of ST-037 reaches the library's own table; ``get_messages`` then
    raises the decoding error, passed on as ``StoreError``."""
    _run(store.append("t", _batch("m", 5)))
    _run(store.append("u", _batch("o", 1)))
    _run(store.damage("t"))
    with sqlite3.connect(tmp_path / "chat.db") as conn:
        rows = conn.execute(
            "SELECT data FROM llama_index_memory WHERE key = 't' ORDER BY timestamp, id"
        ).fetchall()
    conn.close()
    assert [r[0] == "{not json" for r in rows] == [False, False, True, False, False]
    with pytest.raises(StoreError, match="JSONDecodeError"):
        _run(store.messages("t"))
    assert _ids(_run(store.messages("u"))) == ["o1"]
