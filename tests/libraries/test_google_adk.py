"""The Google ADK adapter: how messages become session events and back."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="needs the google-adk extra")

from memconform.adapters.libraries.google_adk import (
    APP_NAME,
    USER_ID,
    GoogleADKStore,
    event_fields,
    message_from_event,
    open_database,
    open_in_memory,
)
from memconform.adapters.registry import StoreURLError, open_store
from memconform.contract import Capability, DuplicateIdError, StoreError
from memconform.harness.faults import InjectedFault, arm_row_fault, disarm_row_fault
from memconform.values import Message
from tests.libraries.messages import FULL
from tests.libraries.messages import ids as _ids
from tests.libraries.messages import numbered as _msgs


@pytest.fixture(params=["memory", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "google-adk+memory://"
    return f"google-adk+sqlite:///{tmp_path}/nested/store.db"


@pytest.fixture
def store(url: str) -> Iterator[GoogleADKStore]:
    opened = open_store(url)
    assert isinstance(opened, GoogleADKStore)
    yield opened
    opened.close()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"google-adk+sqlite:///{tmp_path}/store.db"


# -- translation ----------------------------------------------------------------------


def test_a_message_becomes_an_event_with_id_author_content_and_custom_metadata() -> None:
    store = open_in_memory("google-adk+memory://")
    try:
        event = store.event(FULL)
    finally:
        store.close()
    assert event.id == "full-1"
    assert event.author == "assistant"
    assert event.invocation_id == "run-42"
    assert event.content.role == "model"
    assert [p.text for p in event.content.parts] == [FULL.text]
    assert event.custom_metadata == {
        "parts": [dict(p) for p in FULL.parts],
        "run_id": "run-42",
        "round": 7,
        "turn_id": "T3",
        "committed": True,
        "metadata": dict(FULL.metadata),
    }
    assert message_from_event(event) == FULL


@pytest.mark.parametrize(
    ("role", "content_role"),
    [("user", "user"), ("assistant", "model"), ("tool", "model"), ("system", "model")],
)
def test_every_role_is_the_author_and_reads_back(role: str, content_role: str) -> None:
    store = open_in_memory("google-adk+memory://")
    try:
        message = Message(id="r", role=role, text="t")  # type: ignore[arg-type]
        event = store.event(message)
    finally:
        store.close()
    assert event.author == role
    assert event.content.role == content_role
    assert message_from_event(event) == message


def test_no_run_id_leaves_the_invocation_id_empty() -> None:
    fields = event_fields(Message(id="a", role="user", text="x"))
    assert fields["invocation_id"] == ""
    assert fields["custom_metadata"]["run_id"] is None


def test_an_agent_event_without_kit_metadata_reads_as_a_plain_message() -> None:
    from google.adk.events import Event
    from google.genai import types

    event = Event(
        id="e1",
        author="weather_agent",
        invocation_id="inv-1",
        content=types.Content(
            role="model", parts=[types.Part(text="Hello, "), types.Part(text="world")]
        ),
    )
    assert message_from_event(event) == Message(
        id="e1", role="assistant", text="Hello, world", run_id="inv-1"
    )
    bare = Event(id="e2", author="someone", content=types.Content(role="user", parts=[]))
    assert message_from_event(bare) == Message(id="e2", role="user", text="")
    assert message_from_event(Event(id="e3", author="x")).text == ""


# -- the store ------------------------------------------------------------------------


def test_capabilities_and_version(store: GoogleADKStore, url: str) -> None:
    assert "google-adk==" in store.version
    assert store.provides == {"timestamps"}  # each event is stamped by the adapter
    if url.startswith("google-adk+memory"):
        assert store.capabilities == frozenset()
    else:
        assert store.capabilities == {Capability.DURABLE, Capability.CONCURRENT_WRITERS}
        assert "sqlalchemy==" in store.version
        assert "aiosqlite==" in store.version


def test_every_field_comes_back(store: GoogleADKStore) -> None:
    plain = Message(id="p", role="tool", text="")
    store.append("t", [FULL, plain])
    assert store.messages("t") == [FULL, plain]


def test_windows_use_num_recent_events(store: GoogleADKStore) -> None:
    store.append("t", _msgs("a", 3))
    store.append("t", _msgs("b", 2, "assistant"))
    assert _ids(store.messages("t")) == ["a0", "a1", "a2", "b0", "b1"]
    assert _ids(store.messages("t", 2)) == ["b0", "b1"]
    assert _ids(store.messages("t", 9)) == ["a0", "a1", "a2", "b0", "b1"]
    assert store.messages("t", 0) == []
    with pytest.raises(ValueError, match="num_recent_events") as refused:
        store.messages("t", -1)
    assert type(refused.value) is ValueError
    assert len(store.messages("t")) == 5


def test_unknown_thread_and_empty_batch(store: GoogleADKStore) -> None:
    assert store.messages("never") == []
    store.append("empty", [])
    assert store.messages("empty") == []
    # an empty batch does not even create the session
    assert store._run(_get(store, "empty")) is None


async def _get(store: GoogleADKStore, thread: str) -> Any:
    return await store.service.get_session(app_name=APP_NAME, user_id=USER_ID, session_id=thread)


def test_threads_are_sessions_and_stay_apart(store: GoogleADKStore) -> None:
    store.append("A", _msgs("m", 2))
    store.append("B", [Message(id="m0", role="assistant", text="other thread, same id")])
    assert [m.text for m in store.messages("A")] == ["m 0", "m 1"]
    assert [m.text for m in store.messages("B")] == ["other thread, same id"]
    session = store._run(_get(store, "A"))
    assert (session.app_name, session.user_id, session.id) == (APP_NAME, USER_ID, "A")
    assert [e.id for e in session.events] == ["m0", "m1"]


def test_a_session_made_elsewhere_is_used(store: GoogleADKStore) -> None:
    async def create() -> Any:
        return await store.service.create_session(
            app_name=APP_NAME, user_id=USER_ID, session_id="made"
        )

    store._run(create())
    store.append("made", _msgs("x", 1))
    assert _ids(store.messages("made")) == ["x0"]


def test_a_session_created_between_the_read_and_the_create_is_read(
    store: GoogleADKStore,
) -> None:
    service = store.service
    real_get = service.get_session

    async def racing_get(**kwargs: Any) -> Any:
        # the first read misses; another writer creates the session just then
        service.get_session = real_get
        await service.create_session(
            app_name=kwargs["app_name"], user_id=kwargs["user_id"], session_id="race"
        )
        return None

    service.get_session = racing_get
    store.append("race", _msgs("r", 2))
    assert _ids(store.messages("race")) == ["r0", "r1"]


def test_reads_are_copies(store: GoogleADKStore) -> None:
    store.append("t", [FULL])
    first = store.messages("t")
    first[0].metadata["source"] = "changed"  # type: ignore[index]
    first[0].parts[0]["name"] = "changed"
    first.clear()
    assert store.messages("t") == [FULL]


def test_calls_from_threads_with_their_own_loops(store: GoogleADKStore, url: str) -> None:
    """Each thread runs its own event loop around the adapter's calls. On SQLite
    the threads take turns: ADK's service, used by writers at once, answers one
    of them "database is locked" now and then (SQLite's deferred transactions),
    which is the library's to be judged by the kit's scenarios, not this test."""
    errors: list[BaseException] = []
    together = "sqlite" not in url

    def call(i: int) -> None:
        async def inside_a_loop() -> None:
            store.append(f"loop-{i}", _msgs(f"l{i}-", 2))
            assert len(store.messages(f"loop-{i}")) == 2

        try:
            asyncio.run(inside_a_loop())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
        if not together:
            t.join()
    for t in threads:
        t.join()
    assert errors == []


def test_close_is_final_and_repeatable(url: str) -> None:
    store = open_store(url)
    assert isinstance(store, GoogleADKStore)
    store.close()
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.messages("t")


# -- what the services do with a batch (library behaviour, kept as found) ---------------


def test_the_database_refuses_a_stored_id_after_the_batch_start_was_written(
    db_url: str,
) -> None:
    store = open_database(db_url)
    try:
        store.append("t", _msgs("m", 1))
        with pytest.raises(DuplicateIdError, match="'m0'"):
            store.append("t", [Message(id="n1", role="user", text="new"), *_msgs("m", 1)])
        # one transaction per event: the first event of the refused batch stays
        assert _ids(store.messages("t")) == ["m0", "n1"]
    finally:
        store.close()


def test_the_database_refuses_a_writer_overtaken_inside_its_batch(db_url: str) -> None:
    first, second = open_database(db_url), open_database(db_url)
    try:
        real = first.service.append_event
        written: list[str] = []

        async def then_another_writer(session: Any, event: Any) -> Any:
            result = await real(session, event)
            written.append(event.id)
            if len(written) == 1:  # another writer appends between our two events
                second.append("t", [Message(id="other", role="user", text="other writer")])
            return result

        first.service.append_event = then_another_writer
        with pytest.raises(StoreError, match="stale"):
            first.append("t", _msgs("a", 2))
        assert _ids(first.messages("t")) == ["a0", "other"]
    finally:
        first.close()
        second.close()


def test_the_in_memory_service_keeps_a_repeated_id() -> None:
    store = open_in_memory("google-adk+memory://")
    try:
        store.append("t", _msgs("m", 1))
        store.append("t", [Message(id="m0", role="assistant", text="again")])
        assert [(m.id, m.text) for m in store.messages("t")] == [("m0", "m 0"), ("m0", "again")]
    finally:
        store.close()


def test_the_database_holds_one_event_row_per_message(db_url: str, tmp_path: Path) -> None:
    store = open_database(db_url)
    try:
        store.append("t", _msgs("m", 3))
    finally:
        store.close()
    with sqlite3.connect(tmp_path / "store.db") as conn:
        rows = conn.execute(
            "SELECT id, app_name, user_id, session_id FROM events ORDER BY timestamp"
        ).fetchall()
    assert rows == [(f"m{i}", APP_NAME, USER_ID, "t") for i in range(3)]


def test_a_new_process_reads_what_was_written(db_url: str) -> None:
    store = open_database(db_url)
    try:
        store.append("t", [FULL])
    finally:
        store.close()
    script = (
        "import sys, json\n"
        "from memconform.adapters.registry import open_store\n"
        "store = open_store(sys.argv[1])\n"
        "print(json.dumps([m.to_json() for m in store.messages('t')]))\n"
        "store.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, db_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert [Message.from_json(m) for m in json.loads(done.stdout)] == [FULL]


def test_a_row_fault_leaves_the_rows_before_it() -> None:
    store = open_in_memory("google-adk+memory://")
    try:
        arm_row_fault(1)
        try:
            with pytest.raises(InjectedFault):
                store.append("t", _msgs("f", 3))
        finally:
            assert disarm_row_fault()
        assert _ids(store.messages("t")) == ["f0"]
    finally:
        store.close()


# -- factories ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "sqlite:///x.db",
        "google-adk+sqlite://",
        "google-adk+sqlite:///",
        "google-adk+sqlite:///:memory:",
        "google-adk+sqlite:///x.db?timeout=3",
        "google-adk+sqlitex:///x.db",
    ],
)
def test_bad_database_urls_are_refused(bad: str) -> None:
    with pytest.raises(StoreURLError):
        open_database(bad)


@pytest.mark.parametrize("bad", ["memory://", "google-adk+memory://x", "google-adk+memory:"])
def test_bad_memory_urls_are_refused(bad: str) -> None:
    with pytest.raises(StoreURLError):
        open_in_memory(bad)


def test_the_database_url_creates_parent_folders(tmp_path: Path) -> None:
    store = open_database(f"google-adk+sqlite:///{tmp_path}/a/b/store.db")
    try:
        store.append("t", _msgs("m", 1))
    finally:
        store.close()
    assert (tmp_path / "a" / "b" / "store.db").is_file()


@pytest.mark.parametrize(
    ("missing", "opener", "target"),
    [
        ("google.adk.sessions", open_in_memory, "google-adk+memory://"),
        ("google.adk.sessions", open_database, "db"),
        ("sqlalchemy.ext.asyncio", open_database, "db"),
        ("aiosqlite", open_database, "db"),
    ],
)
def test_a_missing_library_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, missing: str, opener: Any, target: str
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)
    url = f"google-adk+sqlite:///{tmp_path}/store.db" if target == "db" else target
    with pytest.raises(StoreURLError, match=r"memconform\[google-adk\]"):
        opener(url)


def test_the_module_imports_without_the_library() -> None:
    script = (
        "import sys\n"
        "sys.modules['google.adk'] = None\n"
        "sys.modules['google.genai'] = None\n"
        "import memconform.adapters.libraries.google_adk as m\n"
        "try:\n"
        "    m.open_in_memory('google-adk+memory://')\n"
        "except m.StoreURLError as exc:\n"
        "    print('refused:', exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "refused:" in done.stdout
    assert "pip install 'memconform[google-adk]'" in done.stdout


# -- PostgreSQL -----------------------------------------------------------------------


@pytest.mark.postgresql
def test_the_database_on_postgresql_keeps_its_tables_in_the_urls_schema() -> None:
    import uuid

    import psycopg

    from memconform.adapters.libraries.google_adk import open_postgresql
    from memconform.adapters.libraries.servers import drop
    from tests.adapters_support import require_server
    from tests.test_postgresql_store import DEFAULT_URL, _probe

    server = require_server("PostgreSQL", "MEMCONFORM_POSTGRESQL_URL", DEFAULT_URL, _probe)
    schema = f"mct_{uuid.uuid4().hex[:12]}"
    url = f"google-adk+postgresql://{server.split('://', 1)[1]}?schema={schema}"
    store = open_postgresql(url)
    try:
        assert store.capabilities == {Capability.DURABLE, Capability.CONCURRENT_WRITERS}
        assert "psycopg==" in store.version
        store.append("t", _msgs("m", 3))
        assert _ids(store.messages("t", 2)) == ["m1", "m2"]
        with psycopg.connect(server) as conn:
            rows = conn.execute(
                f'SELECT id FROM "{schema}".events ORDER BY timestamp'
            ).fetchall()
        assert rows == [("m0",), ("m1",), ("m2",)]
    finally:
        store.close()
        drop(url)


@pytest.mark.parametrize(
    "bad",
    [
        "google-adk+postgresql://postgres@127.0.0.1:5432/test",
        "google-adk+postgresql://postgres@127.0.0.1:5432/test?schema=Upper",
        "google-adk+sqlite://postgres@127.0.0.1:5432/test?schema=a",
    ],
)
def test_bad_postgresql_urls_are_refused(bad: str) -> None:
    from memconform.adapters.libraries.google_adk import open_postgresql

    with pytest.raises(StoreURLError):
        open_postgresql(bad)


def test_damage_makes_the_middle_event_unreadable_and_the_read_fails(db_url: str) -> None:
    """The hook of ST-037 writes text that is not JSON into the middle event's
    ``event_data``; ``get_session`` then raises, which the read passes on as
    ``StoreError``. The in-memory service has no storage to damage."""
    store = open_database(db_url)
    try:
        store.append("t", _msgs("m", 5))
        store.append("u", _msgs("o", 1))
        store.damage("t")
        path = db_url.split(":///", 1)[1]
        with sqlite3.connect(path) as conn:
            damaged = conn.execute(
                "SELECT id FROM events WHERE session_id = 't' AND event_data = '{not json'"
            ).fetchall()
        conn.close()
        assert damaged == [("m2",)]
        with pytest.raises(StoreError, match="get_session could not read"):
            store.messages("t")
        assert _ids(store.messages("u")) == ["o0"]
    finally:
        store.close()
    memory = open_in_memory("google-adk+memory://")
    assert not hasattr(memory, "damage")
    memory.close()
