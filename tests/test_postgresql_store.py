"""The ``postgresql://`` store against the Store contract and its own promises.

Needs a PostgreSQL server: ``MEMCONFORM_POSTGRESQL_URL`` (default
``postgresql://postgres@127.0.0.1:5432/test``). Without one the tests are
skipped, except in CI (``CI=true``), where they fail. Each run works in a
schema of its own and drops it at the end.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from memconform.adapters.postgresql import (
    DEFAULT_SCHEMA,
    PostgreSQLStore,
    open_postgresql,
    split_url,
)
from memconform.adapters.registry import StoreURLError, open_store
from memconform.contract import Capability, StoreError, UnsupportedValueError
from memconform.harness.faults import InjectedFault, arm_row_fault, disarm_row_fault
from memconform.values import Fact, Message, TurnRecord
from tests.adapters_support import (
    ROOT,
    StoreContract,
    check_store_features,
    check_writers,
    fresh,
    msg,
    read_in_new_process,
    require_server,
    rich_message,
    run_writers,
)

pytestmark = pytest.mark.postgresql

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def _probe(url: str) -> None:
    import psycopg

    conninfo, _ = split_url(url)
    with psycopg.connect(conninfo, connect_timeout=3):
        pass


def with_schema(url: str, schema: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "schema"]
    return parts._replace(query=urlencode([*query, ("schema", schema)])).geturl()


def _drop(url: str, schema: str) -> None:
    import psycopg

    conninfo, _ = split_url(url)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(scope="module")
def server_url() -> str:
    return require_server("PostgreSQL", "MEMCONFORM_POSTGRESQL_URL", DEFAULT_URL, _probe)


@pytest.fixture(scope="module")
def pg_url(server_url: str) -> Iterator[str]:
    schema = f"mct_{uuid.uuid4().hex[:12]}"
    yield with_schema(server_url, schema)
    _drop(server_url, schema)


@pytest.fixture(scope="module")
def opened_store(pg_url: str) -> Iterator[PostgreSQLStore]:
    store = open_postgresql(pg_url)
    yield store
    store.close()


@pytest.fixture
def scratch_schema(server_url: str) -> Iterator[str]:
    """A schema name nobody uses yet, dropped after the test."""
    schema = f"mct_{uuid.uuid4().hex[:12]}"
    yield schema
    _drop(server_url, schema)


class TestPostgreSQLContract(StoreContract):
    """Every rule of the Store contract."""


# -- what PostgreSQL cannot hold ---------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        Message(id="x", role="user", text="a\x00b"),
        Message(id="x", role="user", text="ok", parts=({"t": "a\x00"},)),
        Message(id="x", role="user", text="ok", metadata={"k\x00": 1}),
        Message(id="x\x00", role="user", text="ok"),
        Message(id="x", role="user", text="ok", run_id="r\x00"),
        Message(id="x", role="user", text="ok", metadata={"z": -0.0}),
        Message(id="x", role="user", text="ok", parts=({"nan": float("nan")},)),
        Message(id="x", role="user", text="ok", parts=({"s": "\udfff"},)),
    ],
    ids=["text-nul", "parts-nul", "key-nul", "id-nul", "run-id-nul", "minus-zero", "nan",
         "parts-surrogate"],
)
def test_values_postgresql_would_alter_are_refused_whole(
    opened_store: PostgreSQLStore, bad: Message
) -> None:
    t = fresh()
    with pytest.raises(UnsupportedValueError):
        opened_store.append(t, [msg("fine"), bad])
    assert opened_store.messages(t) == []


def test_nul_in_thread_id_is_refused_and_reads_as_empty(opened_store: PostgreSQLStore) -> None:
    with pytest.raises(UnsupportedValueError):
        opened_store.append("t\x00", [msg("a")])
    assert opened_store.messages("t\x00") == []
    assert opened_store.messages("t\udc00") == []


def test_nul_in_other_values_is_refused(opened_store: PostgreSQLStore) -> None:
    scope = fresh("s")
    with pytest.raises(UnsupportedValueError):
        opened_store.write_state(scope, "k", {"v": "\x00"}, None)
    assert opened_store.read_state(scope, "k") is None
    fact = Fact("sub", "said \x00", "w", "s", "e", "2026-01-01")
    with pytest.raises(UnsupportedValueError):
        opened_store.put_fact(scope, fact)
    assert opened_store.facts(scope) == []


def test_floats_come_back_as_floats(opened_store: PostgreSQLStore) -> None:
    t = fresh()
    values = [1.0, 1e20, 1e300, 5e-324, 123456789.0, -1.5e-7]
    opened_store.append(t, [Message(id="f", role="user", text="", parts=({"v": values},))])
    back = opened_store.messages(t)[0].parts[0]["v"]
    assert back == values
    assert [type(v) for v in back] == [float] * len(values)


def test_round_outside_64_bits_is_refused_as_unsupported(opened_store: PostgreSQLStore) -> None:
    t = fresh()
    with pytest.raises(UnsupportedValueError, match="round"):
        opened_store.append(t, [Message(id="r", role="user", text="", round=2**63)])
    assert opened_store.messages(t) == []


# -- declarations, URL and lifecycle ---------------------------------------------------------


def test_declares_every_capability(opened_store: PostgreSQLStore) -> None:
    assert opened_store.capabilities == frozenset(c.value for c in Capability)


def test_split_url_takes_the_schema_and_keeps_the_rest() -> None:
    conninfo, schema = split_url("postgresql://u:p@h:5/db?schema=s1&sslmode=disable")
    assert schema == "s1"
    assert conninfo == "postgresql://u:p@h:5/db?sslmode=disable"
    assert split_url("postgres://h/db")[1] == DEFAULT_SCHEMA
    with pytest.raises(StoreURLError):
        split_url("postgresql://h/db?schema=")


def test_registry_opens_both_schemes(server_url: str, scratch_schema: str) -> None:
    for scheme in ("postgresql", "postgres"):
        url = with_schema(server_url, scratch_schema).replace("postgresql", scheme, 1)
        store: Any = open_store(url)
        assert isinstance(store, PostgreSQLStore)
        store.close()


def test_tables_live_in_the_named_schema(server_url: str, scratch_schema: str) -> None:
    store = open_postgresql(with_schema(server_url, scratch_schema))
    store.close()
    import psycopg

    with psycopg.connect(split_url(server_url)[0]) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (scratch_schema,),
        ).fetchall()
    assert {r[0] for r in rows} >= {"messages", "threads", "errors", "turn_records", "state",
                                   "facts", "meta"}


def test_schemas_isolate_stores(
    opened_store: PostgreSQLStore, server_url: str, scratch_schema: str
) -> None:
    t = fresh()
    opened_store.append(t, [msg("a")])
    other = open_postgresql(with_schema(server_url, scratch_schema))
    try:
        assert other.messages(t) == []
        other.append(t, [msg("a")])
        assert [m.id for m in other.messages(t)] == ["a"]
    finally:
        other.close()


def test_another_layout_version_is_refused(server_url: str, scratch_schema: str) -> None:
    url = with_schema(server_url, scratch_schema)
    open_postgresql(url).close()
    import psycopg

    with psycopg.connect(split_url(server_url)[0], autocommit=True) as conn:
        conn.execute(f'UPDATE "{scratch_schema}".meta SET value = \'99\'')
    with pytest.raises(StoreError, match="layout version 99"):
        open_postgresql(url)


def test_closed_store_refuses_calls(server_url: str, scratch_schema: str) -> None:
    store = open_postgresql(with_schema(server_url, scratch_schema))
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.messages("t")


def test_unreachable_server_is_a_store_error_without_the_password() -> None:
    with pytest.raises(StoreError) as caught:
        open_postgresql("postgresql://user:s3cret@127.0.0.1:1/db?connect_timeout=2")
    assert "s3cret" not in str(caught.value)
    assert "127.0.0.1" in str(caught.value)


def test_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreURLError, match=r"memconform\[postgresql\]"):
        open_postgresql(DEFAULT_URL)


# -- atomicity, concurrency, durability ---------------------------------------------------------


def test_failure_in_the_middle_of_a_batch_stores_nothing(opened_store: PostgreSQLStore) -> None:
    t = fresh()
    opened_store.append(t, [msg("before")])
    arm_row_fault(2)
    try:
        with pytest.raises(InjectedFault):
            opened_store.append(t, [msg("a"), msg("b"), msg("c"), msg("d")])
    finally:
        assert disarm_row_fault()
    assert [m.id for m in opened_store.messages(t)] == ["before"]
    opened_store.append(t, [msg("a")])
    assert [m.id for m in opened_store.messages(t)] == ["before", "a"]


@pytest.mark.slow
def test_many_processes_create_one_schema_at_once(server_url: str, scratch_schema: str) -> None:
    url = with_schema(server_url, scratch_schema)
    code = (
        "import sys; from memconform.adapters.registry import open_store; "
        "open_store(sys.argv[1]).close()"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, url], cwd=ROOT, stderr=subprocess.PIPE,
                         text=True)
        for _ in range(4)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], "\n".join(errors)


@pytest.mark.slow
def test_concurrent_writers_keep_batches_whole_and_in_order(
    opened_store: PostgreSQLStore, pg_url: str
) -> None:
    t = fresh()
    run_writers(pg_url, t, writers=4, batches=8, size=5)
    check_writers(opened_store.messages(t), writers=4, batches=8, size=5)


@pytest.mark.slow
def test_reads_by_another_process_show_whole_batches_while_a_writer_appends(
    pg_url: str,
) -> None:
    from memconform.steps.contract_checks import check_reads_during_writes

    result = check_reads_during_writes(pg_url, fresh())
    assert result.passed, result.evidence
    # the adapter calls the row point: the read beside the held writer is deterministic
    assert result.deterministic
    assert "at the adapter's row point" in result.evidence


@pytest.mark.slow
def test_acknowledged_writes_survive_reopening_from_a_new_process(
    pg_url: str,
) -> None:
    t = fresh()
    store = open_postgresql(pg_url)
    store.append(t, [rich_message("a"), msg("b", committed=False), msg("c")])
    store.close()
    read = read_in_new_process(pg_url, t)
    assert read == [rich_message("a").to_json(), msg("c").to_json()]


def test_unknown_role_is_a_value_error_and_nothing_is_stored(
    opened_store: PostgreSQLStore,
) -> None:
    t = fresh()
    bad = Message(id="b", role="bot", text="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="role"):
        opened_store.append(t, [msg("a"), bad])
    assert opened_store.messages(t) == []


def test_a_lost_connection_fails_one_call_and_the_next_reconnects(
    server_url: str, scratch_schema: str
) -> None:
    import psycopg

    store = open_postgresql(with_schema(server_url, scratch_schema))
    try:
        t = fresh()
        store.append(t, [msg("a")])
        backend = store._conn.info.backend_pid
        with psycopg.connect(split_url(server_url)[0], autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
        with pytest.raises(StoreError, match="messages failed on PostgreSQL"):
            store.messages(t)
        assert [m.id for m in store.messages(t)] == ["a"]
    finally:
        store.close()


@pytest.mark.slow
def test_passes_the_store_features(pg_url: str, tmp_path: Path) -> None:
    check_store_features(pg_url, tmp_path)


def test_records_state_and_facts_are_kept_as_written(opened_store: PostgreSQLStore) -> None:
    t, scope = fresh(), fresh("s")
    timing = {"started_at": "2026-01-01T00:00:00Z", "settled_at": "2026-01-01T00:00:03Z"}
    record = TurnRecord(turn_id="T1", thread_id=t, outcome="completed", timing=timing,
                        usage={"zeta": 1, "alpha": -0.0})
    opened_store.append_record(record)
    back = opened_store.records(t)[0]
    assert list(back.timing) == ["started_at", "settled_at"]
    assert list(back.usage) == ["zeta", "alpha"]
    assert str(back.usage["alpha"]) == "-0.0"
    entry = opened_store.write_state(scope, "k", {"b": 1e20, "a": -0.0}, None)
    stored = opened_store.read_state(scope, "k")
    assert stored == entry
    assert stored is not None
    assert list(stored.value) == ["b", "a"]
    assert isinstance(stored.value["b"], float)
