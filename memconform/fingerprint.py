"""The save-policy fingerprint of a runtime: which policy it really implements.

:func:`fingerprint` runs the save-policy failure matrix (:data:`POINTS`: every
failure point of document 000 on the standard conversation of the
``save-policy`` scenarios) on the runtime under test and on the reference
simulator under each policy (``message``, ``turn``, ``run``) and each known
variant (``anvia-main``), each execution on a fresh in-memory store behind the
kit's recording proxy. Scripts, faults and stores are the scenarios' own
(:mod:`memconform.steps._save_policy_scripts`): store refusals come from the
store the kit hands the runtime, never from the script.

What is compared at each point (a :class:`Projection`) is read from what the
kit saw, never from what the runtime says about itself:

- ``appends``: the roles of each batch the store accepted, in order;
- ``stored``: the roles the thread holds at the end, read back from the store;
- ``outcome``: the outcome the caller got for each run (with the error type,
  except for a cancellation, whose error document 000 does not name), and
  every outcome event reported when they disagree with it;
- ``errors``: the roles of each ``record_error`` call the store received;
- ``reply``: whether each run's reply to the caller is the answer stored;
- ``effects``: the tool effects left on the kit's ledger (document 000, §5);
- ``context``: the roles the kit's fake model was shown at each call (approval
  answers aside: :mod:`memconform.approvals`).

Crash points are kills after each acknowledged ``append``, not after every
acknowledged write (:func:`crash_points`). The projection holds what a kill
leaves of the conversation (the batches, the thread, the caller's outcome,
the effects, the model's context), and only an append changes the thread: a
runtime's other writes (a framework's working-state bookkeeping, such as
LangGraph's checkpoints) leave the thread as the append before them did.
Numbered by every write, point k meant different places in different
runtimes: the references write only appends (three or four when nothing
fails), while LangGraph's saver writes 13 times, 4 of them appends (writes 3,
6, 9 and 12), so its kill after write k met the reference's kill after its
k-th append, or a reference that had completed (k > 4): all 13 of its crash
points differed (13 of the 24 of 29 points differing from
``anvia-main/message``), though each kill after a working-state write left the
same batches and thread as the kill after the append before it (writes 1-2
nothing, 4-5 as 3, 7-8 as 6, 10-11 as 9, 13 as 12). Numbered by appends,
``crash after append k`` is the same place for every runtime, right after
the k-th batch of the conversation reached the store, and LangGraph's four
crash points store what ``anvia-main/message`` stores (11 of 20 points
differ, none a crash point; the other frameworks, whose writes are all
appends, keep their points). Kills after every write remain the save-policy
scenarios' (``features/save-policy/kills.feature``), which judge that any
write leaves whole batches.

The distance to a reference is the number of points whose projections differ;
the nearest reference is the one at the smallest distance (ties: the order of
:func:`references`). Everything is deterministic: no clock, no randomness.
"""

from __future__ import annotations

import importlib
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from memconform.adapters.memory import MemoryStore
from memconform.adapters.registry import open_store
from memconform.adapters.stdio_runtime import is_stdio_runtime
from memconform.approvals import shown_to_model
from memconform.harness.environment import Environment
from memconform.harness.proxy import AdapterContractError, RecordingStore
from memconform.harness.runtime import (
    OPTIONAL_HOOKS,
    DeclarationError,
    Runtime,
    declared_hooks,
    hooks_needed,
    require_profile,
)
from memconform.runtime_names import (
    SIMULATOR_NAMES,
    UnknownRuntime,
    runtime_factory,
    runtime_target,
)
from memconform.simulator.runtime import Simulator
from memconform.simulator.save_policy_script import POLICIES, VARIANTS
from memconform.steps._save_policy_scripts import (
    StoreRefusals,
    apply_failure_point,
    base_script,
    batches_text,
    refusing_store,
)
from memconform.steps.child_runs import run_killed, runtime_options
from memconform.values import JSONValue, Message

__all__ = [
    "COMPONENTS",
    "FINGERPRINT_SCHEMA",
    "OPTIONAL_HOOKS",
    "POINTS",
    "Fingerprint",
    "FingerprintError",
    "Point",
    "Projection",
    "Subject",
    "crash_points",
    "declared_hooks",
    "fingerprint",
    "hooks_needed",
    "project",
    "references",
    "render_json",
    "render_text",
    "subject_for",
]

FINGERPRINT_SCHEMA = "memconform.fingerprint/1"
PROFILE = "save-policy"
"""The profile whose scripts the matrix runs: a runtime must declare it."""
THREAD = "fingerprint"
COMPONENTS = ("appends", "stored", "outcome", "errors", "reply", "effects", "context")
"""What a projection holds, in the order the differences are listed."""

Edit = Callable[[dict[str, Any]], None]

FingerprintError = DeclarationError
"""A runtime name, policy or mutant that cannot be fingerprinted (usage error)."""


# -- the matrix ------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One failure point: how the script is changed and what the store does.

    ``refuse`` names a store refusal (``first append``, ``last append`` or
    ``record_error``); ``needs`` names the optional hooks the point cannot run
    without; ``crash_after`` runs the point in a child process the kit SIGKILLs
    right after the store acknowledged that many appends (:func:`crash_points`);
    ``without_errors`` hides the store's ``errors`` capability."""

    name: str
    doc: str
    edits: tuple[Edit, ...] = ()
    refuse: str | None = None
    without_errors: bool = False
    crash_after: int | None = None
    needs: tuple[str, ...] = ()
    """The optional hooks or features (:data:`OPTIONAL_HOOKS`) the point needs."""

    def script(self, policy: str | None) -> dict[str, Any]:
        """The standard conversation under ``policy``, changed for this point."""
        script = base_script(THREAD, policy)
        for edit in self.edits:
            edit(script)
        return script


def _failure(point: str) -> Edit:
    def edit(script: dict[str, Any]) -> None:
        script.update(apply_failure_point(script, point))
    return edit


def _hook(name: str, action: str, text: str) -> Edit:
    def edit(script: dict[str, Any]) -> None:
        script["hooks"][name] = {"action": action, "text": text}
    return edit


def _needs_approval(script: dict[str, Any]) -> None:
    script["model"]["agent"][0]["tool_calls"][0]["needs_approval"] = True


def _resume(script: dict[str, Any]) -> None:
    script["runs"].append({"resume": {"approved": True}})


def _retried(script: dict[str, Any]) -> None:
    failure = {"fail": {"type": "ProviderError", "message": "try again", "status": 503}}
    script["model"]["agent"][:0] = [failure, failure]


def _later_run(script: dict[str, Any]) -> None:
    script["runs"].append({"input": "And order A-2?"})
    script["model"]["agent"].append({"reply": "Order A-2 ships on Tuesday."})


def _streamed(script: dict[str, Any]) -> None:
    script["stream"] = True


def _cancel_first(script: dict[str, Any]) -> None:
    script["runs"][0]["cancel_before_model_call"] = 1


POINTS: tuple[Point, ...] = (
    Point("none", "the run completes"),
    Point("input guardrail blocks", "the input guardrail blocks the input",
          (_hook("input_guardrail", "block", "not allowed"),), needs=("input_guardrail",)),
    Point("input guardrail fails", "the input guardrail raises",
          (_failure("input guardrail"),), needs=("input_guardrail",)),
    Point("cancel before model call 1", "the run is cancelled before its first model call",
          (_cancel_first,), needs=("cancel",)),
    Point("model call 1 fails", "the first model call fails", (_failure("first model call"),)),
    Point("model call 1 retried", "the first model call fails twice with 503, then answers",
          (_retried,), needs=("retry",)),
    Point("tool throws", "the tool throws and its error becomes the result",
          (_failure("tool"),)),
    Point("tool-error hook terminates", "the tool throws and the tool-error hook terminates",
          (_failure("tool-error hook terminate"),), needs=("tool_error",)),
    Point("tool-error hook fails", "the tool throws and the tool-error hook raises",
          (_failure("tool-error hook"),), needs=("tool_error",)),
    Point("cancel before model call 2", "the run is cancelled before its second model call",
          (_failure("cancellation"),), needs=("cancel",)),
    Point("model call 2 fails", "the second model call fails", (_failure("later model call"),)),
    Point("output guardrail fails", "the output guardrail raises",
          (_failure("output guardrail"),), needs=("output_guardrail",)),
    Point("output guardrail blocks", "the output guardrail blocks the answer",
          (_hook("output_guardrail", "block", "I cannot share that."),),
          needs=("output_guardrail",)),
    Point("run-end hook fails", "the run-end hook raises", (_failure("run-end hook"),),
          needs=("run_end",)),
    Point("run-end hook cancels", "the run-end hook cancels the run",
          (_failure("run-end cancel"),), needs=("run_end",)),
    Point("suspended", "the tool call needs approval: the run suspends", (_needs_approval,),
          needs=("approval",)),
    Point("resumed", "a second run approves the pending tool call",
          (_needs_approval, _resume), needs=("approval",)),
    Point("resumed, model call fails", "the resumed run's model call fails",
          (_needs_approval, _resume, _failure("later model call")), needs=("approval",)),
    Point("resumed, tool-error hook terminates",
          "the approved tool throws and the tool-error hook terminates the resumed run",
          (_needs_approval, _resume, _failure("tool-error hook terminate")),
          needs=("approval", "tool_error")),
    Point("later run", "a second run on the thread answers directly", (_later_run,)),
    Point("streamed", "the run is streamed", (_streamed,), needs=("stream",)),
    Point("first append refused", "the store refuses the first append", refuse="first append"),
    Point("last append refused",
          "the store refuses the last append the runtime makes when nothing fails",
          refuse="last append"),
    Point("record_error refused", "the second model call fails and record_error is refused",
          (_failure("record_error"),), refuse="record_error"),
    Point("store without error records",
          "the second model call fails on a store not declaring errors",
          (_failure("later model call"),), without_errors=True),
)
"""The save-policy failure matrix, in the order a run meets the points, without
its crash points (:func:`crash_points`: as many as the runtime appends)."""


def crash_points(appends: int) -> tuple[Point, ...]:
    """``crash after append k`` for k = 1 … ``appends``: the process running the
    runtime is SIGKILLed right after the store acknowledged its k-th append
    (its other writes, working state included, are not kill points here: see
    the module docstring)."""
    return tuple(
        Point(f"crash after append {k}",
              f"the process is killed right after the store acknowledged append {k}",
              crash_after=k)
        for k in range(1, appends + 1)
    )


# -- what the kit saw ------------------------------------------------------------------


@dataclass(frozen=True)
class Projection:
    """What one execution left, as the kit saw it (see the module docstring)."""

    appends: str
    stored: str
    outcome: str
    errors: str
    reply: str
    effects: str
    context: str

    def to_json(self) -> dict[str, str]:
        """The components by name."""
        return {name: getattr(self, name) for name in COMPONENTS}

    def differing(self, other: Projection) -> list[str]:
        """The components that differ from ``other``, in :data:`COMPONENTS` order."""
        return [name for name in COMPONENTS if getattr(self, name) != getattr(other, name)]


def _roles(messages: Sequence[Mapping[str, Any]]) -> str:
    return ",".join(str(m.get("role")) for m in messages) or "none"


def _outcome_text(outcome: Any, stage: Any = None, error: Any = None) -> str:
    """An outcome with its stage and error type; a cancelled run's error is not
    named (document 000 names none, and each runtime throws its own)."""
    text = str(outcome)
    if stage:
        text += f" at {stage}"
    if isinstance(error, Mapping) and error.get("type") and outcome != "cancelled":
        text += f": {error['type']}"
    return text


def _outcomes(answer: Mapping[str, Any] | None, timeline: list[dict[str, Any]],
              crashed: bool, raised: str | None) -> tuple[str, list[Any]]:
    """The outcome of every run as the caller got it, and each run's reply."""
    if raised is not None:
        return f"raised {raised}", []
    runs = [] if answer is None else list(answer.get("runs") or [])
    events: dict[Any, list[str]] = {}
    for entry in timeline:
        if entry["kind"] == "event" and entry["name"] == "outcome":
            events.setdefault(entry.get("run_id"), []).append(
                _outcome_text(entry.get("outcome"), entry.get("stage"), entry.get("error"))
            )
    # a runtime stamping no run ids tells its runs' outcomes in order: the n-th
    # outcome event without a run id is the n-th such run's
    unnamed = iter(events.pop(None, []))
    texts = []
    for run in runs:
        if not isinstance(run, Mapping):
            texts.append("?")
            continue
        text = _outcome_text(run.get("outcome"), run.get("stage"), run.get("error"))
        if run.get("run_id") is None:
            told = next(unnamed, None)
            reported = None if told is None else [told]
        else:
            reported = events.get(run.get("run_id"))
        if reported is not None and reported != [text]:
            text += f" (reported: {', '.join(reported)})"
        texts.append(text)
    if crashed:
        texts.append("crashed")
    if answer is not None and answer.get("construction_error"):
        texts.append("refused configuration")
    replies = [r.get("reply") if isinstance(r, Mapping) else None for r in runs]
    return "; ".join(texts) or "none", replies


def project(
    timeline: list[dict[str, Any]], answer: Mapping[str, Any] | None,
    stored: Sequence[Message], ledger: Sequence[Mapping[str, Any]],
    *, killed: bool = False, raised: str | None = None,
) -> Projection:
    """The projection of one execution on :data:`THREAD`.

    ``timeline`` is the recording proxy's (store calls, model calls, events),
    ``answer`` what the runtime returned to its caller (``None`` when it never
    returned), ``stored`` the thread read back at the end, ``ledger`` the kit's
    record of tool effects; ``killed`` tells the kit killed the process running
    the runtime (its outcome is ``crashed``), ``raised`` the exception type the
    runtime raised."""
    def store_calls(name: str) -> list[dict[str, Any]]:
        return [e for e in timeline if e["kind"] == "store" and e["name"] == name
                and (e.get("args") or [None])[0] == THREAD]

    batches = [[str(m.get("role")) for m in e["args"][1]]
               for e in store_calls("append") if "raised" not in e and "hung" not in e]
    errors = []
    for call in store_calls("record_error"):
        record = call["args"][1] if len(call["args"]) > 1 else {}
        messages = record.get("messages", []) if isinstance(record, Mapping) else []
        errors.append(("refused " if "raised" in call else "") + f"[{_roles(messages)}]")
    outcome, replies = _outcomes(answer, timeline, killed, raised)
    answers = {m.text for m in stored if m.role == "assistant"}
    reply = "; ".join(
        "-" if not isinstance(r, str) or not r else ("stored" if r in answers else "not stored")
        for r in replies
    ) or "-"
    effects = ",".join(str(e.get("tool")) for e in ledger) or "none"
    context = []
    for entry in timeline:
        if entry["kind"] != "model":
            continue
        request = entry.get("request")
        shown = request.get("messages") if isinstance(request, Mapping) else None
        if not isinstance(shown, list):
            context.append("?")
            continue
        context.append(_roles([m for m in shown_to_model(shown) if isinstance(m, Mapping)
                               and m.get("role") != "system"]))
    return Projection(
        appends=batches_text(batches),
        stored=",".join(m.role for m in stored) or "none",
        outcome=outcome,
        errors=" ".join(errors) or "none",
        reply=reply,
        effects=effects,
        context=" | ".join(context) or "none",
    )


# -- executing one point ---------------------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """A runtime as the kit runs it: its name, the factory building it, the save
    policy the script configures (``None``: none), an optional store wrapper
    (a store mutant) and the options naming the same runtime (and mutant) to
    the kit's child process (:mod:`memconform.steps.job_resume`), where the
    crash points run."""

    label: str
    build: Callable[[], Runtime]
    policy: str | None
    store_wrapper: Callable[[Any], Any] | None = None
    child: tuple[str, ...] = ()


def _execute(subject: Subject, point: Point, last_append: int) -> tuple[Projection, int]:
    """Run ``point`` in this process on a fresh in-memory store; the projection
    and the number of appends the store acknowledged."""
    if point.crash_after is not None:
        return _execute_killed(subject, point.script(subject.policy), point.crash_after), 0
    raw = MemoryStore()
    store: Any = raw if subject.store_wrapper is None else subject.store_wrapper(raw)
    reader = store
    if point.without_errors:
        from memconform.steps.save_policy import StoreWithoutErrors

        store = StoreWithoutErrors(store)
    refusals = StoreRefusals()
    if point.refuse == "first append":
        refusals = StoreRefusals(appends=frozenset({1}))
    elif point.refuse == "last append":
        refusals = StoreRefusals(appends=frozenset({last_append}))
    elif point.refuse == "record_error":
        refusals = StoreRefusals(methods=frozenset({"record_error"}))
    proxy = RecordingStore(refusing_store(store, refusals))
    script = point.script(subject.policy)
    answer: Mapping[str, Any] | None = None
    raised: str | None = None
    env = Environment(script, proxy)
    try:
        runtime = subject.build()
        try:
            result = runtime.execute(script, env)
        except Exception as exc:  # the runtime under test broke: the caller saw it raise
            raised = type(exc).__name__
            result = None
        answer = result if isinstance(result, Mapping) else None
        stored = list(reader.messages(THREAD))
    finally:
        proxy.close()
    timeline = [e.to_json() for e in proxy.timeline]
    appends = sum(1 for e in timeline if e["kind"] == "store" and e["name"] == "append"
                  and "raised" not in e and "hung" not in e)
    return project(timeline, answer, stored, list(env.ledger), raised=raised), appends


def _execute_killed(subject: Subject, script: dict[str, Any], after: int) -> Projection:
    """Run ``script`` in a child process on a SQLite store the kit creates, SIGKILL
    it right after the store acknowledged append ``after`` (the kit's kill
    harness, :func:`memconform.steps.child_runs.run_killed`), then read the
    thread through a fresh connection. A run that ends before that write is
    projected as it ended."""
    with tempfile.TemporaryDirectory(prefix="memconform-fingerprint-") as folder:
        url = f"sqlite:///{Path(folder) / 'fingerprint.db'}"
        _close(open_store(url))  # the kit creates the store before the child opens it
        try:
            out = run_killed(url, script, ["--kill-after-append", str(after)],
                             options=subject.child,
                             what=f"the process running {subject.label} to kill it")
        except AdapterContractError as exc:  # the child could not run the runtime at all
            return project([], None, [], [], raised=type(exc).__name__)
        raw = open_store(url)
        try:
            reader: Any = raw if subject.store_wrapper is None else subject.store_wrapper(raw)
            stored = list(reader.messages(THREAD))
        finally:
            _close(raw)
    killed = out.get("killed_after") is not None
    return project(list(out.get("timeline") or []), None if killed else out, stored,
                   list(out.get("ledger") or []), killed=killed)


def _close(store: object) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()


def _clean_run(subject: Subject) -> tuple[int, int]:
    """The append the ``last append refused`` point refuses (the last the subject
    makes when nothing fails, at least 1) and how many appends it makes then."""
    _, appends = _execute(subject, POINTS[0], 0)
    return max(1, appends), appends


def run_matrix(subject: Subject, points: Sequence[Point] = POINTS) -> dict[str, Projection]:
    """The projection of ``subject`` at every point, by point name."""
    last, _ = _clean_run(subject)
    return {point.name: _execute(subject, point, last)[0] for point in points}


# -- the references and the comparison -------------------------------------------------


def references() -> list[Subject]:
    """The reference simulator under each policy, then each variant under each policy."""
    found = [Subject(policy, Simulator, policy) for policy in POLICIES]
    for variant in VARIANTS:
        found += [
            Subject(f"{variant}/{policy}", _variant(variant), policy,
                    child=("--runtime", variant))
            for policy in POLICIES
        ]
    return found


def _variant(variant: str) -> Callable[[], Runtime]:
    def build() -> Runtime:
        return Simulator(variant)
    return build


@dataclass(frozen=True)
class Difference:
    """One point where the runtime differs from its nearest reference."""

    point: str
    components: tuple[str, ...]
    runtime: Projection
    reference: Projection

    def to_json(self) -> dict[str, JSONValue]:
        """Both projections, restricted to the differing components."""
        return {
            "point": self.point,
            "components": list(self.components),
            "runtime": {c: getattr(self.runtime, c) for c in self.components},
            "reference": {c: getattr(self.reference, c) for c in self.components},
        }


@dataclass(frozen=True)
class Fingerprint:
    """The matrix of a runtime next to every reference, and the nearest one."""

    subject: str
    policy: str | None
    points: tuple[Point, ...]
    observed: dict[str, Projection]
    reference: dict[str, dict[str, Projection]]
    distances: dict[str, int] = field(default_factory=dict)
    unsupported: tuple[Point, ...] = ()

    @property
    def nearest(self) -> str:
        """The reference at the smallest distance (the first of equals)."""
        return min(self.distances, key=lambda name: (self.distances[name],
                                                     list(self.distances).index(name)))

    def differences(self, reference: str | None = None) -> list[Difference]:
        """Every point where the runtime differs from ``reference`` (default: nearest)."""
        name = reference or self.nearest
        found = []
        for point in self.points:
            mine, theirs = self.observed[point.name], self.reference[name][point.name]
            components = mine.differing(theirs)
            if components:
                found.append(Difference(point.name, tuple(components), mine, theirs))
        return found

    def to_json(self) -> dict[str, JSONValue]:
        """The fingerprint as JSON data (see :func:`render_json`)."""
        nearest = self.nearest
        return {
            "schema": FINGERPRINT_SCHEMA,
            "runtime": self.subject,
            "save_policy": self.policy,
            "components": list(COMPONENTS),
            "nearest": nearest,
            "distance": self.distances[nearest],
            "distances": dict(self.distances),
            "points": [
                {
                    "name": point.name,
                    "doc": point.doc,
                    "stored": self.observed[point.name].to_json(),
                    "nearest": self.reference[nearest][point.name].to_json(),
                    "differs": self.observed[point.name].differing(
                        self.reference[nearest][point.name]),
                }
                for point in self.points
            ],
            "differences": [d.to_json() for d in self.differences()],
            "unsupported": [
                {"name": p.name, "doc": p.doc, "needs": list(p.needs)} for p in self.unsupported
            ],
            "references": {
                name: {p: proj.to_json() for p, proj in matrix.items()}
                for name, matrix in self.reference.items()
            },
        }


_REFERENCE_CACHE: dict[tuple[str, tuple[str, ...]], dict[str, Projection]] = {}


def _reference_matrix(subject: Subject, points: Sequence[Point]) -> dict[str, Projection]:
    key = (subject.label, tuple(p.name for p in points))
    if key not in _REFERENCE_CACHE:
        _REFERENCE_CACHE[key] = run_matrix(subject, points)
    return _REFERENCE_CACHE[key]


def fingerprint(
    subject: Subject, points: Sequence[Point] = POINTS, *, crashes: bool = True
) -> Fingerprint:
    """Run the matrix on ``subject`` and on every reference and compare them.

    Points needing a hook the runtime does not declare are left out (listed as
    unsupported). With ``crashes``, :func:`crash_points` follow: one per append
    the subject makes when nothing fails, each a real kill of a child process
    (the references are killed after the same appends; one that ends before
    that append is projected as it ended). The references' matrices are computed
    once per process (they are the kit's own deterministic simulator).

    A runtime not declaring the ``save-policy`` profile raises
    :class:`~memconform.simulator.runtime.ProfileNotDeclared` before anything
    runs (it is ``unsupported``), one whose declaration cannot be read
    :class:`ValueError`: the gate of ``memconform run``
    (:func:`~memconform.simulator.runtime.require_profile`)."""
    runtime = subject.build()
    require_profile(runtime, PROFILE)
    hooks = declared_hooks(runtime)
    last, appends = _clean_run(subject)
    crashing = crash_points(appends) if crashes else ()
    run = [p for p in points if hooks is None or set(p.needs) <= hooks] + list(crashing)
    observed = {point.name: _execute(subject, point, last)[0] for point in run}
    every = [*points, *crashing]
    matrices = {ref.label: _reference_matrix(ref, every) for ref in references()}
    distances = {
        name: sum(1 for p in run if observed[p.name].differing(matrix[p.name]))
        for name, matrix in matrices.items()
    }
    unsupported = tuple(p for p in every if p not in run)
    return Fingerprint(subject.label, subject.policy, tuple(run), observed, matrices,
                       distances, unsupported)


# -- naming the runtime ----------------------------------------------------------------


def subject_for(
    runtime: str, policy: str | None = None, mutant: str | None = None
) -> Subject:
    """The subject named on the command line, by any name
    :func:`~memconform.runtime_names.runtime_target` resolves: ``simulator`` (the
    reference), a simulator variant (``anvia-main``), a framework of
    :data:`~memconform.adapters.registry.BUILTIN_RUNTIMES` or ``module:factory``; ``mutant`` names a
    save-policy mutant (a runtime mutant replaces the simulator, a store mutant
    wraps the store). Raises :class:`FingerprintError` for what cannot be named."""
    if policy is not None and policy not in POLICIES:
        raise FingerprintError(
            f"--policy must be one of {', '.join(POLICIES)}, got {policy!r}"
        )
    try:
        target = runtime_target(runtime)
        build = _factory(target)
    except UnknownRuntime as exc:
        raise FingerprintError(str(exc)) from None
    label = runtime
    wrapper: Callable[[Any], Any] | None = None
    if mutant is not None:
        from memconform.mutants import all_mutants

        chosen = all_mutants().get(mutant)
        if chosen is None or chosen.profile != "save-policy":
            known = ", ".join(n for n, m in all_mutants().items() if m.profile == "save-policy")
            raise FingerprintError(f"unknown save-policy mutant {mutant!r}; known: {known}")
        if chosen.kind == "runtime":
            if runtime not in SIMULATOR_NAMES:
                raise FingerprintError("a runtime mutant replaces the simulator: drop --runtime")
            build = cast("Callable[[], Runtime]", chosen.build)
        else:
            wrapper = chosen.build
        label = f"{runtime} (mutant {mutant})"
    # a stdio: command goes on resolved: the children run in folders of their own
    named = target if is_stdio_runtime(runtime) else runtime
    child = runtime_options(mutant, None if runtime in SIMULATOR_NAMES else named)
    return Subject(label, build, policy, wrapper, tuple(child))


def _factory(target: str) -> Callable[[], Runtime]:
    if is_stdio_runtime(target):
        return cast("Callable[[], Runtime]", runtime_factory(target))
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise FingerprintError(f"--runtime must be module:factory, not {target!r}")
    try:
        found: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise FingerprintError(f"cannot import {module_name!r}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(found, part):
            raise FingerprintError(f"{module_name!r} has no attribute {attr!r}")
        found = getattr(found, part)
    if not callable(found):
        raise FingerprintError(f"{target!r} is not a factory")
    factory: Callable[[], Runtime] = found
    return factory


# -- rendering -------------------------------------------------------------------------


def render_json(result: Fingerprint) -> str:
    """Canonical JSON: sorted keys, two-space indent, ASCII, a final newline."""
    return json.dumps(result.to_json(), sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def render_text(result: Fingerprint) -> str:
    """The table of what was stored at each point, the distances and every difference."""
    nearest = result.nearest
    configured = result.policy or "none configured"
    lines = [
        f"save-policy fingerprint of {result.subject} (save policy: {configured})",
        f"nearest policy: {nearest}, {result.distances[nearest]} of {len(result.points)} "
        "points differ",
        "distances: " + ", ".join(f"{n} {d}" for n, d in result.distances.items()),
        "",
    ]
    rows: list[tuple[str, ...]] = [("", "POINT", "APPENDS", "STORED", "OUTCOME")]
    for point in result.points:
        mine = result.observed[point.name]
        differs = mine.differing(result.reference[nearest][point.name])
        rows.append(("*" if differs else "", point.name, mine.appends, mine.stored,
                     mine.outcome))
    lines += _table(rows)
    lines.append("")
    for point in result.unsupported:
        lines.append(f"unsupported (the runtime has no {', '.join(point.needs)}): {point.name}")
    if result.unsupported:
        lines.append("")
    differences = result.differences()
    if not differences:
        lines.append(f"no point differs from {nearest}")
    else:
        lines.append(f"* points differing from {nearest}:")
        for diff in differences:
            lines.append(f"  {diff.point}:")
            for component in diff.components:
                lines.append(f"    {component}: {getattr(diff.runtime, component)}")
                lines.append(f"    {'':{len(component)}}  {nearest}: "
                             f"{getattr(diff.reference, component)}")
    return "\n".join(lines) + "\n"

