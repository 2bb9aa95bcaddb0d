"""A deterministic pass over the legal space of the Store contract.

Where the generated checks draw a few values and small counts at random, the
sweep tries every value of :mod:`~memconform.properties.legal_space` in the
field it belongs to and climbs every ladder, comparing each answer of the store
under test with the reference memory store. Each section runs in a namespace of
its own (a fresh :class:`Sweep`), so a divergence carries only that section's
operations, which replay as an exported counterexample like any other.

A store may refuse a value it cannot hold (``UnsupportedValueError``) and store
nothing of that call; it may never keep the value altered.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from memconform.contract import Capability
from memconform.harness.proxy import RecordingStore
from memconform.properties import legal_space as space
from memconform.properties.store_model import StoreModel, _ids_of, _outcome, _twins, model_for
from memconform.values import ROLES, ErrorRecord, Fact, JSONValue, Message, TurnRecord, same_value

__all__ = ["SECTIONS", "Section", "Sweep", "sweep"]

_REFUSED = ("raised", "UnsupportedValueError")

HERE = "<space>"
"""Stands for the section's namespace inside a name (the joined scope-and-key
twins): expanded where the name is namespaced, so an exported counterexample
replayed in a namespace of its own still names twins that one joined string
would confuse."""


def _message(n: int, **fields: Any) -> Message:
    """The ``n``-th message of a section: roles in turn, a part on tool messages."""
    role = ROLES[n % len(ROLES)]
    parts: tuple[JSONValue, ...] = (
        ({"type": "tool_result", "call_id": f"call-{n}", "content": n},) if role == "tool" else ()
    )
    base = Message(id=f"m{n}", role=role, text=f"text {n}", parts=parts, metadata={"n": n})
    return replace(base, **fields)


def _ladder(name: str, below: int, above: int = 0) -> list[int]:
    """The steps of the count ladder ``name`` from ``above`` up to ``below``, the
    first few steps whatever ``above`` is, and the three around ``below`` itself
    (a window one short, exact, one past)."""
    ladder = space.COUNTS[name]
    steps = {n for n in ladder if above <= n <= below + 1} | set(ladder[:8])
    return sorted({n for n in steps if n <= below + 1} | {
        n for n in (below - 1, below, below + 1) if n >= 0})


class Sweep(StoreModel):
    """The store model with the sweep's operations; each records a step that
    :meth:`replay` repeats."""

    def scope(self, name: str) -> str:
        return super().scope(name.replace(HERE, self.space))

    def key(self, name: str) -> str:
        return super().key(name.replace(HERE, self.space))

    def put(self, thread: str, batch: list[Message], rules: Sequence[str] = ("ST-001",)) -> None:
        """Append ``batch`` as given; a refusal of a value the store cannot hold is
        accepted (the reference then skips the batch)."""
        self.steps.append({"op": "sweep_append", "thread": thread, "rules": list(rules),
                           "batch": [m.to_json() for m in batch]})
        given = copy.deepcopy(batch)
        observed = _outcome(lambda: self.store.append(self.thread(thread), given))
        if observed == _REFUSED:
            return
        expected = _outcome(lambda: self.reference.append(self.thread(thread), batch))
        self.check(tuple(rules), f"append outcome in thread {thread!r}", expected, observed)

    def look(self, thread: str, windows: Sequence[int] = (), *, hidden: bool | None = None,
             rules: Sequence[str] = ("ST-001", "ST-002", "ST-006"),
             exact: Sequence[str] = ("ST-013", "ST-014")) -> None:
        """Read the whole thread, its ids compared under ``rules`` (what is held,
        in which order) and then every field under ``exact``; and each window, ids
        compared. ``hidden`` also reads with ``include_uncommitted`` set so."""
        self.steps.append({"op": "sweep_read", "thread": thread, "windows": list(windows),
                           "hidden": hidden, "rules": list(rules), "exact": list(exact)})
        name = self.thread(thread)
        extra = {} if hidden is None else {"include_uncommitted": hidden}
        expected = _outcome(partial(self.reference.messages, name, **extra))
        observed = _outcome(partial(self.store.messages, name, **extra))
        what = f"messages() of thread {thread!r}{_shown(extra)}"
        self.check(tuple(rules), f"the ids of {what}", _ids_of(expected), _ids_of(observed))
        self.check(tuple(exact), what, expected, observed)
        window_rules = ("ST-003", "ST-019") if hidden is not None else ("ST-003",)
        held = [m.id for m in expected[1]] if expected[0] == "ok" else None
        for limit in windows:
            newest = _outcome(partial(self.reference.messages, name, limit, **extra))
            if held is not None:  # the reference's window, without copying it again
                newest = ("ok", held[max(0, len(held) - limit):] if limit else [])
            self.check(
                ("ST-004",) if limit == 0 else window_rules,
                f"the ids of messages(limit={limit}) of a thread of {len(held or ())}"
                f"{_shown(extra)}",
                _ids_of(newest),
                _ids_of(_outcome(partial(self.store.messages, name, limit, **extra))),
            )

    def flag(self, thread: str, ids: list[str], committed: bool) -> None:
        """Set the committed flag of ``ids``; both stores must answer alike."""
        self.steps.append({"op": "sweep_flag", "thread": thread, "ids": ids,
                           "committed": committed})
        name = self.thread(thread)
        expected = _outcome(lambda: self.reference.set_committed(name, ids, committed))
        observed = _outcome(lambda: self.store.set_committed(name, ids, committed))
        self.check(("ST-017", "ST-020"), "set_committed outcome", expected, observed)

    def keep_error(self, thread: str, record: ErrorRecord) -> None:
        """Record an error; a refused value is accepted, as for appends."""
        self.steps.append({"op": "sweep_error", "thread": thread, "record": record.to_json()})
        given = copy.deepcopy(record)
        if _outcome(lambda: self.store.record_error(self.thread(thread), given)) == _REFUSED:
            return
        self.reference.record_error(self.thread(thread), record)

    def look_errors(self, thread: str, rules: Sequence[str] = ("ST-022",)) -> None:
        self.steps.append({"op": "sweep_errors", "thread": thread, "rules": list(rules)})
        self.compare(tuple(rules), f"errors() of thread {thread!r}",
                     partial(self.reference.errors, self.thread(thread)),
                     partial(self.store.errors, self.thread(thread)))
        self.compare(("ST-021",), f"messages() of thread {thread!r} beside its error records",
                     partial(self.reference.messages, self.thread(thread)),
                     partial(self.store.messages, self.thread(thread)))

    def keep_record(self, record: TurnRecord) -> None:
        """Append a turn record of a thread of this section (``thread_id`` is
        the thread's name in the section; it is namespaced here)."""
        self.steps.append({"op": "sweep_record", "record": record.to_json()})
        named = replace(record, thread_id=self.thread(record.thread_id))
        given = copy.deepcopy(named)
        if _outcome(lambda: self.store.append_record(given)) == _REFUSED:
            return
        self.reference.append_record(named)

    def look_records(self, thread: str, rules: Sequence[str] = ("ST-023", "ST-024")) -> None:
        self.steps.append({"op": "sweep_records", "thread": thread, "rules": list(rules)})
        self.compare(tuple(rules), f"records() of thread {thread!r}",
                     partial(self.reference.records, self.thread(thread)),
                     partial(self.store.records, self.thread(thread)))

    def look_every_record(self, rules: Sequence[str] = ("ST-023", "ST-024")) -> None:
        """``records()`` with no thread: this section's records, in the order they
        were appended across its threads (other sections' records left out)."""
        self.steps.append({"op": "sweep_all_records", "rules": list(rules)})
        mine = f"{self.space}-"
        expected = _outcome(self.reference.records)
        observed = _outcome(self.store.records)
        if observed[0] == "ok" and isinstance(observed[1], list):
            observed = ("ok", [r for r in observed[1]
                               if str(getattr(r, "thread_id", "")).startswith(mine)])
        self.check(tuple(rules), "records() of every thread", expected, observed)

    def write(self, scope: str, key: str, value: JSONValue, expected_version: int | None,
              rules: Sequence[str] = ("ST-025", "ST-026")) -> None:
        """Write state; compare the outcome and the entry read back."""
        self.steps.append({"op": "sweep_write", "scope": scope, "key": key, "value": value,
                           "expected_version": expected_version, "rules": list(rules)})
        where, name = self.scope(scope), self.key(key)
        given = copy.deepcopy(value)
        observed = _outcome(lambda: self.store.write_state(where, name, given, expected_version))
        if observed != _REFUSED:
            expected = _outcome(
                lambda: self.reference.write_state(where, name, value, expected_version))
            self.check(tuple(rules), f"write_state outcome of {key!r} in {scope!r}",
                       expected, observed)
        self.look_state(scope, [key], rules)

    def look_state(self, scope: str, keys: Iterable[str],
                   rules: Sequence[str] = ("ST-025", "ST-027")) -> None:
        keys = list(keys)
        self.steps.append({"op": "sweep_state", "scope": scope, "keys": keys,
                           "rules": list(rules)})
        for key in keys:
            self.compare(tuple(rules), f"read_state of {key!r} in scope {scope!r}",
                         partial(self.reference.read_state, self.scope(scope), self.key(key)),
                         partial(self.store.read_state, self.scope(scope), self.key(key)))

    def keep_fact(self, scope: str, fact: Fact) -> None:
        """Store a fact whose subject is a name of this section."""
        self.steps.append({"op": "sweep_fact", "scope": scope, "fact": fact.to_json()})
        named = replace(fact, subject=self.key(fact.subject))
        given = copy.deepcopy(named)
        if _outcome(lambda: self.store.put_fact(self.scope(scope), given)) == _REFUSED:
            return
        self.reference.put_fact(self.scope(scope), named)

    def drop_fact(self, scope: str, subject: str) -> None:
        self.steps.append({"op": "sweep_forget", "scope": scope, "subject": subject})
        expected = _outcome(partial(self.reference.forget, self.scope(scope), self.key(subject)))
        observed = _outcome(partial(self.store.forget, self.scope(scope), self.key(subject)))
        self.check(("ST-030",), f"forget({subject!r}) in scope {scope!r}", expected, observed)

    def look_facts(self, scope: str, *, ordered: bool = True,
                   rules: Sequence[str] = ("ST-028", "ST-029", "ST-031")) -> None:
        """List the scope's facts; with ``ordered`` false, compare them as a set
        (the order of subjects beyond ASCII is the store's collation)."""
        self.steps.append({"op": "sweep_facts", "scope": scope, "ordered": ordered,
                           "rules": list(rules)})
        expected = _outcome(partial(self.reference.facts, self.scope(scope)))
        observed = _outcome(partial(self.store.facts, self.scope(scope)))
        if not ordered:
            expected, observed = _unordered(expected), _unordered(observed)
        elif "ST-028" in rules and same_value(_unordered(expected), _unordered(observed)):
            rules = ("ST-028",)  # the right facts out of order: only the listing's order
        self.check(tuple(rules), f"facts() of scope {scope!r}", expected, observed)

    def replay(self, step: dict[str, Any]) -> None:
        """Repeat a recorded sweep operation, or any operation of the store model."""
        op = step["op"]
        if op == "sweep_append":
            self.put(step["thread"], [Message.from_json(m) for m in step["batch"]], step["rules"])
        elif op == "sweep_read":
            self.look(step["thread"], step["windows"], hidden=step["hidden"],
                      rules=step["rules"], exact=step["exact"])
        elif op == "sweep_flag":
            self.flag(step["thread"], step["ids"], step["committed"])
        elif op == "sweep_error":
            self.keep_error(step["thread"], ErrorRecord.from_json(step["record"]))
        elif op == "sweep_errors":
            self.look_errors(step["thread"], step["rules"])
        elif op == "sweep_record":
            self.keep_record(TurnRecord.from_json(step["record"]))
        elif op == "sweep_records":
            self.look_records(step["thread"], step["rules"])
        elif op == "sweep_all_records":
            self.look_every_record(step["rules"])
        elif op == "sweep_write":
            self.write(step["scope"], step["key"], step["value"], step["expected_version"],
                       step["rules"])
        elif op == "sweep_state":
            self.look_state(step["scope"], step["keys"], step["rules"])
        elif op == "sweep_fact":
            self.keep_fact(step["scope"], Fact.from_json(step["fact"]))
        elif op == "sweep_forget":
            self.drop_fact(step["scope"], step["subject"])
        elif op == "sweep_facts":
            self.look_facts(step["scope"], ordered=step["ordered"], rules=step["rules"])
        else:
            super().replay(step)


def _shown(extra: dict[str, bool]) -> str:
    return f" (include_uncommitted={extra['include_uncommitted']})" if extra else ""


def _unordered(outcome: tuple[str, Any]) -> tuple[str, Any]:
    kind, value = outcome
    if kind == "ok" and isinstance(value, list):
        return kind, sorted(value, key=repr)
    return outcome


# -- sections ---------------------------------------------------------------------------


def long_thread(run: Sweep) -> None:
    """Batches of every size on the batch ladder into one thread, mixed roles; after
    each, the whole thread and every window on the window ladder up to its length.
    Then one batch of 1,001 messages into a thread of its own."""
    total = 0
    sizes = space.COUNTS["batch"][:-1]
    for size in sizes:
        run.put("L", [_message(total + i) for i in range(size)])
        total += size
        # the windows the thread has just grown past; every window at the end
        run.look("L", _ladder("window", total, 0 if size == sizes[-1] else total - size))
    big = space.COUNTS["batch"][-1]
    run.put("B", [_message(i) for i in range(big)])
    run.look("B", _ladder("window", big))
    refused = (("ST-010",), "m5"), (("ST-011",), "again")
    for size in (2, 101, 150, 1001):
        for rules, repeated in refused:
            batch = [_message(total + i, id=f"x{size}-{i}") for i in range(size)]
            batch[-1] = replace(batch[-1], id=repeated if repeated != "again" else batch[0].id)
            # accepting the batch breaks its rule alone; ST-016 is broken only by
            # a refusal that leaves part of the batch, which the read shows
            run.put("L", batch, rules)
            run.look("L", (1, size), rules=(*rules, "ST-016"))


def many_threads(run: Sweep) -> None:
    """A message in each of 65 threads, named from the identifier catalogue and
    numbered; every thread is read again at the end, after all were written."""
    names = [*space.IDENTIFIERS, *(f"t{n}" for n in range(65 - len(space.IDENTIFIERS)))]
    for n, name in enumerate(names):
        alone = _message(n, id="m0", text=f"only in thread {name!r}")
        run.put(name, [alone], _isolation(name, names))
    for name in names:
        run.look(name, (1,), rules=_isolation(name, names), exact=_isolation(name, names))


def _isolation(name: str, names: Sequence[str]) -> tuple[str, ...]:
    return ("ST-035",) if any(_twins(name, other) for other in names) else ("ST-009",)


def message_values(run: Sweep) -> None:
    """Every catalogue value in the message field it belongs to, one message per
    append, and the thread read whole after each field's values."""
    n = 0
    for field, values in space.FIELDS.items():
        if not field.startswith("Message.") or field in ("Message.id", "Message.committed"):
            continue
        name = field.split(".")[1]
        exact = ("ST-013", "ST-014") if name == "text" else ("ST-013",)
        for value in values:
            run.put("V", [_message(n, id=f"v{n}", **{name: value})], exact)
            n += 1
        run.look("V", (), rules=("ST-001",), exact=exact)
        run.change_what_was_read("V")
    for value in space.IDENTIFIERS:
        run.put("I", [_message(n, id=value)], ("ST-001", "ST-035"))
        n += 1
    run.look("I", (), rules=("ST-001", "ST-035"), exact=("ST-013", "ST-035"))


def commit_flags(run: Sweep) -> None:
    """A thread of 1,001 with every third message hidden (long enough to cross the
    page sizes of a store that reads in pages and drops hidden rows after), then a
    block of 100 hidden and a spread shown again: every window on the ladder,
    with and without uncommitted messages, after each change; then every
    catalogue value of a message's text, parts, metadata and round hidden and
    shown again."""
    size = space.COUNTS["batch"][-1]
    run.put("F", [_message(i, committed=i % 3 != 0) for i in range(size)],
            ("ST-001", "ST-018"))
    every = _ladder("window", size)
    views = (("ST-018", "ST-019"), ("ST-017", "ST-019"))
    for rules, change in zip(views, (None, (range(100, 200), False)), strict=True):
        if change is not None:
            ids, committed = change
            run.flag("F", [f"m{i}" for i in ids], committed)
        for hidden in (False, True):
            run.look("F", every, hidden=hidden, rules=rules, exact=rules)
    run.flag("F", [f"m{i}" for i in range(0, size, 7)], True)
    for hidden in (False, True):
        run.look("F", every, hidden=hidden, rules=("ST-017", "ST-019"),
                 exact=("ST-017", "ST-019"))
    # a flag change keeps every other field exactly (a store that rewrites the
    # message to change its flag must not round or recode what it holds): each
    # catalogue value in a message of its own, hidden, then shown again
    n = 0
    for field in ("Message.text", "Message.parts", "Message.metadata", "Message.round"):
        name = field.split(".")[1]
        for value in space.FIELDS[field]:
            run.put("G", [_message(n, id=f"g{n}", **{name: value})])
            n += 1
    held = [m.id for m in run.reference.messages(run.thread("G"), include_uncommitted=True)]
    for committed in (False, True):
        run.flag("G", held, committed)
        run.look("G", (), hidden=not committed, rules=("ST-017",), exact=("ST-013", "ST-017"))
    for place in (0, 1, 50):  # an unknown id first, second, after fifty known ones
        known = [f"m{i}" for i in range(3, 3 + place * 3, 3)]
        run.flag("F", [*known, "never-stored", "m1"], False)
        run.look("F", (), hidden=True, rules=("ST-020",), exact=("ST-020",))


def error_records(run: Sweep) -> None:
    """Error records up to the ladder's top in one thread, their fields from the
    catalogues, some carrying messages; errors() at every step of the ladder;
    records carrying messages the thread holds, read again after those change."""
    run.put("E", [_message(i) for i in range(3)])
    top = max(space.COUNTS["error records per thread"])
    checks = set(space.COUNTS["error records per thread"])
    details = space.FIELDS["ErrorRecord.error"]
    for n in range(1, top + 1):
        record = ErrorRecord(
            run_id=_pick(space.FIELDS["ErrorRecord.run_id"], n), error=_pick(details, n),  # type: ignore[arg-type]
            messages=tuple(_message(1000 + n * 3 + i) for i in range(n % 3)),
            scope=_pick(space.FIELDS["ErrorRecord.scope"], n),  # type: ignore[arg-type]
            recorded_at=_pick(space.FIELDS["ErrorRecord.recorded_at"], n),  # type: ignore[arg-type]
        )
        run.keep_error("E", record)
        if n in checks:
            run.look_errors("E")
    # a record carrying messages the thread holds (document 000: the run's new
    # messages, stored ones included), one under a stored id with other content;
    # then the stored ones change: the records still hold what was recorded
    stored = [_message(i) for i in range(3)]
    run.keep_error("E", ErrorRecord(run_id="run-stored", error={"type": "Stop"},
                                    messages=tuple(stored)))
    run.keep_error("E", ErrorRecord(run_id="run-other", error={"type": "Stop"},
                                    messages=(replace(stored[1], text="another text"),)))
    run.look_errors("E")
    if run.can(Capability.COMMIT_FLAGS):
        run.flag("E", ["m1"], False)
        run.look_errors("E")
    names = space.IDENTIFIERS
    for n, name in enumerate(names):
        run.keep_error(name, ErrorRecord(run_id=f"run-{n}", error={"thread": name}))
    for name in names:
        run.look_errors(name, _isolation(name, names))


def turn_records(run: Sweep) -> None:
    """Turn records up to the ladder's top in one thread (a few in a second one),
    every record field from its catalogue; records() of both at every step, and
    of every thread at the end."""
    top = max(space.COUNTS["turn records per thread"])
    checks = set(space.COUNTS["turn records per thread"])
    fields = space.FIELDS
    ids = fields["TurnRecord.turn_id"]
    for n in range(1, top + 1):
        record = TurnRecord(
            turn_id=f"T{n}-{_pick(ids, n)}",
            thread_id="R" if n % 10 else "S",
            outcome=_pick(fields["TurnRecord.outcome"], n),  # type: ignore[arg-type]
            parent_turn_id=None if n % 4 else f"T{n - 1}-{_pick(ids, n - 1)}",
            continues_from=_pick(fields["TurnRecord.continues_from"], n),  # type: ignore[arg-type]
            grant=_pick(fields["TurnRecord.grant"], n),  # type: ignore[arg-type]
            steps_used=_pick(fields["TurnRecord.steps_used"], n),  # type: ignore[arg-type]
            tier=_pick(fields["TurnRecord.tier"], n),  # type: ignore[arg-type]
            fallbacks=_pick(fields["TurnRecord.fallbacks"], n),  # type: ignore[arg-type]
            usage=_pick(fields["TurnRecord.usage"], n),  # type: ignore[arg-type]
            timing=_pick(fields["TurnRecord.timing"], n),  # type: ignore[arg-type]
            metadata=_pick(fields["TurnRecord.metadata"], n),  # type: ignore[arg-type]
        )
        run.keep_record(record)
        if n in checks:
            run.look_records("R")
            run.look_records("S")
    names = space.IDENTIFIERS
    for n, name in enumerate(names):
        run.keep_record(TurnRecord(turn_id=f"U{n}", thread_id=name, outcome="completed"))
    for name in names:
        twins = _isolation(name, names)
        run.look_records(name, ("ST-024", "ST-035") if twins == ("ST-035",) else ("ST-024",))
    run.look_every_record()  # across all its threads, in append order


def working_state(run: Sweep) -> None:
    """Keys up to the ladder's top in one scope, named and valued from the
    catalogues; one key written up to the top of its ladder (every tenth write
    rewriting the value already stored, a stale write refused at each step); the
    same key in every scope of the identifier catalogue."""
    keys = [*space.IDENTIFIERS, *(f"key{n}" for n in range(101 - len(space.IDENTIFIERS)))]
    values = space.FIELDS["StateEntry.value"]
    for n, key in enumerate(keys, 1):
        run.write("job", key, _pick(values, n), None)
        if n in space.COUNTS["keys per scope"]:
            run.look_state("job", keys[:n], ("ST-025", "ST-035"))
    value: JSONValue = "first"
    for version in range(1, max(space.COUNTS["writes of one key"]) + 1):
        value = value if version % 10 == 0 else f"value {version}"
        run.write("job", "counter", value, version - 1 or None)
        if version in space.COUNTS["writes of one key"] and version > 1:
            run.write("job", "counter", "stale", version - 1, ("ST-026",))
            run.write("job", "counter", "stale", None, ("ST-026",))
            run.write("job", "counter", "stale", version + 1, ("ST-026",))
    for version, twin in enumerate(space.TWINS):  # a near-identical value is still written
        run.write("job", "twin", twin, version or None)
    for n, scope in enumerate(space.IDENTIFIERS):
        run.write(scope, "shared", n, None, ("ST-025", "ST-027", "ST-035"))
    run.look_state("job", ["counter"], ("ST-025", "ST-026"))
    for scope in space.IDENTIFIERS:
        run.look_state(scope, ["shared"], ("ST-027", "ST-035"))
    for n, (scope, key, other_scope, other_key) in enumerate(_joined()):
        run.write(scope, key, f"first {n}", None, ("ST-027", "ST-035"))
        run.write(other_scope, other_key, f"second {n}", None, ("ST-027", "ST-035"))
        run.look_state(scope, [key], ("ST-027", "ST-035"))
        run.look_state(other_scope, [other_key], ("ST-027", "ST-035"))


def _joined() -> list[tuple[str, str, str, str]]:
    """Pairs of (scope, key) that one string would name if a store joined a scope
    and a key (both namespaced) with a separator of the catalogue: the scope
    ``a<sep><ns>/b`` with the key ``c``, and the scope ``a`` with the key
    ``b<sep><ns>/c`` (``<ns>`` written as :data:`HERE`)."""
    return [(f"a{sep}{HERE}/b", "c", "a", f"b{sep}{HERE}/c") for sep in space.SEPARATORS]


def knowledge(run: Sweep) -> None:
    """Facts up to the ladder's top in one scope (subjects of one width, so the
    order is plain), listed at every step; every field from its catalogue; a
    third superseded and a fifth forgotten, listed again; the fifth forgotten
    again and a tenth stored again; then the subject catalogue in a scope of its
    own and one subject in every catalogue scope."""
    top = max(space.COUNTS["facts per scope"])
    for n in range(1, top + 1):
        run.keep_fact("kb", _fact(f"s{n:03d}", n))
        if n in space.COUNTS["facts per scope"]:
            run.look_facts("kb")
    for n in range(1, top + 1, 3):
        run.keep_fact("kb", _fact(f"s{n:03d}", n + 7))
    run.look_facts("kb")
    for statement in space.TWINS:  # a near-identical statement still replaces
        run.keep_fact("twins", replace(_fact("subject", 0), statement=statement))
        run.look_facts("twins", rules=("ST-028", "ST-029"))
    for n in range(1, top + 1, 5):
        run.drop_fact("kb", f"s{n:03d}")
    run.look_facts("kb", rules=("ST-028", "ST-030"))
    for n in range(1, top + 1, 5):  # forgotten already: nothing is there to forget
        run.drop_fact("kb", f"s{n:03d}")
    run.drop_fact("kb", "never-stored")
    for n in range(1, top + 1, 10):  # a forgotten subject stored again is there again
        run.keep_fact("kb", _fact(f"s{n:03d}", n + 11))
    run.look_facts("kb", rules=("ST-028", "ST-030"))
    for n, subject in enumerate(space.IDENTIFIERS):
        run.keep_fact("names", _fact(subject, n))
    run.look_facts("names", ordered=False, rules=("ST-029", "ST-035"))
    run.look_facts("names", rules=("ST-028",))  # ordered by subject, code point by code point
    for n, (scope, subject, other_scope, other_subject) in enumerate(_joined()):
        run.keep_fact(scope, _fact(subject, n))
        run.keep_fact(other_scope, _fact(other_subject, n + 1))
        run.look_facts(scope, rules=("ST-031", "ST-035"))
        run.look_facts(other_scope, rules=("ST-031", "ST-035"))
    for n, scope in enumerate(space.IDENTIFIERS):
        run.keep_fact(scope, _fact("shared", n))
    for scope in space.IDENTIFIERS:
        run.look_facts(scope, rules=("ST-031", "ST-035"))


def _fact(subject: str, n: int) -> Fact:
    fields = space.FIELDS
    return Fact(
        subject=subject,
        statement=_pick(fields["Fact.statement"], n)[:4097],  # type: ignore[index]
        writer=_pick(fields["Fact.writer"], n),  # type: ignore[arg-type]
        source=_pick(fields["Fact.source"], n + 1)[:4097],  # type: ignore[index]
        evidence=_pick(fields["Fact.evidence"], n + 2)[:4097],  # type: ignore[index]
        written_at=_pick(fields["Fact.written_at"], n),  # type: ignore[arg-type]
        kind=_pick(fields["Fact.kind"], n),  # type: ignore[arg-type]
        trust=_pick(fields["Fact.trust"], n),  # type: ignore[arg-type]
        origin=_pick(fields["Fact.origin"], n),  # type: ignore[arg-type]
        recheck_at=_pick(fields["Fact.recheck_at"], n),  # type: ignore[arg-type]
        metadata=_pick(fields["Fact.metadata"], n),  # type: ignore[arg-type]
    )


def _pick(values: Sequence[object], n: int) -> object:
    """The ``n``-th value of a catalogue, round and round."""
    return values[n % len(values)]


@dataclass(frozen=True)
class Section:
    """One part of the sweep: what it runs, the capability it needs (``None``:
    core) and the rules its comparisons are charged to."""

    run: Callable[[Sweep], None]
    needs: Capability | None
    rules: tuple[str, ...]


SECTIONS: dict[str, Section] = {
    "long thread": Section(long_thread, None, (
        "ST-001", "ST-002", "ST-003", "ST-004", "ST-006", "ST-010", "ST-011", "ST-013", "ST-014",
        "ST-016")),
    "many threads": Section(many_threads, None, ("ST-009", "ST-035")),
    "message values": Section(message_values, None, (
        "ST-001", "ST-007", "ST-013", "ST-014", "ST-035")),
    "commit flags": Section(commit_flags, Capability.COMMIT_FLAGS, (
        "ST-001", "ST-003", "ST-004", "ST-013", "ST-017", "ST-018", "ST-019", "ST-020")),
    "error records": Section(error_records, Capability.ERRORS, (
        "ST-001", "ST-017", "ST-020", "ST-021", "ST-022")),
    "turn records": Section(turn_records, Capability.TURN_RECORDS, ("ST-023", "ST-024")),
    "working state": Section(working_state, Capability.STATE, (
        "ST-025", "ST-026", "ST-027", "ST-035")),
    "knowledge": Section(knowledge, Capability.KNOWLEDGE, (
        "ST-028", "ST-029", "ST-030", "ST-031", "ST-035")),
}
"""Each section of the sweep, by name."""


def sweep(store: RecordingStore, sections: Iterable[str] = SECTIONS) -> None:
    """Run the named sections the store's capabilities allow, each in a fresh
    namespace; the first divergence propagates with that section's operations."""
    for name in sections:
        section = SECTIONS[name]
        if section.needs is not None and section.needs.value not in store.capabilities:
            continue
        run: Sweep = model_for(store, Sweep)()
        section.run(run)
