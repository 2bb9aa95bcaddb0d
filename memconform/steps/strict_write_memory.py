"""Then steps of the ``strict-write`` profile on what the tasks left behind: which
tasks ran, the memory they wrote (committed or not, visible or hidden), the
actions, what the model saw, and the store's commit flags read back.
"""

from __future__ import annotations

from pytest_bdd import parsers, then

from memconform.harness.proxy import RecordingStore
from memconform.simulator.strict_write import ACTIONS_KEY, TASK_ERRORS_KEY, fold_memory
from memconform.steps.common import Mismatch, decides, expect_equal
from memconform.steps.strict_write_world import (
    StrictWriteRun,
    all_stored,
    dump,
    json_value,
    meta_of,
    step_view,
    task_ran,
    visible_view,
)
from memconform.values import JSONValue, Message

# -- tasks ---------------------------------------------------------------------------------


@then(parsers.parse('the strict-write task "{task}" does not run in turn {n:d}'))
@decides("SW-002", "SW-015", "SW-028")
def strict_write_task_not_run(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                              n: int) -> None:
    if task_ran(sw_run, store, task, n):
        raise Mismatch(f"strict-write task {task} in turn {n}", "not run", "it ran")


@then(parsers.parse('the strict-write task "{task}" runs in turn {n:d}'))
@decides("SW-026")
def strict_write_task_run(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                          n: int) -> None:
    if not task_ran(sw_run, store, task, n):
        raise Mismatch(f"strict-write task {task} in turn {n}", "run", "it did not run")


@then(parsers.parse('the strict-write model task "{task}" is called again in turn {n:d}'))
@decides("SW-037")
def strict_write_model_called_again(sw_run: StrictWriteRun, task: str, n: int) -> None:
    """The kit's fake model received a call of ``task`` for turn ``n``."""
    calls = [e for e in sw_run.timeline if e["kind"] == "model" and e["name"] == task
             and isinstance(e.get("request"), dict) and e["request"].get("turn") == n]
    if not calls:
        raise Mismatch(f"a call of the model task {task} in turn {n}", "at least one",
                       "none on the timeline")


# -- memory --------------------------------------------------------------------------------


def written_by(store: RecordingStore, sw_run: StrictWriteRun, task: str, n: int) -> list[Message]:
    thread = sw_run.script["thread"]
    written = [m for m in all_stored(store, thread)
               if meta_of(m).get("task") == task and meta_of(m).get("step") == n]
    if not written:
        raise Mismatch(f"memory written by strict-write task {task} in turn {n}",
                       "stored messages", "none")
    return written


@then(parsers.parse('everything the strict-write task "{task}" wrote in turn {n:d} '
                    "is stored but uncommitted"))
@decides("SW-001", "SW-004", "SW-005", "SW-007")
def strict_write_all_uncommitted(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                                 n: int) -> None:
    written = written_by(store, sw_run, task, n)
    committed = [m for m in written if m.committed]
    if committed:
        raise Mismatch(f"commit flags of what strict-write task {task} wrote in turn {n}",
                       "all uncommitted", dump([m.to_json() for m in committed]))


@then(parsers.parse('everything the strict-write task "{task}" wrote in turn {n:d} '
                    "is stored and committed"))
@decides("SW-001", "SW-002", "SW-007", "SW-013")
def strict_write_all_committed(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                               n: int) -> None:
    written = written_by(store, sw_run, task, n)
    hidden = [m for m in written if not m.committed]
    if hidden:
        raise Mismatch(f"commit flags of what strict-write task {task} wrote in turn {n}",
                       "all committed", dump([m.to_json() for m in hidden]))


@then(parsers.parse('the strict-write data "{key}" of turn {n:d} is visible as {value}'))
@decides("SW-014")
def strict_write_data_visible(sw_run: StrictWriteRun, store: RecordingStore, key: str, n: int,
                              value: str) -> None:
    data = step_view(sw_run, store, n)["data"]
    expect_equal(f"model-visible data {key!r} of strict-write turn {n}",
                 json_value(value, "expected value"), data.get(key, "<absent>"))


@then(parsers.parse('the strict-write data "{key}" of turn {n:d} is not visible'))
@decides("SW-007")
def strict_write_data_hidden(sw_run: StrictWriteRun, store: RecordingStore, key: str,
                             n: int) -> None:
    data = step_view(sw_run, store, n)["data"]
    if key in data:
        raise Mismatch(f"model-visible data of strict-write turn {n}", f"no {key!r}",
                       dump(data))


@then(parsers.parse('the strict-write output "{key}" of turn {n:d} is not visible'))
@decides("SW-008")
def strict_write_output_hidden(sw_run: StrictWriteRun, store: RecordingStore, key: str,
                               n: int) -> None:
    output = step_view(sw_run, store, n)["output"]
    if key in output:
        raise Mismatch(f"model-visible output of strict-write turn {n}", f"no {key!r}",
                       dump(output))


@then(parsers.parse('the strict-write model-visible memory does not contain "{fragment}"'))
@decides("SW-008", "SW-012")
def strict_write_memory_lacks(sw_run: StrictWriteRun, store: RecordingStore,
                              fragment: str) -> None:
    view = dump(visible_view(store, sw_run.script["thread"]))
    if fragment in view:
        raise Mismatch("strict-write model-visible memory", f"no {fragment!r}", view)


def _actions(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> list[str]:
    steps = fold_memory(store.messages(sw_run.script["thread"]))
    step = steps.get(n)
    return [] if step is None else [str(a) for a in step.output_items(ACTIONS_KEY)]


@then(parsers.parse('the strict-write actions of turn {n:d} include "{action}"'))
@decides("SW-010", "SW-011", "SW-013", "SW-029")
def strict_write_action_emitted(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                                action: str) -> None:
    actions = _actions(sw_run, store, n)
    if action not in actions:
        raise Mismatch(f"stored actions of strict-write turn {n}", f"including {action!r}",
                       repr(actions))


@then(parsers.parse('the strict-write actions of turn {n:d} are {actions}'))
@decides("SW-008", "SW-010", "SW-013", "SW-014", "SW-017", "SW-030")
def strict_write_actions_exact(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                               actions: str) -> None:
    expect_equal(f"stored actions of strict-write turn {n}", json_value(actions, "actions"),
                 _actions(sw_run, store, n))


@then(parsers.parse("the strict-write actions of turn {n:d} name no failed task"))
@decides("SW-001", "SW-002", "SW-014", "SW-017")
def strict_write_no_failure_action(sw_run: StrictWriteRun, store: RecordingStore, n: int) -> None:
    thread = sw_run.script["thread"]
    failed = [m.text for m in all_stored(store, thread)
              if meta_of(m).get("step") == n and "task_failed_" in m.text]
    expect_equal(f"task_failed actions stored for strict-write turn {n}", [], failed)


# -- what the model saw --------------------------------------------------------------------


def model_request(sw_run: StrictWriteRun, task: str, n: int) -> str:
    for entry in sw_run.timeline:
        request = entry.get("request")
        if (entry["kind"] == "model" and entry["name"] == task and isinstance(request, dict)
                and request.get("turn") == n):
            return dump(request)
    raise Mismatch(f"strict-write model task {task} in turn {n}", "a model call", "no call")


@then(parsers.parse('in turn {n:d} the strict-write model "{task}" sees "{fragment}"'))
@decides("SW-005", "SW-006", "SW-009", "SW-013", "SW-014", "SW-027", "SW-029")
def strict_write_model_sees(sw_run: StrictWriteRun, task: str, n: int, fragment: str) -> None:
    request = model_request(sw_run, task, n)
    if fragment not in request:
        raise Mismatch(f"view of strict-write model {task} in turn {n}",
                       f"containing {fragment!r}", request)


@then(parsers.parse('in turn {n:d} the strict-write model "{task}" does not see "{fragment}"'))
@decides("SW-005", "SW-006", "SW-017", "SW-027")
def strict_write_model_blind(sw_run: StrictWriteRun, task: str, n: int, fragment: str) -> None:
    request = model_request(sw_run, task, n)
    if fragment in request:
        raise Mismatch(f"view of strict-write model {task} in turn {n}",
                       f"no {fragment!r}", request)


# -- the store's flags, read back ----------------------------------------------------------


@then(parsers.parse('the strict-write store reads back the raw error of "{task}" in turn {n:d} '
                    "as uncommitted"))
@decides("SW-004")
def strict_write_flag_read_back(sw_run: StrictWriteRun, store: RecordingStore, task: str,
                                n: int) -> None:
    thread = sw_run.script["thread"]
    key = f"{task}:error"
    everything = store.messages(thread, include_uncommitted=True)
    raw = [m for m in everything if meta_of(m).get("key") == key and meta_of(m).get("step") == n]
    expect_equal(f"commit flags of {key} read back with uncommitted included", [False],
                 [m.committed for m in raw])
    default = [m.id for m in store.messages(thread) if meta_of(m).get("key") == key]
    expect_equal(f"{key} in the default read", [], default)
    keys = [(meta_of(m).get("key"), meta_of(m).get("step")) for m in everything]
    digest_at = [i for i, k in enumerate(keys) if k == (TASK_ERRORS_KEY, n)]
    raw_at = keys.index((key, n))
    if digest_at and raw_at > digest_at[0]:
        raise Mismatch(f"place of {key} in strict-write thread", "before the digest written "
                       "after it", dump([list(k) for k in keys]))


@then(parsers.parse("the strict-write model-visible memory of turn {n:d}, digests aside, is:"))
@decides("SW-007", "SW-008", "SW-013")
def strict_write_memory_table(sw_run: StrictWriteRun, store: RecordingStore, n: int,
                              datatable: list[list[str]]) -> None:
    """The table lists ``kind`` (data or output), ``key`` and ``value`` (JSON) of every
    model-visible entry of the step except the ``taskErrors`` digests."""
    header, *rows = datatable
    columns = [c.strip() for c in header]
    expected: list[tuple[str, str, JSONValue]] = []
    for row in rows:
        cells = dict(zip(columns, (c.strip() for c in row), strict=True))
        expected.append((cells["kind"], cells["key"], json_value(cells["value"], cells["key"])))
    step = step_view(sw_run, store, n)
    observed: list[tuple[str, str, JSONValue]] = [
        ("data", k, v) for k, v in sorted(step["data"].items())
    ] + [("output", k, v) for k, v in sorted(step["output"].items()) if k != TASK_ERRORS_KEY]
    if sorted(expected, key=dump) != sorted(observed, key=dump):
        raise Mismatch(
            f"model-visible memory of strict-write turn {n}",
            "\n".join(f"{k} | {key} | {dump(v)}" for k, key, v in expected),
            "\n".join(f"{k} | {key} | {dump(v)}" for k, key, v in observed),
        )
