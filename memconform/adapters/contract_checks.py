"""Store promises that need several processes: durable, concurrent-writers and
atomic-batch.

Each check takes a store URL and a thread id (unique to the caller), starts
fresh processes (:mod:`memconform.adapters.fresh_process`: the kit's import
path as an argument, no environment but ``PATH``) that open the store by that
URL (``memconform.adapters.contract_checks JOB``), and judges what a *fresh* process
reads back. A store named ``memory://`` has nothing to share between
processes and does not declare these capabilities.

- :func:`check_durable`: one process writes and exits; another reads.
- :func:`check_concurrent_writers`: first a writer is held inside its batch
  (at the adapter's row point) while a second writer appends to the same
  thread; then several writers append at once to one shared thread and to
  threads of their own. Nothing acknowledged may be lost, each writer's order
  must hold, and no batch may be interleaved with another.
- :func:`check_atomic_batch`: a writer is killed with SIGKILL in the middle of
  a batch. For stores whose adapter calls
  :func:`memconform.adapters.faults.batch_row_pause` the kill lands before a
  known row (deterministic); for other stores the kill lands wherever the
  append happens to be (best effort) and the evidence says so.

Children report acknowledged writes as JSON lines on stdout. A child whose
store call raised where the check needs success, or that hangs past the
timeout, makes the result an adapter error (verdict ``error``) naming the
method.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memconform import measurement
from memconform.adapters.faults import PAUSE_ENV, pause_env_value
from memconform.adapters.fresh_process import fresh_environment, python_command

__all__ = [
    "CheckResult",
    "check_atomic_batch",
    "check_concurrent_writers",
    "check_durable",
]

_GRACE = 1.0
"""Seconds the held-writer phase lets the second writer run before releasing the
first (a correct store may keep it waiting on a lock; that is fine)."""


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one multi-process check.

    ``expected`` and ``evidence`` are human-readable; ``deterministic`` is
    ``False`` when the check could not control where the fault landed.
    ``adapter_error`` is ``(method, problem)`` when the store itself broke.
    ``applicable`` is ``False`` when the check cannot judge this store at all
    (for example, what one process writes is invisible to the next).
    """

    passed: bool
    expected: str
    evidence: str
    deterministic: bool = True
    adapter_error: tuple[str, str] | None = None
    applicable: bool = True
    details: Mapping[str, Any] = field(default_factory=dict)


class _ChildError(Exception):
    """A child could not do what the check needs. ``refused`` is ``True`` when the
    store refused the call with ``StoreError`` (a failure of the rule, not of the
    adapter)."""

    def __init__(self, method: str, problem: str, refused: bool = False) -> None:
        super().__init__(f"{method}: {problem}")
        self.method = method
        self.problem = problem
        self.refused = refused


# -- the parent side ----------------------------------------------------------------------


def _spawn(
    job: Mapping[str, Any],
    *,
    extra_env: Mapping[str, str] | None = None,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[str]:
    """A fresh process (:mod:`memconform.adapters.fresh_process`) doing ``job``."""
    measuring = measurement.child_argument()
    if measuring is not None:
        job = {**job, "coverage": measuring}
    return subprocess.Popen(
        python_command("memconform.adapters.contract_checks", json.dumps(job)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=fresh_environment(extra=extra_env),
        pass_fds=tuple(pass_fds),
    )


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The child's first line of output, waiting at most ``timeout`` seconds."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline() if ready else ""


def _finish(
    proc: subprocess.Popen[str], timeout: float, what: str, already: str = ""
) -> list[dict[str, Any]]:
    """Wait for a child and parse its JSON lines (``already`` is output read before);
    raise :class:`_ChildError` when it hung, reported a store error or crashed."""
    try:
        if already:
            # the stream was read from directly: finish reading it the same way
            assert proc.stdout is not None
            assert proc.stderr is not None
            proc.wait(timeout=timeout)
            out, err = already + proc.stdout.read(), proc.stderr.read()
            proc.stdout.close()
            proc.stderr.close()
        else:
            out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        measurement.note_killed(f"the {what} process (hung)")
        proc.communicate()
        raise _ChildError(
            "append", f"the {what} process did not finish within {timeout:g} s"
        ) from None
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for line in lines:
        if "error" in line:
            raise _ChildError(
                str(line.get("method", "?")),
                f"in the {what} process: {line['error']}",
                refused=bool(line.get("refused")),
            )
    if proc.returncode != 0:
        raise _ChildError("open", f"the {what} process exited {proc.returncode}: {err[-800:]}")
    return lines


def _run(job: Mapping[str, Any], timeout: float, what: str) -> list[dict[str, Any]]:
    return _finish(_spawn(job), timeout, what)


def _wait_reached(fd: int, timeout: float) -> bool:
    """Whether the child wrote to the ``reached`` pipe (``False``: it closed it,
    i.e. ended without reaching the row point, or the timeout passed)."""
    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready) and os.read(fd, 64).startswith(b"reached")


def _job(kind: str, url: str, mutant: str | None, timeout: float, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "url": url, "mutant": mutant, "timeout": timeout, **fields}


def _error_result(expected: str, exc: _ChildError) -> CheckResult:
    if exc.refused:
        return CheckResult(False, expected, f"the store refused a call the check needs: {exc}")
    return CheckResult(False, expected, str(exc), adapter_error=(exc.method, exc.problem))


def _sample_batches(thread: str, capabilities: frozenset[str]) -> list[list[dict[str, Any]]]:
    committed_flag = "commit-flags" not in capabilities
    return [
        [
            _msg("d1", "user", "Where is the config? \u202eRTL\u202c e\u0301 😀", thread),
            _msg(
                "d2",
                "assistant",
                "",
                thread,
                parts=[{"type": "tool-call", "id": "c1", "name": "ls", "args": {"path": "."}}],
            ),
            _msg("d3", "tool", "settings/\n  app.toml\n", thread, metadata={"exit": 0}),
        ],
        [
            _msg("d4", "assistant", "It lives in settings/.", thread, committed=committed_flag),
            _msg("d5", "user", "  thanks  ", thread),
        ],
    ]


def _msg(
    mid: str,
    role: str,
    text: str,
    thread: str,
    *,
    parts: list[Any] | None = None,
    metadata: dict[str, Any] | None = None,
    committed: bool = True,
) -> dict[str, Any]:
    return {
        "id": mid,
        "role": role,
        "text": text,
        "parts": parts or [],
        "run_id": "run-1",
        "round": 1,
        "turn_id": "T1",
        "committed": committed,
        "metadata": {"thread": thread, **(metadata or {})},
    }


def check_durable(
    url: str,
    thread: str,
    *,
    capabilities: Iterable[str],
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """One process writes messages (and state and a fact, where declared) to
    ``thread`` and exits; a fresh process must read back exactly that."""
    caps = frozenset(capabilities)
    expected = "a fresh process reads back every acknowledged write, field for field"
    write = _job(
        "write-durable",
        url,
        mutant,
        timeout,
        thread=thread,
        capabilities=sorted(caps),
        batches=_sample_batches(thread, caps),
    )
    try:
        acked = _run(write, timeout * 4, "writing")[-1]["acked"]
        read = _run(
            _job("read-durable", url, mutant, timeout, thread=thread, capabilities=sorted(caps)),
            timeout * 4,
            "reading",
        )[-1]["read"]
    except _ChildError as exc:
        return _error_result(expected, exc)
    problems = [
        f"{part}: wrote {json.dumps(acked[part], ensure_ascii=True)[:600]}, "
        f"read {json.dumps(read.get(part), ensure_ascii=True)[:600]}"
        for part in acked
        if acked[part] != read.get(part)
    ]
    return CheckResult(
        not problems,
        expected,
        "\n".join(problems) or "the fresh process read back everything acknowledged",
        details={"acked": acked, "read": read},
    )


def check_concurrent_writers(
    url: str,
    thread: str,
    *,
    writers: int = 3,
    batches: int = 8,
    size: int = 3,
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """Held-writer phase, then ``writers`` processes appending ``batches`` batches of
    ``size`` messages to ``thread`` (shared) and to ``thread-own-N`` (their own)."""
    expected = (
        "every acknowledged batch present, each batch contiguous, each writer's batches "
        "in the order acknowledged"
    )
    notes: list[str] = []
    acks: list[tuple[str, int, list[str]]] = []  # (thread, writer, ids)
    try:
        acks += _held_phase(url, thread, size, mutant, timeout, notes)
        procs = [
            _spawn(
                _job(
                    "writer",
                    url,
                    mutant,
                    timeout,
                    shared=thread,
                    own=f"{thread}-own-{w}",
                    writer=w,
                    batches=batches,
                    size=size,
                )
            )
            for w in range(2, writers + 2)
        ]
        for w, proc in enumerate(procs, 2):
            for line in _finish(proc, timeout * 8, f"writer {w}"):
                if "acked" in line:
                    acks.append((line["thread"], w, line["acked"]))
        threads = sorted({t for t, _, _ in acks} | {thread})
        read = _run(
            _job("read", url, mutant, timeout, threads=threads),
            timeout * 4,
            "reading",
        )[-1]["read"]["messages"]
    except _ChildError as exc:
        return _error_result(expected, exc)
    problems = _judge_concurrency(acks, {t: [m["id"] for m in ms] for t, ms in read.items()})
    return CheckResult(
        not problems,
        expected,
        "\n".join(problems + notes) or "no loss, no reordering, no interleaving",
        deterministic=not notes,
        details={"acks": acks},
    )


def _held_phase(
    url: str, thread: str, size: int, mutant: str | None, timeout: float, notes: list[str]
) -> list[tuple[str, int, list[str]]]:
    reached_r, reached_w = os.pipe()
    hold_r, hold_w = os.pipe()
    held = _spawn(
        _job(
            "writer", url, mutant, timeout, shared=thread, own=None, writer=0, batches=1, size=size
        ),
        extra_env={PAUSE_ENV: pause_env_value(1, reached_w, hold_r)},
        pass_fds=(reached_w, hold_r),
    )
    os.close(reached_w)
    os.close(hold_r)
    other: subprocess.Popen[str] | None = None
    try:
        if not _wait_reached(reached_r, timeout):
            notes.append(
                "best effort: the store has no row point, so the first writer could not be "
                "held inside its batch"
            )
        other = _spawn(
            _job(
                "writer",
                url,
                mutant,
                timeout,
                shared=thread,
                own=None,
                writer=1,
                batches=1,
                size=size,
            )
        )
        # {"appending": ...}: it is calling append now (bounded, so the held writer's
        # own call does not time out while we wait)
        first_line = _first_line(other, timeout / 2)
        with contextlib.suppress(subprocess.TimeoutExpired):
            other.wait(timeout=_GRACE)  # kept waiting by the held writer's lock: allowed
    finally:
        with contextlib.suppress(BrokenPipeError):  # the held writer may have ended already
            os.write(hold_w, b"g")
        os.close(hold_w)
        os.close(reached_r)
    acks: list[tuple[str, int, list[str]]] = []
    for w, proc in ((0, held), (1, other)):
        if proc is None:
            continue
        lines = _finish(proc, timeout * 4, f"writer {w}", first_line if w == 1 else "")
        for line in lines:
            if "acked" in line:
                acks.append((line["thread"], w, line["acked"]))
    return acks


def _judge_concurrency(
    acks: list[tuple[str, int, list[str]]], stored: Mapping[str, list[str]]
) -> list[str]:
    problems: list[str] = []
    for thread, ids in stored.items():
        position = {mid: i for i, mid in enumerate(ids)}
        mine = [(w, batch) for t, w, batch in acks if t == thread]
        for w, batch in mine:
            missing = [m for m in batch if m not in position]
            if missing:
                problems.append(f"{thread}: writer {w} lost acknowledged {missing}")
                continue
            spots = [position[m] for m in batch]
            if spots != list(range(spots[0], spots[0] + len(batch))):
                around = ids[min(spots) : max(spots) + 1]
                problems.append(f"{thread}: batch {batch} of writer {w} interleaved: {around}")
        by_writer: dict[int, list[int]] = {}
        for w, batch in mine:
            if batch and batch[0] in position:
                by_writer.setdefault(w, []).append(position[batch[0]])
        for w, starts in by_writer.items():
            if starts != sorted(starts):
                problems.append(f"{thread}: writer {w}'s batches out of acknowledged order")
        acked_ids = {m for _, batch in mine for m in batch}
        extra = [m for m in ids if m not in acked_ids]
        if extra:
            problems.append(f"{thread}: unacknowledged messages stored: {extra[:10]}")
    return problems


def check_atomic_batch(
    url: str,
    thread: str,
    *,
    capabilities: Iterable[str],
    size: int = 6,
    kill_before: int = 3,
    mutant: str | None = None,
    timeout: float = 30.0,
) -> CheckResult:
    """Kill a writer with SIGKILL before row ``kill_before`` of a ``size``-message
    batch; a fresh process must find the batch wholly there or wholly absent."""
    caps = sorted(frozenset(capabilities))
    expected = f"all {size} messages of the interrupted batch, or none of them"
    probe = f"{thread}-probe"
    try:
        _run(
            _job(
                "writer", url, mutant, timeout, shared=probe, own=None, writer=0, batches=1, size=1
            ),
            timeout * 4,
            "probe writing",
        )
        seen = _run(
            _job("read", url, mutant, timeout, threads=[probe]), timeout * 4, "probe reading"
        )
    except _ChildError as exc:
        return _error_result(expected, exc)
    if not seen[-1]["read"]["messages"][probe]:
        return CheckResult(
            False,
            expected,
            "what one process appended was invisible to the next, so a killed writer "
            "cannot be judged from another process",
            applicable=False,
        )
    reached_r, reached_w = os.pipe()
    hold_r, hold_w = os.pipe()
    proc = _spawn(
        _job("kill-target", url, mutant, timeout, thread=thread, size=size, text_size=64),
        extra_env={PAUSE_ENV: pause_env_value(kill_before, reached_w, hold_r)},
        pass_fds=(reached_w, hold_r),
    )
    os.close(reached_w)
    os.close(hold_r)
    try:
        deterministic = _wait_reached(reached_r, timeout)
        if deterministic:
            proc.send_signal(signal.SIGKILL)
            measurement.note_killed("the writer killed in the middle of a batch")
    finally:
        os.close(reached_r)
    proc.communicate()
    ids = [f"k{i}" for i in range(size)]
    note = f"the writer was killed before row {kill_before} of {size} (at the adapter's row point)"
    if not deterministic:
        # no row point: kill as soon as the child says it is appending a large batch
        big = max(size, 400)
        proc = _spawn(
            _job(
                "kill-target",
                url,
                mutant,
                timeout,
                thread=f"{thread}-opaque",
                size=big,
                text_size=4096,
            )
        )
        _first_line(proc, timeout)  # {"start": true}, written just before append
        proc.send_signal(signal.SIGKILL)
        measurement.note_killed("the writer killed while appending a large batch")
        proc.communicate()
        thread, ids = f"{thread}-opaque", [f"k{i}" for i in range(big)]
        note = (
            "best effort: the store has no row point, so the kill landed wherever the "
            f"append of a {big}-message batch happened to be"
        )
    os.close(hold_w)
    try:
        read = _run(
            _job(
                "read",
                url,
                mutant,
                timeout,
                threads=[thread],
                include_uncommitted="commit-flags" in caps,
            ),
            timeout * 4,
            "reading",
        )[-1]["read"]["messages"][thread]
    except _ChildError as exc:
        return _error_result(expected, exc)
    found = [m["id"] for m in read if m["id"] in set(ids)]
    whole = found == ids
    passed = whole or not found
    outcome = "wholly stored" if whole else ("wholly absent" if not found else "partly stored")
    return CheckResult(
        passed,
        expected,
        f"{note}; the batch was {outcome}: {len(found)} of {len(ids)} found",
        deterministic=deterministic,
        details={"found": found},
    )


# -- the child side -------------------------------------------------------------------------


def _open(job: Mapping[str, Any]) -> Any:
    from memconform.adapters.proxy import RecordingStore
    from memconform.adapters.registry import open_store

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
        from memconform.adapters.contract import StoreError

        _emit({
            "method": method,
            "error": f"{type(exc).__name__}: {exc}",
            "refused": isinstance(exc, StoreError),
        })
        raise SystemExit(3) from None


def _child(job: Mapping[str, Any]) -> None:
    from memconform.values import Fact, Message

    raw, store = _call("open", _open, job)
    kind = job["kind"]
    if kind == "write-durable":
        thread, caps = job["thread"], set(job["capabilities"])
        acked: dict[str, Any] = {}
        for batch in job["batches"]:
            _call("append", store.append, thread, [Message.from_json(m) for m in batch])
        acked["messages"] = [m for batch in job["batches"] for m in batch if m["committed"]]
        if "commit-flags" in caps:
            acked["all messages"] = [m for batch in job["batches"] for m in batch]
        if "state" in caps:
            scope = f"{thread}-job"
            _call("write_state", store.write_state, scope, "plan", {"step": 1}, None)
            entry = _call(
                "write_state", store.write_state, scope, "plan", {"step": 2, "ok": True}, 1
            )
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
    elif kind == "read":
        include = bool(job.get("include_uncommitted"))
        out: dict[str, Any] = {"messages": {}}
        for thread in job["threads"]:
            got = _call("messages", store.messages, thread, None, include_uncommitted=include)
            out["messages"][thread] = [m.to_json() for m in got]
        _emit({"read": out})
    elif kind == "read-durable":
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
    elif kind == "writer":
        w, size = job["writer"], job["size"]
        for b in range(job["batches"]):
            for thread in (job["shared"], job["own"]):
                if thread is None:
                    continue
                ids = [f"w{w}-b{b}-{i}" for i in range(size)]
                batch = [Message(id=i, role="user", text=f"{i} from writer {w}") for i in ids]
                _emit({"appending": thread})
                _call("append", store.append, thread, batch)
                _emit({"thread": thread, "acked": ids})
    elif kind == "kill-target":
        filler = "x" * int(job.get("text_size", 64))
        batch = [
            Message(id=f"k{i}", role="user", text=f"row {i} {filler}") for i in range(job["size"])
        ]
        _emit({"start": True})
        _call("append", store.append, job["thread"], batch)
        _emit({"acked": [m.id for m in batch]})
    else:
        raise SystemExit(f"unknown job kind {kind!r}")
    store.close()
    close = getattr(raw, "close", None)
    if callable(close):
        close()


if __name__ == "__main__":
    _job_given = json.loads(sys.argv[1])
    measurement.start_from_argument(_job_given.get("coverage"))
    _child(_job_given)
