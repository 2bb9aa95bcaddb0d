"""Step definitions for the ``save-policy`` profile (document 000).

State flows through three fixtures: ``sp_case`` (the script being built and
how the store is presented), ``sp_observation`` (what one execution returned,
timeline included) and ``sp_variants`` (observations of the same conversation
under several policies or modes). Batching and ordering checks read the
recording proxy's timeline, never the runtime's own report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from memconform.adapters.contract import Capability, StoreError
from memconform.adapters.proxy import AdapterContractError, RecordingStore
from memconform.fingerprint import declared_hooks, hooks_needed
from memconform.simulator.runtime import SAVE_POLICIES, Runtime, declared_policies
from memconform.steps._save_policy_scripts import (
    ANSWER,
    EFFECT,
    PROMPT,
    apply_failure_point,
    base_script,
    batches_text,
    refusing_store,
    store_refusals,
)
from memconform.steps.child_runs import runtime_options
from memconform.steps.common import (
    Mismatch,
    decides,
    expect_equal,
    note_policies,
    require_capability,
    unsupported,
)
from memconform.steps.save_policy_resumes import (
    Later,
    cut_points,
    execute_with_resumes,
    in_fresh_process,
    in_process,
)
from memconform.timeline import Timeline
from memconform.values import ErrorRecord, Message

__all__ = ["SavePolicyCase", "StoreWithoutErrors", "appended_batches", "require_policies"]

POLICIES = SAVE_POLICIES


@dataclass
class SavePolicyCase:
    """A scenario's script and how the store is shown to the runtime."""

    script: dict[str, Any]
    without_errors: bool = False
    extra_threads: list[str] = field(default_factory=list)
    fresh_later: bool = False
    """Every run after the first runs on a fresh runtime instance (in a fresh
    process on a durable store): the kit's choice, not the script's."""
    point: str = "none"
    """The failure point: a store refusal is injected through the store handed
    to the runtime, never written into the script."""

    def store_for(self, raw_store: object, policy: str | None) -> object:
        """The store the runtime gets: errors hidden if asked, refusals injected."""
        inner = StoreWithoutErrors(raw_store) if self.without_errors else raw_store
        return refusing_store(inner, store_refusals(self.point, policy))


class StoreWithoutErrors:
    """The store under test offering only the required part of the contract (so
    no ``errors`` capability); ``record_error`` exists only to show on the
    timeline a runtime that calls it anyway."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    @property
    def capabilities(self) -> frozenset[str]:
        """No optional capability at all."""
        return frozenset()

    def append(self, thread_id: str, batch: Sequence[Message]) -> object:
        """Delegates to the inner store."""
        return self._inner.append(thread_id, batch)  # type: ignore[attr-defined]

    def messages(self, thread_id: str, limit: int | None = None) -> object:
        """Delegates to the inner store."""
        return self._inner.messages(thread_id, limit)  # type: ignore[attr-defined]

    def record_error(self, thread_id: str, record: ErrorRecord) -> None:
        """Not offered: a runtime that calls it anyway is seen on the timeline."""
        raise StoreError("this store does not keep error records")


# -- reading an observation -----------------------------------------------------------


def _stores(observation: Mapping[str, Any], name: str, thread: str) -> list[dict[str, Any]]:
    return [
        e for e in observation["timeline"]
        if e["kind"] == "store" and e["name"] == name and e.get("args", [None])[0] == thread
    ]


def appended_batches(observation: Mapping[str, Any], thread: str) -> list[list[dict[str, Any]]]:
    """The batches the store accepted for ``thread``, in order (from the timeline)."""
    return [list(e["args"][1]) for e in _stores(observation, "append", thread) if "raised" not in e]


def _roles(batches: list[list[dict[str, Any]]]) -> str:
    return batches_text([[m["role"] for m in batch] for batch in batches])


def _run(observation: Mapping[str, Any], number: int) -> dict[str, Any]:
    runs = observation.get("runs") or []
    if len(runs) < number:
        raise Mismatch(f"save-policy run {number}", f"at least {number} runs", f"{len(runs)} runs")
    run: dict[str, Any] = runs[number - 1]
    return run


def _run_entries(observation: Mapping[str, Any], number: int) -> list[dict[str, Any]]:
    """The timeline entries of run ``number``, as the kit observed them: the runs
    are executed one after another and each ends with its ``outcome`` event (what
    its caller is told), so run n spans the entries after run n-1's outcome up to
    its own. The runtime's own account of its runs is never read."""
    entries = list(observation["timeline"])[int(observation.get("runtime_from", 0)):]
    ends = [i for i, e in enumerate(entries) if e["kind"] == "event" and e["name"] == "outcome"]
    start = ends[number - 2] + 1 if 1 < number <= len(ends) + 1 else 0
    end = ends[number - 1] + 1 if number <= len(ends) else len(entries)
    if number > len(ends) + 1:
        return []
    return entries[start:end]


def _model_requests(observation: Mapping[str, Any], number: int) -> list[Any]:
    """What the kit's fake model was sent at each call of run ``number`` (retries
    included), from the timeline."""
    return [e.get("request") for e in _run_entries(observation, number) if e["kind"] == "model"]


def _sent_messages(request: Any) -> list[tuple[str, str]]:
    """The (role, text) pairs of a model request's ``messages``."""
    messages = request.get("messages") if isinstance(request, Mapping) else None
    if not isinstance(messages, list):
        raise Mismatch("what the model was sent", "a request with a list of messages",
                       repr(request)[:300])
    return [(str(m.get("role")), str(m.get("text"))) for m in messages if isinstance(m, Mapping)]


def _thread(observation: Mapping[str, Any]) -> str:
    return str(observation["thread_under_test"])


def _has_tool_call(message: Mapping[str, Any]) -> bool:
    return any(
        isinstance(p, Mapping) and p.get("type") == "tool_call" for p in message.get("parts", [])
    )


def _error_records(observation: Mapping[str, Any]) -> list[dict[str, Any]]:
    return _stores(observation, "record_error", _thread(observation))


# -- executing ----------------------------------------------------------------------------


def require_policies(
    request: pytest.FixtureRequest, runtime: Runtime, policies: Sequence[object]
) -> None:
    """Note the save policies the scenario configures; end it ``unsupported``
    when the runtime declares ``policies`` and one of them is not among them.

    Only the three policy names count: no policy configured (the runtime's own
    default) and an unknown name (a configuration the runtime must refuse) run
    on every runtime. A runtime declaring no ``policies`` runs everything."""
    named = [str(p) for p in policies if p in SAVE_POLICIES]
    note_policies(request, named)
    declared = declared_policies(runtime)
    if declared is None:
        return
    missing = sorted(set(named) - declared, key=SAVE_POLICIES.index)
    if missing:
        has = ", ".join(sorted(declared, key=SAVE_POLICIES.index))
        said = f"it declares the save policies {has}" if has else "it declares no save policy"
        unsupported(f"the runtime does not implement the {', '.join(missing)} save policy "
                    f"({said})")


def _execute(
    runtime: Runtime, script: dict[str, Any], proxy: RecordingStore, later: Later | None = None,
    fresh_later: bool = False,
) -> dict[str, Any]:
    declared = declared_hooks(runtime)
    if declared is not None:
        missing = sorted(hooks_needed(script) - declared)
        if missing:
            unsupported(f"the runtime has no {', '.join(missing)} (it declares the hooks "
                        f"{', '.join(sorted(declared)) or 'none'})")
    start = len(proxy.timeline)
    observation = execute_with_resumes(runtime, script, proxy, later, fresh_later)
    observation["thread_under_test"] = script["thread"]
    observation["runtime_from"] = start
    observation["inputs"] = [run.get("input") for run in script.get("runs", [])]
    return observation


@pytest.fixture
def sp_proxies(raw_store: object, store: RecordingStore) -> Iterator[Callable[..., RecordingStore]]:
    """Makes extra recording proxies (fresh timelines) and closes them at the end."""
    made: list[RecordingStore] = []

    def make(inner: object | None = None) -> RecordingStore:
        proxy = RecordingStore(raw_store if inner is None else inner, Timeline(),
                               timeout=store.timeout, hangs=store.hangs)
        made.append(proxy)
        return proxy

    yield make
    for proxy in made:
        proxy.close()


# -- given ---------------------------------------------------------------------------------


@given(
    parsers.parse('a save-policy agent with the "{policy}" save policy'),
    target_fixture="sp_case",
)
def sp_agent_with_policy(namespace: str, policy: str) -> SavePolicyCase:
    """The standard conversation (one tool round, then an answer) under ``policy``."""
    return SavePolicyCase(base_script(f"{namespace}-sp", policy))


@given("a save-policy agent with no save policy configured", target_fixture="sp_case")
def sp_agent_default(namespace: str) -> SavePolicyCase:
    """The standard conversation with no save policy named."""
    return SavePolicyCase(base_script(f"{namespace}-sp", None))


@given(parsers.parse('the save-policy agent follows the variant "{variant}"'))
def sp_variant(sp_case: SavePolicyCase, variant: str) -> None:
    """Ask the runtime for a named divergent behaviour."""
    sp_case.script["variant"] = variant


@given(parsers.parse('the save-policy run meets the failure point "{point}"'))
def sp_failure_point(sp_case: SavePolicyCase, point: str) -> None:
    """Script the run to fail (or be interrupted) at ``point``; a store refusal is
    injected by the kit's store at execution."""
    sp_case.script = apply_failure_point(sp_case.script, point)
    sp_case.point = point


@given(parsers.parse('the save-policy model answers directly with "{text}"'))
def sp_direct_answer(sp_case: SavePolicyCase, text: str) -> None:
    """The model answers at once, without tools."""
    sp_case.script["model"]["agent"] = [{"reply": text}]


@given(parsers.parse('the save-policy output guardrail {action} the answer with "{text}"'))
def sp_output_guardrail(sp_case: SavePolicyCase, action: str, text: str) -> None:
    """``replaces`` or ``blocks`` the model's answer, putting ``text`` in its place."""
    verbs = {"replaces": "replace", "blocks": "block"}
    if action not in verbs:
        raise ValueError(f"unknown guardrail action {action!r}; use replaces or blocks")
    sp_case.script["hooks"]["output_guardrail"] = {"action": verbs[action], "text": text}


@given("the save-policy input guardrail blocks the input")
def sp_input_blocked(sp_case: SavePolicyCase) -> None:
    """The input guardrail refuses the user input."""
    sp_case.script["hooks"]["input_guardrail"] = {"action": "block", "text": "not allowed"}


@given(parsers.parse("the save-policy model call fails {times:d} times with status {status:d}"))
def sp_retryable_failures(sp_case: SavePolicyCase, times: int, status: int) -> None:
    """The first model call fails ``times`` times with a retryable status first."""
    failure = {"fail": {"type": "ProviderError", "message": "try again", "status": status}}
    sp_case.script["model"]["agent"][:0] = [failure] * times


@given("the save-policy model calls two tools at once in its first round")
def sp_two_calls(sp_case: SavePolicyCase) -> None:
    """The first reply asks for a second tool beside the first (parallel calls):
    both results belong in the round's batch, in call order."""
    first = sp_case.script["model"]["agent"][0]
    first["tool_calls"].append({"id": "call-log", "name": "log_contact",
                                "args": {"order": "A-1", "channel": "e-mail"}})
    sp_case.script["tools"]["log_contact"] = {"result": "logged"}


@given("the save-policy tool call needs approval")
def sp_needs_approval(sp_case: SavePolicyCase) -> None:
    """The model's tool call waits for a human approval."""
    sp_case.script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True


@given(parsers.parse('a later save-policy run sends "{text}" and gets the answer "{reply}"'))
def sp_later_run(sp_case: SavePolicyCase, text: str, reply: str) -> None:
    """Another run on the same thread, answered without tools."""
    sp_case.script["runs"].append({"input": text})
    sp_case.script["model"]["agent"].append({"reply": reply})


@given("every later save-policy run runs on a fresh runtime instance")
def sp_fresh_later(sp_case: SavePolicyCase) -> None:
    """Runs after the first start on a new runtime instance, as a new process
    serving the thread would: only the store carries the history over."""
    sp_case.fresh_later = True


@given("a later save-policy run approves the pending tool call")
def sp_resume_approved(sp_case: SavePolicyCase) -> None:
    """The suspended run is resumed with an approval; the model then answers."""
    sp_case.script["runs"].append({"resume": {"approved": True}})


@given("the save-policy run is streamed")
def sp_streamed(sp_case: SavePolicyCase) -> None:
    """Every run of the script streams its answers."""
    sp_case.script["stream"] = True


@given("the save-policy store does not declare the errors capability")
def sp_store_without_errors(sp_case: SavePolicyCase) -> None:
    """Present the store to the runtime with ``errors`` hidden."""
    sp_case.without_errors = True


@given(parsers.parse('the save-policy configuration names the save policy "{policy}"'))
def sp_configured_policy(sp_case: SavePolicyCase, policy: str) -> None:
    """Configure a policy name, valid or not."""
    sp_case.script["save_policy"] = policy


@given("the save-policy store keeps error records")
def sp_needs_errors(store: RecordingStore) -> None:
    """End as unsupported when the store does not declare ``errors``."""
    require_capability(store.capabilities, Capability.ERRORS.value)


# -- when ----------------------------------------------------------------------------------


@when("the save-policy script is executed", target_fixture="sp_observation")
def sp_execute(
    sp_case: SavePolicyCase, runtime: Runtime, runtime_factory: Callable[[], Runtime],
    store: RecordingStore, store_url: str, raw_store: object,
    sp_proxies: Callable[..., RecordingStore], request: pytest.FixtureRequest,
) -> dict[str, Any]:
    """Run the script through the runtime under test, against the store under test
    (``unsupported`` when the runtime does not declare the script's policy). A
    resume of a suspended run, and with ``fresh_later`` every later run, runs on
    a fresh runtime instance (a resume with the caller's continuation; see
    :mod:`memconform.steps.save_policy_resumes`): in a second fresh process when
    the store is durable and the kit injects no refusal, else in a second
    ``execute`` call of this process on a new instance."""
    require_policies(request, runtime, [sp_case.script.get("save_policy")])
    inner = sp_case.store_for(raw_store, sp_case.script.get("save_policy"))
    proxy = store if inner is raw_store else sp_proxies(inner)
    later: Later | None = None
    if cut_points(sp_case.script, sp_case.fresh_later):
        if inner is raw_store and "durable" in set(store.capabilities):
            options = runtime_options(request.config.getoption("--memconform-mutant"),
                                      request.config.getoption("--memconform-runtime"))
            later = in_fresh_process(store_url, options, proxy)
        else:
            later = in_process(runtime_factory, proxy)
    return _execute(runtime, sp_case.script, proxy, later, sp_case.fresh_later)


@when("the save-policy script is executed under each save policy", target_fixture="sp_variants")
def sp_execute_each_policy(
    sp_case: SavePolicyCase, runtime: Runtime, raw_store: object,
    sp_proxies: Callable[..., RecordingStore], request: pytest.FixtureRequest,
) -> dict[str, dict[str, Any]]:
    """The same script under message, turn and run, each on its own thread
    (``unsupported`` unless the runtime declares all three or declares none)."""
    require_policies(request, runtime, POLICIES)
    out = {}
    for policy in POLICIES:
        script = {**sp_case.script, "save_policy": policy,
                  "thread": f"{sp_case.script['thread']}-{policy}"}
        out[policy] = _execute(runtime, script, sp_proxies(sp_case.store_for(raw_store, policy)))
    return out


@when("the save-policy script is executed buffered and streamed", target_fixture="sp_variants")
def sp_execute_both_modes(
    sp_case: SavePolicyCase, runtime: Runtime, raw_store: object,
    sp_proxies: Callable[..., RecordingStore], request: pytest.FixtureRequest,
) -> dict[str, dict[str, Any]]:
    """The same script buffered and streamed, each on its own thread."""
    out = {}
    policy = sp_case.script.get("save_policy")
    require_policies(request, runtime, [policy])
    for mode, stream in (("buffered", False), ("streamed", True)):
        script = {**sp_case.script, "stream": stream,
                  "thread": f"{sp_case.script['thread']}-{mode}"}
        out[mode] = _execute(runtime, script, sp_proxies(sp_case.store_for(raw_store, policy)))
    return out


# -- then: outcomes --------------------------------------------------------------------


@then(parsers.parse('the save-policy run ends "{outcome}"'))
@decides("SP-004", "SP-017", "SP-020", "SP-023", "SP-024", "SP-026", "SP-027", "SP-032")
def sp_run_ends(sp_observation: dict[str, Any], outcome: str) -> None:
    """Run 1's outcome, written ``blocked at output`` for blocks."""
    sp_run_number_ends(sp_observation, 1, outcome)


@then(parsers.parse('save-policy run {number:d} ends "{outcome}"'))
@decides("SP-019", "SP-028")
def sp_run_number_ends(sp_observation: dict[str, Any], number: int, outcome: str) -> None:
    """The outcome of the n-th run."""
    run = _run(sp_observation, number)
    observed = run["outcome"] + (f" at {run['stage']}" if run.get("stage") else "")
    expect_equal(f"outcome of save-policy run {number}", outcome, observed)


@then(parsers.parse('the caller of the save-policy run gets the error "{kind}"'))
@decides("SP-016", "SP-017", "SP-020", "SP-024")
def sp_caller_error(sp_observation: dict[str, Any], kind: str) -> None:
    """The error type the caller of run 1 received."""
    error = _run(sp_observation, 1).get("error") or {}
    expect_equal("error the caller got", kind, error.get("type"))


@then("the caller of the save-policy run gets no error")
@decides("SP-004", "SP-026", "SP-027")
def sp_caller_no_error(sp_observation: dict[str, Any]) -> None:
    """Run 1 reported no error."""
    expect_equal("error the caller got", None, _run(sp_observation, 1).get("error"))


@then(parsers.parse('the save-policy reply is "{text}"'))
@decides("SP-007", "SP-026")
def sp_reply(sp_observation: dict[str, Any], text: str) -> None:
    """The answer the caller of run 1 got."""
    expect_equal("reply of save-policy run 1", text, _run(sp_observation, 1).get("reply"))


@then(parsers.parse("the save-policy model was called {count:d} times"))
@decides("SP-004", "SP-005", "SP-020", "SP-021", "SP-023", "SP-024")
def sp_model_calls(sp_observation: dict[str, Any], count: int) -> None:
    """Model calls seen on the timeline (retries included)."""
    calls = [e for e in sp_observation["timeline"] if e["kind"] == "model"]
    expect_equal("model calls", count, len(calls))


@then("the save-policy configuration is rejected naming the save_policy setting")
@decides("SP-002")
def sp_rejected(sp_observation: dict[str, Any]) -> None:
    """The runtime refused the configuration, naming the setting."""
    problem = sp_observation.get("construction_error")
    if not isinstance(problem, Mapping) or "save_policy" not in str(problem.get("message", "")) + \
            str(problem.get("field", "")):
        raise Mismatch("configuration with an unknown save policy",
                       "refused at construction, naming save_policy", repr(problem))


@then("the save-policy runtime neither called the model nor the store")
@decides("SP-002")
def sp_nothing_ran(sp_observation: dict[str, Any]) -> None:
    """Nothing ran: no model call and no store call."""
    touched = [f"{e['kind']}:{e['name']}" for e in sp_observation["timeline"]
               if e["kind"] in ("model", "store", "tool")]
    expect_equal("model, tool and store calls", [], touched)


# -- then: what was appended -----------------------------------------------------------


@then(parsers.parse('the save-policy appends are "{batches}"'))
@decides(
    "SP-001", "SP-004", "SP-005", "SP-006", "SP-007", "SP-008", "SP-009", "SP-010", "SP-011",
    "SP-012", "SP-020", "SP-021", "SP-023", "SP-024", "SP-025", "SP-027", "SP-028", "SP-032",
)
def sp_appends(sp_observation: dict[str, Any], batches: str) -> None:
    """The roles of each batch the store accepted, in append order."""
    observed = _roles(appended_batches(sp_observation, _thread(sp_observation)))
    expect_equal("batches appended (roles per batch)", batches, observed)


@then("the save-policy thread holds:")
@decides("SP-005", "SP-006", "SP-007", "SP-008", "SP-010", "SP-023", "SP-024", "SP-026", "SP-028")
def sp_thread_holds(
    sp_observation: dict[str, Any], store: RecordingStore, datatable: list[list[str]]
) -> None:
    """The stored transcript, read back through the store, as role | text rows."""
    stored = _read(store, _thread(sp_observation))
    expected = [tuple(row) for row in datatable[1:]]
    observed = [(m.role, _expand(m.text)) for m in stored]
    expect_equal("stored transcript", [(r, _expand(t)) for r, t in expected], observed)


def _expand(text: str) -> str:
    return {"<prompt>": PROMPT, "<answer>": ANSWER}.get(text, text)


def _read(store: RecordingStore, thread: str) -> list[Message]:
    try:
        return store.messages(thread)
    except AdapterContractError:
        raise
    except Exception as exc:
        raise AdapterContractError("messages", f"raised where success is required: {exc}") from exc


@then("no save-policy message is stored twice")
@decides("SP-021")
def sp_no_duplicates(sp_observation: dict[str, Any], store: RecordingStore) -> None:
    """Every appended message id and every stored message appears once."""
    ids = [m["id"] for b in appended_batches(sp_observation, _thread(sp_observation)) for m in b]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    expect_equal("appended message ids that repeat", [], repeated)
    stored = _read(store, _thread(sp_observation))
    texts = [(m.role, m.text) for m in stored]
    expect_equal("stored messages that repeat", [], [t for t in texts if texts.count(t) > 1])


@then("no save-policy append repeats a message id already in the thread")
@decides("SP-021")
def sp_ids_new_in_thread(sp_observation: dict[str, Any]) -> None:
    """Every append the runtime attempted (refused ones too, from the timeline)
    carries only ids the thread did not already hold: a runtime numbering its
    messages from a counter of its own instance repeats the ids an earlier
    instance stored."""
    held: set[str] = set()
    repeated: list[str] = []
    for entry in _stores(sp_observation, "append", _thread(sp_observation)):
        ids = [str(m.get("id")) for m in entry["args"][1] if isinstance(m, Mapping)]
        repeated += [i for i in ids if i in held]
        if "raised" not in entry:
            held.update(ids)
    expect_equal("appended message ids already in the thread", [], repeated)


@then("every stored save-policy tool call has its result in the same batch")
@decides("SP-006", "SP-025")
def sp_no_orphans(sp_observation: dict[str, Any]) -> None:
    """No batch carries an assistant tool call without the tool message answering it."""
    orphans = []
    for batch in appended_batches(sp_observation, _thread(sp_observation)):
        answered = {
            p.get("call_id") for m in batch if m["role"] == "tool" for p in m["parts"]
            if isinstance(p, Mapping)
        }
        for m in batch:
            for p in m["parts"]:
                if isinstance(p, Mapping) and p.get("type") == "tool_call" \
                        and p.get("id") not in answered:
                    orphans.append(p.get("id"))
    expect_equal("tool calls stored without their result", [], orphans)


@then("the save-policy pending tool call is stored without a result")
@decides("SP-027")
def sp_pending_stored(sp_observation: dict[str, Any]) -> None:
    """The suspended run's tool call is stored, and no result for it."""
    pending = {c["id"] for c in _run(sp_observation, 1).get("pending_tool_calls", [])}
    stored = [m for b in appended_batches(sp_observation, _thread(sp_observation)) for m in b]
    calls = {p.get("id") for m in stored for p in m["parts"]
             if isinstance(p, Mapping) and p.get("type") == "tool_call"}
    results = {p.get("call_id") for m in stored for p in m["parts"]
               if isinstance(p, Mapping) and p.get("type") == "tool_result"}
    if not pending or not pending <= calls or pending & results:
        raise Mismatch("pending tool call", f"stored call(s) {sorted(pending)} without result",
                       f"calls stored {sorted(map(str, calls))}, "
                       f"results {sorted(map(str, results))}")


@then("every stored save-policy message carries its run id and a round counted from 1")
@decides("SP-030")
def sp_run_ids_and_rounds(sp_observation: dict[str, Any]) -> None:
    """run_id names the run that made the message; round is its round within the run.
    A runtime whose runs name no run id (a framework that has none) fails it."""
    runs = {r.get("run_id") for r in sp_observation["runs"] if isinstance(r, Mapping)} - {None}
    problems = []
    for batch in appended_batches(sp_observation, _thread(sp_observation)):
        for m in batch:
            if m.get("run_id") not in runs:
                problems.append(f"{m['id']}: run_id {m.get('run_id')!r}")
            if not isinstance(m.get("round"), int) or m["round"] < 1:
                problems.append(f"{m['id']}: round {m.get('round')!r}")
    expect_equal("messages with a bad run id or round", [], problems)


@then(parsers.parse('the stored save-policy rounds are "{rounds}"'))
@decides("SP-030")
def sp_rounds(sp_observation: dict[str, Any], rounds: str) -> None:
    """The round of each appended message, in append order."""
    observed = ",".join(
        str(m.get("round"))
        for b in appended_batches(sp_observation, _thread(sp_observation)) for m in b
    )
    expect_equal("rounds of the appended messages", rounds, observed)


@then(parsers.parse('the stored save-policy messages belong to the runs "{runs}"'))
@decides("SP-030")
def sp_run_ids_per_run(sp_observation: dict[str, Any], runs: str) -> None:
    """``runs`` numbers the run (1-based, script order) that made each appended
    message, in append order: messages of one run carry one run id, that run's
    own (the id the caller was given for it), and no two runs share an id."""
    labels = [int(n) for n in runs.split(",")]
    stored = [m for b in appended_batches(sp_observation, _thread(sp_observation)) for m in b]
    expect_equal("number of appended messages", len(labels), len(stored))
    reported = {n: _run(sp_observation, n).get("run_id") for n in sorted(set(labels))}
    expect_equal("distinct run ids of the runs", len(reported), len(set(reported.values())))
    expected = [reported[n] for n in labels]
    expect_equal("run id of each appended message", expected, [m.get("run_id") for m in stored])


@then("the stored save-policy answer is not the model's own text")
@decides("SP-007", "SP-026")
def sp_answer_not_raw(sp_observation: dict[str, Any]) -> None:
    """The model's raw answer never reached the store."""
    stored = [m["text"] for b in appended_batches(sp_observation, _thread(sp_observation))
              for m in b]
    if ANSWER in stored:
        raise Mismatch("stored answer", "the guardrail's text only", "the model's raw answer")


# -- then: order -------------------------------------------------------------------------


def _find(observation: Mapping[str, Any], label: str) -> int | None:
    thread = _thread(observation)
    entries = observation["timeline"]

    def first(pred: Callable[[dict[str, Any]], bool], last: bool = False) -> int | None:
        hits = [i for i, e in enumerate(entries) if pred(e)]
        if not hits:
            return None
        return hits[-1] if last else hits[0]

    def append_ok(e: dict[str, Any]) -> bool:
        return e["kind"] == "store" and e["name"] == "append" and "raised" not in e \
            and e["args"][0] == thread

    def final_answer(e: dict[str, Any]) -> bool:
        return append_ok(e) and any(
            m["role"] == "assistant" and not _has_tool_call(m) for m in e["args"][1]
        )

    finders: dict[str, Callable[[], int | None]] = {
        "input appended": lambda: first(
            lambda e: append_ok(e) and any(m["role"] == "user" for m in e["args"][1])),
        "first model call": lambda: first(lambda e: e["kind"] == "model"),
        "last model call": lambda: first(lambda e: e["kind"] == "model", last=True),
        "tool run": lambda: first(lambda e: e["kind"] == "tool"),
        "approval appended": lambda: first(
            lambda e: append_ok(e) and any(
                p.get("type") == "tool_approval"
                for m in e["args"][1] for p in m.get("parts") or () if isinstance(p, dict)
            )),
        "tool call appended": lambda: first(
            lambda e: append_ok(e) and any(_has_tool_call(m) for m in e["args"][1])),
        "output guardrail": lambda: first(
            lambda e: e["kind"] == "hook" and e["name"] == "output_guardrail"),
        "answer appended": lambda: first(final_answer),
        "run-end hook": lambda: first(lambda e: e["kind"] == "hook" and e["name"] == "run_end"),
        "last append": lambda: first(append_ok, last=True),
        "append raised": lambda: first(
            lambda e: e["kind"] == "store" and e["name"] == "append" and "raised" in e),
        "error hook": lambda: first(lambda e: e["kind"] == "hook" and e["name"] == "run_error"),
        "record_error": lambda: first(
            lambda e: e["kind"] == "store" and e["name"] == "record_error"),
        "outcome reported": lambda: first(
            lambda e: e["kind"] == "event" and e["name"] == "outcome"),
    }
    if label not in finders:
        raise ValueError(f"unknown timeline point {label!r}; known: {', '.join(finders)}")
    return finders[label]()


@then(parsers.parse('the save-policy timeline order is "{sequence}"'))
@decides("SP-005", "SP-006", "SP-007", "SP-013", "SP-019", "SP-020", "SP-028")
def sp_timeline_order(sp_observation: dict[str, Any], sequence: str) -> None:
    """Each named point happened, in the order given (``a > b > c``)."""
    labels = [s.strip() for s in sequence.split(">")]
    found = {label: _find(sp_observation, label) for label in labels}
    positions = [found[label] for label in labels]
    ordered = all(p is not None for p in positions) and positions == sorted(
        p for p in positions if p is not None
    ) and len(set(positions)) == len(positions)
    if not ordered:
        observed = sorted(
            (label for label in labels if found[label] is not None),
            key=lambda label: found[label] or 0,
        )
        missing = [label for label in labels if found[label] is None]
        raise Mismatch(
            "order on the timeline", " > ".join(labels),
            " > ".join(observed) + (f" (never happened: {', '.join(missing)})" if missing else ""),
        )


@then(parsers.parse('the save-policy timeline never shows "{label}"'))
@decides("SP-005", "SP-006", "SP-007", "SP-019", "SP-020")
def sp_timeline_never(sp_observation: dict[str, Any], label: str) -> None:
    """The named point did not happen."""
    expect_equal(f"'{label}' on the timeline", None, _find(sp_observation, label))


# -- then: error records ---------------------------------------------------------------


@then(parsers.parse('record_error was called once for the save-policy run with "{roles}"'))
@decides("SP-013", "SP-014", "SP-016")
def sp_record_error_once(sp_observation: dict[str, Any], roles: str) -> None:
    """Exactly one record_error call, holding every new message of the run and its error.

    The record is compared with what the kit produced and observed, never with the
    runtime's account of its run: the messages of every append the run attempted
    (refused ones included) come first, in order; the user message carries the
    input the kit gave; the assistant messages carry its fake model's replies."""
    _record_error_once(sp_observation, roles, 1)


@then(parsers.parse(
    'record_error was called once, for save-policy run {number:d}, with "{roles}"'
))
@decides("SP-013", "SP-014", "SP-016")
def sp_record_error_once_for_run(sp_observation: dict[str, Any], number: int, roles: str) -> None:
    """As the step above, for run ``number`` of the script (a resumed run, for
    instance): its record holds the messages that run attempted to append."""
    _record_error_once(sp_observation, roles, number)


def _record_error_once(sp_observation: dict[str, Any], roles: str, number: int) -> None:
    calls = _error_records(sp_observation)
    expect_equal("record_error calls", 1, len(calls), rules=("SP-013",))
    record = ErrorRecord.from_json(calls[0]["args"][1])
    run = _run(sp_observation, number)
    expect_equal("roles of the messages given to record_error",
                 "" if roles == "none" else roles,
                 ",".join(m.role for m in record.messages), rules=("SP-014",))
    entries = _run_entries(sp_observation, number)
    before = entries[:next((i for i, e in enumerate(entries) if e["seq"] == calls[0]["seq"]),
                           len(entries))]
    thread = _thread(sp_observation)
    attempted = [
        (str(m.get("id")), str(m.get("role"))) for e in before
        if e["kind"] == "store" and e["name"] == "append" and e["args"][0] == thread
        for m in e["args"][1]
    ]
    given = [(m.id, m.role) for m in record.messages]
    expect_equal("messages given to record_error, against every append the run attempted",
                 attempted, given[:len(attempted)], rules=("SP-014",))
    inputs = list(sp_observation.get("inputs") or []) + [None] * number
    expect_equal("texts of the user messages given to record_error",
                 [inputs[number - 1]] if "user" in [m.role for m in record.messages] else [],
                 [m.text for m in record.messages if m.role == "user"], rules=("SP-014",))
    replies = [
        e["response"].get("reply") or "" for e in before
        if e["kind"] == "model" and isinstance(e.get("response"), Mapping)
        and e["response"].get("tool_calls")
    ]
    said = [m.text for m in record.messages if m.role == "assistant"
            and any(isinstance(p, Mapping) and p.get("type") == "tool_call" for p in m.parts)]
    expect_equal("texts of the tool-calling assistant messages given to record_error, "
                 "against the model's replies", replies[:len(said)], said, rules=("SP-014",))
    expect_equal("run id of the error record", run["run_id"], record.run_id, rules=("SP-014",))


@then(parsers.parse('the save-policy error record holds the error "{kind}"'))
@decides("SP-014")
def sp_record_error_kind(sp_observation: dict[str, Any], kind: str) -> None:
    """The error given to record_error is the run's error."""
    calls = _error_records(sp_observation)
    if not calls:
        raise Mismatch("record_error", f"one call with error {kind}", "no call")
    expect_equal("error given to record_error", kind, calls[0]["args"][1]["error"].get("type"))


@then("the save-policy store received no record_error call")
@decides("SP-015", "SP-017")
def sp_no_record_error(sp_observation: dict[str, Any]) -> None:
    """record_error was never called."""
    expect_equal("record_error calls", 0, len(_error_records(sp_observation)))


@then("the save-policy messages hold no error record")
@decides("SP-018")
def sp_messages_without_errors(sp_observation: dict[str, Any], store: RecordingStore) -> None:
    """The stored transcript is exactly what was appended: no error record in it."""
    thread = _thread(sp_observation)
    require_capability(store.capabilities, Capability.ERRORS.value)
    accepted = [e for e in _error_records(sp_observation) if "raised" not in e]
    if not accepted:
        raise Mismatch("record_error", "one accepted call for the failed run", "none")
    if not store.errors(thread):
        raise AdapterContractError("errors", "record_error succeeded but errors() is empty")
    appended = [Message.from_json(m).id for b in appended_batches(sp_observation, thread)
                for m in b]
    expect_equal("stored message ids", appended, [m.id for m in _read(store, thread)])


# -- then: behaviour across policies and modes --------------------------------------------


def _behaviour(observation: Mapping[str, Any]) -> dict[str, Any]:
    runs = [
        {k: r.get(k) for k in ("outcome", "stage", "reply", "error", "pending_tool_calls")}
        for r in observation["runs"]
    ]
    calls = [
        {k: e.get(k) for k in ("kind", "name", "args", "result", "failed", "response")}
        | ({"sent": _sent_messages(e.get("request"))} if e["kind"] == "model" else {})
        for e in observation["timeline"] if e["kind"] in ("model", "tool")
    ]
    return {"runs": runs, "calls": calls, "ledger": observation["ledger"]}


@then("the save-policy run behaves the same under every policy")
@decides("SP-003")
def sp_same_behaviour(sp_variants: dict[str, dict[str, Any]]) -> None:
    """Model calls (with what the model saw), tool runs, outcome, reply and ledger."""
    reference = _behaviour(sp_variants["message"])
    for policy in ("turn", "run"):
        expect_equal(f"behaviour under {policy} compared with message",
                     reference, _behaviour(sp_variants[policy]))


@then("the buffered and streamed save-policy runs persist the same batches")
@decides("SP-029")
def sp_same_batches(sp_variants: dict[str, dict[str, Any]]) -> None:
    """Same batches (roles and texts) and same outcome in both modes."""
    def summary(observation: dict[str, Any]) -> Any:
        return (
            [[(m["role"], m["text"]) for m in b]
             for b in appended_batches(observation, _thread(observation))],
            [(r["outcome"], r["reply"]) for r in observation["runs"]],
        )
    expect_equal("persisted batches and outcome, streamed vs buffered",
                 summary(sp_variants["buffered"]), summary(sp_variants["streamed"]))


@then("the streamed save-policy run emitted chunk events")
@decides("SP-029")
def sp_chunks(sp_variants: dict[str, dict[str, Any]]) -> None:
    """Streaming is visible as chunk events; buffered runs emit none."""
    def chunks(observation: dict[str, Any]) -> int:
        return sum(1 for e in observation["timeline"]
                   if e["kind"] == "event" and e["name"] == "chunk")
    if chunks(sp_variants["streamed"]) == 0 or chunks(sp_variants["buffered"]) != 0:
        raise Mismatch("chunk events", "some when streamed, none when buffered",
                       f"streamed {chunks(sp_variants['streamed'])}, "
                       f"buffered {chunks(sp_variants['buffered'])}")


# -- then: side effects and context ----------------------------------------------------------


@then("under every save policy the tools ran as the model asked and no undo tool was called")
@decides("SP-022")
def sp_no_compensation(sp_variants: dict[str, dict[str, Any]]) -> None:
    """From the timeline, under each policy: the tools run are the calls the model
    asked for (same names, same arguments, same order), and no ``undo_`` tool ran."""
    for policy, observation in sp_variants.items():
        asked = [
            (c.get("name"), c.get("args", {})) for e in observation["timeline"]
            if e["kind"] == "model" and isinstance(e.get("response"), Mapping)
            for c in e["response"].get("tool_calls") or [] if not c.get("needs_approval")
        ]
        ran = [(e["name"], e.get("args")) for e in observation["timeline"] if e["kind"] == "tool"]
        expect_equal(f"compensating tools called under {policy}", [],
                     [name for name, _ in ran if name.startswith("undo_")])
        expect_equal(f"tools run under {policy}, against the calls the model asked for",
                     asked, ran)


@then("the save-policy tools ran with the arguments the model gave their calls")
@decides("SP-022", "SP-028")
def sp_tool_arguments(sp_observation: dict[str, Any]) -> None:
    """From the kit's timeline: every tool run carries the name and arguments of
    the model's tool call it answers (a resumed run finds the approved call's
    arguments in the store only, so a runtime that stored the call without
    them runs the tool without them)."""
    asked = {
        str(c.get("id")): (c.get("name"), c.get("args", {}))
        for e in sp_observation["timeline"]
        if e["kind"] == "model" and isinstance(e.get("response"), Mapping)
        for c in e["response"].get("tool_calls") or [] if isinstance(c, Mapping)
    }
    runs = [e for e in sp_observation["timeline"] if e["kind"] == "tool"]
    if not runs:
        raise Mismatch("tool runs", "at least one", "none")
    expect_equal("tool runs (name and arguments) against the model's calls they answer",
                 [asked.get(str(e.get("call_id")), ("a call the model made", None))
                  for e in runs],
                 [(e["name"], e.get("args")) for e in runs])


@then("the save-policy ledger still holds the tool's effect")
@decides("SP-022")
def sp_ledger(sp_observation: dict[str, Any]) -> None:
    """The tool's side effect stays recorded, whatever happened to the run."""
    effects = [entry.get("effect") for entry in sp_observation["ledger"]]
    expect_equal("side-effect ledger", [EFFECT], effects)


@then(parsers.parse("the save-policy model saw at the first call of run {number:d}:"))
@decides("SP-011", "SP-012", "SP-018", "SP-031")
def sp_context(sp_observation: dict[str, Any], number: int, datatable: list[list[str]]) -> None:
    """What the kit's model was sent at a run's first call, as role | text rows."""
    _run(sp_observation, number)
    requests = _model_requests(sp_observation, number)
    if not requests:
        raise Mismatch(f"model calls of run {number}", "at least one", "none")
    observed = _sent_messages(requests[0])
    expected = [(r, _expand(t)) for r, t in (tuple(row) for row in datatable[1:])]
    expect_equal(f"what the model saw at the first call of run {number}", expected, observed)


@then(parsers.parse(
    "the resumed save-policy run {number:d} continued from the suspended run, its model seeing:"
))
@decides("SP-028")
def sp_resumed_context(
    sp_observation: dict[str, Any], number: int, datatable: list[list[str]]
) -> None:
    """The resumed run (on a fresh runtime instance, given only the caller's
    continuation) showed the kit's model, at its first call, the suspended run's
    context and then the approval response and the tool result (role | text rows,
    from the model requests on the timeline)."""
    requests = _model_requests(sp_observation, number)
    if not requests:
        raise Mismatch(f"model calls of the resumed run {number}", "at least one",
                       f"none (outcome {_run(sp_observation, number).get('outcome')!r}, error "
                       f"{_run(sp_observation, number).get('error')!r})")
    expected = [(r, _expand(t)) for r, t in (tuple(row) for row in datatable[1:])]
    expect_equal(f"what the model saw at the first call of the resumed run {number}",
                 expected, _sent_messages(requests[0]))
