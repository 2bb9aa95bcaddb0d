"""Generated ``save-policy`` scripts: one to three runs on one thread.

:func:`generated_runs` draws a script and a plan of what each run meets. A run
starts from a new input (which the input guardrail may block) or, right after
a run that suspended for approval, resumes it with an approving or rejecting
answer. A run then has 0-2 tool rounds (the last one may need approval, which
suspends the run), at most one failing model call, maybe a retried one, maybe
a tool that throws (the tool-error hook lets the run go on or terminates it),
and a final answer the output guardrail allows, replaces or blocks and the
run-end hook may cancel. Any run may be streamed; the policy may be left unset.

Every choice shrinks towards the plainest script (one buffered run with no
tools, no failure and no hook), so a counterexample is as small as the broken
behaviour allows. Tools and call ids are unique per run and round; the scripted
hooks are lists in the order the reference calls them. No script names a
``variant``: the reference is the standard simulator, so a runtime that answers
approvals during the run (the ``anvia-main`` line) diverges from it and is
caught, not accommodated.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from memconform.harness.runtime import hooks_needed
from memconform.properties.strategies import message_texts

__all__ = ["EXPLICIT", "GeneratedRun", "PlannedRun", "RunChoice", "build", "generated_runs",
           "run_choices"]

_text = message_texts(allow_nul=False, max_size=40)

ENDS = ("completed", "input-blocked", "output-blocked", "failed", "cancelled", "suspended")
"""How a planned run ends."""


@dataclass(frozen=True)
class PlannedRun:
    """What one run of a generated script meets, as the script makes it happen.

    ``failing_model_call`` is 1-based within the run (retries not counted);
    ``guard_text`` is the output guardrail's replacement or block text."""

    kind: str
    stream: bool
    end: str
    failing_model_call: int | None = None
    retried: bool = False
    thrown_tool: bool = False
    approved: bool | None = None
    guard_text: str | None = None
    run_end_cancel: bool = False

    def rules(self) -> tuple[str, ...]:
        """The rules this run exercises besides its policy's."""
        found: list[str] = []
        if self.kind == "resume":
            found.append("SP-028")
        if self.stream:
            found.append("SP-029")
        if self.end == "input-blocked":
            found.append("SP-004")
        if self.guard_text is not None:
            found.append("SP-026")
        if self.end == "suspended":
            found.append("SP-027")
        if self.thrown_tool:
            found += ["SP-023", "SP-024"]
        if self.retried:
            found.append("SP-021")
        if self.run_end_cancel:
            found.append("SP-032")
        return tuple(found)


@dataclass(frozen=True)
class GeneratedRun:
    """One generated script (thread left empty) and the plan of its runs."""

    policy: str | None
    runs: tuple[PlannedRun, ...]
    script: dict[str, Any]

    @property
    def effective_policy(self) -> str:
        """The policy the script runs under (``message`` when none is configured)."""
        return self.policy or "message"


@dataclass(frozen=True)
class RunChoice:
    """The choices behind one run; :func:`build` reads them in context (a run
    after a suspended one resumes it; choices beyond the run are ignored).

    ``failing``, ``retry`` and ``throwing`` are 1-based model calls or rounds
    (0: none); ``texts`` feed the replies and tool results in order, then ``""``."""

    stream: bool = False
    text: str = ""
    blocked: bool = False
    rejected: bool = False
    rounds: int = 0
    approval: bool = False
    failing: int = 0
    retry: int = 0
    throwing: int = 0
    terminate: bool = False
    guard: str = "allow"
    cancel: bool = False
    texts: tuple[str, ...] = ()


@dataclass
class _Builder:
    steps: list[dict[str, Any]] = field(default_factory=list)
    tools: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def hook(self, name: str, outcome: dict[str, Any]) -> None:
        self.hooks.setdefault(name, []).append(outcome)


def _fail(n: int, call: int) -> dict[str, Any]:
    return {"fail": {"type": "ModelError", "message": f"run {n} model call {call} failed"}}


_RETRYABLE = {"fail": {"type": "ModelError", "message": "busy, try again", "status": 503}}


def _within(value: int, last: int) -> int | None:
    return value if 1 <= value <= last else None


def _rounds(b: _Builder, n: int, kind: str, c: RunChoice) -> PlannedRun:
    """Script the model calls of run ``n`` after its input (or resume) was accepted."""
    texts = iter(c.texts)
    rounds = c.rounds
    approval = c.approval and rounds > 0
    calls = rounds if approval else rounds + 1
    failing, retry = _within(c.failing, calls), _within(c.retry, calls)
    plan: dict[str, Any] = {
        "kind": kind, "stream": c.stream, "failing_model_call": failing,
        "retried": retry is not None and (failing is None or retry <= failing),
    }
    last_plain = min(rounds - 1 if approval else rounds, (failing or calls + 1) - 1)
    throwing = _within(c.throwing, last_plain)
    for r in range(1, rounds + 1):
        if retry == r:
            b.steps.append(_RETRYABLE)
        if failing == r:
            b.steps.append(_fail(n, r))
            return PlannedRun(end="failed", thrown_tool=throwing is not None, **plan)
        tool = f"tool_{n}_{r}"
        call: dict[str, Any] = {"id": f"call-{n}-{r}", "name": tool, "args": {"run": n, "round": r}}
        waits = approval and r == rounds
        if waits:
            call["needs_approval"] = True
        b.steps.append({"reply": next(texts, ""), "tool_calls": [call]})
        if throwing == r:
            b.tools[tool] = {"fail": {"type": "ToolFailure", "message": next(texts, "")},
                             "effect": f"effect {n}.{r}"}
            b.hook("tool_error", {"action": "terminate", "text": f"stop run {n}"}
                   if c.terminate else {"action": "allow"})
            if c.terminate:
                return PlannedRun(end="cancelled", thrown_tool=True, **plan)
        else:
            b.tools[tool] = {"result": next(texts, ""), "effect": f"effect {n}.{r}"}
        if waits:
            return PlannedRun(end="suspended", thrown_tool=throwing is not None, **plan)
    if retry == rounds + 1:
        b.steps.append(_RETRYABLE)
    if failing == rounds + 1:
        b.steps.append(_fail(n, rounds + 1))
        return PlannedRun(end="failed", thrown_tool=throwing is not None, **plan)
    b.steps.append({"reply": next(texts, "")})
    guard_text = None if c.guard == "allow" else f"{c.guard}d answer of run {n}"
    b.hook("output_guardrail", {"action": c.guard, "text": guard_text})
    b.hook("run_end", {"action": "cancel" if c.cancel else "allow"})
    end = "cancelled" if c.cancel else "output-blocked" if c.guard == "block" else "completed"
    return PlannedRun(end=end, thrown_tool=throwing is not None, guard_text=guard_text,
                      run_end_cancel=c.cancel, **plan)


def build(policy: str | None, choices: list[RunChoice]) -> GeneratedRun:
    """The script (thread left empty) and plan that ``choices`` make under ``policy``."""
    b = _Builder()
    runs: list[dict[str, Any]] = []
    plans: list[PlannedRun] = []
    for n, c in enumerate(choices, 1):
        if plans and plans[-1].end == "suspended":
            reason = f"run {n} says no" if c.rejected else ""
            runs.append({"resume": {"approved": not c.rejected, "reason": reason},
                         "stream": c.stream})
            plan = _rounds(b, n, "resume", c)
            plans.append(PlannedRun(**{**plan.__dict__, "approved": not c.rejected}))
            continue
        runs.append({"input": c.text, "stream": c.stream})
        if c.blocked:
            b.hook("input_guardrail", {"action": "block", "text": f"input of run {n} refused"})
            plans.append(PlannedRun("input", c.stream, "input-blocked"))
            continue
        b.hook("input_guardrail", {"action": "allow"})
        plans.append(_rounds(b, n, "input", c))
    script: dict[str, Any] = {
        "schema": "memconform.script/1",
        "profile": "save-policy",
        "thread": "",
        "runs": runs,
        "model": {"agent": b.steps},
        "tools": b.tools,
        "hooks": b.hooks,
    }
    if policy is not None:
        script["save_policy"] = policy
    return GeneratedRun(policy, tuple(plans), script)


def _rare() -> st.SearchStrategy[bool]:
    """True about one time in four; shrinks to False."""
    return st.integers(0, 3).map(lambda n: n == 3)


run_choices = st.builds(
    RunChoice,
    stream=st.booleans(),
    text=_text,
    blocked=_rare(),
    rejected=_rare(),
    rounds=st.integers(0, 2),
    approval=st.booleans(),
    failing=st.sampled_from((0, 0, 1, 2, 3)),
    retry=st.sampled_from((0, 0, 0, 1, 2, 3)),
    throwing=st.sampled_from((0, 0, 1, 2)),
    terminate=st.booleans(),
    guard=st.sampled_from(("allow", "replace", "block")),
    cancel=_rare(),
    texts=st.lists(_text, max_size=6).map(tuple),
)
"""The choices of one run."""


@st.composite
def generated_runs(
    draw: st.DrawFn, policies: Sequence[str | None] = ("message", "turn", "run", None),
    hooks: Collection[str] | None = None,
) -> GeneratedRun:
    """A ``save-policy`` script of 1-3 runs on one thread and the plan of each run,
    under one of ``policies`` (``None``: no policy configured), acting only through
    the optional ``hooks`` a runtime declares (``None``: it declares none, so all)."""
    policy = draw(st.sampled_from(tuple(policies)))
    choices = draw(st.lists(run_choices, min_size=1, max_size=3))
    return build(policy, [within_hooks(c, hooks) for c in choices])


def within_hooks(choice: RunChoice, hooks: Collection[str] | None) -> RunChoice:
    """``choice`` without what needs an optional hook not in ``hooks``: a hook the
    runtime does not have is never scripted to act (a hook left at ``allow`` is
    what a runtime without it does anyway), as a scenario needing one is
    unsupported rather than emulated."""
    if hooks is None:
        return choice
    changes: dict[str, Any] = {}
    if "stream" not in hooks:
        changes["stream"] = False
    if "approval" not in hooks:
        changes["approval"] = False
    if "retry" not in hooks:
        changes["retry"] = 0
    if "tool_error" not in hooks:
        changes.update(throwing=0, terminate=False)
    if "output_guardrail" not in hooks:
        changes["guard"] = "allow"
    if "input_guardrail" not in hooks:
        changes["blocked"] = False
    if "run_end" not in hooks:
        changes["cancel"] = False
    return replace(choice, **changes)


def acting_hooks(script: dict[str, Any]) -> frozenset[str]:
    """The optional hooks ``script`` needs to act: :func:`hooks_needed` less the
    scripted hooks whose every outcome is ``allow``."""
    scripted = script.get("hooks") or {}
    return frozenset(
        name for name in hooks_needed(script)
        if name not in scripted
        or any(outcome.get("action") != "allow" for outcome in scripted[name])
    )


_ASK = RunChoice(rounds=1, approval=True, texts=("asking",))

EXPLICIT: tuple[GeneratedRun, ...] = (
    build("run", [RunChoice(failing=1), RunChoice()]),
    build("turn", [RunChoice(failing=1)]),
    build("run", [RunChoice(rounds=1, failing=2)]),
    build("message", [RunChoice(stream=True, texts=("a b",)), RunChoice()]),
    build("message", [_ASK, RunChoice()]),
    build("turn", [_ASK, RunChoice(rounds=1, failing=2)]),
    build("run", [_ASK, RunChoice(rejected=True)]),
    build("run", [RunChoice(guard="block"), RunChoice(blocked=True)]),
    build("message", [RunChoice(rounds=1, throwing=1, terminate=True)]),
    build("message", [RunChoice(cancel=True)]),
)
"""Small scripts every search tries before it generates any, the last first: one
for each second condition (a failure under ``turn`` and ``run``, a streamed run
followed by a second run, a resume under each policy, one after a failing model
call, a rejected approval, an output and an input block, a terminating
tool-error hook, a run-end cancel, a run after a failed one under ``run``), so
each is met whatever the draw, by a script already minimal. The two-run script
after a failure comes first, so tried last: a mistake one run shows is found
with one run."""
