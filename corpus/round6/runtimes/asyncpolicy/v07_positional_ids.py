"""v07: message ids are derived from the run's position in the script.

The bug: to make replays idempotent, message ids are built from the run's
index in the script and a per-run counter (``msg-<run number>.<n>``) instead of
coming from the kit's id source. Within one ``execute`` they are unique; but a
later run of the same thread on a fresh instance (a new process) is again run
number one, so its ids repeat ids already stored in the thread.

Situation that shows it: a thread continued by another process: a later run on
a fresh instance, or a suspended run resumed in a fresh process. Its first
append repeats stored ids, the store refuses it (``DuplicateIdError``) and the
run fails; under ``run`` the whole run's batch is refused. Every run of a
single-process script persists correctly.

Why a team would ship it: deterministic ids make tests and replays
reproducible, and every test runs all runs of a conversation in one process.

Rules broken: SP-021, SP-012, SP-028.
"""

from __future__ import annotations

from corpus.round6.runtimes.asyncpolicy.base import Agent, AsyncPolicyRuntime, RunState


class PositionalIdsAgent(Agent):
    def __init__(self, script, env, policy):  # type: ignore[no-untyped-def]
        super().__init__(script, env, policy)
        self.counters: dict[str, int] = {}

    def message_id(self, run: RunState) -> str:
        n = self.counters.get(run.id, 0) + 1
        self.counters[run.id] = n
        # --- the bug ---
        # the run's position in this script, not a source unique across processes
        return f"msg-{run.index + 1}.{n}"


class PositionalIdsRuntime(AsyncPolicyRuntime):
    agent_class = PositionalIdsAgent


def make() -> PositionalIdsRuntime:
    return PositionalIdsRuntime()
