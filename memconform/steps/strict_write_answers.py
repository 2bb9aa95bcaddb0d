"""Then steps of the ``strict-write`` profile on the answer the caller got: the
turn's state and reply, its task errors, the end-user notice, the stream, and a
configuration the runtime rejected.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from pytest_bdd import parsers, then

from memconform.harness.proxy import RecordingStore
from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.strict_write_world import (
    StrictWriteRun,
    dump,
    error_text,
    task_errors,
    task_ran,
)


@then(parsers.parse('the strict-write turn {n:d} ends in state "{state}"'))
@decides("SW-001", "SW-002", "SW-015", "SW-026", "SW-028")
def strict_write_turn_state(sw_run: StrictWriteRun, n: int, state: str) -> None:
    expect_equal(f"state of strict-write turn {n}", state, sw_run.turn(n).get("state"))


@then(parsers.parse(
    "the strict-write turn {n:d} ends in state \"ERROR\" because the store refused a write"
))
@decides("SW-033")
def strict_write_refused_turn(sw_run: StrictWriteRun, n: int) -> None:
    appends = [e for e in sw_run.timeline if e.get("kind") == "store" and e.get("name") == "append"]
    refused = sw_run.extra.get("refused_appends") or []
    if not refused or len(appends) < max(refused):
        raise Mismatch("the kit's refusal", f"append number {refused} reached the store",
                       f"{len(appends)} appends")
    turn = sw_run.turn(n)
    expect_equal(f"state of strict-write turn {n} after the store refused a write", "ERROR",
                 turn.get("state"))


@then(parsers.parse(
    'the strict-write turn {n:d} stops at task "{task}" because the store refused to hide '
    "its writes"
))
@decides("SW-043")
def strict_write_refused_commit_turn(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                                     task: str) -> None:
    """Whether the later tasks ran is read from the kit's tools, model requests and
    store, never from the turn's own ``tasks`` list (a claim)."""
    refused = [e for e in sw_run.timeline if e.get("kind") == "store"
               and e.get("name") in ("set_committed", "record_error")]
    if not refused:
        raise Mismatch("the kit's refusal", "the runtime asked the store to hide the failed "
                       "task's writes (set_committed) and was refused",
                       "no set_committed or record_error call")
    turn = sw_run.turn(n)
    names = [str(entry["id"]) for entry in sw_run.script["pipeline"]]
    if task not in names:
        raise ValueError(f"strict-write pipeline has no task {task!r}")
    later = [t for t in names[names.index(task) + 1:] if task_ran(sw_run, store, t, n)]
    if later:
        raise Mismatch(f"tasks after {task!r} in strict-write turn {n} after the store refused "
                       "set_committed", "none run", dump(later))
    expect_equal(f"state of strict-write turn {n} after the store refused set_committed",
                 "ERROR", turn.get("state"))


@then(parsers.parse("the strict-write reply of turn {n:d} is empty"))
@decides("SW-015")
def strict_write_reply_empty(sw_run: StrictWriteRun, n: int) -> None:
    expect_equal(f"reply of strict-write turn {n}", "", sw_run.turn(n).get("reply"))


@then(parsers.parse('the strict-write reply of turn {n:d} is "{text}"'))
@decides("SW-026", "SW-029")
def strict_write_reply(sw_run: StrictWriteRun, n: int, text: str) -> None:
    """``\\n`` in ``text`` stands for a line break between reply parts."""
    expected = text.replace("\\n", "\n")
    expect_equal(f"reply of strict-write turn {n}", expected, sw_run.turn(n).get("reply"))


@then(parsers.parse('the strict-write caller gets one task error for "{task}" in turn {n:d}'))
@decides("SW-011", "SW-016")
def strict_write_caller_entry(sw_run: StrictWriteRun, task: str, n: int) -> None:
    errors = task_errors(sw_run, n)
    shapes = [(e.get("type"), e.get("taskId")) for e in errors]
    expect_equal(f"taskErrors of strict-write turn {n}", [("errorDigest", task)], shapes)
    text = errors[0].get("text")
    prefix = f"Task 'eddi://{task}' failed: "
    if not isinstance(text, str) or not text.startswith(prefix):
        raise Mismatch(f"taskErrors text of strict-write turn {n}", prefix + "<reason>", repr(text))


@then(parsers.parse("the strict-write caller gets no task error in turn {n:d}"))
@decides("SW-012")
def strict_write_caller_nothing(sw_run: StrictWriteRun, n: int) -> None:
    expect_equal(f"taskErrors of strict-write turn {n}", [], task_errors(sw_run, n))


def _failure_texts(value: Any) -> list[str]:
    """Every ``message`` of the failures the script injects (causes included)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "message" and isinstance(inner, str):
                found.append(inner)
            else:
                found += _failure_texts(inner)
    elif isinstance(value, list):
        for inner in value:
            found += _failure_texts(inner)
    return found


def _word_pairs(text: str) -> set[tuple[str, str]]:
    words = re.findall(r"\w+(?:[-.]\w+)*", text.lower())
    return set(itertools.pairwise(words))


@then(parsers.parse("the strict-write end user sees only the generic notice in turn {n:d}"))
@decides("SW-025")
def strict_write_end_user(sw_run: StrictWriteRun, n: int) -> None:
    """The notice is the runtime's own wording (the reference's is
    ``Something went wrong. Try again.``): any text that shares no two
    consecutive words with the injected failure or the caller's reason."""
    notice = sw_run.turn(n).get("endUserNotice")
    if not isinstance(notice, str) or not notice.strip():
        raise Mismatch(f"end-user notice of strict-write turn {n}", "a generic notice",
                       repr(notice))
    texts = _failure_texts(sw_run.script)
    texts += [str(e.get("text", "")) for e in task_errors(sw_run, n)]
    leaked = sorted(" ".join(pair) for text in texts
                    for pair in _word_pairs(text) & _word_pairs(notice))
    expect_equal(f"words of the failure in the end-user notice of strict-write turn {n} "
                 f"({notice!r})", [], leaked)


@then(parsers.parse("the strict-write stream of turn {n:d} has a task_failed event "
                    "with the caller's reason"))
@decides("SW-024")
def strict_write_stream_event(sw_run: StrictWriteRun, n: int) -> None:
    text = error_text(sw_run, n)
    events = [e for e in sw_run.timeline
              if e["kind"] == "event" and e["name"] == "task_failed" and e.get("turn") == n]
    if len(events) != 1:
        raise Mismatch(f"task_failed events of strict-write turn {n}", "exactly one",
                       dump(events))
    reason = events[0].get("reason")
    prefix = text[: text.find("failed: ") + len("failed: ")]
    full = prefix + reason if isinstance(reason, str) else None
    same = full is not None and bool(reason) and (
        full == text or (text.endswith("...") and full.startswith(text[:-3].rstrip()))
    )
    if not same:
        raise Mismatch(f"reason of the task_failed event of strict-write turn {n}",
                       f"the reason of {text!r}", repr(reason))


@then(parsers.parse("the strict-write stream of turn {n:d} has no task_failed event"))
@decides("SW-012")
def strict_write_stream_nothing(sw_run: StrictWriteRun, n: int) -> None:
    events = [e for e in sw_run.timeline
              if e["kind"] == "event" and e["name"] == "task_failed" and e.get("turn") == n]
    expect_equal(f"task_failed events of strict-write turn {n}", [], events)


@then(parsers.parse('the strict-write configuration is rejected naming "{name}"'))
@decides("SW-003")
def strict_write_rejected(sw_run: StrictWriteRun, name: str) -> None:
    if sw_run.rejection is None:
        raise Mismatch("strict-write configuration", f"rejected naming {name}", "accepted")
    if name not in str(sw_run.rejection):
        raise Mismatch("strict-write rejection", f"naming {name}", str(sw_run.rejection))


@then("nothing reached the strict-write store")
@decides("SW-003")
def strict_write_nothing_stored(sw_run: StrictWriteRun, store: RecordingStore) -> None:
    calls = store.timeline.of("store")[sw_run.store_calls_before:]
    writes = [c.name for c in calls if c.name in ("append", "set_committed")]
    expect_equal("store writes of the rejected strict-write agent", [], writes)
