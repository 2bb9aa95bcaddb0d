"""The LangChain chat-history adapters: the translation of messages, threads,
windows and URLs (the kit's own run judges the library's behaviour)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_community", reason="needs the langchain extra")

from langchain_community.chat_message_histories import (
    FileChatMessageHistory,
    SQLChatMessageHistory,
)
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from memconform.adapters.libraries.langchain import (
    LangChainFileStore,
    LangChainSQLStore,
    open_file_history,
    open_sql_history,
    thread_file_name,
)
from memconform.adapters.registry import StoreURLError, open_store
from memconform.contract import StoreError
from memconform.harness.faults import InjectedFault, arm_row_fault, disarm_row_fault
from memconform.values import Message


def _url(kind: str, tmp_path: Path) -> str:
    if kind == "sql":
        return f"langchain+sql:///{tmp_path / 'lc' / 'store.db'}"
    return f"langchain+file:///{tmp_path / 'lc' / 'threads'}"


@pytest.fixture(params=["sql", "file"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return _url(request.param, tmp_path)


@pytest.fixture
def store(url: str) -> Iterator[Any]:
    opened = open_store(url)
    yield opened
    opened.close()  # type: ignore[attr-defined]


def _full(mid: str, role: str) -> Message:
    return Message(
        id=mid,
        role=role,  # type: ignore[arg-type]
        text=f"  {role} text: é 😀 \u202eRTL\u202c NUL\x00 <b>x</b>; DROP TABLE t;--\n",
        parts=(
            {"type": "tool-call", "id": "call-1", "name": "ls", "args": {"path": "."}},
            {"type": "tool_result", "call_id": "call-1", "output": [1, -2.5, 1e-7, None, True]},
            {"nested": {"deep": [[], {}, ""]}},
        ),
        run_id="run-7",
        round=3,
        turn_id="T2",
        committed=True,
        metadata={"source": "kit", "n": -0.5, "flags": [False, None], "big": 12345678901234567},
    )


def _plain(n: int, prefix: str = "m") -> list[Message]:
    return [Message(id=f"{prefix}{i}", role="user", text=f"text {i}") for i in range(1, n + 1)]


# -- opening ------------------------------------------------------------------------------


def test_registry_opens_both_schemes(tmp_path: Path) -> None:
    sql = open_store(_url("sql", tmp_path))
    files = open_store(_url("file", tmp_path))
    assert isinstance(sql, LangChainSQLStore)
    assert isinstance(files, LangChainFileStore)
    assert (tmp_path / "lc").is_dir()  # the engine opens the file on first use
    assert (tmp_path / "lc" / "threads").is_dir()
    assert sql.capabilities == {"durable", "atomic-batch", "concurrent-writers"}
    assert files.capabilities == {"durable"}
    assert "langchain-community==" in sql.version
    assert "sqlalchemy==" in sql.version
    assert "langchain-core==" in files.version
    sql.close()
    files.close()


@pytest.mark.parametrize(
    ("factory", "bad", "match"),
    [
        (open_sql_history, "sqlite:///x.db", "not a langchain\\+sql URL"),
        (open_sql_history, "langchain+sql:///", "names a file"),
        (open_sql_history, "langchain+sql:relative.db", "names a file"),
        (open_sql_history, "langchain+sql:///:memory:", "memory"),
        (open_sql_history, "langchain+sql:////tmp/x.db?table=t", "no options"),
        (open_file_history, "langchain+sql:////tmp/d", "not a langchain\\+file URL"),
        (open_file_history, "langchain+file://", "names a file"),
    ],
)
def test_factories_refuse_bad_urls(factory: Any, bad: str, match: str) -> None:
    with pytest.raises(StoreURLError, match=match):
        factory(bad)


@pytest.mark.parametrize("kind", ["sql", "file"])
def test_missing_library_names_the_extra(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_community.chat_message_histories", None)
    with pytest.raises(StoreURLError, match=r"memconform\[langchain\]"):
        open_store(_url(kind, tmp_path))


def test_module_imports_without_the_library() -> None:
    blocked = ("langchain_community", "langchain_core", "sqlalchemy")
    code = (
        "import sys\n"
        f"for name in {blocked!r}: sys.modules[name] = None\n"
        "import memconform.adapters.libraries.langchain as m\n"
        "print(m.thread_file_name('t'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(".json")


# -- translation --------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["user", "assistant", "system", "tool"])
def test_every_field_round_trips(store: Any, role: str) -> None:
    message = _full(f"id-{role}", role)
    store.append("t", [message])
    assert store.messages("t") == [message]


def test_messages_are_the_librarys_own_types(tmp_path: Path) -> None:
    store = open_sql_history(_url("sql", tmp_path))
    batch = [_full("u", "user"), _full("a", "assistant"), _full("s", "system"), _full("x", "tool")]
    store.append("thread-1", batch)
    store.close()
    history = SQLChatMessageHistory(
        session_id="thread-1", connection=f"sqlite:///{tmp_path / 'lc' / 'store.db'}"
    )
    natives = history.messages
    assert [type(m) for m in natives] == [HumanMessage, AIMessage, SystemMessage, ToolMessage]
    assert [m.id for m in natives] == ["u", "a", "s", "x"]
    assert natives[0].content == batch[0].text
    assert natives[0].additional_kwargs["run_id"] == "run-7"
    assert natives[0].additional_kwargs["metadata"]["source"] == "kit"
    assert natives[3].tool_call_id == "call-1"  # from the tool-result part


def test_tool_message_without_a_result_part_answers_its_own_id(store: Any) -> None:
    store.append("t", [Message(id="tool-9", role="tool", text="out")])
    assert store.messages("t") == [Message(id="tool-9", role="tool", text="out")]


def test_session_id_is_the_thread_id(tmp_path: Path) -> None:
    store = open_sql_history(_url("sql", tmp_path))
    store.append("alpha", _plain(2))
    store.close()
    conn = sqlite3.connect(tmp_path / "lc" / "store.db")
    rows = conn.execute("SELECT session_id, message FROM message_store ORDER BY id").fetchall()
    conn.close()
    assert [r[0] for r in rows] == ["alpha", "alpha"]
    assert json.loads(rows[0][1])["type"] == "human"


def test_one_file_per_thread_with_a_safe_name(tmp_path: Path) -> None:
    store = open_file_history(_url("file", tmp_path))
    awkward = "../../etc/passwd\x00/ü"
    store.append(awkward, _plain(1))
    folder = tmp_path / "lc" / "threads"
    assert [p.name for p in folder.iterdir()] == [thread_file_name(awkward)]
    history = FileChatMessageHistory(str(folder / thread_file_name(awkward)))
    assert [m.id for m in history.messages] == ["m1"]
    assert thread_file_name("a") != thread_file_name("b")


# -- threads and windows ----------------------------------------------------------------


def test_threads_are_apart_and_share_ids(store: Any) -> None:
    store.append("a", _plain(2))
    store.append("b", [Message(id="m1", role="assistant", text="other")])
    assert [m.text for m in store.messages("a")] == ["text 1", "text 2"]
    assert [m.text for m in store.messages("b")] == ["other"]
    assert store.messages("never-written") == []


def test_order_is_append_order_across_batches(store: Any) -> None:
    store.append("t", _plain(3, "x"))
    store.append("t", [])
    store.append("t", _plain(2, "y"))
    assert [m.id for m in store.messages("t")] == ["x1", "x2", "x3", "y1", "y2"]


def test_windows_are_slices_of_the_full_read(store: Any) -> None:
    store.append("t", _plain(5))
    assert [m.id for m in store.messages("t", 2)] == ["m4", "m5"]
    assert [m.id for m in store.messages("t", 5)] == ["m1", "m2", "m3", "m4", "m5"]
    assert [m.id for m in store.messages("t", 9)] == ["m1", "m2", "m3", "m4", "m5"]
    assert store.messages("t", 0) == []
    with pytest.raises(ValueError, match="limit"):
        store.messages("t", -1)
    assert store.provides == {"window"}  # the slice is the adapter's, not LangChain's


def test_a_new_store_on_the_same_url_reads_back(url: str) -> None:
    first = open_store(url)
    first.append("t", [_full("d1", "assistant")])  # type: ignore[attr-defined]
    first.close()  # type: ignore[attr-defined]
    second = open_store(url)
    assert second.messages("t") == [_full("d1", "assistant")]  # type: ignore[attr-defined]
    second.close()  # type: ignore[attr-defined]


def test_the_adapter_adds_no_duplicate_check(store: Any) -> None:
    # The library keeps repeated ids; the adapter must not hide that.
    store.append("t", _plain(1))
    store.append("t", _plain(1))
    assert [m.id for m in store.messages("t")] == ["m1", "m1"]


# -- the row point ------------------------------------------------------------------------


def test_a_fault_inside_the_sql_batch_leaves_nothing(tmp_path: Path) -> None:
    store = open_sql_history(_url("sql", tmp_path))
    store.append("t", _plain(1, "old"))
    arm_row_fault(2)
    try:
        with pytest.raises(InjectedFault):
            store.append("t", _plain(4))
    finally:
        assert disarm_row_fault()
    assert [m.id for m in store.messages("t")] == ["old1"]
    store.close()


def test_a_fault_inside_the_file_batch_keeps_the_rows_before_it(tmp_path: Path) -> None:
    # FileChatMessageHistory writes a batch message by message (the library's
    # behaviour the kit reports under ST-001/ST-016).
    store = open_file_history(_url("file", tmp_path))
    arm_row_fault(2)
    try:
        with pytest.raises(InjectedFault):
            store.append("t", _plain(4))
    finally:
        assert disarm_row_fault()
    assert [m.id for m in store.messages("t")] == ["m1", "m2"]


def test_damage_makes_the_middle_message_unreadable_and_the_read_fails(
    store: Any, url: str
) -> None:
    """The hook of ST-037 corrupts the middle message where the library keeps it
    (its table's row, the file's entry); the library's read then raises, passed
    on as ``StoreError``."""
    store.append("t", _plain(5))
    store.append("u", _plain(1, "o"))
    store.damage("t")
    if url.startswith("langchain+sql"):
        with sqlite3.connect(url.split(":///", 1)[1]) as conn:
            stored = [
                r[0]
                for r in conn.execute(
                    "SELECT message FROM message_store WHERE session_id = 't' ORDER BY id"
                )
            ]
        conn.close()
    else:
        path = Path(url.split(":///", 1)[1]) / thread_file_name("t")
        stored = json.loads(path.read_text(encoding="utf-8"))
    assert [entry == "{not json" for entry in stored] == [False, False, True, False, False]
    with pytest.raises(StoreError, match="could not read its messages"):
        store.messages("t")
    with pytest.raises(StoreError):
        store.messages("t", 1)  # the window is a slice of the full read
    assert [m.id for m in store.messages("u")] == ["o1"]


@pytest.mark.parametrize("content", ["", '[{"type": "human", "data": {"content": "hal', "[][]"])
def test_a_file_the_library_cannot_parse_is_its_refusal(tmp_path: Path, content: str) -> None:
    # What another process sees while FileChatMessageHistory rewrites the file
    # (write_text empties it first) or after two rewrites crossed: the library's
    # JSONDecodeError is raised as StoreError with it as the cause, and the
    # adapter leaves the file as the library left it.
    store = open_file_history(_url("file", tmp_path))
    store.append("t", _plain(1))
    path = tmp_path / "lc" / "threads" / thread_file_name("t")
    path.write_text(content, encoding="utf-8")
    with pytest.raises(StoreError, match="JSONDecodeError") as read:
        store.messages("t")
    assert isinstance(read.value.__cause__, json.JSONDecodeError)
    with pytest.raises(StoreError, match="add_messages on thread 't'") as write:
        store.append("t", _plain(1))
    assert isinstance(write.value.__cause__, json.JSONDecodeError)
    assert path.read_text(encoding="utf-8") == content
    with pytest.raises(json.JSONDecodeError):  # the library alone raises the same
        FileChatMessageHistory(str(path)).messages  # noqa: B018
