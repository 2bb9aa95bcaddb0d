"""The jobs a fresh process does for the multi-process checks of
:mod:`memconform.steps.contract_checks`.

``python -m memconform.steps.check_jobs JOB`` (started through
:func:`memconform.harness.fresh_process.python_command`) opens the store
named by ``JOB["url"]`` (applying ``JOB["mutant"]`` where given), does one job
and reports on stdout, one JSON object a line:

- ``write-durable``: appends the given batches (then clears the first
  message's committed flag, and writes state and a fact, where declared),
  reports ``{"acked": …}``; with ``"wait_for_kill"`` it then
  blocks on stdin without closing anything, so the parent kills it outright;
- ``read`` / ``read-durable``: reports what the store holds;
- ``writer``: appends numbered batches to a shared thread and to a thread of
  its own, reporting ``{"appending": thread}`` before and ``{"thread", "acked"}``
  after each append; with ``"barrier"`` it first reports ``{"ready": true}``
  and waits for one byte on stdin, so every writer starts at once;
- ``kill-target``: appends one message to ``probe`` (where given), then
  reports ``{"start": t}`` just before one large append and ``{"done": t}``
  just after it (``t`` from the monotonic clock);
- ``watch``: reports ``{"ready": true}`` once the store is open and waits for
  one byte on stdin; then reads the thread ``thread`` again and again, at most
  ``steps`` reads or until it shows ``total`` messages, reporting each read
  that differs from the one before (``{"seen": [ids]}``, the first always),
  and ``{"reads": n}`` at the end;
- ``racer``: reports ``{"ready": true}``, waits for one byte on stdin, appends
  the batch of ``ids`` to ``thread`` (a ``DuplicateIdError`` is a lost race, not
  an error), then increments the state key ``counter`` of the scope ``thread``
  ``increments`` times by compare-and-set, reading again after each
  ``ConflictError``; reports ``{"raced": true, "appended": …, "increments": n}``;
- ``read-state``: reports ``{"state": {"value", "version"}}`` of ``key`` in
  ``scope`` (``null`` when absent);
- ``scribe``: makes ready what its writes need (for ``commit``, its messages
  appended uncommitted), reports ``{"ready": true}``, waits for one byte on stdin
  (or its end), then makes ``count`` writes of the kind ``write`` to ``thread``
  (also the scope), each naming one of its names ``w<writer>-<n>``, and
  reports ``{"wrote": [names]}`` in the order acknowledged (see :data:`WRITES`);
- ``reread``: reads what ``thread`` holds of the writes of the kind ``write``
  (:func:`snapshot`), reports ``{"ready": true, "before": …}``, waits for one
  byte on stdin with the store still open, reads again and reports
  ``{"after": …}``; ``look`` reports ``{"held": …}``, one such read;
- ``read-written``: reports ``{"held": [names]}``, the names of the writes of
  the kind ``write`` that ``thread`` holds, in the order the store gives them
  (for ``key``, those of ``names`` whose key reads back with its own name);
- ``poll``: reports whether the ``probe`` thread another process wrote is
  visible (``{"visible": …}``; it stops there if not), times one large append
  of its own (``{"span": seconds}``), then reads, again and again, the thread
  named by the last line on stdin, reporting ``{"partial": …}`` whenever it
  sees part of the batch being appended there (neither none nor all of its
  messages); when a new line (or the end of stdin) comes, it first reports
  what the previous thread holds (``{"after": thread, "seen": n}``), and
  ``{"reads": n}`` at the end.

A store call that raises reports ``{"method", "error", "refused"}`` and exits 3.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any

from memconform.harness.readiness import readable

__all__: list[str] = []


def _open(job: Mapping[str, Any]) -> Any:
    from memconform.adapters.registry import open_store
    from memconform.harness.proxy import RecordingStore

    store = open_store(job["url"])
    if job.get("mutant"):
        from memconform.mutants import get_mutant

        mutant = get_mutant(job["mutant"])
        if mutant.kind == "store":
            store = mutant.build(store)
    return store, RecordingStore(store, timeout=float(job.get("timeout", 30.0)))


def _emit(data: Mapping[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=True) + "\n")
    sys.stdout.flush()


def _call(method: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        from memconform.contract import StoreError

        _emit({
            "method": method,
            "error": f"{type(exc).__name__}: {exc}",
            "refused": isinstance(exc, StoreError),
        })
        raise SystemExit(3) from None


def _write_durable(store: Any, job: Mapping[str, Any]) -> None:
    from memconform.values import Fact, Message

    thread, caps = job["thread"], set(job["capabilities"])
    acked: dict[str, Any] = {}
    written = [list(batch) for batch in job["batches"]]
    for batch in written:
        _call("append", store.append, thread, [Message.from_json(m) for m in batch])
    if "commit-flags" in caps:  # a flag change must survive the kill as well
        first = written[0][0]
        _call("set_committed", store.set_committed, thread, [first["id"]], False)
        written[0][0] = {**first, "committed": False}
    acked["messages"] = [m for batch in written for m in batch if m["committed"]]
    if "commit-flags" in caps:
        acked["all messages"] = [m for batch in written for m in batch]
    if "state" in caps:
        scope = f"{thread}-job"
        _call("write_state", store.write_state, scope, "plan", {"step": 1}, None)
        entry = _call("write_state", store.write_state, scope, "plan", {"step": 2, "ok": True}, 1)
        acked["state"] = [entry.to_json()]
    if "knowledge" in caps:
        fact = Fact(
            subject="config-location",
            statement="settings/app.toml",
            writer="run-1",
            source="tool ls",
            evidence="listing of .",
            written_at="2026-01-01T00:00:00Z",
            trust="untrusted",
            origin="copied",
            recheck_at="2026-06-01",
        )
        _call("put_fact", store.put_fact, f"{thread}-kb", fact)
        acked["facts"] = [fact.to_json()]
    _emit({"acked": acked})


def _read_durable(store: Any, job: Mapping[str, Any]) -> None:
    thread, caps = job["thread"], set(job["capabilities"])
    back: dict[str, Any] = {
        "messages": [m.to_json() for m in _call("messages", store.messages, thread)]
    }
    if "commit-flags" in caps:
        back["all messages"] = [
            m.to_json()
            for m in _call("messages", store.messages, thread, None, include_uncommitted=True)
        ]
    if "state" in caps:
        entry = _call("read_state", store.read_state, f"{thread}-job", "plan")
        back["state"] = [None if entry is None else entry.to_json()]
    if "knowledge" in caps:
        back["facts"] = [f.to_json() for f in _call("facts", store.facts, f"{thread}-kb")]
    _emit({"read": back})


def _read(store: Any, job: Mapping[str, Any]) -> None:
    include = bool(job.get("include_uncommitted"))
    out: dict[str, Any] = {"messages": {}}
    for thread in job["threads"]:
        got = _call("messages", store.messages, thread, None, include_uncommitted=include)
        out["messages"][thread] = [m.to_json() for m in got]
    _emit({"read": out})


def _writer(store: Any, job: Mapping[str, Any]) -> None:
    from memconform.values import Message

    w, size = job["writer"], job["size"]
    if job.get("barrier"):
        _emit({"ready": True})
        os.read(sys.stdin.fileno(), 1)  # the parent releases every writer at once
    for b in range(job["batches"]):
        for thread in (job["shared"], job["own"]):
            if thread is None:
                continue
            ids = [f"w{w}-b{b}-{i}" for i in range(size)]
            batch = [Message(id=i, role="user", text=f"{i} from writer {w}") for i in ids]
            _emit({"appending": thread})
            _call("append", store.append, thread, batch)
            _emit({"thread": thread, "acked": ids})


def _big_batch(prefix: str, size: int, text_size: int) -> list[Any]:
    from memconform.values import Message

    filler = "x" * text_size
    return [Message(id=f"{prefix}{i}", role="user", text=f"row {i} {filler}") for i in range(size)]


def _kill_target(store: Any, job: Mapping[str, Any]) -> None:
    from memconform.values import Message

    if job.get("probe"):
        probe = [Message(id="p0", role="user", text="probe")]
        _call("append", store.append, job["probe"], probe)
    batch = _big_batch("k", int(job["size"]), int(job.get("text_size", 64)))
    _emit({"start": time.monotonic()})
    _call("append", store.append, job["thread"], batch)
    _emit({"done": time.monotonic()})


def _watch(store: Any, job: Mapping[str, Any]) -> None:
    thread, total, steps = job["thread"], int(job["total"]), int(job["steps"])
    include = bool(job.get("include_uncommitted"))
    last: list[str] | None = None

    def look() -> int:
        nonlocal last
        got = _call("messages", store.messages, thread, None, include_uncommitted=include)
        ids = [m.id for m in got]
        if ids != last:
            _emit({"seen": ids})
            last = ids
        return len(ids)

    _emit({"ready": True})
    os.read(sys.stdin.fileno(), 1)  # the parent lets the writer go at the same time
    reads = 0
    while reads < steps:
        reads += 1
        if look() >= total:
            break
    _emit({"reads": reads})


def _count(store: Any, thread: str, include: bool) -> int:
    return len(_call("messages", store.messages, thread, None, include_uncommitted=include))


def _poll(store: Any, job: Mapping[str, Any]) -> None:
    size = int(job["size"])
    include = bool(job.get("include_uncommitted"))
    visible = _count(store, job["probe"], include) > 0
    _emit({"visible": visible})
    if not visible:
        return
    start = time.monotonic()
    _call("append", store.append, job["measure"], _big_batch("k", size, job["text_size"]))
    _emit({"span": time.monotonic() - start})
    stdin = sys.stdin.fileno()
    thread: str | None = None
    buffered = b""
    reads = 0
    reported: tuple[str, int] | None = None
    while True:
        ready = readable([stdin], 0 if thread else None)
        if ready:
            chunk = os.read(stdin, 4096)
            *lines, buffered = (buffered + chunk).split(b"\n")
            for line in [*lines, *([b""] if not chunk else [])]:
                if thread is not None:  # its writer is dead now: the final read
                    _emit({"after": thread, "seen": _count(store, thread, include)})
                thread = line.decode("utf-8") or None
            if not chunk:
                break
            continue
        if thread is None:
            continue
        seen = _count(store, thread, include)
        reads += 1
        if 0 < seen < size and (thread, seen) != reported:
            reported = (thread, seen)
            _emit({"partial": {"thread": thread, "seen": seen, "of": size}})
    _emit({"reads": reads})


def _racer(store: Any, job: Mapping[str, Any]) -> None:
    from memconform.contract import ConflictError, DuplicateIdError
    from memconform.values import Message

    w, thread = job["writer"], job["thread"]
    batch = [Message(id=i, role="user", text=f"{i} from writer {w}") for i in job["ids"]]
    _emit({"ready": True})
    os.read(sys.stdin.fileno(), 1)  # the parent releases every racer at once
    try:
        _call_refusing("append", store.append, (DuplicateIdError,), thread, batch)
        appended = True
    except DuplicateIdError:
        appended = False
    done = 0
    for _ in range(int(job["increments"])):
        for _attempt in range(10_000):
            entry = _call("read_state", store.read_state, thread, "counter")
            value = 0 if entry is None else entry.value
            version = None if entry is None else entry.version
            try:
                _call_refusing("write_state", store.write_state, (ConflictError,),
                               thread, "counter", value + 1, version)
            except ConflictError:
                continue
            done += 1
            break
    _emit({"raced": True, "appended": appended, "increments": done})


def _call_refusing(method: str, fn: Any, allowed: tuple[type[BaseException], ...],
                   *args: Any) -> Any:
    """:func:`_call`, letting the ``allowed`` refusals through to the caller."""
    try:
        return fn(*args)
    except allowed:
        raise
    except Exception:
        return _call(method, _raise_again, sys.exc_info()[1])


def _raise_again(exc: BaseException) -> None:
    raise exc


def _read_state(store: Any, job: Mapping[str, Any]) -> None:
    entry = _call("read_state", store.read_state, job["scope"], job["key"])
    _emit({"state": None if entry is None else {"value": entry.value, "version": entry.version}})


def _names(job: Mapping[str, Any]) -> list[str]:
    return [f"w{job['writer']}-{n:03d}" for n in range(int(job["count"]))]


def _write_message(store: Any, thread: str, name: str) -> None:
    from memconform.values import Message

    _call("append", store.append, thread, [Message(id=name, role="user", text=name)])


def _write_commit(store: Any, thread: str, name: str) -> None:
    _call("set_committed", store.set_committed, thread, [name], True)


def _write_error(store: Any, thread: str, name: str) -> None:
    from memconform.values import ErrorRecord

    record = ErrorRecord(run_id=name, error={"type": "TimeoutError", "message": name})
    _call("record_error", store.record_error, thread, record)


def _write_record(store: Any, thread: str, name: str) -> None:
    from memconform.values import TurnRecord

    _call("append_record", store.append_record,
          TurnRecord(turn_id=name, thread_id=thread, outcome="completed"))


def _write_key(store: Any, thread: str, name: str) -> None:
    _call("write_state", store.write_state, thread, name, name, None)


def _write_fact(store: Any, thread: str, name: str) -> None:
    from memconform.values import Fact

    fact = Fact(subject=name, statement=name, writer=name.partition("-")[0], source="scribe",
                evidence="one of several processes", written_at="2026-01-01T00:00:00Z")
    _call("put_fact", store.put_fact, thread, fact)


def _rewrite_key(store: Any, thread: str, name: str) -> None:
    _call("write_state", store.write_state, thread, name, name, 1)


def _rewrite_fact(store: Any, thread: str, name: str) -> None:
    from memconform.values import Fact

    fact = Fact(subject=name, statement=name, writer="scribe", source="scribe",
                evidence="rewritten by another process", written_at="2026-01-02T00:00:00Z")
    _call("put_fact", store.put_fact, thread, fact)


WRITES = {
    "message": _write_message,
    "commit": _write_commit,
    "error": _write_error,
    "record": _write_record,
    "key": _write_key,
    "fact": _write_fact,
    "key-rewrite": _rewrite_key,
    "fact-rewrite": _rewrite_fact,
}
"""The writes a ``scribe`` makes, each naming one thing by its name: a message
appended alone, an uncommitted message of its own committed, an error record
(its ``run_id``), a turn record (its ``turn_id``), a new state key, a fact (its
subject), a key it wrote before rewritten (version 1 to 2, the value its name),
a fact it stored before replaced (the statement its name)."""


def _prepare(store: Any, thread: str, write: str, names: list[str]) -> None:
    """What a scribe's writes of the kind ``write`` need before they are made: the
    messages whose flags it sets, appended uncommitted; the keys and facts it
    rewrites, written a first time (the value or statement ``old``)."""
    from memconform.values import Fact, Message

    if write == "commit":
        _call("append", store.append, thread,
              [Message(id=n, role="user", text=n, committed=False) for n in names])
    elif write == "key-rewrite":
        for name in names:
            _call("write_state", store.write_state, thread, name, "old", None)
    elif write == "fact-rewrite":
        for name in names:
            _call("put_fact", store.put_fact, thread,
                  Fact(subject=name, statement="old", writer="scribe", source="scribe",
                       evidence="first written", written_at="2026-01-01T00:00:00Z"))


def _scribe(store: Any, job: Mapping[str, Any]) -> None:
    thread, write, names = job["thread"], job["write"], _names(job)
    _prepare(store, thread, write, names)
    _emit({"ready": True})
    os.read(sys.stdin.fileno(), 1)  # released with the others (or at once, stdin closed)
    for name in names:
        WRITES[write](store, thread, name)
    _emit({"wrote": names})


def _read_written(store: Any, job: Mapping[str, Any]) -> None:
    thread, write = job["thread"], job["write"]
    held: list[str]
    if write in ("message", "commit"):
        held = [m.id for m in _call("messages", store.messages, thread)]
    elif write == "error":
        held = [r.run_id for r in _call("errors", store.errors, thread)]
    elif write == "record":
        held = [r.turn_id for r in _call("records", store.records, thread)]
    elif write == "fact":
        held = [f.subject for f in _call("facts", store.facts, thread)]
    elif write == "fact-rewrite":
        held = [f.subject for f in _call("facts", store.facts, thread) if f.statement == f.subject]
    else:
        entries = [(n, _call("read_state", store.read_state, thread, n)) for n in job["names"]]
        held = [n for n, entry in entries if entry is not None and entry.value == n]
    _emit({"held": held})


def snapshot(store: Any, thread: str, write: str, names: list[str]) -> Any:
    """What ``thread`` (also the scope) holds of the writes of the kind ``write``,
    as JSON: every message with its flag and the plain read's ids (``commit``,
    ``message``), the error records, the thread's turn records, the entries of
    ``names`` (keys) or the facts with their statements."""
    if write in ("message", "commit"):
        every = _call("messages", store.messages, thread, None, include_uncommitted=True) \
            if write == "commit" else []
        plain = _call("messages", store.messages, thread)
        return {"all": [[m.id, m.committed] for m in every], "plain": [m.id for m in plain]}
    if write == "error":
        return [[r.run_id, r.error] for r in _call("errors", store.errors, thread)]
    if write == "record":
        return [[r.turn_id, r.outcome] for r in _call("records", store.records, thread)]
    if write in ("fact", "fact-rewrite"):
        return [[f.subject, f.statement] for f in _call("facts", store.facts, thread)]
    entries = [(n, _call("read_state", store.read_state, thread, n)) for n in names]
    return [[n, None if e is None else e.value, None if e is None else e.version]
            for n, e in entries]


def _reread(store: Any, job: Mapping[str, Any]) -> None:
    thread, write, names = job["thread"], job["write"], list(job["names"])
    _emit({"ready": True, "before": snapshot(store, thread, write, names)})
    os.read(sys.stdin.fileno(), 1)  # another process writes meanwhile
    _emit({"after": snapshot(store, thread, write, names)})


def _look(store: Any, job: Mapping[str, Any]) -> None:
    _emit({"held": snapshot(store, job["thread"], job["write"], list(job["names"]))})


_JOBS = {
    "reread": _reread,
    "look": _look,
    "scribe": _scribe,
    "read-written": _read_written,
    "racer": _racer,
    "read-state": _read_state,
    "write-durable": _write_durable,
    "read-durable": _read_durable,
    "read": _read,
    "writer": _writer,
    "kill-target": _kill_target,
    "poll": _poll,
    "watch": _watch,
}


def main(job: Mapping[str, Any]) -> None:
    """Open the store, do ``job``, close the store (unless killed before)."""
    kind = job["kind"]
    if kind not in _JOBS:
        raise SystemExit(f"unknown job kind {kind!r}")
    raw, store = _call("open", _open, job)
    _JOBS[kind](store, job)
    if job.get("wait_for_kill"):
        os.read(sys.stdin.fileno(), 1)  # never closes: the parent kills this process
        raise SystemExit(5)
    store.close()
    close = getattr(raw, "close", None)
    if callable(close):
        close()


if __name__ == "__main__":
    from memconform import measurement

    _given = json.loads(sys.argv[1])
    measurement.start_from_argument(_given.get("coverage"))
    main(_given)
