"""Generated save-policy runs: the runtime under test against the store under
test, compared with the reference simulator on the reference store.

A generated script (:mod:`memconform.properties.run_scripts`) has one to three
runs on one thread: new inputs and resumes of a run suspended for approval,
streamed or buffered, with guardrails that block, tools that throw, failing and
retried model calls and run-end cancels. Everything is judged from what the
kit observed: the store calls through its proxy, the fake model's requests and
tools, and the events the caller was given (run ``n`` spans the timeline up to
its ``outcome`` event); never from the runtime's own account of its runs.
Invariants, each naming its rules, in the order they are checked:

- the caller is told one outcome per run (outcome, stage, error type; of a
  cancelled run only that an error is named) as the reference tells it;
- an input the guardrail blocked is neither stored nor shown to the model;
- every message a run appends carries that run's one id, no other run's, and
  rounds counted from 1 that never go back;
- each run appends the same batches (roles, texts, rounds) as the reference,
  e.g. under ``run`` a failed run nothing, under ``turn`` whole rounds only,
  under ``message`` the input and each completed round at once, for a resume
  the approval response and the tool result (the response, and a denied
  call's result, read by their parts, never by their wording:
  :mod:`memconform.approvals`);
- the model is shown at each call what the reference shows it (the stored
  history, the run's own rounds, a resumed run's carried context; approval
  answers left out), a new run reads the history from the store (how often is
  its own affair: what the model is shown decides) and a resumed run does not
  reload it;
- the tools that run are the reference's (none undone, none skipped);
- streamed chunks spell what the model said (or, under an output guardrail,
  only the text it let through), a buffered run has none, and the
  same script buffered stores the same batches and tells the same outcomes;
- ``record_error`` receives what the reference's receives (nothing when the
  store does not declare ``errors``);
- every stored tool call sits in the batch of its result (unless it waits for
  approval), every window is the newest N stored messages, and the store holds
  what the reference store holds.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import example, given, settings

from memconform.adapters.memory import MemoryStore
from memconform.approvals import compared_text, denied_calls, shown_to_model
from memconform.contract import Capability
from memconform.excerpt import shown
from memconform.harness.environment import ScriptError
from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import SAVE_POLICIES, Runtime, observe
from memconform.properties.run_scripts import (
    EXPLICIT,
    GeneratedRun,
    PlannedRun,
    acting_hooks,
    generated_runs,
)
from memconform.properties.settings import fixed_draws
from memconform.simulator.runtime import Simulator
from memconform.values import Message, same_value

__all__ = [
    "RULES", "GeneratedRun", "RunDivergence", "check_run", "generated_runs", "run_property",
]

RULES: tuple[str, ...] = (
    "SP-001", "SP-003", "SP-004", "SP-005", "SP-006", "SP-007", "SP-008", "SP-009", "SP-010",
    "SP-011", "SP-012", "SP-013", "SP-014", "SP-015", "SP-017", "SP-021", "SP-022", "SP-023",
    "SP-024", "SP-025", "SP-026", "SP-027", "SP-028", "SP-029", "SP-030", "SP-031", "SP-032",
    "ST-003",
)
"""Every rule an invariant of :func:`check_run` may name."""

_RUN = uuid.uuid4().hex[:8]
_threads = itertools.count(1)
_POLICY_RULES = {"message": ("SP-005", "SP-006", "SP-007", "SP-012"),
                 "turn": ("SP-008", "SP-009"), "run": ("SP-010", "SP-011")}
_OUTCOME_RULES = ("SP-004", "SP-019", "SP-023", "SP-024", "SP-026", "SP-027", "SP-032")
_SPACE = re.compile(r"\s+")


class RunDivergence(AssertionError):
    """A generated run broke an invariant; ``rules`` names the rules it breaks."""

    def __init__(self, rules: tuple[str, ...], what: str, expected: Any, observed: Any) -> None:
        self.expected, self.observed = shown(expected, observed)
        super().__init__(f"{what}\nexpected:\n{self.expected}\nobserved:\n{self.observed}")
        self.rules = rules
        self.what = what


@dataclass
class RunView:
    """One run as the kit observed it on the timeline."""

    batches: list[list[dict[str, Any]]] = field(default_factory=list)
    loads: int = 0
    requests: list[list[tuple[str, str]]] = field(default_factory=list)
    waiting: set[str] = field(default_factory=set)
    tools: list[tuple[str, Any]] = field(default_factory=list)
    """The tools run, with the arguments each was given."""
    chunks: str = ""
    guarded: str | None = None
    """The text the kit's output guardrail let through (its replacement, or the
    answer it allowed); ``None`` when it was never asked."""
    outcome: tuple[Any, Any, Any] | None = None
    records: list[list[str]] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    denied: set[str] = field(default_factory=set)
    """The tool calls an approval answer the script's runs appended denied."""

    def stored(self) -> list[list[tuple[Any, Any, Any]]]:
        """The appended batches as (role, text, round) per message, an approval
        answer and a denied call's result read by their parts."""
        return [[(m.get("role"), compared_text(m, self.denied), m.get("round")) for m in b]
                for b in self.batches]


def _told(outcome: Any, stage: Any, error: Any) -> tuple[Any, Any, Any]:
    """What a caller was told, as compared: any named error of a cancelled run is
    ``cancellation`` (document 000 names none; each runtime throws its own)."""
    kind = error.get("type") if isinstance(error, Mapping) else error
    if outcome == "cancelled" and kind:
        kind = "cancellation"
    return (outcome, stage, kind)


def run_views(entries: Sequence[Mapping[str, Any]], thread: str) -> list[RunView]:
    """The runs of one script, split at each ``outcome`` event the caller got.
    What the model was shown leaves approval answers out (:mod:`memconform.approvals`)."""
    views = [RunView()]
    sent: list[list[Mapping[str, Any]]] = []
    for e in entries:
        view, kind, name = views[-1], e.get("kind"), e.get("name")
        args = e.get("args") or [None]
        if kind == "store" and args[0] == thread and name == "record_error":
            record = args[1] if isinstance(args[1], Mapping) else {}
            view.records.append([str(m.get("role")) for m in record.get("messages", [])])
        elif kind == "store" and args[0] == thread and "raised" not in e:
            if name == "append":
                view.batches.append([dict(m) for m in args[1]])
                view.order.append("append " + ",".join(str(m.get("role")) for m in args[1]))
            elif name == "messages":
                view.loads += 1
        elif kind == "model":
            request = e.get("request")
            messages = request.get("messages") if isinstance(request, Mapping) else None
            sent.append([m for m in messages or [] if isinstance(m, Mapping)])
            view.requests.append([])
            response = e.get("response")
            for call in (response or {}).get("tool_calls") or []:
                if isinstance(call, Mapping) and call.get("needs_approval"):
                    view.waiting.add(str(call.get("id")))
        elif kind == "tool":
            view.tools.append((str(name), e.get("args")))
            view.order.append(f"tool {name}")
        elif kind == "event" and name == "chunk":
            view.chunks += _SPACE.sub("", str(e.get("text", "")))
        elif kind == "hook" and name == "output_guardrail":
            answer, payload = e.get("answer"), e.get("payload")
            if isinstance(answer, Mapping) and answer.get("action") in ("replace", "block"):
                view.guarded = _SPACE.sub("", str(answer.get("text") or ""))
            elif isinstance(payload, Mapping):
                view.guarded = _SPACE.sub("", str(payload.get("text") or ""))
        elif kind == "event" and name == "outcome":
            view.outcome = _told(e.get("outcome"), e.get("stage"), e.get("error"))
            views.append(RunView())
    denied = denied_calls(m for v in views for b in v.batches for m in b)
    # a request may hold a denied result without the approval answer that denied it
    # (the runtime need not show the model that answer): a failed result of a call
    # that needed approval is read there by its parts, as a denial is
    unanswered = denied | {call for v in views for call in v.waiting}
    requests = iter(sent)
    for view in views:
        view.denied = denied
        view.requests = [
            [(str(m.get("role")), compared_text(m, unanswered)) for m in shown_to_model(request)]
            for request in itertools.islice(requests, len(view.requests))
        ]
    if views[-1] == RunView(denied=denied):
        views.pop()
    return views


def _fresh(run: GeneratedRun, *, buffered: bool = False) -> dict[str, Any]:
    thread = f"genrun{_RUN}-{next(_threads)}"
    script = {**run.script, "thread": thread}
    if buffered:
        script["runs"] = [{**r, "stream": False} for r in script["runs"]]
    return script


def _check(rules: tuple[str, ...], what: str, expected: Any, observed: Any) -> None:
    if not same_value(expected, observed):
        raise RunDivergence(rules, what, expected, observed)


def _execute(run: GeneratedRun, runtime: Runtime, store: RecordingStore,
             script: dict[str, Any]) -> list[RunView]:
    first = len(store.timeline)
    try:
        observation = observe(runtime, script, store)
    except ScriptError as problem:
        rules = tuple(sorted({r for p in run.runs for r in p.rules()}
                             | set(_POLICY_RULES[run.effective_policy])))
        raise RunDivergence(rules, "the runtime went off the script", "the scripted calls",
                            str(problem)) from problem
    return run_views(list(observation["timeline"])[first:], script["thread"])


def _reference(script: dict[str, Any]) -> tuple[list[RunView], list[Message]]:
    reference_store = RecordingStore(MemoryStore())
    try:
        observation = observe(Simulator(), script, reference_store)
        return (run_views(observation["timeline"], script["thread"]),
                reference_store.messages(script["thread"]))
    finally:
        reference_store.close()


def _run_rules(run: GeneratedRun, plan: PlannedRun) -> tuple[str, ...]:
    extra = ("SP-001",) if run.policy is None else ()
    return (*_POLICY_RULES[run.effective_policy], *plan.rules(), *extra)


def _check_run_ids(views: list[RunView], policy_rules: tuple[str, ...]) -> None:
    """Each run's appends carry one run id, its own. Two ids in one run's appends
    are another run's messages saved with it: the policy's rules as well as
    SP-030's stamps."""
    seen: dict[Any, int] = {}
    for n, view in enumerate(views, 1):
        messages = [m for b in view.batches for m in b]
        ids = {m.get("run_id") for m in messages}
        _check((*policy_rules, "SP-030"), f"run ids on the messages run {n} appended",
               1 if messages else 0, len(ids))
        for run_id in ids:
            _check(("SP-030",), f"the run that first appended run id {run_id!r}", n,
                   seen.setdefault(run_id, n))
        rounds = [m.get("round") for m in messages]
        _check(("SP-030",), f"rounds of run {n}'s messages count from 1 and never go back",
               sorted(rounds, key=lambda r: (r is None, r or 0)), rounds)
        if rounds:
            _check(("SP-030",), f"first round of run {n}", True,
                   isinstance(rounds[0], int) and rounds[0] >= 1)


def _check_each_run(run: GeneratedRun, views: list[RunView], expected: list[RunView],
                    errors: bool) -> None:
    _check(_OUTCOME_RULES, "what each run's caller was told (outcome, stage, error type)",
           [v.outcome for v in expected], [v.outcome for v in views])
    for n, (plan, view) in enumerate(zip(run.runs, views, strict=True), 1):
        if plan.end == "input-blocked":
            _check(("SP-004",), f"run {n}, blocked at input, appends and asks nothing",
                   ([], []), (view.batches, view.requests))
    _check_run_ids(views, _POLICY_RULES[run.effective_policy])
    for n, (plan, view, ref) in enumerate(zip(run.runs, views, expected, strict=True), 1):
        rules = _run_rules(run, plan)
        _check((*rules, "SP-030"), f"what run {n} ({plan.kind}, ends {plan.end}) appended, "
               "batch by batch (role, text, round)", ref.stored(), view.stored())
        _check(("SP-022", "SP-023", "SP-024", "SP-027", "SP-028"),
               f"the tools run during run {n} (names and arguments)", ref.tools, view.tools)
        _check(("SP-006", "SP-025", *(("SP-028",) if plan.kind == "resume" else ())),
               f"the order of run {n}'s appends and tool runs", ref.order, view.order)
        _check(("SP-003", "SP-031", *(("SP-028",) if plan.kind == "resume" else ())),
               f"what the model was shown at each call of run {n}", ref.requests, view.requests)
        if plan.kind == "resume":
            _check(("SP-028",), f"loads of the thread's history during the resumed run {n}",
                   ref.loads, view.loads)
        else:  # how often a run reads is its own affair; that it reads at all is not
            _check(("SP-031",), f"whether run {n} read the thread's history from the store",
                   ref.loads > 0, view.loads > 0)
        # under an output guardrail, the chunks may spell only the text it let through
        # (nothing when it was never asked): the Anvia runtime holds the deltas back
        held = plan.stream and "output_guardrail" in (run.script.get("hooks") or {})
        spelled = (view.chunks if held and view.chunks == (view.guarded or "")
                   else ref.chunks)
        _check(("SP-029",), f"what run {n}'s chunks spell (streamed: {plan.stream}; the "
               "model's words, or under an output guardrail the text it let through)",
               spelled, view.chunks)
        if errors:
            _check(("SP-013", "SP-014", "SP-015"),
                   f"roles of each record_error call of run {n}", ref.records, view.records)
        else:
            _check(("SP-017",), f"record_error calls of run {n} (errors not declared)",
                   [], view.records)
        for batch in view.batches:
            calls = {p["id"] for m in batch for p in m.get("parts", [])
                     if isinstance(p, Mapping) and p.get("type") == "tool_call"}
            results = {p.get("call_id") for m in batch for p in m.get("parts", [])
                       if isinstance(p, Mapping) and p.get("type") == "tool_result"}
            _check(("SP-006", "SP-025"), "every stored tool call is in the batch of its result",
                   set(), calls - results - view.waiting)


def check_run(run: GeneratedRun, runtime: Runtime, store: RecordingStore) -> None:
    """Execute ``run`` on ``runtime`` against ``store`` and on the reference, and
    raise :class:`RunDivergence` naming the rules of the first broken invariant."""
    script = _fresh(run)
    thread = script["thread"]
    views = _execute(run, runtime, store, script)
    stored = store.messages(thread)
    expected, reference_messages = _reference(script)

    _check_each_run(run, views, expected, store.has(Capability.ERRORS))

    if any(plan.stream for plan in run.runs):
        buffered = _execute(run, runtime, store, _fresh(run, buffered=True))
        _check(("SP-029",), "a streamed script against the same script buffered "
               "(batches and outcomes of each run)",
               [(v.stored(), v.outcome) for v in buffered],
               [(v.stored(), v.outcome) for v in views])

    for limit in range(len(stored) + 2):
        window = store.messages(thread, limit)
        _check(("ST-003",), f"the newest {limit} messages", stored[-limit:] if limit else [],
               window)

    def comparable(messages: list[Message]) -> list[tuple[str, str, int | None]]:
        denied = denied_calls(messages)
        return [(m.role, compared_text(m, denied), m.round) for m in messages]

    rules = sorted({r for plan in run.runs for r in _run_rules(run, plan)})
    _check((*rules, "SP-023"), f"what the store holds after the script under "
           f"{run.effective_policy}", comparable(reference_messages), comparable(stored))


def run_property(
    runtime: Runtime, store: RecordingStore, chosen: settings,
    failed: Callable[[GeneratedRun], None] | None = None,
    policies: Collection[str] | None = None,
    hooks: Collection[str] | None = None,
) -> Callable[[], None]:
    """The Hypothesis search of :func:`check_run` under ``chosen`` settings: the
    :data:`~memconform.properties.run_scripts.EXPLICIT` scripts first (already
    minimal, so not shrunk), then generated ones; ``failed`` is told every script
    that breaks an invariant (the last one told is the shrunk counterexample).
    ``policies`` (the save policies the runtime declares; ``None``: it declares
    none, so all are run) limits the scripts to those policies and to scripts
    configuring no policy; ``hooks`` (the optional hooks it declares; ``None``:
    all) to scripts acting through no other hook."""
    allowed: tuple[str | None, ...] = (
        *(p for p in SAVE_POLICIES if policies is None or p in policies), None)

    @chosen
    @given(generated_runs(allowed, hooks))
    def each(run: GeneratedRun) -> None:
        try:
            check_run(run, runtime, store)
        except RunDivergence:
            if failed is not None:
                failed(run)
            raise

    usable = None if hooks is None else frozenset(hooks)
    for script in EXPLICIT:
        if script.policy in allowed and (usable is None or acting_hooks(script.script) <= usable):
            each = example(script)(each)

    def search() -> None:
        with fixed_draws():
            each()

    return search
