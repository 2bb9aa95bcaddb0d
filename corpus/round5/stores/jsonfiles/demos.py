"""Live demonstrations: each variant's bug, shown against the base store.

Every demo runs one small sequence of public store calls on a fresh base store
and on a fresh variant store (each in its own folder under /tmp, removed
afterwards), prints both answers and checks that the base gives what the rule
says and the variant does not. The multi-process demos fork a writer and hold
it inside its batch with the kit's own row point (``MEMCONFORM_PAUSE``).

Run from /work/main: ``python -m corpus.round5.stores.jsonfiles.demos``.
"""

from __future__ import annotations

import importlib
import os
import shutil
import signal
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from corpus.round5.stores.jsonfiles import base
from memconform.contract import StoreError
from memconform.harness.faults import PAUSE_ENV, pause_env_value
from memconform.values import Fact, Message, TurnRecord

Factory = Callable[..., Any]


def _variant(name: str) -> Factory:
    module = importlib.import_module(f"corpus.round5.stores.jsonfiles.{name}")
    return module.make  # type: ignore[no-any-return]


def _msg(mid: str, text: str = "") -> Message:
    return Message(id=mid, role="user", text=text or f"text of {mid}")


def _ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def _attempt(call: Callable[[], Any]) -> Any:
    """The call's answer, or the name of the exception it raised."""
    try:
        return call()
    except Exception as exc:  # a demo shows what the store raised
        return f"raised {type(exc).__name__}"


def _folder() -> str:
    return tempfile.mkdtemp(prefix="jsonfiles-demo-", dir="/tmp")


def _run_both(factory: Factory, sequence: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``sequence`` on a fresh base store and on a fresh variant store."""
    answers = []
    for make in (base.make, factory):
        folder = _folder()
        try:
            answers.append(sequence(make(path=folder)))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return answers[0], answers[1]


# -- forked writers held at the kit's row point ---------------------------------------


class HeldWriter:
    """A forked process appending ``batch`` to ``thread`` through ``make(path=...)``,
    stopped before its row ``row`` by the kit's cross-process pause."""

    def __init__(self, make: Factory, folder: str, thread: str, batch: list[Message], row: int):
        reached_r, reached_w = os.pipe()
        hold_r, hold_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: append, then end without any clean-up of the parent's
            code = 0
            try:
                os.close(reached_r)
                os.close(hold_w)
                os.environ[PAUSE_ENV] = pause_env_value(row, reached_w, hold_r)
                make(path=folder).append(thread, batch)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(reached_w)
        os.close(hold_r)
        self.pid, self._reached, self._hold = pid, reached_r, hold_w
        if os.read(self._reached, 16) != b"reached\n":
            raise RuntimeError("the writer never reached its row point")

    def release(self) -> int:
        """Let the writer finish; its exit status (0: acknowledged)."""
        os.write(self._hold, b"x")
        return self._wait()

    def kill(self) -> None:
        """SIGKILL the writer where it stands."""
        os.kill(self.pid, signal.SIGKILL)
        self._wait()

    def _wait(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        os.close(self._reached)
        os.close(self._hold)
        return os.waitstatus_to_exitcode(status)


def _forked_append(make: Factory, folder: str, thread: str, batch: list[Message]) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            make(path=folder).append(thread, batch)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


# -- the demos: each returns (base answer, variant answer, rule says) --------------------


def demo_v01() -> tuple[Any, Any, Any]:
    """Two knowledge scopes differing in case: one fact each about the same subject."""

    def sequence(store: Any) -> Any:
        store.put_fact("Bob@example.com", Fact("diet", "vegan", "agent", "chat", "said so",
                                               "2024-05-01T12:00:00Z"))
        store.put_fact("bob@example.com", Fact("diet", "eats fish", "agent", "chat", "said so",
                                               "2024-05-02T12:00:00Z"))
        store.forget("bob@example.com", "diet")
        fact = store.get_fact("Bob@example.com", "diet")
        return None if fact is None else fact.statement

    answers = _run_both(_variant("v01_scope_casefold"), sequence)
    return *answers, "vegan"


def demo_v02() -> tuple[Any, Any, Any]:
    """Threads 'café' (NFC) and 'café' (NFD), each with a message 'm1'."""

    def sequence(store: Any) -> Any:
        store.append("caf\u00e9", [_msg("m1", "precomposed")])
        second = _attempt(lambda: store.append("cafe\u0301", [_msg("m1", "decomposed")]))
        return {
            "second append": second,
            "NFC thread": [m.text for m in store.messages("caf\u00e9")],
        }

    answers = _run_both(_variant("v02_nfc_thread_names"), sequence)
    return *answers, {"second append": None, "NFC thread": ["precomposed"]}


def demo_v03() -> tuple[Any, Any, Any]:
    """Two 131-character thread ids that differ only in their last character."""
    prefix = "org/acme/" + "x" * 122

    def sequence(store: Any) -> Any:
        store.append(prefix + "1", [_msg("a")])
        store.append(prefix + "2", [_msg("b")])
        return _ids(store.messages(prefix + "1"))

    answers = _run_both(_variant("v03_truncated_names"), sequence)
    return *answers, ["a"]


def demo_v04() -> tuple[Any, Any, Any]:
    """A message whose text ends in a lone surrogate (half of an emoji)."""
    text = "cut in half: \ud83d"

    def sequence(store: Any) -> Any:
        outcome = _attempt(lambda: store.append("t", [_msg("m", text)]))
        if outcome is not None:  # refused: the rule allows it if nothing is stored
            return {"append": outcome, "stored": [m.text for m in store.messages("t")]}
        return {"append": "ok", "stored": [m.text for m in store.messages("t")]}

    answers = _run_both(_variant("v04_readable_utf8"), sequence)
    return *answers, {"append": "ok", "stored": [text]}


def demo_v05() -> tuple[Any, Any, Any]:
    """A fact whose time stamps carry an offset and a Z."""
    written, recheck = "2024-05-01T12:00:00+05:45", "2025-01-01T00:00:00Z"

    def sequence(store: Any) -> Any:
        store.put_fact("user-1", Fact("tz", "lives in Kathmandu", "agent", "chat", "said so",
                                      written, recheck_at=recheck))
        fact = store.get_fact("user-1", "tz")
        return [fact.written_at, fact.recheck_at]

    answers = _run_both(_variant("v05_local_time_facts"), sequence)
    return *answers, [written, recheck]


def demo_v06() -> tuple[Any, Any, Any]:
    """This process reads a thread, another process appends within the same second,
    this process reads again (and then appends, writing its stale view back)."""

    def sequence(make: Factory) -> Any:
        for _ in range(5):
            folder = _folder()
            try:
                time.sleep(1.02 - time.time() % 1)  # start just after a second begins
                start = int(time.time())
                store = make(path=folder)
                store.append("t", [_msg("a")])
                store.messages("t")
                if _forked_append(make, folder, "t", [_msg("b")]) != 0:
                    return "the other writer failed"
                seen = _ids(store.messages("t"))
                store.append("t", [_msg("c")])
                after = _ids(make(path=folder).messages("t"))
                if int(time.time()) == start:
                    return {"read after the other append": seen, "stored at the end": after}
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        return "could not stay within one second"

    mod = _variant("v06_mtime_cache")
    return (sequence(base.make), sequence(mod),
            {"read after the other append": ["a", "b"], "stored at the end": ["a", "b", "c"]})


def demo_v07() -> tuple[Any, Any, Any]:
    """A writer process is inside its batch (row point) when a second writer appends."""

    def sequence(make: Factory) -> Any:
        folder = _folder()
        try:
            make(path=folder).append("t", [_msg("a")])
            held = HeldWriter(make, folder, "t", [_msg("b")], row=0)
            second: list[Any] = []
            worker = threading.Thread(
                target=lambda: second.append(
                    _attempt(lambda: make(path=folder).append("t", [_msg("c")]))
                )
            )
            worker.start()
            time.sleep(0.5)  # the second writer is now waiting for the lock
            first = held.release()
            worker.join(timeout=20)
            return {
                "acknowledged": ["b"] * (first == 0) + ["c"] * (second == [None]),
                "stored": _ids(make(path=folder).messages("t")),
            }
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    mod = _variant("v07_check_before_lock")
    return (sequence(base.make), sequence(mod),
            {"acknowledged": ["b", "c"], "stored": ["a", "b", "c"]})


def demo_v08() -> tuple[Any, Any, Any]:
    """64 turn records of two interleaved threads, then every record."""

    def sequence(store: Any) -> Any:
        for n in range(64):
            store.append_record(TurnRecord(f"turn-{n}", f"thread-{'ab'[n % 2]}", "completed"))
        return [r.turn_id for r in store.records()][:4]

    answers = _run_both(_variant("v08_compaction_groups"), sequence)
    return *answers, ["turn-0", "turn-1", "turn-2", "turn-3"]


def demo_v09() -> tuple[Any, Any, Any]:
    """Three messages, the middle one damaged, then a plain read."""

    def sequence(store: Any) -> Any:
        store.append("t", [_msg("m0"), _msg("m1"), _msg("m2")])
        store.damage("t")
        try:
            return _ids(store.messages("t"))
        except StoreError:
            return "raised StoreError"

    answers = _run_both(_variant("v09_stop_at_bad_line"), sequence)
    return *answers, "raised StoreError"


def demo_v10() -> tuple[Any, Any, Any]:
    """A writer of a 3-message batch stopped before its third row: another process
    reads, then the writer is killed and the thread is read again."""

    def sequence(make: Factory) -> Any:
        folder = _folder()
        try:
            make(path=folder).append("t", [_msg("a")])
            held = HeldWriter(make, folder, "t", [_msg("b1"), _msg("b2"), _msg("b3")], row=2)
            during = _ids(make(path=folder).messages("t"))
            held.kill()
            after = _ids(make(path=folder).messages("t"))
            return {"read while held": during, "after the kill": after}
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    mod = _variant("v10_append_in_place")
    return sequence(base.make), sequence(mod), {"read while held": ["a"], "after the kill": ["a"]}


DEMOS: list[tuple[str, str, Callable[[], tuple[Any, Any, Any]]]] = [
    ("v01_scope_casefold", "ST-031, ST-035", demo_v01),
    ("v02_nfc_thread_names", "ST-035, ST-009", demo_v02),
    ("v03_truncated_names", "ST-035, ST-009", demo_v03),
    ("v04_readable_utf8", "ST-015, ST-013", demo_v04),
    ("v05_local_time_facts", "ST-029, PS-028", demo_v05),
    ("v06_mtime_cache", "ST-033, ST-036", demo_v06),
    ("v07_check_before_lock", "ST-033, ST-010", demo_v07),
    ("v08_compaction_groups", "ST-023, TU-030", demo_v08),
    ("v09_stop_at_bad_line", "ST-037", demo_v09),
    ("v10_append_in_place", "ST-034, ST-036", demo_v10),
]


def main() -> int:
    """Run every demo; one line per variant with OK or FAILED. Exit status 1 if any failed."""
    failed = 0
    for name, rules, demo in DEMOS:
        try:
            base_answer, variant_answer, expected = demo()
            ok = base_answer == expected and variant_answer != base_answer
            detail = f"base: {base_answer!r} | variant: {variant_answer!r}"
        except Exception:
            ok, detail = False, traceback.format_exc(limit=3).strip().replace("\n", " / ")
        failed += not ok
        print(f"{name:24} {'OK' if ok else 'FAILED':6} [{rules}] {detail}", flush=True)
    print(f"{len(DEMOS) - failed} of {len(DEMOS)} variants show their bug", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
