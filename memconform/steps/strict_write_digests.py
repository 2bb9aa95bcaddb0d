"""Then steps of the ``strict-write`` profile on error digests: the text the
caller gets, the digests stored in memory, and that no secret reaches the
caller, the stream, the store or the model
(``features/strict-write/digest_text.feature``, ``digest_secrets.feature``,
``redaction_modes.feature``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_bdd import parsers, then

from memconform.harness.proxy import RecordingStore
from memconform.simulator.strict_write import TASK_ERRORS_KEY
from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.secret_syntaxes import secret_syntax
from memconform.steps.strict_write_world import (
    StrictWriteRun,
    all_stored,
    dump,
    error_text,
    meta_of,
    step_view,
)


@then(parsers.parse('the strict-write task error of turn {n:d} reads "{text}"'))
@decides("SW-016", "SW-018", "SW-021")
def strict_write_error_reads(sw_run: StrictWriteRun, n: int, text: str) -> None:
    expect_equal(f"digest text of strict-write turn {n}", text, error_text(sw_run, n))


@then(parsers.parse("the strict-write task error of turn {n:d} is at most {limit:d} characters"))
@decides("SW-022", "SW-023")
def strict_write_error_length(sw_run: StrictWriteRun, n: int, limit: int) -> None:
    text = error_text(sw_run, n)
    if len(text) > limit:
        raise Mismatch(f"length of the strict-write digest of turn {n}",
                       f"at most {limit} characters", f"{len(text)}: {text!r}")


@then(parsers.parse('the strict-write task error of turn {n:d} does not contain "{fragment}"'))
@decides("SW-019", "SW-020", "SW-023", "SW-024")
def strict_write_error_lacks(sw_run: StrictWriteRun, n: int, fragment: str) -> None:
    text = error_text(sw_run, n)
    if fragment in text:
        raise Mismatch(f"strict-write digest of turn {n}", f"no {fragment!r}", text)


@then(parsers.parse('the strict-write task error of turn {n:d} contains "{fragment}"'))
@decides("SW-019", "SW-020", "SW-022")
def strict_write_error_has(sw_run: StrictWriteRun, n: int, fragment: str) -> None:
    text = error_text(sw_run, n)
    if fragment not in text:
        raise Mismatch(f"strict-write digest of turn {n}", f"containing {fragment!r}", text)


@then(parsers.parse('the strict-write task error of turn {n:d} keeps no secret of the syntax '
                    '"{syntax}"'))
@decides("SW-019", "SW-031")
def strict_write_error_keeps_no_secret(sw_run: StrictWriteRun, n: int, syntax: str) -> None:
    text = error_text(sw_run, n)
    kept = [s for s in secret_syntax(syntax).secrets if s in text]
    if kept:
        raise Mismatch(f"strict-write digest of turn {n}", f"none of {kept!r}", text)


def strings_in(value: Any) -> list[str]:
    """Every text inside ``value`` (keys included), however deeply nested."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in (*strings_in(k), *strings_in(v))]
    if isinstance(value, list | tuple):
        return [s for item in value for s in strings_in(item)]
    return []


def kept_secrets(syntax: str, value: Any) -> list[str]:
    texts = strings_in(value)
    return [s for s in secret_syntax(syntax).secrets if any(s in t for t in texts)]


@then(parsers.parse('the strict-write stream of turn {n:d} keeps no secret of the syntax '
                    '"{syntax}"'))
@decides("SW-019", "SW-031")
def strict_write_stream_keeps_no_secret(sw_run: StrictWriteRun, n: int, syntax: str) -> None:
    """Every event emitted for turn ``n`` (the ``task_failed`` event and any other)."""
    events = [e for e in sw_run.timeline if e["kind"] == "event" and e.get("turn") == n]
    if not any(e["name"] == "task_failed" for e in events):
        raise Mismatch(f"a task_failed event of strict-write turn {n}", "one event",
                       dump(events), rules=("SW-024",))
    kept = kept_secrets(syntax, events)
    if kept:
        raise Mismatch(f"stream events of strict-write turn {n}", f"none of {kept!r}",
                       dump(events))


@then(parsers.parse('the strict-write stored digest of turn {n:d} keeps no secret of the syntax '
                    '"{syntax}"'))
@decides("SW-019", "SW-031")
def strict_write_stored_digest_keeps_no_secret(sw_run: StrictWriteRun, store: RecordingStore,
                                               n: int, syntax: str) -> None:
    """Every stored ``taskErrors`` message of step ``n``, committed or not, read back."""
    stored = [m.to_json() for m in all_stored(store, sw_run.script["thread"])
              if meta_of(m).get("step") == n and meta_of(m).get("key") == TASK_ERRORS_KEY]
    if not stored:
        raise Mismatch(f"the stored digest of strict-write turn {n}", "a taskErrors message",
                       "none", rules=("SW-009",))
    kept = kept_secrets(syntax, stored)
    if kept:
        raise Mismatch(f"the stored digest of strict-write turn {n}", f"none of {kept!r}",
                       dump(stored))


def model_requests(sw_run: StrictWriteRun, task: str, n: int) -> list[Any]:
    """What the kit's fake model ``task`` was sent in turn ``n``, every call."""
    return [e.get("request") for e in sw_run.timeline
            if e["kind"] == "model" and e["name"] == task
            and isinstance(e.get("request"), dict) and e["request"].get("turn") == n]


@then(parsers.parse('in turn {n:d} the strict-write model "{task}" is sent no secret of the '
                    'syntax "{syntax}"'))
@decides("SW-019", "SW-031")
def strict_write_request_keeps_no_secret(sw_run: StrictWriteRun, task: str, n: int,
                                         syntax: str) -> None:
    """The requests the fake model received, as the kit recorded them."""
    requests = model_requests(sw_run, task, n)
    if not requests:
        raise Mismatch(f"strict-write model task {task} in turn {n}", "a model call",
                       "no call", rules=("SW-009",))
    kept = kept_secrets(syntax, requests)
    if kept:
        raise Mismatch(f"what strict-write model {task} was sent in turn {n}",
                       f"none of {kept!r}", dump(requests))


@then(parsers.parse('the strict-write caller\'s reason of turn {n:d} is neither stored nor '
                    'sent to the model "{task}" in turn {m:d}'))
@decides("SW-017")
def strict_write_reason_caller_only(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                                    task: str, m: int) -> None:
    """The caller's cleaned reason (or, where it is part of the raw error that stays in
    memory without strict write, the whole digest text) appears in no stored message and
    in no request of turn ``m``."""
    text = error_text(sw_run, n)
    reason = text.split("failed: ", 1)[1] if "failed: " in text else ""
    raw = strings_in([o.get("fail") for outcomes in (sw_run.script.get("model") or {}).values()
                    for o in outcomes] + [o.get("fail") for outcomes in
                    (sw_run.script.get("tools") or {}).values() for o in outcomes])
    wanted = reason if reason and not any(reason in r for r in raw) else text
    stored = [x.to_json() for x in all_stored(store, sw_run.script["thread"])]
    places = {"the stored messages": stored,
              f"the requests of turn {m}": model_requests(sw_run, task, m)}
    found = [name for name, value in places.items() if any(wanted in t for t in strings_in(value))]
    if found:
        raise Mismatch(f"the caller's reason of strict-write turn {n}",
                       f"absent from {', '.join(places)}", f"{wanted!r} in {', '.join(found)}")


@then(parsers.parse('the strict-write task error of turn {n:d} names the task "{task}"'))
@decides("SW-018")
def strict_write_error_names_task(sw_run: StrictWriteRun, n: int, task: str) -> None:
    text = error_text(sw_run, n)
    prefix = f"Task 'eddi://{task}' failed: "
    if not text.startswith(prefix):
        raise Mismatch(f"strict-write digest of turn {n}", f"starting with {prefix!r}", text)


def _digests(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> list[Any]:
    items: list[Any] = step_view(sw_run, store, n)["output"].get(TASK_ERRORS_KEY, [])
    return items


@then(parsers.parse('the strict-write memory of turn {n:d} holds the digest for "{task}"'))
@decides("SW-001", "SW-009", "SW-011", "SW-018")
def strict_write_digest_stored(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                               task: str) -> None:
    digests = _digests(sw_run, store, n)
    expected = error_text(sw_run, n)
    wanted = {"type": "errorDigest", "taskId": task, "text": expected}
    if not any(isinstance(d, dict) and {k: d.get(k) for k in wanted} == wanted for d in digests):
        raise Mismatch(f"digests in model-visible memory of strict-write turn {n}",
                       dump([wanted]), dump(digests))


@then(parsers.parse('the strict-write memory of turn {n:d} holds {count:d} digests'))
@decides("SW-030")
def strict_write_digest_count(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                              count: int) -> None:
    digests = _digests(sw_run, store, n)
    expect_equal(f"number of digests in model-visible memory of strict-write turn {n}",
                 count, len(digests))


@then(parsers.parse("the strict-write memory of turn {n:d} holds no digest"))
@decides("SW-002", "SW-012", "SW-013", "SW-014", "SW-017")
def strict_write_no_digest(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> None:
    digests = _digests(sw_run, store, n)
    expect_equal(f"digests in model-visible memory of strict-write turn {n}", [], digests)
    thread = sw_run.script["thread"]
    stored = [m for m in all_stored(store, thread)
              if meta_of(m).get("step") == n and meta_of(m).get("key") == TASK_ERRORS_KEY]
    expect_equal(f"taskErrors stored for strict-write turn {n}", [],
                 [m.to_json() for m in stored])
