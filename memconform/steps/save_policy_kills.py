"""Real kills of a ``save-policy`` run (document 000: a policy "changes failure
durability").

The run executes in a child process (:func:`memconform.steps.child_runs.run_killed`)
on the store under test, which must be durable. The kit's proxy there stops
either right after the store acknowledged the k-th write of the run (for every
k, until a run ends before its k-th write) or as the runtime asks the kit's fake
model for its n-th reply; the kit then SIGKILLs the process: no exception
reaches the runtime, no ``finally`` runs, nothing is flushed. Each kill runs on
a thread of its own.

After every kill, one more fresh process reads each killed thread
(``--show-messages``): what survived is what the store holds, as another
process sees it. The batches the runtime had appended come from the kit's own
proxy in the killed process (its timeline up to the kill), never from the
runtime's account.

State flows through the ``sp_kills`` fixture: a list of :class:`SpKill`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from pytest_bdd import parsers, then, when

from memconform.harness.proxy import RecordingStore
from memconform.harness.runtime import Runtime
from memconform.steps.child_runs import run_fresh, run_killed, runtime_options
from memconform.steps.common import Mismatch, decides, expect_equal, require_capability
from memconform.steps.save_policy import require_policies
from memconform.steps.save_policy_world import SavePolicyCase, appended_batches

__all__ = ["MAX_KILL_WRITES", "SpKill"]

MAX_KILL_WRITES = 16
"""A run still writing after this many acknowledged writes is reported, not killed on."""


@dataclass(frozen=True)
class SpKill:
    """One real kill: where it struck, the batches the store had acknowledged
    for the thread before it (the kit's proxy in the killed process) and the
    roles the thread holds afterwards (read by a fresh process)."""

    point: str
    thread: str
    acknowledged: list[list[str]]
    stored: list[str]


def _options(request: pytest.FixtureRequest) -> list[str]:
    return runtime_options(
        request.config.getoption("--memconform-mutant"),
        request.config.getoption("--memconform-runtime"),
    )


def _kill(
    script: Mapping[str, Any], store_url: str, thread: str, kill: list[str], options: list[str]
) -> dict[str, Any] | None:
    """Run ``script`` on ``thread`` killed at ``kill``; ``None`` when the run ended first."""
    out = run_killed(store_url, {**script, "thread": thread}, kill, options=options,
                     what="the process running the save-policy script")
    return out if out.get("killed_after") is not None else None


def _read_back(
    store_url: str, kills: list[tuple[str, str, dict[str, Any]]]
) -> list[SpKill]:
    """Read every killed thread in one fresh process and build the kills."""
    if not kills:
        return []
    args = [a for _, thread, _ in kills for a in ("--show-messages", thread)]
    shown = run_fresh(store_url, args, what="the fresh process reading the killed threads")
    threads = shown.get("messages") or {}
    return [
        SpKill(
            point=point,
            thread=thread,
            acknowledged=[
                [str(m["role"]) for m in batch]
                for batch in appended_batches({"timeline": out.get("timeline") or []}, thread)
            ],
            stored=[str(m.get("role")) for m in threads.get(thread) or []],
        )
        for point, thread, out in kills
    ]


@when("the save-policy run is killed right after each write the store acknowledged",
      target_fixture="sp_kills")
def sp_killed_at_every_write(
    request: pytest.FixtureRequest, sp_case: SavePolicyCase, store: RecordingStore,
    store_url: str, runtime: Runtime,
) -> list[SpKill]:
    """Kill the run after its k-th acknowledged write, for k = 1, 2, … until a run
    ends before its k-th write (``unsupported`` for a policy the runtime does not
    declare)."""
    require_policies(request, runtime, [sp_case.script.get("save_policy")])
    require_capability(store.capabilities, "durable")
    options, base = _options(request), str(sp_case.script["thread"])
    kills: list[tuple[str, str, dict[str, Any]]] = []
    for k in range(1, MAX_KILL_WRITES + 1):
        thread = f"{base}-w{k}"
        out = _kill(sp_case.script, store_url, thread, ["--kill-after-write", str(k)], options)
        if out is None:
            return _read_back(store_url, kills)
        kills.append((f"write {k}", thread, out))
    raise Mismatch("the run's writes", f"at most {MAX_KILL_WRITES}", "more: the run never ended")


@when(parsers.parse("the save-policy run is killed as it asks for model call {n:d}"),
      target_fixture="sp_kills")
def sp_killed_at_model_call(
    request: pytest.FixtureRequest, sp_case: SavePolicyCase, store: RecordingStore,
    store_url: str, n: int, runtime: Runtime,
) -> list[SpKill]:
    """Kill the run as it asks the kit's fake model for its ``n``-th reply
    (``unsupported`` for a policy the runtime does not declare)."""
    require_policies(request, runtime, [sp_case.script.get("save_policy")])
    require_capability(store.capabilities, "durable")
    thread = f"{sp_case.script['thread']}-m{n}"
    out = _kill(sp_case.script, store_url, thread, ["--kill-before-model", str(n)],
                _options(request))
    if out is None:
        raise Mismatch(f"model call {n}", "a run that asks for it", "the run ended before")
    return _read_back(store_url, [(f"model call {n}", thread, out)])


def _flat(batches: list[list[str]]) -> list[str]:
    return [role for batch in batches for role in batch]


def _parse_batches(text: str) -> list[list[str]]:
    """``"[user] [assistant,tool]"`` as lists of roles; ``nothing``: no batch."""
    if text.strip() == "nothing":
        return []
    return [
        [r.strip() for r in chunk.strip().strip("[]").split(",") if r.strip()]
        for chunk in text.split("]") if chunk.strip()
    ]


def _text(batches: list[list[str]]) -> str:
    return " ".join("[" + ",".join(b) + "]" for b in batches) or "(nothing)"


@then(parsers.parse('after every save-policy kill the thread holds the batches of "{batches}" '
                    "acknowledged before it, whole"))
@decides("SP-006", "SP-008", "SP-010", "SP-012", "SP-025")
def sp_kills_whole_batches(sp_kills: list[SpKill], batches: str) -> None:
    """After the kill following write k, the store acknowledged exactly the first
    k batches of the completed run's ``batches`` and the thread holds exactly
    their messages: never part of a batch, nothing lost of an acknowledged one."""
    expected = _parse_batches(batches)
    if not sp_kills:
        raise Mismatch("kills", "at least one write to kill after", "the run wrote nothing")
    wrong = []
    for number, kill in enumerate(sp_kills, start=1):
        owed = expected[:number]
        if kill.acknowledged != owed or kill.stored != _flat(owed):
            wrong.append(f"{kill.point}: acknowledged {_text(kill.acknowledged)}, "
                         f"thread holds {kill.stored}, owed {_text(owed)}")
    expect_equal("kills after which the thread did not hold whole batches", [], wrong)


@then(parsers.parse('after the save-policy kill the thread holds "{batches}"'))
@decides("SP-005", "SP-006", "SP-009", "SP-010", "SP-011", "SP-012")
def sp_kill_kept(sp_kills: list[SpKill], batches: str) -> None:
    """The thread, read by a fresh process after the kill, holds exactly the
    messages of ``batches`` (what the policy owed before that point)."""
    expected = _flat(_parse_batches(batches))
    for kill in sp_kills:
        expect_equal(f"the roles the thread holds after the kill at {kill.point}", expected,
                     kill.stored)
