"""The ``save-policy`` script, parsed and checked.

A script for this profile (see ``spec/schemas/script-save-policy.schema.json``)
names the thread, the save policy and a list of runs on that thread; the fake
model, tools and hooks are scripted in the shared ``model`` / ``tools`` /
``hooks`` sections read by the Environment. :func:`parse_script` turns the JSON
into frozen values and raises :class:`ScriptError` naming the field for every
malformed part. An unknown *policy name* is not malformed: the runtime decides
what to do with it (the reference runtime refuses it at construction).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memconform.harness.environment import ScriptError

__all__ = [
    "DEFAULT_POLICY",
    "HOOKS",
    "MODEL_COMPONENT",
    "POLICIES",
    "VARIANTS",
    "Resume",
    "RunSpec",
    "SavePolicyScript",
    "parse_script",
]

POLICIES: tuple[str, ...] = ("message", "turn", "run")
"""The three save policies of document 000."""

DEFAULT_POLICY = "message"
"""The policy used when a script configures none."""

VARIANTS: tuple[str, ...] = ("anvia-main",)
"""Named divergent behaviours the reference runtime can reproduce."""

MODEL_COMPONENT = "agent"
"""The fake-model component every model call of this profile goes to."""

HOOKS: dict[str, str] = {
    "input_guardrail": "runs on the accepted input: allow | block (text = reason)",
    "output_guardrail": "runs on the final answer: allow | replace (text) | block (text)",
    "tool_error": "runs when a tool throws: allow (the error becomes the result) | terminate "
                  "(text = reason; the run ends cancelled)",
    "run_end": "runs after a response outcome is produced: allow | cancel",
    "run_error": "lifecycle error hook, runs first on a failed run; its own failure is ignored",
}
"""The scripted hook names this profile calls, and what each action means."""

_RUN_KEYS = frozenset({"input", "resume", "stream", "cancel_before_model_call"})
_TOP_KEYS = frozenset(
    {
        "schema", "profile", "variant", "save_policy", "thread", "stream", "max_rounds",
        "max_retries", "runs", "model", "tools", "hooks", "clock",
    }
)


@dataclass(frozen=True)
class Resume:
    """A run that answers the pending approval of a suspended run.

    ``continuation`` is what the suspended run gave its caller to resume it
    (its observation's ``continuation``), handed back unchanged; ``None`` resumes
    the previous run of the same script."""

    approved: bool
    reason: str
    continuation: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RunSpec:
    """One run of the script: a new ``input`` or a ``resume`` of a suspended run.

    ``cancel_before_model_call`` cancels the run just before its N-th model
    call (1-based, retries not counted).
    """

    index: int
    input: str | None
    resume: Resume | None
    stream: bool
    cancel_before_model_call: int | None


@dataclass(frozen=True)
class SavePolicyScript:
    """A parsed script. ``policy`` is the configured name (maybe unknown);
    ``policy_configured`` says whether the script named one at all."""

    thread: str
    policy: str
    policy_configured: bool
    variant: str | None
    stream: bool
    max_rounds: int
    max_retries: int
    runs: tuple[RunSpec, ...]


def _int(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ScriptError(f"{where}: expected an integer >= {minimum}, got {value!r}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ScriptError(f"{where}: expected true or false, got {value!r}")
    return value


def _run(raw: Any, index: int, stream: bool) -> RunSpec:
    where = f"runs[{index}]"
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: expected an object")
    unknown = set(raw) - _RUN_KEYS
    if unknown:
        raise ScriptError(f"{where}.{sorted(unknown)[0]}: unknown field")
    has_input, has_resume = "input" in raw, "resume" in raw
    if has_input == has_resume:
        raise ScriptError(f"{where}: give exactly one of 'input' or 'resume'")
    text: str | None = None
    resume: Resume | None = None
    if has_input:
        if not isinstance(raw["input"], str):
            raise ScriptError(f"{where}.input: expected text")
        text = raw["input"]
    else:
        answer = raw["resume"]
        if not isinstance(answer, Mapping):
            raise ScriptError(f"{where}.resume: expected an object with 'approved'")
        approved = _bool(answer.get("approved"), f"{where}.resume.approved")
        reason = answer.get("reason", "")
        if not isinstance(reason, str):
            raise ScriptError(f"{where}.resume.reason: expected text")
        continuation = answer.get("continuation")
        if continuation is not None and not isinstance(continuation, Mapping):
            raise ScriptError(f"{where}.resume.continuation: expected an object")
        resume = Resume(approved, reason, continuation)
    cancel = raw.get("cancel_before_model_call")
    return RunSpec(
        index=index,
        input=text,
        resume=resume,
        stream=_bool(raw.get("stream", stream), f"{where}.stream"),
        cancel_before_model_call=(
            None if cancel is None else _int(cancel, f"{where}.cancel_before_model_call", 1)
        ),
    )


def parse_script(script: Mapping[str, Any]) -> SavePolicyScript:
    """Check and parse a ``save-policy`` script; raises :class:`ScriptError`
    naming the field (as a JSON path) when anything is malformed."""
    if not isinstance(script, Mapping):
        raise ScriptError("script: expected an object")
    unknown = set(script) - _TOP_KEYS
    if unknown:
        raise ScriptError(f"{sorted(unknown)[0]}: unknown field for profile save-policy")
    thread = script.get("thread")
    if not isinstance(thread, str) or not thread:
        raise ScriptError("thread: expected a non-empty thread id")
    configured = "save_policy" in script and script["save_policy"] is not None
    policy = script.get("save_policy") if configured else DEFAULT_POLICY
    if not isinstance(policy, str):
        raise ScriptError(f"save_policy: expected text, got {type(policy).__name__}")
    variant = script.get("variant")
    if variant is not None and variant not in VARIANTS:
        raise ScriptError(f"variant: must be one of {', '.join(VARIANTS)}, got {variant!r}")
    stream = _bool(script.get("stream", False), "stream")
    runs = script.get("runs")
    if not isinstance(runs, list) or not runs:
        raise ScriptError("runs: expected a non-empty list of runs")
    specs = tuple(_run(raw, i, stream) for i, raw in enumerate(runs))
    if specs[0].resume is not None and specs[0].resume.continuation is None:
        raise ScriptError("runs[0].resume: the first run has nothing to resume")
    return SavePolicyScript(
        thread=thread,
        policy=policy,
        policy_configured=configured,
        variant=variant,
        stream=stream,
        max_rounds=_int(script.get("max_rounds", 8), "max_rounds", 1),
        max_retries=_int(script.get("max_retries", 2), "max_retries", 0),
        runs=specs,
    )
