"""The OpenAI Agents SDK adapter: how messages become session items and back."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="needs the openai-agents extra")

from memconform.adapters.libraries.openai_agents import (
    EXTRA_KEY,
    AgentsSessionStore,
    item_from_message,
    message_from_item,
    open_sqlalchemy_session,
    open_sqlite_session,
)
from memconform.adapters.registry import StoreURLError, open_store
from memconform.contract import StoreError
from memconform.values import Message
from tests.libraries.messages import FULL
from tests.libraries.messages import ids as _ids
from tests.libraries.messages import numbered as _msgs

SCHEMES = ("openai-agents+sqlite", "openai-agents+sqlalchemy")


def _append(store: AgentsSessionStore, thread: str, batch: list[Message]) -> None:
    asyncio.run(store.append(thread, batch))


def _read(store: AgentsSessionStore, thread: str, limit: int | None = None) -> list[Message]:
    return asyncio.run(store.messages(thread, limit))


@pytest.fixture(params=SCHEMES)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return f"{request.param}:///{tmp_path}/nested/store.db"


@pytest.fixture
def store(url: str) -> Iterator[AgentsSessionStore]:
    opened = open_store(url)
    assert isinstance(opened, AgentsSessionStore)
    yield opened
    opened.close()


# -- translation ----------------------------------------------------------------------


def test_a_message_becomes_a_message_item_with_its_id_role_and_text() -> None:
    item = item_from_message(FULL)
    assert item["type"] == "message"
    assert item["id"] == FULL.id
    assert item["role"] == FULL.role
    assert item["content"] == FULL.text
    assert item[EXTRA_KEY] == {
        "parts": [dict(p) for p in FULL.parts],
        "run_id": "run-42",
        "round": 7,
        "turn_id": "T3",
        "committed": True,
        "metadata": dict(FULL.metadata),
    }
    assert message_from_item(json.loads(json.dumps(item))) == FULL


def test_an_sdk_message_item_without_the_extra_key_reads_as_a_plain_message() -> None:
    item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "Hello, ", "annotations": []},
            {"type": "output_text", "text": "world", "annotations": []},
        ],
    }
    assert message_from_item(item) == Message(id="msg_1", role="assistant", text="Hello, world")
    assert message_from_item({"role": "user", "content": "hi"}) == Message(
        id="", role="user", text="hi"
    )


@pytest.mark.parametrize(
    "item",
    [
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "message", "role": "developer", "content": "be brief"},
        {"type": "message", "role": "user", "content": 3},
        "not an item",
    ],
)
def test_an_item_with_no_message_form_is_reported(item: Any) -> None:
    with pytest.raises(StoreError):
        message_from_item(item)


# -- the store on both session classes -------------------------------------------------------


def test_every_field_round_trips_through_the_session(store: AgentsSessionStore) -> None:
    _append(store, "t", [FULL])
    assert _read(store, "t") == [FULL]


def test_the_file_holds_one_json_message_item_per_message(url: str, tmp_path: Path) -> None:
    store = open_store(url)
    assert isinstance(store, AgentsSessionStore)
    _append(store, "t", [FULL, *_msgs("m", 2)])
    store.close()
    with sqlite3.connect(tmp_path / "nested" / "store.db") as conn:
        rows = conn.execute(
            "SELECT session_id, message_data FROM agent_messages ORDER BY id"
        ).fetchall()
    conn.close()
    assert [r[0] for r in rows] == ["t", "t", "t"]
    assert [json.loads(r[1]) for r in rows] == [
        item_from_message(m) for m in [FULL, *_msgs("m", 2)]
    ]


def test_threads_are_sessions_of_their_own(store: AgentsSessionStore) -> None:
    _append(store, "a", _msgs("x", 2))
    _append(store, "b", [Message(id="x0", role="user", text="same id, other thread")])
    assert _ids(_read(store, "a")) == ["x0", "x1"]
    assert [m.text for m in _read(store, "b")] == ["same id, other thread"]
    assert _read(store, "never written") == []
    assert store.session("a") is store.session("a")
    assert store.session("a").session_id == "a"


def test_the_window_is_get_items_limit(store: AgentsSessionStore) -> None:
    _append(store, "t", _msgs("m", 3))
    _append(store, "t", _msgs("n", 2))
    assert _ids(_read(store, "t", 3)) == ["m2", "n0", "n1"]
    assert _ids(_read(store, "t", 10)) == ["m0", "m1", "m2", "n0", "n1"]
    assert _read(store, "t", 0) == []
    _append(store, "t", [])
    assert len(_read(store, "t")) == 5


def test_the_adapter_adds_no_check_the_session_lacks(store: AgentsSessionStore) -> None:
    # Findings, not adapter bugs: the session accepts repeated ids and reads a
    # negative limit as no limit; the adapter passes both through unchanged.
    _append(store, "t", [*_msgs("m", 2), *_msgs("m", 1)])
    assert _ids(_read(store, "t")) == ["m0", "m1", "m0"]
    assert _ids(_read(store, "t", -1)) == ["m0", "m1", "m0"]


class _LimitRefused(Exception):
    """What SQLAlchemy raises when PostgreSQL refuses a negative LIMIT: a
    DBAPIError whose driver error carries SQLSTATE 2201W."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__("LIMIT must not be negative")
        self.orig = type("DriverError", (Exception,), {"sqlstate": sqlstate})()


async def _no_damage(session: Any) -> None:
    raise AssertionError("not called")


class _RefusingSession:
    def __init__(self, sqlstate: str) -> None:
        self.sqlstate = sqlstate

    async def get_items(self, limit: int | None = None) -> list[Any]:
        raise _LimitRefused(self.sqlstate)


def test_the_databases_refusal_of_a_negative_limit_is_the_contracts_value_error() -> None:
    store = AgentsSessionStore(lambda thread_id: _RefusingSession("2201W"), damage=_no_damage)
    with pytest.raises(ValueError, match="refused limit -1") as caught:
        _read(store, "t", -1)
    assert isinstance(caught.value.__cause__, _LimitRefused)
    # only that refusal, only for a negative limit: anything else passes as raised
    with pytest.raises(_LimitRefused):
        _read(store, "t", 3)
    other = AgentsSessionStore(lambda thread_id: _RefusingSession("42P01"), damage=_no_damage)
    with pytest.raises(_LimitRefused):
        _read(other, "t", -1)


def test_a_new_store_on_the_same_url_reads_what_was_written(url: str) -> None:
    first = open_store(url)
    assert isinstance(first, AgentsSessionStore)
    _append(first, "t", [FULL])
    first.close()
    second = open_store(url)
    assert isinstance(second, AgentsSessionStore)
    try:
        assert _read(second, "t") == [FULL]
    finally:
        second.close()


def test_the_store_declares_what_the_file_keeps(store: AgentsSessionStore) -> None:
    assert store.capabilities == {"durable", "atomic-batch", "concurrent-writers"}
    assert store.version.startswith("openai-agents==")


# -- factories --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("factory", "bad"),
    [
        (open_sqlite_session, "sqlite:///x.db"),
        (open_sqlite_session, "openai-agents+sqlalchemy:///x.db"),
        (open_sqlite_session, "openai-agents+sqlite://"),
        (open_sqlite_session, "openai-agents+sqlite:///"),
        (open_sqlite_session, "openai-agents+sqlite:///:memory:"),
        (open_sqlite_session, "openai-agents+sqlite:///x.db?timeout=3"),
        (open_sqlalchemy_session, "openai-agents+sqlite:///x.db"),
        (open_sqlalchemy_session, "openai-agents+sqlalchemy:relative.db"),
        (open_sqlalchemy_session, "openai-agents+sqlalchemy:///"),
    ],
)
def test_a_bad_url_is_refused(factory: Any, bad: str) -> None:
    with pytest.raises(StoreURLError):
        factory(bad)


@pytest.mark.parametrize(
    ("scheme", "missing"),
    [
        ("openai-agents+sqlite", "agents"),
        ("openai-agents+sqlalchemy", "agents"),
        ("openai-agents+sqlalchemy", "sqlalchemy"),
        ("openai-agents+sqlalchemy", "aiosqlite"),
    ],
)
def test_a_missing_library_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, scheme: str, missing: str
) -> None:
    for name in list(sys.modules):
        if name == missing or name.startswith(f"{missing}."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(StoreURLError, match=r"memconform\[openai-agents\]"):
        open_store(f"{scheme}:///{tmp_path}/store.db")


def test_the_module_imports_without_the_library() -> None:
    code = (
        "import sys; sys.modules['agents'] = None; "
        "import memconform.adapters.libraries.openai_agents as m; "
        "print(m.SQLITE_SCHEME)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "openai-agents+sqlite"


def test_damage_writes_text_that_is_not_json_into_the_middle_row(
    store: AgentsSessionStore, url: str
) -> None:
    """The hook of ST-037 reaches the library's own table; the session then skips
    the row without an error (the finding of the compliance page)."""
    _append(store, "t", _msgs("m", 5))
    _append(store, "u", _msgs("o", 2))
    asyncio.run(store.damage("t"))
    path = url.split(":///", 1)[1]
    with sqlite3.connect(path) as conn:
        rows = [
            row[0]
            for row in conn.execute(
                "SELECT message_data FROM agent_messages WHERE session_id = 't' ORDER BY id"
            )
        ]
    conn.close()
    assert rows[2] == "{not json"
    assert [json.loads(r)["id"] for i, r in enumerate(rows) if i != 2] == ["m0", "m1", "m3", "m4"]
    assert _ids(_read(store, "t")) == ["m0", "m1", "m3", "m4"]  # silently one short
    assert _ids(_read(store, "u")) == ["o0", "o1"]
