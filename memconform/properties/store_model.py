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

import copy
import itertools
import re
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import replace
from functools import cache, partial
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from memconform.adapters.memory import MemoryStore
from memconform.contract import (
    Capability,
    ConflictError,
    DuplicateIdError,
    StoreError,
    UnsupportedValueError,
)
from memconform.excerpt import shown
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.properties.strategies import facts, json_values, message_batches
from memconform.values import (
    ErrorRecord,
    Fact,
    JSONValue,
    Message,
    TurnRecord,
    same_value,
    scribble,
)

__all__ = [
    "Divergence", "KeyedModel", "MessageModel", "StoreModel", "listing_rules", "model_for",
    "replayed",
]

THREADS = ("A", "B")
TWINS = (
    "a", "A ", "A:x", "A/x", "A.x", "A_", "A%", "A*", "A\u030a", "\u00c5", "\u212b", "b", "B?",
)
"""Look-alikes of the threads ``A`` and ``B`` (ST-035): longer ids they begin (a store
matching by prefix, or reading ``_ % * ?`` as wildcards, mixes them in), letter-case and
trailing-space twins (a case-insensitive collation), and three spellings of Å (composed,
A with a combining ring, the Angstrom sign: a store normalising Unicode takes them for
one). A twin thread is written only by ``append_to_twin``, which then compares every
thread of the example, so a store mixing look-alikes diverges under ST-035 at once."""
LONG = "L"
"""The thread that gets one long batch (over a hundred messages) per example; it is
read like the others but kept out of the commit-flag rules, whose every-window
comparisons would make each example, and so the shrinking, slow."""
JOBS = (
    "job/deploy-1", "job/deploy-2", "job/deploy-1/retry", "job/Deploy-1", "job/d\u00e9ploy",
    "job/de\u0301ploy",
)
"""Working-state scopes named as a runtime names one job's scope: two sibling jobs,
a job nested under another (a store that matches scopes by prefix mixes them), one
that differs only in case (so does a store that ignores case) and two spellings of
one accented name (so does a store normalising Unicode)."""
KNOWLEDGE = ("kb/alice", "kb/bob", "kb/alice/archive", "kb/Alice", "kb/Zo\u00eb", "kb/Zoe\u0308")
"""Knowledge scopes of the same shapes: two users, a nested one, a case twin and two
spellings of one accented name."""
STATE_KEYS = ("goal", "plan")
SUBJECTS = ("editor", "timezone")
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
        self.expected, self.observed = shown(expected, observed)
        super().__init__(f"{what}\nexpected:\n{self.expected}\nobserved:\n{self.observed}")
        self.rules = rules
        self.what = what
        self.steps = list(steps)


SEEN: list[Divergence] = []
"""Every divergence the models raised, in order (:func:`memconform.properties.
checks` empties it before a search): when a replay does not diverge again,
Hypothesis reports only that it could not repeat the failure, and the first
divergence seen still names the rules it broke."""


def _windows(size: int) -> list[int]:
    """Window sizes worth asking a thread of ``size`` messages for: every size up to
    eight, and the sizes around the thread's own length."""
    return sorted({*range(min(size, 8) + 1), size - 1, size, size + 1} - {-1})


@cache
def _bulk(start: int, count: int) -> list[Message]:
    """The long batch of ``append_many`` (built once: every example appends the same)."""
    return [Message(id=f"bulk{start}-{i}", role="user", text=f"message {i}") for i in range(count)]


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


def listing_rules(expected: tuple[str, Any], observed: tuple[str, Any]) -> tuple[str, ...]:
    """The rules a divergent ``facts()`` listing breaks. The same facts in another
    order break only ST-028 (one fact per subject, listed by subject): the
    provenance (ST-029) and scope isolation (ST-031) of every fact held, so the
    divergence is charged to the rule it breaks alone. Any other difference may
    come from any of the three."""
    if expected[0] == observed[0] == "ok":
        try:
            same = sorted(expected[1], key=repr) == sorted(observed[1], key=repr)
        except TypeError:
            same = False
        if same:
            return ("ST-028",)
    return ("ST-028", "ST-029", "ST-031")


def _look_alike(one: str, other: str) -> bool:
    """Whether two different ids would be taken for one by a store ignoring case or
    trailing spaces or normalising Unicode (ST-035)."""
    if one == other:
        return False

    def forms(value: str) -> set[str]:
        return {
            value.rstrip(" ").casefold(),
            unicodedata.normalize("NFC", value),
            unicodedata.normalize("NFKC", value).casefold(),
        }

    return bool(forms(one) & forms(other))


def _twins(one: str, other: str) -> bool:
    """Whether two different ids are look-alikes or one begins the other: where a
    careless store mixes them, the divergence is charged to ST-035."""
    if one == other:
        return False
    return one.startswith(other) or other.startswith(one) or _look_alike(one, other)


def _look_alike_ids(count: int, start: int) -> list[str]:
    """``count`` message ids that differ only in ways a careless store ignores: case,
    a trailing space, Unicode normalisation."""
    base = f"{start}"
    spellings = (
        f"{base}\u00e9", f"{base}e\u0301", f"{base}\u00c9", f"{base}\u00e9 ", f"{base}E\u0301",
    )
    return list(spellings[:count])


def _ids_of(outcome: tuple[str, Any]) -> tuple[str, Any]:
    """A read's outcome with each message reduced to its id."""
    kind, value = outcome
    if kind == "ok" and isinstance(value, list):
        return kind, [getattr(m, "id", m) for m in value]
    return outcome


_HARD = re.compile("[\x00\ud800-\udfff]")
"""NUL or a lone surrogate: the characters a store may refuse (ST-015)."""


def _holds_hard_text(batch: list[Message]) -> bool:
    """Whether any text of ``batch`` (message text, or a string in its parts or
    metadata) holds NUL or a lone surrogate: what a store may refuse (ST-015)."""

    def hard(value: Any) -> bool:
        if isinstance(value, str):
            return _HARD.search(value) is not None
        if isinstance(value, dict):
            return any(hard(k) or hard(v) for k, v in value.items())
        if isinstance(value, list | tuple):
            return any(hard(v) for v in value)
        return False

    return any(hard(m.text) or hard(list(m.parts)) or hard(dict(m.metadata)) for m in batch)


class _Model(RuleBasedStateMachine):
    """Shared state: the store under test, the reference and the operations run.

    Every thread, scope, state key and fact subject carries a namespace of its own
    for each generated example. A store that mixes threads or scopes then shows it
    inside one example, through data the example wrote itself, so the shrunk
    operations reproduce the divergence on a fresh store; data that earlier
    examples left behind never shows up under this example's names.
    """

    store: RecordingStore  # set by model_for

    def __init__(self) -> None:
        super().__init__()
        # A lone surrogate may be kept exactly or refused (ST-015): the reference
        # keeps it, and is skipped when the store under test refuses it.
        self.reference = MemoryStore(keep_lone_surrogates=True)
        self.space = f"prop{_RUN}-{next(_namespaces):06d}"
        self.steps: list[dict[str, JSONValue]] = []

    # -- helpers ----------------------------------------------------------------------

    def thread(self, name: str) -> str:
        return f"{self.space}-{name}"

    def scope(self, name: str) -> str:
        return f"{self.space}/{name}"

    def key(self, name: str) -> str:
        """A state key or fact subject of this example."""
        return f"{self.space}/{name}"

    def check(
        self, rules: tuple[str, ...], what: str, expected: Any, observed: Any
    ) -> None:
        if not same_value(expected, observed):
            found = Divergence(rules, what, expected, observed, self.steps)
            SEEN.append(found)
            raise found

    def compare(
        self, rules: tuple[str, ...], what: str,
        expected: Callable[[], Any], observed: Callable[[], Any],
    ) -> None:
        """Run both reads and compare their outcomes (a value, or the error raised)."""
        self.check(rules, what, _outcome(expected), _outcome(observed))

    def can(self, capability: Capability) -> bool:
        return capability.value in self.store.capabilities

    def changed_by_the_caller(
        self, what: str, handed_over: Any, read: Callable[[Any], Any]
    ) -> None:
        """ST-007 in both directions: change ``handed_over`` (what the caller gave the
        store) and what the store hands back from ``read(store)``, then ``read``
        both stores again: the answers must still agree."""
        scribble(handed_over)
        kind, value = _outcome(lambda: read(self.store))
        if kind == "ok":
            scribble(value)
        self.compare(
            ("ST-007",), f"{what} after the caller changed what it handed over and read",
            lambda: read(self.reference), lambda: read(self.store),
        )


class MessageModel(_Model):
    """Appends, windows, commit flags and error records: the transcript side."""

    def __init__(self) -> None:
        super().__init__()
        self.next_id = 0
        self.begun = 0

    @property
    def rules_run(self) -> bool:
        """Whether a rule has run since the example began (every rule records a step)."""
        return len(self.steps) > self.begun

    def stored(self, thread: str) -> list[Message]:
        """What the reference holds in ``thread``, uncommitted messages included."""
        return self.reference.messages(self.thread(thread), include_uncommitted=True)

    def holds_hidden(self, thread: str) -> bool:
        return any(not m.committed for m in self.stored(thread))

    # -- core -----------------------------------------------------------------------

    @initialize(
        first=message_batches(IDS, min_size=1, hidden=True),
        second=message_batches(IDS, min_size=1, hidden=True),
    )
    def begin(self, first: list[Message], second: list[Message]) -> None:
        """Every example starts with a few messages in each thread, some of them
        hidden, so that windows, flag changes and reads have something to work on
        from the first rule on."""
        self.append(THREADS[0], first, "fresh")
        self.append(THREADS[1], second, "fresh")
        self.begun = len(self.steps)

    @rule(
        thread=st.sampled_from((*THREADS, LONG)),
        batch=message_batches(IDS, lone_surrogates=True, hidden=True),
        naming=st.sampled_from(
            ("fresh", "fresh", "fresh", "as given", "repeated", "look-alike")
        ),
    )
    def append(self, thread: str, batch: list[Message], naming: str = "as given") -> None:
        """Append a batch. Most batches get ids the example has not used yet, so
        threads grow; some keep the drawn ids (which may repeat stored ones), some
        repeat an id within the batch, and some hold ids differing only in case, a
        trailing space or Unicode normalisation (all distinct: ST-035)."""
        if naming == "look-alike":
            ids = _look_alike_ids(len(batch), self.next_id)
            batch = [replace(m, id=i) for m, i in zip(batch, ids, strict=False)]
            self.next_id += 1
        elif naming != "as given":
            batch = [replace(m, id=f"m{self.next_id + i}") for i, m in enumerate(batch)]
            self.next_id += len(batch)
            if naming == "repeated" and len(batch) > 1:
                batch[-1] = replace(batch[-1], id=batch[0].id)
        if not self.can(Capability.COMMIT_FLAGS):
            # Only a store with commit flags is asked to keep hidden messages.
            batch = [replace(m, committed=True) for m in batch]
        self.steps.append(
            {"op": "append", "thread": thread, "batch": [m.to_json() for m in batch]}
        )
        rules = self._append_rules(thread, batch)
        given = copy.deepcopy(batch)  # the caller changes it afterwards (ST-007)
        observed = _outcome(lambda: self.store.append(self.thread(thread), given))
        if observed == ("raised", "UnsupportedValueError") and _holds_hard_text(batch):
            # Refusing text the store cannot hold (NUL in PostgreSQL, a lone
            # surrogate in UTF-8) is conformant: the reference skips the batch too.
            pass
        else:
            expected = _outcome(lambda: self.reference.append(self.thread(thread), batch))
            self.check(rules, "append outcome", expected, observed)
        # What the append left (all of the batch, or none of it when refused) is
        # judged here, under the append's rules, not by whichever read comes next;
        # messages kept but altered, under the rules of exact values.
        expected_thread = _outcome(lambda: self._whole_thread(self.reference, thread))
        observed_thread = _outcome(lambda: self._whole_thread(self.store, thread))
        self.check(
            rules, "the message ids in the thread right after the append",
            _ids_of(expected_thread), _ids_of(observed_thread),
        )
        exact = ("ST-013", "ST-014", "ST-015") if _holds_hard_text(batch) else ("ST-013", "ST-014")
        self.check(
            rules if rules == ("ST-035",) else exact, "the thread right after the append",
            expected_thread, observed_thread,
        )
        self.changed_by_the_caller(
            "the thread", given, lambda store: self._whole_thread(store, thread)
        )

    def _whole_thread(self, store: Any, thread: str) -> Any:
        """Every message of ``thread`` in ``store``, hidden ones too where flags exist."""
        if self.can(Capability.COMMIT_FLAGS):
            return store.messages(self.thread(thread), include_uncommitted=True)
        return store.messages(self.thread(thread))

    def _append_rules(self, thread: str, batch: list[Message]) -> tuple[str, ...]:
        """The rules an append of ``batch`` tests: the empty batch, a repeated id
        (within the batch, or of a stored message), hard text, or a plain batch."""
        ids = [m.id for m in batch]
        if not ids:
            return ("ST-012",)
        if len(set(ids)) < len(ids):
            return ("ST-011",)
        stored = self.reference.messages(self.thread(thread), include_uncommitted=True)
        if {m.id for m in stored} & set(ids):
            return ("ST-010",)
        known = [m.id for m in stored] + ids
        if any(_look_alike(one, other) for one in ids for other in known):
            return ("ST-035",)
        return ("ST-001", "ST-015") if _holds_hard_text(batch) else ("ST-001",)

    @rule(twin=st.sampled_from(TWINS), batch=message_batches(IDS, min_size=1, max_size=2))
    def append_to_twin(self, twin: str, batch: list[Message]) -> None:
        """Append a batch of fresh ids to a look-alike of ``A`` or ``B``."""
        batch = [replace(m, id=f"m{self.next_id + i}", committed=True) for i, m in enumerate(batch)]
        self.next_id += len(batch)
        self.twin_append(twin, batch)

    def twin_append(self, twin: str, batch: list[Message]) -> None:
        """Append ``batch`` to the look-alike thread ``twin``; then every thread of the
        example must read as in the reference. A store may refuse an id it cannot
        hold (``UnsupportedValueError``); it must never mix two (ST-035)."""
        self.steps.append(
            {"op": "append_to_twin", "thread": twin, "batch": [m.to_json() for m in batch]}
        )
        observed = _outcome(lambda: self.store.append(self.thread(twin), batch))
        if observed != ("raised", "UnsupportedValueError"):
            expected = _outcome(lambda: self.reference.append(self.thread(twin), batch))
            self.check(("ST-035",), "append outcome on a look-alike thread", expected, observed)
        for name in (*THREADS, twin, *(t for t in TWINS if t != twin)):
            self.compare(
                ("ST-035",), f"thread {name!r} after an append to the look-alike {twin!r}",
                partial(self._whole_thread, self.reference, name),
                partial(self._whole_thread, self.store, name),
            )

    @precondition(lambda self: not self.rules_run)
    @rule(count=st.integers(101, 130), thread=st.just(LONG))
    def append_many(self, count: int, thread: str = LONG) -> None:
        """A long batch: it is stored whole (no silent batch limit), and unlimited
        reads return every message (no silent cap).

        Only as an example's first rule, so that at most one long batch is written
        and every later rule can read it. (``thread`` is drawn although it is fixed:
        Hypothesis orders rules by their number of arguments and shrinks towards
        the first, and this, the costliest rule, is better not chosen as filler.)"""
        start = sum(1 for s in self.steps if s["op"] == "append_many")
        batch = _bulk(start, count)
        self.steps.append({"op": "append_many", "thread": thread, "count": count})
        expected = _outcome(lambda: self.reference.append(self.thread(thread), batch))
        observed = _outcome(lambda: self.store.append(self.thread(thread), batch))
        self.check(("ST-001",), "append outcome of a long batch", expected, observed)
        self.compare(
            ("ST-001",), f"the newest {count} messages right after a long append",
            lambda: [m.id for m in self.reference.messages(self.thread(thread), count)],
            lambda: [m.id for m in self.store.messages(self.thread(thread), count)],
        )
        self.compare(
            ("ST-006",), "how many messages messages() returns for a long thread",
            lambda: len(self.reference.messages(self.thread(thread))),
            lambda: len(self.store.messages(self.thread(thread))),
        )

    @rule(thread=st.sampled_from((*THREADS, LONG)))
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

    @rule(thread=st.sampled_from((*THREADS, LONG)))
    def read(self, thread: str) -> None:
        """Every read of the thread at once: no limit, a negative one, zero, and
        every window up to one past the thread's length."""
        self.steps.append({"op": "messages", "thread": thread})
        size = len(self.reference.messages(self.thread(thread)))
        hidden = self.holds_hidden(thread)
        for limit in (None, -1, *_windows(size)):
            expected = _outcome(partial(self.reference.messages, self.thread(thread), limit))
            observed = _outcome(partial(self.store.messages, self.thread(thread), limit))
            rules: tuple[str, ...] = ("ST-003", "ST-019") if hidden else ("ST-003",)
            if limit is None:
                rules = ("ST-002", "ST-006", "ST-008", "ST-009", "ST-013", "ST-014")
                if hidden:
                    rules = (*rules, "ST-017", "ST-018")
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
        stored = [m.id for m in self.stored(thread)]
        ids = (
            data.draw(st.lists(st.sampled_from(stored), max_size=3, unique=True)) if stored else []
        )
        if data.draw(st.integers(0, 9)) == 0:
            ids.append("never-stored")
        self.set_committed(thread, ids, committed)

    @precondition(lambda self: self.can(Capability.COMMIT_FLAGS))
    @rule(thread=st.sampled_from(THREADS), data=st.data())
    def hide(self, thread: str, data: st.DataObject) -> None:
        """Hide one to three visible messages of the thread."""
        visible = [m.id for m in self.stored(thread) if m.committed]
        ids = (
            data.draw(st.lists(st.sampled_from(visible), min_size=1, max_size=3, unique=True))
            if visible else []
        )
        self.set_committed(thread, ids, False)

    @precondition(lambda self: self.can(Capability.COMMIT_FLAGS))
    @rule(thread=st.sampled_from(THREADS), data=st.data())
    def show(self, thread: str, data: st.DataObject) -> None:
        """Make one to three hidden messages of the thread visible again."""
        hidden = [m.id for m in self.stored(thread) if not m.committed]
        ids = (
            data.draw(st.lists(st.sampled_from(hidden), min_size=1, max_size=3, unique=True))
            if hidden else []
        )
        self.set_committed(thread, ids, True)

    def set_committed(self, thread: str, ids: list[str], committed: bool) -> None:
        """Change flags on both stores, then compare every view of the thread."""
        self.steps.append(
            {"op": "set_committed", "thread": thread, "ids": list(ids), "committed": committed}
        )
        unknown = not set(ids) <= {m.id for m in self.stored(thread)}
        expected = _outcome(
            lambda: self.reference.set_committed(self.thread(thread), ids, committed)
        )
        observed = _outcome(lambda: self.store.set_committed(self.thread(thread), ids, committed))
        self.check(("ST-017", "ST-020"), "set_committed outcome", expected, observed)
        rules = ("ST-017", "ST-018", "ST-019")
        self.compare_views(thread, (*rules, "ST-020") if unknown else rules)

    @precondition(lambda self: self.can(Capability.COMMIT_FLAGS))
    @rule(thread=st.sampled_from(THREADS))
    def read_all(self, thread: str) -> None:
        """Reads with and without uncommitted messages, at every window size."""
        self.steps.append({"op": "messages", "thread": thread, "include_uncommitted": True})
        self.compare_views(thread, ("ST-017", "ST-018", "ST-019"))

    def compare_views(self, thread: str, rules: tuple[str, ...]) -> None:
        """Compare every read of the thread with and without uncommitted messages:
        no limit, and every window worth asking around both the number of visible
        messages and the number of all messages."""
        every = len(self.stored(thread))
        visible = len(self.reference.messages(self.thread(thread)))
        for limit in (None, *sorted({*_windows(every), *_windows(visible)})):
            for hidden in (False, True):
                self.compare(
                    rules, f"messages(limit={limit}, include_uncommitted={hidden})",
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
        given = copy.deepcopy(record)
        self.store.record_error(self.thread(thread), given)
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
        self.changed_by_the_caller(
            "errors()", given, lambda store: store.errors(self.thread(thread))
        )


class KeyedModel(_Model):
    """Turn records, working state and durable knowledge: the keyed side.

    After every write the records of every thread, the state of every key in
    every job scope, or the facts of every knowledge scope are compared, so a
    store that mixes threads or scopes diverges on the write itself."""

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
        given = copy.deepcopy(record)
        self.store.append_record(given)
        for other in THREADS:
            self.compare(
                ("ST-023", "ST-024"), f"records(thread {other})",
                partial(self.reference.records, self.thread(other)),
                partial(self.store.records, self.thread(other)),
            )
        self.changed_by_the_caller(
            "records()", given, lambda store: store.records(self.thread(thread))
        )

    # -- state --------------------------------------------------------------------------

    @precondition(lambda self: self.can(Capability.STATE))
    @rule(
        scope=st.sampled_from(JOBS),
        key=st.sampled_from(STATE_KEYS),
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
        space, name = self.scope(scope), self.key(key)
        expected = _outcome(
            lambda: self.reference.write_state(space, name, value, expected_version)
        )
        given = copy.deepcopy(value)
        observed = _outcome(lambda: self.store.write_state(space, name, given, expected_version))
        self.check(("ST-025", "ST-026"), "write_state outcome", expected, observed)
        for other in JOBS:
            rules = ("ST-035",) if _twins(other, scope) else ("ST-025", "ST-026", "ST-027")
            for each in STATE_KEYS:
                self.compare(
                    rules,
                    f"read_state of {each!r} in scope {other!r} after a write",
                    partial(self.reference.read_state, self.scope(other), self.key(each)),
                    partial(self.store.read_state, self.scope(other), self.key(each)),
                )
        self.changed_by_the_caller(
            f"read_state of {key!r} in scope {scope!r}", given,
            lambda store: store.read_state(space, name),
        )

    # -- knowledge ----------------------------------------------------------------------

    @precondition(lambda self: self.can(Capability.KNOWLEDGE))
    @rule(scope=st.sampled_from(KNOWLEDGE), fact=st.sampled_from(SUBJECTS).flatmap(facts))
    def put_fact(self, scope: str, fact: Fact) -> None:
        self.steps.append({"op": "put_fact", "scope": scope, "fact": fact.to_json()})
        named = replace(fact, subject=self.key(fact.subject))
        self.reference.put_fact(self.scope(scope), named)
        given = copy.deepcopy(named)
        self.store.put_fact(self.scope(scope), given)
        for other in KNOWLEDGE:
            expected = _outcome(partial(self.reference.facts, self.scope(other)))
            observed = _outcome(partial(self.store.facts, self.scope(other)))
            self.check(
                ("ST-035",) if _twins(other, scope) else listing_rules(expected, observed),
                f"facts() of scope {other!r}",
                expected, observed,
            )
        self.changed_by_the_caller(
            f"the fact about {fact.subject!r} in scope {scope!r}", given,
            lambda store: (
                store.get_fact(self.scope(scope), named.subject), store.facts(self.scope(scope))
            ),
        )

    @precondition(lambda self: self.can(Capability.KNOWLEDGE))
    @rule(scope=st.sampled_from(KNOWLEDGE), subject=st.sampled_from(SUBJECTS))
    def forget(self, scope: str, subject: str) -> None:
        self.steps.append({"op": "forget", "scope": scope, "subject": subject})
        expected = self.reference.forget(self.scope(scope), self.key(subject))
        observed = self.store.forget(self.scope(scope), self.key(subject))
        self.check(("ST-030",), "forget answer", expected, observed)
        for other in KNOWLEDGE:
            self.compare(
                ("ST-035",) if _twins(other, scope) else ("ST-030", "ST-031"),
                f"get_fact in scope {other!r} after forget",
                partial(self.reference.get_fact, self.scope(other), self.key(subject)),
                partial(self.store.get_fact, self.scope(other), self.key(subject)),
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
        elif op == "append_to_twin":
            self.twin_append(step["thread"], [Message.from_json(m) for m in step["batch"]])
        elif op == "append_many":
            self.append_many(step["count"], step["thread"])
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


def replayed(
    store: RecordingStore, steps: list[dict[str, JSONValue]],
    base: type[StoreModel] = StoreModel,
) -> Divergence | None:
    """Replay ``steps`` on ``store`` and the reference with a model of class
    ``base``, in a namespace of their own; the first divergence, or ``None``
    when they agree throughout."""
    model: StoreModel = model_for(store, base)()
    for step in steps:
        try:
            model.replay(step)
        except Divergence as divergence:
            return divergence
    return None
