"""Contract tests shared by the tests of the server stores and the stdio adapter.

:class:`StoreContract` holds one test per rule of the Store contract's
docstrings (``memconform/contract.py``). A test module subclasses it
as ``Test…`` and provides the fixture ``opened_store`` (the raw store, usually
opened once per module); every test reaches it through the kit's recording
proxy, so shapes are checked as the kit checks them, and uses thread ids and
scopes of its own (:func:`fresh`), so several test processes can share one
server.

:func:`require_server` decides what happens when a server is not there: a
skip with the reason on a developer's machine, a failure in CI (``CI=true``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memconform.adapters.registry import redact_url
from memconform.contract import (
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
)
from memconform.harness.proxy import RecordingStore
from memconform.timeline import Timeline
from memconform.values import ErrorRecord, Fact, Message, StateEntry, TurnRecord

ROOT = Path(__file__).resolve().parent.parent

__all__ = [
    "NO_ROW_POINT",
    "ROOT",
    "SCHEMA_PATH",
    "StoreContract",
    "check_conversation",
    "check_store_features",
    "check_writers",
    "conversation",
    "converse",
    "fresh",
    "in_ci",
    "msg",
    "read_in_new_process",
    "require_server",
    "rich_message",
    "run_writers",
]


def in_ci() -> bool:
    """Whether this run is CI's (``CI=true``), where missing servers are failures."""
    return os.environ.get("CI", "").strip().lower() == "true"


def require_server(what: str, env_var: str, default: str, probe: Callable[[str], None]) -> str:
    """The server URL from ``env_var`` (or ``default``) once ``probe(url)`` succeeds.

    When the probe raises, the test is skipped with the reason, or failed in CI.
    """
    url = os.environ.get(env_var) or default
    try:
        probe(url)
    except Exception as exc:
        detail = str(exc).replace(url, redact_url(url))
        reason = (
            f"{what} is not available at {redact_url(url)} ({type(exc).__name__}: {detail}); "
            f"start it or set {env_var}"
        )
        if in_ci():
            pytest.fail(f"{reason} (CI=true: a missing server is a failure)", pytrace=False)
        pytest.skip(reason)
    return url


def fresh(label: str = "t") -> str:
    """A thread id or scope no other test, process or run uses."""
    return f"{label}-{uuid.uuid4().hex}"


def msg(mid: str, text: str | None = None, *, committed: bool = True) -> Message:
    """A plain user message."""
    return Message(id=mid, role="user", text=text or f"text of {mid}", committed=committed)


def rich_message(mid: str) -> Message:
    """A message with every field set, including JSON that is easy to alter."""
    return Message(
        id=mid,
        role="assistant",
        text="multi\nline «text» with emoji 😀 and \\ backslash",
        parts=(
            {"type": "tool_call", "name": "search", "args": {"q": "x", "n": 3}},
            {
                "big": 12345678901234567890,
                "floats": [1.0, 0.1, 1e20, 1.5e-7, 1e300, -2.5],
                "nested": {"a": [None, True, False, "", {}], "__proto__": {"k": "v"}},
                "unicode": "é\u2028\U0001F600",
            },
        ),
        run_id="run-1",
        round=2,
        turn_id="T7",
        committed=True,
        metadata={"source": "test", "n": 2**63 + 1, "ratio": 0.25, "list": [1, "2"]},
    )


def run_writers(url: str, thread: str, writers: int, batches: int, size: int) -> None:
    """Start ``writers`` processes that each append ``batches`` batches of ``size``
    messages to ``thread`` at the same time; fail if any of them fails."""
    code = (
        "import sys\n"
        "from memconform.adapters.registry import open_store\n"
        "from memconform.values import Message\n"
        "url, thread, w, batches, size = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])\n"
        "store = open_store(url)\n"
        "for b in range(batches):\n"
        "    store.append(thread, [Message(id=f'w{w}-b{b}-m{m}', role='user', text='x')"
        " for m in range(size)])\n"
        "store.close()\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, url, thread, str(w), str(batches), str(size)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for w in range(writers)
    ]
    failures = []
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        if proc.returncode != 0:
            failures.append(err[-2000:])
    assert not failures, "\n".join(failures)


def check_writers(messages: list[Message], writers: int, batches: int, size: int) -> None:
    """Every writer's batches are all there, whole, contiguous and in its order."""
    ids = [m.id for m in messages]
    assert len(ids) == len(set(ids)) == writers * batches * size
    for start in range(0, len(ids), size):
        block = ids[start : start + size]
        prefix = block[0].rsplit("-m", 1)[0]
        assert block == [f"{prefix}-m{m}" for m in range(size)], f"interleaved batch: {block}"
    for w in range(writers):
        mine = [i.rsplit("-m", 1)[0] for i in ids[::size] if i.startswith(f"w{w}-")]
        assert mine == [f"w{w}-b{b}" for b in range(batches)]


def read_in_new_process(url: str, thread: str) -> list[dict[str, object]]:
    """The thread's messages as read by a new process that opens ``url``."""
    code = (
        "import json, sys\n"
        "from memconform.adapters.registry import open_store\n"
        "store = open_store(sys.argv[1])\n"
        "print(json.dumps([m.to_json() for m in store.messages(sys.argv[2])]))\n"
        "store.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, url, thread],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=120,
    )
    data: list[dict[str, object]] = json.loads(out.stdout)
    return data


class StoreContract:
    """The Store contract, one test per promise. Needs the fixture ``opened_store``."""

    @pytest.fixture
    def store(self, opened_store: object) -> Iterator[RecordingStore]:
        proxy = RecordingStore(opened_store, Timeline(), timeout=60)
        yield proxy
        proxy.close()

    def need(self, store: RecordingStore, capability: str) -> None:
        if not store.has(capability):
            pytest.skip(f"the store does not declare {capability!r}")

    # -- append and messages --------------------------------------------------------

    def test_append_then_read_round_trips_every_field(self, store: RecordingStore) -> None:
        t = fresh()
        batch = [rich_message("m1"), msg("m2"), Message(id="m3", role="system", text="")]
        store.append(t, batch)
        assert store.messages(t) == batch
        assert [m.to_json() for m in store.messages(t)] == [m.to_json() for m in batch]

    def test_order_is_append_order_within_and_across_batches(self, store: RecordingStore) -> None:
        t = fresh()
        store.append(t, [msg("z"), msg("a")])
        store.append(t, [msg("m")])
        store.append(t, [msg("b"), msg("y"), msg("c")])
        assert [m.id for m in store.messages(t)] == ["z", "a", "m", "b", "y", "c"]

    def test_a_damaged_message_makes_a_read_reaching_it_fail_loudly(
        self, store: RecordingStore
    ) -> None:
        if not store.can_damage:
            pytest.skip("the store has no damage hook")
        t, other = fresh(), fresh()
        batch = [msg(f"m{i}") for i in range(1, 6)]
        store.append(t, batch)
        store.append(other, [msg("o1")])
        with pytest.raises(StoreError):
            store.damage(fresh("empty"))
        store.damage(t)
        with pytest.raises(StoreError):
            store.messages(t)
        with pytest.raises(StoreError):
            store.messages(t, 3)  # the middle message, m3, is in the newest three
        assert store.messages(t, 2) == batch[3:]
        assert store.messages(other) == [msg("o1")]

    def test_caller_timestamps_do_not_order_messages(self, store: RecordingStore) -> None:
        t = fresh()
        late = Message(id="late", role="user", text="1", metadata={"timestamp": "2030-01-01"})
        early = Message(id="early", role="user", text="2", metadata={"timestamp": "2001-01-01"})
        store.append(t, [late])
        store.append(t, [early])
        assert [m.id for m in store.messages(t)] == ["late", "early"]

    def test_empty_batch_stores_nothing_and_succeeds(self, store: RecordingStore) -> None:
        t = fresh()
        store.append(t, [])
        assert store.messages(t) == []
        store.append(t, [msg("a")])
        store.append(t, [])
        assert [m.id for m in store.messages(t)] == ["a"]

    def test_repeated_stored_id_is_rejected_and_nothing_is_stored(
        self, store: RecordingStore
    ) -> None:
        t = fresh()
        store.append(t, [msg("a"), msg("b")])
        with pytest.raises(DuplicateIdError):
            store.append(t, [msg("c"), msg("a", "again")])
        assert [(m.id, m.text) for m in store.messages(t)] == [
            ("a", "text of a"), ("b", "text of b"),
        ]
        store.append(t, [msg("c")])
        assert [m.id for m in store.messages(t)] == ["a", "b", "c"]

    def test_id_repeated_within_a_batch_is_rejected(self, store: RecordingStore) -> None:
        t = fresh()
        with pytest.raises(DuplicateIdError):
            store.append(t, [msg("a"), msg("b"), msg("a", "twice")])
        assert store.messages(t) == []

    def test_same_id_in_two_threads_is_fine(self, store: RecordingStore) -> None:
        t1, t2 = fresh(), fresh()
        store.append(t1, [msg("a", "one")])
        store.append(t2, [msg("a", "two")])
        assert [m.text for m in store.messages(t1)] == ["one"]
        assert [m.text for m in store.messages(t2)] == ["two"]

    def test_lone_surrogate_is_refused_and_nothing_is_stored(self, store: RecordingStore) -> None:
        t = fresh()
        with pytest.raises(UnsupportedValueError):
            store.append(t, [msg("ok"), msg("bad", "half \ud800 a pair")])
        assert store.messages(t) == []

    def test_nul_is_kept_exactly_or_refused_whole(self, store: RecordingStore) -> None:
        t = fresh()
        batch = [msg("ok"), msg("nul", "a\x00b")]
        try:
            store.append(t, batch)
        except UnsupportedValueError:
            assert store.messages(t) == []
        else:
            assert store.messages(t) == batch

    def test_unknown_thread_reads_empty(self, store: RecordingStore) -> None:
        assert store.messages(fresh()) == []
        assert store.messages(fresh(), 3) == []

    def test_threads_never_see_each_other(self, store: RecordingStore) -> None:
        t1, t2 = fresh(), fresh()
        store.append(t1, [msg("a"), msg("b")])
        store.append(t2, [msg("c")])
        store.append(t1, [msg("d")])
        assert [m.id for m in store.messages(t1)] == ["a", "b", "d"]
        assert [m.id for m in store.messages(t2)] == ["c"]

    def test_limit_gives_newest_oldest_first(self, store: RecordingStore) -> None:
        t = fresh()
        store.append(t, [msg(f"m{i}") for i in range(1, 8)])
        assert [m.id for m in store.messages(t, 3)] == ["m5", "m6", "m7"]
        assert [m.id for m in store.messages(t, 1)] == ["m7"]
        assert [m.id for m in store.messages(t, 7)] == [f"m{i}" for i in range(1, 8)]
        assert [m.id for m in store.messages(t, 100)] == [f"m{i}" for i in range(1, 8)]

    def test_limit_zero_gives_nothing(self, store: RecordingStore) -> None:
        t = fresh()
        store.append(t, [msg("a")])
        assert store.messages(t, 0) == []

    def test_negative_limit_raises_value_error(self, store: RecordingStore) -> None:
        t = fresh()
        store.append(t, [msg("a")])
        with pytest.raises(ValueError, match="limit"):
            store.messages(t, -1)

    def test_no_limit_is_never_capped(self, store: RecordingStore) -> None:
        t = fresh()
        for b in range(12):
            store.append(t, [msg(f"b{b}-m{m}") for m in range(100)])
        ids = [m.id for m in store.messages(t)]
        assert len(ids) == 1200
        assert ids[0] == "b0-m0"
        assert ids[-1] == "b11-m99"

    def test_result_is_a_copy(self, store: RecordingStore) -> None:
        t = fresh()
        store.append(t, [rich_message("a")])
        first = store.messages(t)
        first.clear()
        again = store.messages(t)
        metadata, part = again[0].metadata, again[0].parts[0]
        if isinstance(metadata, dict):
            metadata["source"] = "changed"
        if isinstance(part, dict):
            part["name"] = "changed"
        assert store.messages(t) == [rich_message("a")]

    # -- commit-flags ------------------------------------------------------------------

    def test_uncommitted_messages_are_hidden_but_keep_their_place(
        self, store: RecordingStore
    ) -> None:
        self.need(store, "commit-flags")
        t = fresh()
        store.append(t, [msg("a"), msg("b", committed=False), msg("c")])
        assert [m.id for m in store.messages(t)] == ["a", "c"]
        everything = store.messages(t, include_uncommitted=True)
        assert [(m.id, m.committed) for m in everything] == [
            ("a", True), ("b", False), ("c", True),
        ]

    def test_window_counts_only_what_is_visible(self, store: RecordingStore) -> None:
        self.need(store, "commit-flags")
        t = fresh()
        store.append(t, [msg("a"), msg("b"), msg("u1", committed=False), msg("c")])
        store.append(t, [msg("u2", committed=False)])
        assert [m.id for m in store.messages(t, 2)] == ["b", "c"]
        assert [m.id for m in store.messages(t, 2, include_uncommitted=True)] == ["c", "u2"]

    def test_set_committed_changes_visibility_in_place(self, store: RecordingStore) -> None:
        self.need(store, "commit-flags")
        t = fresh()
        store.append(t, [msg("a"), msg("b", committed=False), msg("c")])
        store.set_committed(t, ["b"], True)
        assert [m.id for m in store.messages(t)] == ["a", "b", "c"]
        store.set_committed(t, ["a", "c"], False)
        assert [m.id for m in store.messages(t)] == ["b"]
        assert [m.id for m in store.messages(t, include_uncommitted=True)] == ["a", "b", "c"]

    def test_set_committed_with_unknown_id_raises_key_error(self, store: RecordingStore) -> None:
        self.need(store, "commit-flags")
        t = fresh()
        store.append(t, [msg("a", committed=False)])
        with pytest.raises(KeyError):
            store.set_committed(t, ["a", "nope"], True)
        with pytest.raises(KeyError):
            store.set_committed(fresh(), ["a"], True)
        assert store.messages(t) == []

    # -- errors ------------------------------------------------------------------------

    def test_error_records_are_kept_apart_in_order(self, store: RecordingStore) -> None:
        self.need(store, "errors")
        t, other = fresh(), fresh()
        store.append(t, [msg("a")])
        first = ErrorRecord(
            run_id="r1",
            error={"type": "ToolError", "message": "boom", "detail": {"code": 503}},
            messages=(msg("a"), rich_message("b")),
            scope="s",
            recorded_at="2026-01-01T00:00:00Z",
        )
        second = ErrorRecord(run_id="r2", error={"type": "X", "message": "again"})
        store.record_error(t, first)
        store.record_error(t, second)
        assert store.errors(t) == [first, second]
        assert [m.id for m in store.messages(t)] == ["a"]
        assert store.errors(other) == []

    # -- turn records ------------------------------------------------------------------

    def test_turn_records_are_kept_exactly_in_order(self, store: RecordingStore) -> None:
        self.need(store, "turn-records")
        t1, t2 = fresh(), fresh()
        root = TurnRecord(
            turn_id="T1", thread_id=t1, outcome="completed", grant={"steps": 4},
            steps_used=3, tier="primary", fallbacks=({"from": "a", "to": "b"},),
            usage={"input_tokens": 120, "output_tokens": 30, "cost": 0.0125},
            timing={"ms": 1.5}, metadata={"k": [1, 2]},
        )
        child = TurnRecord(
            turn_id="T2", thread_id=t1, outcome="failed", parent_turn_id="T1",
            usage={"input_tokens": 7},
        )
        elsewhere = TurnRecord(turn_id="T1", thread_id=t2, outcome="cut", continues_from="T0")
        for record in (root, child, elsewhere):
            store.append_record(record)
        assert store.records(t1) == [root, child]
        assert store.records(t2) == [elsewhere]
        everything = store.records()
        mine = [r for r in everything if r.thread_id in (t1, t2)]
        assert mine == [root, child, elsewhere]

    # -- state -------------------------------------------------------------------------

    def test_state_compare_and_set(self, store: RecordingStore) -> None:
        self.need(store, "state")
        scope = fresh("job")
        assert store.read_state(scope, "plan") is None
        first = store.write_state(scope, "plan", {"steps": ["a", "b"], "done": 0}, None)
        assert first == StateEntry("plan", {"steps": ["a", "b"], "done": 0}, 1)
        second = store.write_state(scope, "plan", {"done": 1.0}, 1)
        assert second.version == 2
        with pytest.raises(ConflictError):
            store.write_state(scope, "plan", "stale", 1)
        with pytest.raises(ConflictError):
            store.write_state(scope, "plan", "exists", None)
        with pytest.raises(ConflictError):
            store.write_state(scope, "never", "missing", 1)
        assert store.read_state(scope, "plan") == StateEntry("plan", {"done": 1.0}, 2)
        assert store.read_state(scope, "never") is None
        assert store.read_state(fresh("job"), "plan") is None

    def test_state_holds_any_json(self, store: RecordingStore) -> None:
        self.need(store, "state")
        scope = fresh("job")
        for i, value in enumerate([None, 0, "text", [1, [2]], 2**70, 1e-9, True]):
            assert store.write_state(scope, f"k{i}", value, None).value == value
            assert store.read_state(scope, f"k{i}") == StateEntry(f"k{i}", value, 1)

    # -- knowledge ---------------------------------------------------------------------

    def test_facts_supersede_keep_provenance_and_sort_by_subject(
        self, store: RecordingStore
    ) -> None:
        self.need(store, "knowledge")
        scope, other = fresh("kb"), fresh("kb")

        def fact(subject: str, statement: str = "s") -> Fact:
            return Fact(
                subject=subject, statement=statement, writer="agent:planner",
                source="tool:search", evidence="result #3", written_at="2026-05-01T10:00:00Z",
                kind="preference", trust="untrusted", origin="copied",
                recheck_at="2026-06-01", metadata={"confidence": 0.5},
            )

        subjects = ["b", "B", "a", "é", "\U0001F600", "\uffff", "a b"]
        for subject in subjects:
            store.put_fact(scope, fact(subject))
        store.put_fact(scope, fact("a", "newer"))
        assert store.get_fact(scope, "a") == fact("a", "newer")
        assert [f.subject for f in store.facts(scope)] == sorted(subjects)
        assert len(store.facts(scope)) == len(subjects)
        assert store.facts(other) == []
        assert store.get_fact(other, "a") is None
        assert store.forget(scope, "a") is True
        assert store.forget(scope, "a") is False
        assert store.get_fact(scope, "a") is None


# -- stdio conversations ------------------------------------------------------------------

SCHEMA_PATH = ROOT / "spec" / "schemas" / "stdio-protocol.schema.json"


def conversation(thread: str, scope: str) -> list[tuple[dict[str, object], str | None]]:
    """Requests covering every method, each with the error kind it must draw
    (``None``: it must succeed)."""
    m1, m2 = rich_message("m1").to_json(), msg("m2", committed=False).to_json()
    record = ErrorRecord(run_id="r", error={"type": "E", "message": "boom"}).to_json()
    turn = TurnRecord(turn_id="T1", thread_id=thread, outcome="completed").to_json()
    fact = Fact("s", "st", "w", "src", "ev", "2026-01-01").to_json()
    steps: list[tuple[str, dict[str, object], str | None]] = [
        ("hello", {"protocol": "memconform.stdio/1"}, None),
        ("append", {"thread_id": thread, "batch": [m1, m2]}, None),
        ("append", {"thread_id": thread, "batch": [m1]}, "duplicate-id"),
        ("messages", {"thread_id": thread, "limit": None, "include_uncommitted": False}, None),
        ("messages", {"thread_id": thread, "limit": -1, "include_uncommitted": False}, "value"),
        ("messages", {"thread_id": thread, "limit": 1, "include_uncommitted": True}, None),
        ("set_committed", {"thread_id": thread, "message_ids": ["m2"], "committed": True}, None),
        ("set_committed", {"thread_id": thread, "message_ids": ["zz"], "committed": True}, "key"),
        ("record_error", {"thread_id": thread, "record": record}, None),
        ("errors", {"thread_id": thread}, None),
        ("append_record", {"record": turn}, None),
        ("records", {"thread_id": thread}, None),
        ("records", {"thread_id": None}, None),
        ("read_state", {"scope": scope, "key": "k"}, None),
        ("write_state", {"scope": scope, "key": "k", "value": [1, 2.5],
                         "expected_version": None}, None),
        ("write_state", {"scope": scope, "key": "k", "value": 0,
                         "expected_version": 7}, "conflict"),
        ("read_state", {"scope": scope, "key": "k"}, None),
        ("put_fact", {"scope": scope, "fact": fact}, None),
        ("get_fact", {"scope": scope, "subject": "s"}, None),
        ("facts", {"scope": scope}, None),
        ("forget", {"scope": scope, "subject": "s"}, None),
        ("get_fact", {"scope": scope, "subject": "s"}, None),
        ("close", {}, None),
    ]
    return [
        ({"id": i, "method": method, "params": params}, kind)
        for i, (method, params, kind) in enumerate(steps, start=1)
    ]


def converse(command: list[str], requests: list[dict[str, object]]) -> list[dict[str, object]]:
    """Send every request to a stdio store at once and return its answers."""
    text = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run(
        command, input=text, capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # only "\n" ends a line: U+2028 and friends may stand raw inside JSON strings
    return [json.loads(line) for line in done.stdout.split("\n") if line]


def check_conversation(command: list[str]) -> None:
    """Run :func:`conversation` against ``command`` and check every line against
    the protocol's JSON Schema and every answer against what it must be."""
    import jsonschema  # type: ignore[import-untyped]

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    steps = conversation(fresh(), fresh("scope"))
    requests = [r for r, _ in steps]
    answers = converse(command, requests)
    assert len(answers) == len(requests)
    for (request, kind), answer in zip(steps, answers, strict=True):
        validator.validate(request)
        validator.validate(answer)
        assert answer["id"] == request["id"]
        if kind is None:
            assert "result" in answer, (request["method"], answer)
            result_schema = {
                "$ref": f"#/$defs/{request['method']}_result", "$defs": schema["$defs"],
            }
            jsonschema.Draft202012Validator(result_schema).validate(answer["result"])
        else:
            error = answer.get("error")
            assert isinstance(error, dict), (request["method"], answer)
            assert error["kind"] == kind, (request["method"], answer)
    by_method = {r["id"]: a for (r, _), a in zip(steps, answers, strict=True)}
    assert by_method[4]["result"] == [rich_message("m1").to_json()]
    assert by_method[17]["result"] == {"key": "k", "value": [1, 2.5], "version": 1}
    assert by_method[22]["result"] is None


NO_ROW_POINT = frozenset({"ST-016"})
"""Rules a store whose rows the kit's in-process row point cannot reach (a
server-side script, a store in another process) gets ``inconclusive``: the
kit cannot inject a failure in the middle of its batch. Such adapters do not
call the row point where no row is written (it would make the fault miss the
write and pass); see memconform/adapters/redis.py."""


def check_store_features(
    url: str, tmp_path: Path, inconclusive: frozenset[str] = frozenset()
) -> None:
    """Run the ``store`` profile's features against ``url`` in a child pytest and
    require every scenario to pass or be unsupported (a capability not declared);
    the rules in ``inconclusive`` must be exactly that."""
    from tests.mutant_harness import run_suite

    outcomes = run_suite("tests/features/test_store.py", tmp_path, "--memconform-store", url)
    assert outcomes, "the store features ran no scenario"
    bad = [
        f"{o['scenario']}: {o['outcome']}: {str(o['message'])[:300]}"
        for o in outcomes
        if (o["outcome"] != "inconclusive" if set(o["rules"]) & inconclusive
            else o["outcome"] not in ("passed", "unsupported"))
    ]
    assert not bad, "\n".join(bad)
