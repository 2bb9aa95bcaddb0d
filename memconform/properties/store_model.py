"""A stateful comparison of any store with the reference memory store.

:class:`StoreModel` is a Hypothesis ``RuleBasedStateMachine``: every operation
(append, window reads, commit flags, error records, turn records, state, facts)
runs on the store under test and on a fresh :class:`MemoryStore`, and every
answer is compared. A divergence raises :class:`Divergence`, which names the
rules it breaks and carries the operations that led to it, so the shrunk
counterexample can be exported as a Gherkin scenario (see ``export``).

Text a store declares it cannot hold (``UnsupportedValueError``, for example
NUL in PostgreSQL) is allowed to be refused: the reference then forgets that
batch too, and the comparison goes on.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from memconform.adapters.contract import (
    Capability,
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
)
from memconform.adapters.memory import MemoryStore
from memconform.adapters.proxy import AdapterContractError, RecordingStore
from memconform.properties.strategies import facts, json_values, message_batches
from memconform.values import ErrorRecord, Fact, JSONValue, Message, TurnRecord

__all__ = ["Divergence", "KeyedModel", "MessageModel", "StoreModel", "model_for"]

THREADS = ("A", "B")
SCOPES = ("X", "Y")
IDS = st.sampled_from(tuple(f"m{i}" for i in range(8)))
_namespaces = itertools.count(1)
_RUN = uuid.uuid4().hex[:8]
"""Keeps this run's threads apart from earlier runs' on a server that keeps data."""


class Divergence(AssertionError):
    """The store under test answered differently from the reference.

    ``rules`` are the rule ids the operation checks; ``steps`` are the operations
    run so far (JSON), the last one being the divergent one.
    """

    def __init__(
        self, rules: tuple[str, ...], what: str, expected: Any, observed: Any,
        steps: list[dict[str, JSONValue]],
    ) -> None:
        super().__init__(f"{what}\nexpected:\n{expected!r}\nobserved:\n{observed!r}")
        self.rules = rules
        self.what = what
        self.expected = repr(expected)
        self.observed = repr(observed)
        self.steps = list(steps)


def _windows(size: int) -> list[int]:
    """Window sizes worth asking a thread of ``size`` messages for: every size up to
    eight, and the sizes around the thread's own length."""
    return sorted({*range(min(size, 8) + 1), size - 1, size, size + 1} - {-1})


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """``("ok", value)`` or ``("raised", exception class name)``; contract breaks propagate."""
    try:
        return "ok", call()
    except AdapterContractError:
        raise
    except (DuplicateIdError, ConflictError, UnsupportedValueError) as exc:
        return "raised", type(exc).__name__
    except StoreError:
        return "raised", "StoreError"
    except (ValueError, KeyError) as exc:
        return "raised", type(exc).__name__


class _Model(RuleBasedStateMachine):
    """Shared state: the store under test, the reference and the operations run."""

    store: RecordingStore  # set by model_for

    def __init__(self) -> None:
        super().__init__()
        self.reference = MemoryStore()
        self.space = f"prop{_RUN}-{next(_namespaces)}"
        self.steps: list[dict[str, JSONValue]] = []

    # -- helpers ----------------------------------------------------------------------

    def thread(self, name: str) -> str:
        return f"{self.space}-{name}"

    def scope(self, name: str) -> str:
        return f"{self.space}-{name}"

    def check(
        self, rules: tuple[str, ...], what: str, expected: Any, observed: Any
    ) -> None:
        if expected != observed:
            raise Divergence(rules, what, expected, observed, self.steps)

    def compare(
        self, rules: tuple[str, ...], what: str,
        expected: Callable[[], Any], observed: Callable[[], Any],
    ) -> None:
        """Run both reads and compare their outcomes (a value, or the error raised)."""
        self.check(rules, what, _outcome(expected), _outcome(observed))

    def can(self, capability: Capability) -> bool:
        return capability.value in self.store.capabilities

    @initialize()
    def start(self) -> None:
        self.steps = []


class MessageModel(_Model):
    """Appends, windows, commit flags and error records: the transcript side."""

    # -- core -----------------------------------------------------------------------

    @rule(thread=st.sampled_from(THREADS), batch=message_batches(IDS, lone_surrogates=True))
    def append(self, thread: str, batch: list[Message]) -> None:
        self.steps.append(
            {"op": "append", "thread": thread, "batch": [m.to_json() for m in batch]}
        )
        observed = _outcome(lambda: self.store.append(self.thread(thread), batch))
        if observed == ("raised", "UnsupportedValueError"):
            # Refusing text the store cannot hold (NUL in PostgreSQL, a lone
            # surrogate anywhere) is conformant: the reference skips the batch too.
            # A store that refuses but keeps part of it diverges on the next read.
            return
        expected = _outcome(lambda: self.reference.append(self.thread(thread), batch))
        self.check(
            ("ST-001", "ST-010", "ST-011", "ST-012", "ST-015"), "append outcome", expected, observed
        )

    @rule(thread=st.sampled_from(THREADS), count=st.integers(101, 130))
    def append_many(self, thread: str, count: int) -> None:
        """A long thread: unlimited reads must return every message (no silent cap)."""
        start = sum(1 for s in self.steps if s["op"] == "append_many")
        batch = [
            Message(id=f"bulk{start}-{i}", role="user", text=f"message {i}")
            for i in range(count)
        ]
        self.steps.append({"op": "append_many", "thread": thread, "count": count})
        expected = _outcome(lambda: self.reference.append(self.thread(thread), batch))
        observed = _outcome(lambda: self.store.append(self.thread(thread), batch))
        self.check(("ST-001",), "append outcome of a long batch", expected, observed)
        self.compare(
            ("ST-006",), "how many messages messages() returns for a long thread",
            lambda: len(self.reference.messages(self.thread(thread))),
            lambda: len(self.store.messages(self.thread(thread))),
        )

    @rule(thread=st.sampled_from(THREADS))
    def change_what_was_read(self, thread: str) -> None:
        """Changing a read's result must not change what is stored."""
        self.steps.append({"op": "change_what_was_read", "thread": thread})
        _, got = _outcome(partial(self.store.messages, self.thread(thread)))
        if not isinstance(got, list):
            return  # a refused read diverges in `read`, with the rules of reads
        for message in got:
            if isinstance(message.metadata, dict):
                message.metadata["changed by the caller"] = True
            for part in message.parts:
                if isinstance(part, dict):
                    part["changed by the caller"] = True
        got.clear()
        self.compare(
            ("ST-007",), "messages() after the caller changed an earlier result",
            partial(self.reference.messages, self.thread(thread)),
            partial(self.store.messages, self.thread(thread)),
        )

    @rule(thread=st.sampled_from(THREADS))
    def read(self, thread: str) -> None:
        """Every read of the thread at once: no limit, a negative one, zero, and
        every window up to one past the thread's length."""
        self.steps.append({"op": "messages", "thread": thread})
        size = len(self.reference.messages(self.thread(thread)))
        for limit in (None, -1, *_windows(size)):
            expected = _outcome(partial(self.reference.messages, self.thread(thread), limit))
            observed = _outcome(partial(self.store.messages, self.thread(thread), limit))
            rules: tuple[str, ...] = ("ST-003",)
            if limit is None:
                rules = ("ST-002", "ST-006", "ST-008", "ST-009", "ST-013", "ST-014")
            elif limit < 0:
                rules = ("ST-005",)
            elif limit == 0:
                rules = ("ST-004",)
            self.check(rules, f"messages(limit={limit})", expected, observed)

    # -- commit flags ---------------------------------------------------------------------

    @precondition(lambda self: self.can(Capability.COMMIT_FLAGS))
    @rule(thread=st.sampled_from(THREADS), data=st.data(), committed=st.booleans())
    def change_flags(self, thread: str, data: st.DataObject, committed: bool) -> None:
        """Change the flags of stored messages (now and then naming an unknown id)."""
        stored = [
            m.id for m in self.reference.messages(self.thread(thread), include_uncommitted=True)
        ]
        ids = (
            data.draw(st.lists(st.sampled_from(stored), max_size=3, unique=True)) if stored else []
        )
        if data.draw(st.integers(0, 9)) == 0:
            ids.append("never-stored")
        self.set_committed(thread, ids, committed)

    def set_committed(self, thread: str, ids: list[str], committed: bool) -> None:
        self.steps.append(
            {"op": "set_committed", "thread": thread, "ids": list(ids), "committed": committed}
        )
        expected = _outcome(
            lambda: self.reference.set_committed(self.thread(thread), ids, committed)
        )
        observed = _outcome(lambda: self.store.set_committed(self.thread(thread), ids, committed))
        self.check(("ST-017", "ST-020"), "set_committed outcome", expected, observed)

    @precondition(lambda self: self.can(Capability.COMMIT_FLAGS))
    @rule(thread=st.sampled_from(THREADS))
    def read_all(self, thread: str) -> None:
        """Reads with and without uncommitted messages, at every window size."""
        self.steps.append({"op": "messages", "thread": thread, "include_uncommitted": True})
        size = len(self.reference.messages(self.thread(thread), include_uncommitted=True))
        for limit in (None, *_windows(size)):
            for hidden in (True, False):
                self.compare(
                    ("ST-017", "ST-018", "ST-019"),
                    f"messages(limit={limit}, include_uncommitted={hidden})",
                    partial(self.reference.messages, self.thread(thread), limit,
                            include_uncommitted=hidden),
                    partial(self.store.messages, self.thread(thread), limit,
                            include_uncommitted=hidden),
                )

    # -- error records --------------------------------------------------------------------

    @precondition(lambda self: self.can(Capability.ERRORS))
    @rule(thread=st.sampled_from(THREADS), batch=message_batches(IDS, allow_nul=False))
    def record_error(self, thread: str, batch: list[Message]) -> None:
        record = ErrorRecord(
            run_id=f"run-{len(self.steps)}", error={"type": "Boom", "message": "failed"},
            messages=tuple(batch),
        )
        self.steps.append({"op": "record_error", "thread": thread, "record": record.to_json()})
        self.reference.record_error(self.thread(thread), record)
        self.store.record_error(self.thread(thread), record)
        self.compare(
            ("ST-021",), "messages() after record_error",
            partial(self.reference.messages, self.thread(thread)),
            partial(self.store.messages, self.thread(thread)),
        )
        self.compare(
            ("ST-022",), "errors()",
            partial(self.reference.errors, self.thread(thread)),
            partial(self.store.errors, self.thread(thread)),
        )


class KeyedModel(_Model):
    """Turn records, working state and durable knowledge: the keyed side."""

    # -- turn records -------------------------------------------------------------------

    @precondition(lambda self: self.can(Capability.TURN_RECORDS))
    @rule(
        thread=st.sampled_from(THREADS),
        outcome=st.sampled_from(("completed", "failed", "refused")),
        child=st.booleans(),
        tokens=st.integers(0, 10_000),
    )
    def append_record(self, thread: str, outcome: str, child: bool, tokens: int) -> None:
        n = len(self.steps)
        earlier = self.reference.records(self.thread(thread))
        record = TurnRecord(
            turn_id=f"T{n}", thread_id=self.thread(thread), outcome=outcome,
            parent_turn_id=earlier[0].turn_id if child and earlier else None,
            usage={"tokens": tokens},
        )
        self.steps.append({"op": "append_record", "record": record.to_json()})
        self.reference.append_record(record)
        self.store.append_record(record)
        self.compare(
            ("ST-023", "ST-024"), "records(thread)",
            partial(self.reference.records, self.thread(thread)),
            partial(self.store.records, self.thread(thread)),
        )

    # -- state --------------------------------------------------------------------------

    @precondition(lambda self: self.can(Capability.STATE))
    @rule(
        scope=st.sampled_from(SCOPES),
        key=st.sampled_from(("goal", "plan")),
        value=json_values,
        expected_version=st.none() | st.integers(1, 4),
    )
    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> None:
        self.steps.append({
            "op": "write_state", "scope": scope, "key": key, "value": value,
            "expected_version": expected_version,
        })
        space = self.scope(scope)
        expected = _outcome(
            lambda: self.reference.write_state(space, key, value, expected_version)
        )
        observed = _outcome(lambda: self.store.write_state(space, key, value, expected_version))
        self.check(("ST-025", "ST-026"), "write_state outcome", expected, observed)
        for other in SCOPES:
            self.compare(
                ("ST-025", "ST-026", "ST-027"), f"read_state in scope {other} after a write",
                partial(self.reference.read_state, self.scope(other), key),
                partial(self.store.read_state, self.scope(other), key),
            )

    # -- knowledge ----------------------------------------------------------------------

    @precondition(lambda self: self.can(Capability.KNOWLEDGE))
    @rule(
        scope=st.sampled_from(SCOPES),
        fact=st.sampled_from(("editor", "timezone")).flatmap(facts),
    )
    def put_fact(self, scope: str, fact: Fact) -> None:
        self.steps.append({"op": "put_fact", "scope": scope, "fact": fact.to_json()})
        self.reference.put_fact(self.scope(scope), fact)
        self.store.put_fact(self.scope(scope), fact)
        for other in SCOPES:
            self.compare(
                ("ST-028", "ST-029", "ST-031"), f"facts() of scope {other}",
                partial(self.reference.facts, self.scope(other)),
                partial(self.store.facts, self.scope(other)),
            )

    @precondition(lambda self: self.can(Capability.KNOWLEDGE))
    @rule(scope=st.sampled_from(SCOPES), subject=st.sampled_from(("editor", "timezone")))
    def forget(self, scope: str, subject: str) -> None:
        self.steps.append({"op": "forget", "scope": scope, "subject": subject})
        expected = self.reference.forget(self.scope(scope), subject)
        observed = self.store.forget(self.scope(scope), subject)
        self.check(("ST-030",), "forget answer", expected, observed)
        for other in SCOPES:
            self.compare(
                ("ST-030", "ST-031"), f"get_fact in scope {other} after forget",
                partial(self.reference.get_fact, self.scope(other), subject),
                partial(self.store.get_fact, self.scope(other), subject),
            )



class StoreModel(MessageModel, KeyedModel):
    """Every operation; used to replay exported counterexamples."""

    def replay(self, step: dict[str, Any]) -> None:
        """Apply one recorded operation (as written in ``steps``) to both stores."""
        op = step["op"]
        if op == "append":
            self.append(step["thread"], [Message.from_json(m) for m in step["batch"]])
        elif op == "messages" and step.get("include_uncommitted"):
            self.read_all(step["thread"])
        elif op == "messages":
            self.read(step["thread"])
        elif op == "set_committed":
            self.set_committed(step["thread"], step["ids"], step["committed"])
        elif op == "record_error":
            record = ErrorRecord.from_json(step["record"])
            self.record_error(step["thread"], list(record.messages))
        elif op == "append_record":
            record_json = step["record"]
            self.append_record(
                record_json["thread_id"].rsplit("-", 1)[-1], record_json["outcome"],
                record_json["parent_turn_id"] is not None, record_json["usage"]["tokens"],
            )
        elif op == "append_many":
            self.append_many(step["thread"], step["count"])
        elif op == "change_what_was_read":
            self.change_what_was_read(step["thread"])
        elif op == "write_state":
            self.write_state(step["scope"], step["key"], step["value"], step["expected_version"])
        elif op == "put_fact":
            self.put_fact(step["scope"], Fact.from_json(step["fact"]))
        elif op == "forget":
            self.forget(step["scope"], step["subject"])
        else:
            raise ValueError(f"unknown recorded operation {op!r}")


def model_for(store: RecordingStore, base: type[_Model] = StoreModel) -> type[Any]:
    """A subclass of ``base`` (a model class of this module) bound to ``store``."""
    return type(f"Bound{base.__name__}", (base,), {"store": store})
