"""Mutants of the ``persisted-state`` profile: each breaks one promise of document 004.

Runtime mutants are the reference runner with one decision changed; for every
other profile they behave like the simulator. Store mutants wrap a working
store and break one store promise, passing everything else through.
"""

from __future__ import annotations

import atexit
import base64
import copy
import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memconform.contract import ConflictError, StoreError
from memconform.harness.environment import Environment
from memconform.harness.wrapper import StoreWrapper
from memconform.mutants import Mutant
from memconform.simulator.persisted_state import (
    DEFAULT_LIFETIMES,
    RECORD_KEY,
    Runner,
    is_unverified,
    job_scope,
    log_thread,
    render_export,
    render_fact,
)
from memconform.simulator.runtime import PROFILE_MODULES, Simulator
from memconform.values import Fact, JSONValue, StateEntry

__all__ = ["MUTANTS"]


class _MutantRuntime:
    """Runs ``persisted-state`` scripts with a broken runner, everything else as the simulator."""

    def __init__(self, runner: type[Runner]) -> None:
        self.runner = runner
        self.simulator = Simulator()

    @property
    def profiles(self) -> frozenset[str]:
        return frozenset(PROFILE_MODULES)

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        if script.get("profile") == "persisted-state":
            return self.runner(script, env).run()
        return self.simulator.execute(script, env)


def _runtime(runner: type[Runner]) -> Callable[[], object]:
    return lambda: _MutantRuntime(runner)


# -- runtime mutants: working state ------------------------------------------------------


class _WriteBeforeVerify(Runner):
    """Writes a step's results before its tool runs, and tidies up after a failure."""

    def before_tool(self, job_id: str, entry: StateEntry, index: int) -> StateEntry:
        def change(record: dict[str, Any]) -> None:
            step = record["steps"][index]
            record.setdefault("values", {}).update(copy.deepcopy(step.get("marks") or {}))
            step["status"] = "done"

        return self._rewrite(job_id, entry, change)

    def fail_step(
        self, job_id: str, entry: StateEntry, index: int, error: JSONValue
    ) -> StateEntry:
        def change(record: dict[str, Any]) -> None:
            step = record["steps"][index]
            for name in step.get("marks") or {}:
                record.get("values", {}).pop(name, None)
            step["status"] = "failed"
            step["error"] = copy.deepcopy(error)

        return self._rewrite(job_id, entry, change)


class _ConflictOverwrites(Runner):
    """On a compare-and-set conflict, takes the stored version and writes its own record."""

    def _rewrite(self, job_id: str, entry: StateEntry, change: Any) -> StateEntry:
        record = copy.deepcopy(entry.value)
        change(record)
        try:
            return self.write_record(job_id, record, entry.version)
        except ConflictError:
            fresh = self.read_record(job_id)
            return self.write_record(job_id, record, None if fresh is None else fresh.version)


_LOCAL_COPIES: dict[str, JSONValue] = {}


class _StaleLocalCopy(Runner):
    """Keeps the record in process memory and trusts that copy over the store."""

    def read_record(self, job_id: str) -> StateEntry | None:
        stored = super().read_record(job_id)
        scope = job_scope(self.namespace, job_id)
        if stored is None or scope not in _LOCAL_COPIES:
            return stored
        return StateEntry(RECORD_KEY, copy.deepcopy(_LOCAL_COPIES[scope]), stored.version)

    def write_record(self, job_id: str, record: JSONValue, version: int | None) -> StateEntry:
        entry = super().write_record(job_id, record, version)
        _LOCAL_COPIES[job_scope(self.namespace, job_id)] = copy.deepcopy(record)
        return entry


class _WriteAtEnd(Runner):
    """Keeps step results in memory and writes the record once, when the job ends."""

    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        super().__init__(script, env)
        self._pending: dict[str, JSONValue] = {}

    def read_record(self, job_id: str) -> StateEntry | None:
        stored = super().read_record(job_id)
        if stored is None or job_id not in self._pending:
            return stored
        return StateEntry(RECORD_KEY, copy.deepcopy(self._pending[job_id]), stored.version)

    def write_record(self, job_id: str, record: JSONValue, version: int | None) -> StateEntry:
        if version is None:
            return super().write_record(job_id, record, version)
        self._pending[job_id] = copy.deepcopy(record)
        return StateEntry(RECORD_KEY, record, version)

    def run_steps(
        self, job_id: str, *, stop_after: int | None, stop: str, resumed: bool
    ) -> dict[str, Any]:
        result = super().run_steps(job_id, stop_after=stop_after, stop=stop, resumed=resumed)
        if result["outcome"] not in ("killed", "handed-off") and job_id in self._pending:
            record = self._pending.pop(job_id)
            stored = super().read_record(job_id)
            super().write_record(job_id, record, None if stored is None else stored.version)
        return result


class _FlushesOnStop(_WriteAtEnd):
    """Keeps step results in memory and writes the record when the run stops,
    however it stops (ends, hands off): a process killed outright never gets
    there."""

    def run_steps(
        self, job_id: str, *, stop_after: int | None, stop: str, resumed: bool
    ) -> dict[str, Any]:
        result = super().run_steps(job_id, stop_after=stop_after, stop=stop, resumed=resumed)
        if job_id in self._pending:
            record = self._pending.pop(job_id)
            stored = Runner.read_record(self, job_id)
            Runner.write_record(self, job_id, record, None if stored is None else stored.version)
        return result


_MODULE_VALUES: dict[str, dict[str, JSONValue]] = {}
"""Where :class:`_ValuesInModuleGlobals` keeps looked-up values: this process only."""


def _take_recorded_values(written: StateEntry, index: int) -> tuple[Any, dict[str, Any]]:
    """A copy of the record ``written`` holds, with the values step ``index``
    records taken out of it, and those values."""
    record = copy.deepcopy(written.value)
    step = record["steps"][index]
    found = {name: record["values"].pop(name) for name in step.get("record") or {}
             if name in record["values"]}
    return record, found


class _ValuesInModuleGlobals(Runner):
    """Keeps looked-up values in a module-level dictionary instead of the record:
    a resume in the same process finds them, a fresh process does not."""

    def complete_step(
        self, job_id: str, entry: StateEntry, index: int, result: JSONValue
    ) -> StateEntry:
        written = super().complete_step(job_id, entry, index, result)
        record, found = _take_recorded_values(written, index)
        if not found:
            return written
        _MODULE_VALUES.setdefault(job_scope(self.namespace, job_id), {}).update(found)
        return super().write_record(job_id, record, written.version)

    def read_record(self, job_id: str) -> StateEntry | None:
        stored = super().read_record(job_id)
        if stored is None:
            return None
        kept = _MODULE_VALUES.get(job_scope(self.namespace, job_id), {})
        record = copy.deepcopy(stored.value)
        if isinstance(record, dict):
            record.setdefault("values", {}).update(copy.deepcopy(kept))
        return StateEntry(stored.key, record, stored.version)


class _SwallowsRefusedRecord(Runner):
    """Takes a record write the store refused as written and goes on with the job."""

    def write_record(self, job_id: str, record: JSONValue, version: int | None) -> StateEntry:
        try:
            return super().write_record(job_id, record, version)
        except ConflictError:
            raise
        except StoreError:
            return StateEntry(RECORD_KEY, record, (version or 0) + 1)


class _SwallowsRefusedFact(Runner):
    """Reports a fact the store refused as stored."""

    def remember(self, request: Mapping[str, Any]) -> dict[str, JSONValue]:
        try:
            return super().remember(request)
        except StoreError:
            return {"do": "remember", "subject": str(request["subject"]), "outcome": "stored",
                    "evicted": [], "fact": self.build_fact(request).to_json()}


_HOST_FILES: set[Path] = set()


def _remove_host_files() -> None:
    for path in _HOST_FILES:
        path.unlink(missing_ok=True)


atexit.register(_remove_host_files)


def _host_key(scope: str) -> str:
    return "MEMCONFORM_PS_" + hashlib.sha256(scope.encode()).hexdigest()[:16].upper()


class _ValuesOnHost(Runner):
    """Keeps looked-up values in an environment variable and a temp file, not the record."""

    def complete_step(
        self, job_id: str, entry: StateEntry, index: int, result: JSONValue
    ) -> StateEntry:
        written = super().complete_step(job_id, entry, index, result)
        record, found = _take_recorded_values(written, index)
        if not found:
            return written
        key = _host_key(job_scope(self.namespace, job_id))
        kept = json.loads(os.environ.get(key, "{}"))
        kept.update(found)
        os.environ[key] = json.dumps(kept)
        host_file = Path(tempfile.gettempdir(), key + ".json")
        host_file.write_text(json.dumps(kept), encoding="utf-8")
        _HOST_FILES.add(host_file)
        return super().write_record(job_id, record, written.version)

    def read_record(self, job_id: str) -> StateEntry | None:
        stored = super().read_record(job_id)
        if stored is None:
            return None
        key = _host_key(job_scope(self.namespace, job_id))
        kept = json.loads(os.environ.get(key, "{}"))
        file = Path(tempfile.gettempdir(), key + ".json")
        if file.exists():
            kept.update(json.loads(file.read_text(encoding="utf-8")))
        record = copy.deepcopy(stored.value)
        if isinstance(record, dict):
            record.setdefault("values", {}).update(kept)
        return StateEntry(stored.key, record, stored.version)


class _ResumeReplays(Runner):
    """Resumes by reading the logged transcript back and replaying every step."""

    def resume(self, job_id: str) -> dict[str, Any]:
        self.env.store.messages(log_thread(self.namespace, job_id))
        entry = self.read_record(job_id)
        if entry is None:
            return {"job": job_id, "outcome": "unknown-job", "steps_run": []}

        def change(record: dict[str, Any]) -> None:
            for step in record["steps"]:
                step["status"] = "pending"

        self._rewrite(job_id, entry, change)
        return self.run_steps(job_id, stop_after=None, stop="kill", resumed=True)

    def log_exchange(self, *args: Any, **kwargs: Any) -> None:
        return None


class _ResumeSkips(Runner):
    """Resumes after the first pending step, taking it as done because it had been planned."""

    def resume(self, job_id: str) -> dict[str, Any]:
        entry = self.read_record(job_id)
        if entry is None:
            return {"job": job_id, "outcome": "unknown-job", "steps_run": []}

        def change(record: dict[str, Any]) -> None:
            for step in record["steps"]:
                if step.get("status") == "pending":
                    step["status"] = "done"
                    break

        self._rewrite(job_id, entry, change)
        return self.run_steps(job_id, stop_after=None, stop="kill", resumed=True)


# -- runtime mutants: durable knowledge ----------------------------------------------------


class _WallClockProvenance(Runner):
    """Dates facts by the wall clock of the host and drops the writer and evidence."""

    def build_fact(self, request: Mapping[str, Any]) -> Fact:
        import datetime

        fact = super().build_fact(request)
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return Fact(**{**fact.__dict__, "written_at": now, "writer": "", "evidence": ""})


class _SubjectNotKey(Runner):
    """Files each remembered fact under a fresh key, so facts about a subject pile up."""

    def build_fact(self, request: Mapping[str, Any]) -> Fact:
        fact = super().build_fact(request)
        return Fact(**{**fact.__dict__, "subject": f"{fact.subject}#{self.env.ids.next('fact')}"})

    def make_room(self, fact: Fact) -> list[str]:
        return []


class _ForgetOnlyHides(Runner):
    """Answers a forget request as done without deleting anything from the store."""

    def forget(self, subject: str) -> dict[str, JSONValue]:
        return {"do": "forget", "subject": subject, "removed": True}


class _UntrustedLabelLost(Runner):
    """Recalls untrusted facts as if they were trusted, established facts."""

    def present(self, fact: Fact) -> dict[str, JSONValue]:
        return super().present(Fact(**{**fact.__dict__, "trust": "trusted"}))


class _StaleClaimShownAsFact(Runner):
    """Asks whether a recalled fact is stale before asking whether it is
    trusted (an if/elif chain): a fact past its recheck date is shown as an
    unverified fact, its untrusted label dropped."""

    def present(self, fact: Fact) -> dict[str, JSONValue]:
        if is_unverified(fact, self.env.clock.now()):
            return super().present(Fact(**{**fact.__dict__, "trust": "trusted"}))
        return super().present(fact)


class _RecheckIgnored(Runner):
    """Presents every fact as current, whatever its recheck date."""

    def present(self, fact: Fact) -> dict[str, JSONValue]:
        return super().present(Fact(**{**fact.__dict__, "recheck_at": None}))


class _CopiedAsConcluded(Runner):
    """Stores quotations from tool results as the agent's own conclusions."""

    def build_fact(self, request: Mapping[str, Any]) -> Fact:
        return super().build_fact({**request, "origin": "concluded"})


class _InstructionsStored(Runner):
    """Stores standing instructions as facts."""

    def refuse_instruction(self, request: Mapping[str, Any]) -> bool:
        return False


class _ConfirmationBypassed(Runner):
    """Writes durable facts without asking the confirmation hook."""

    def confirm(self, fact: Fact) -> bool:
        return True


class _NoEviction(Runner):
    """Lets durable knowledge grow past its cap."""

    def make_room(self, fact: Fact) -> list[str]:
        return []


class _ExportInWriteOrder(Runner):
    """Exports facts in the order they were written instead of sorted by subject."""

    def export(self, jobs: Sequence[str] | None) -> str:
        text = super().export(jobs)
        head = text.split("\n[fact ", 1)[0].rstrip("\n") + "\n"
        facts = {f.subject: f for f in self.env.store.facts(self.kb_scope)}
        order: list[str] = []
        for entry in self.env.timeline:
            if entry.kind == "store" and entry.name == "put_fact":
                args = entry.data.get("args") or []
                if len(args) > 1 and args[0] == self.kb_scope and isinstance(args[1], dict):
                    subject = str(args[1].get("subject"))
                    if subject in facts and subject not in order:
                        order.append(subject)
        order += sorted(s for s in facts if s not in order)
        lines = [head] if facts else [render_export({}, [], self.knowledge.scope)]
        for subject in order:
            lines.append("\n".join(render_fact(facts[subject])))
        return "\n".join(lines).rstrip("\n") + "\n"


class _RecordWithScratch(Runner):
    """Keeps a scratch field of its own in the job's record, outside the named shape."""

    def write_record(self, job_id: str, record: JSONValue, version: int | None) -> StateEntry:
        if isinstance(record, dict):
            record = {**record, "scratch": {"writes": (version or 0) + 1}}
        return super().write_record(job_id, record, version)


class _NoExchangeLog(Runner):
    """Keeps no audit log of the steps' tool calls and results."""

    def log_exchange(self, *args: Any, **kwargs: Any) -> None:
        return None


class _ProgressFromLog(Runner):
    """Trusts the job's logged transcript for progress: a resume marks a step done
    in the record only when the log holds its exchange, so a lost log redoes work."""

    def resume(self, job_id: str) -> dict[str, Any]:
        entry = self.read_record(job_id)
        if entry is not None and isinstance(entry.value, Mapping):
            logged = {
                m.metadata.get("step")
                for m in self.env.store.messages(log_thread(self.namespace, job_id))
                if m.role == "tool"
            }

            def change(record: dict[str, Any]) -> None:
                for step in record.get("steps") or []:
                    if step.get("status") == "done" and step.get("name") not in logged:
                        step["status"] = "pending"

            self._rewrite(job_id, entry, change)
        return super().resume(job_id)


class _GatesWorkingState(Runner):
    """Asks the durable-write confirmation before every write of a job's record."""

    def write_record(self, job_id: str, record: JSONValue, version: int | None) -> StateEntry:
        self.env.hook("confirm_durable_write", {"job": job_id})
        return super().write_record(job_id, record, version)


class _OneLifetime(Runner):
    """Gives every kind of fact the observation's lifetime."""

    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        super().__init__(script, env)
        same = DEFAULT_LIFETIMES["observation"]
        self.knowledge = dataclasses.replace(
            self.knowledge, lifetimes=dict.fromkeys(self.knowledge.lifetimes, same))


class _ObservationDropped(Runner):
    """Refuses an instruction and drops the observation that came with it."""

    def remember(self, request: Mapping[str, Any]) -> dict[str, JSONValue]:
        if self.refuse_instruction(request):
            subject = str(request["subject"])
            return {"do": "remember", "subject": subject, "outcome": "refused-instruction"}
        return super().remember(request)


class _ExportWithDigestLine(Runner):
    """Heads the export with a digest of every fact, so any change touches that line too."""

    def export(self, jobs: Sequence[str] | None) -> str:
        text = super().export(jobs)
        return f"# state digest {hashlib.sha256(text.encode()).hexdigest()[:16]}\n{text}"


class _ExportEncoded(Runner):
    """Exports the state as base64: deterministic, but unreadable without a decoder."""

    def export(self, jobs: Sequence[str] | None) -> str:
        return base64.b64encode(super().export(jobs).encode()).decode() + "\n"


# -- store mutants ---------------------------------------------------------------------------


class _Wrapper(StoreWrapper):
    """A store wrapper that reads the inner store's declaration as a set: a
    declaration given as a method is called first (the only change to the
    :class:`StoreWrapper` contract)."""

    @property
    def capabilities(self) -> frozenset[str]:
        declared = self.inner.capabilities
        return frozenset(declared() if callable(declared) else declared)


class _AccumulatingFacts(_Wrapper):
    """Keeps every fact ever put for a subject; get_fact answers the oldest."""

    def __init__(self, inner: object) -> None:
        super().__init__(inner)
        self._facts: dict[str, list[Fact]] = {}

    def put_fact(self, scope: str, fact: Fact) -> None:
        self._facts.setdefault(scope, []).append(fact)

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        found = [f for f in self._facts.get(scope, []) if f.subject == subject]
        return found[0] if found else None

    def facts(self, scope: str) -> list[Fact]:
        return sorted(self._facts.get(scope, []), key=lambda f: f.subject)

    def forget(self, scope: str, subject: str) -> bool:
        before = len(self._facts.get(scope, []))
        self._facts[scope] = [f for f in self._facts.get(scope, []) if f.subject != subject]
        return len(self._facts[scope]) != before


class _DropsProvenance(_Wrapper):
    """Stores facts without their writer, evidence and date."""

    def put_fact(self, scope: str, fact: Fact) -> None:
        stripped = Fact(**{**fact.__dict__, "writer": "unknown", "evidence": "",
                           "written_at": "1970-01-01T00:00:00Z"})
        self.inner.put_fact(scope, stripped)


class _ForgetDoesNothing(_Wrapper):
    """Answers forget as if it deleted, and keeps the fact."""

    def forget(self, scope: str, subject: str) -> bool:
        return self.inner.get_fact(scope, subject) is not None


class _CasIgnoresVersion(_Wrapper):
    """Accepts every working-state write, whatever version it expects."""

    def write_state(
        self, scope: str, key: str, value: JSONValue, expected_version: int | None
    ) -> StateEntry:
        current = self.inner.read_state(scope, key)
        version = None if current is None else current.version
        entry: StateEntry = self.inner.write_state(
            scope, key, value, version
        )
        return entry


class _SharedScope(_Wrapper):
    """Puts every scope's facts and working state in one shared scope."""

    def read_state(self, scope: str, key: str) -> Any:
        return self.inner.read_state("shared", key)

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        return self.inner.write_state("shared", key, value, expected)

    def put_fact(self, scope: str, fact: Fact) -> Any:
        return self.inner.put_fact("shared", fact)

    def get_fact(self, scope: str, subject: str) -> Any:
        return self.inner.get_fact("shared", subject)

    def facts(self, scope: str) -> Any:
        return self.inner.facts("shared")

    def forget(self, scope: str, subject: str) -> Any:
        return self.inner.forget("shared", subject)


class _NotDurable(_Wrapper):
    """Keeps working state and facts in process memory while declaring durability."""

    def __init__(self, inner: object) -> None:
        super().__init__(inner)
        from memconform.adapters.memory import MemoryStore

        self._memory = MemoryStore()

    def read_state(self, scope: str, key: str) -> Any:
        return self._memory.read_state(scope, key)

    def write_state(self, scope: str, key: str, value: JSONValue, expected: int | None) -> Any:
        return self._memory.write_state(scope, key, value, expected)

    def put_fact(self, scope: str, fact: Fact) -> Any:
        return self._memory.put_fact(scope, fact)

    def get_fact(self, scope: str, subject: str) -> Any:
        return self._memory.get_fact(scope, subject)

    def facts(self, scope: str) -> Any:
        return self._memory.facts(scope)

    def forget(self, scope: str, subject: str) -> Any:
        return self._memory.forget(scope, subject)


def _store(wrapper: type[_Wrapper]) -> Callable[[object], object]:
    return wrapper


def _mutant(
    name: str, kind: str, doc: str, kills: set[str], build: Callable[..., object]
) -> Mutant:
    return Mutant(name, kind, doc, frozenset(kills), build, "persisted-state")


MUTANTS: list[Mutant] = [
    _mutant("ps-write-before-verify", "runtime",
            "writes a step's results (deployed: true, done) before its tool runs",
            {"PS-003"}, _runtime(_WriteBeforeVerify)),
    _mutant("ps-stale-local-copy", "runtime",
            "acts on a record copy kept in memory instead of the record read at step start",
            {"PS-002"}, _runtime(_StaleLocalCopy)),
    _mutant("ps-conflict-overwrites", "runtime",
            "overwrites another writer's change to the record after a compare-and-set conflict",
            {"PS-032"}, _runtime(_ConflictOverwrites)),
    _mutant("ps-write-at-end", "runtime",
            "writes the job's record only when the job ends",
            {"PS-001"}, _runtime(_WriteAtEnd)),
    _mutant("ps-flushes-on-stop", "runtime",
            "keeps step results in memory and writes the record only when the run stops",
            {"PS-001", "PS-005"}, _runtime(_FlushesOnStop)),
    _mutant("ps-values-in-module-globals", "runtime",
            "keeps looked-up values in module globals, not the record",
            {"PS-005", "PS-007", "PS-009"}, _runtime(_ValuesInModuleGlobals)),
    _mutant("ps-swallows-refused-record", "runtime",
            "takes a record write the store refused as written and goes on with the job",
            {"PS-035"}, _runtime(_SwallowsRefusedRecord)),
    _mutant("ps-swallows-refused-fact", "runtime",
            "reports a fact the store refused as stored",
            {"PS-035"}, _runtime(_SwallowsRefusedFact)),
    _mutant("ps-values-on-host", "runtime",
            "keeps looked-up values in an environment variable and a temp file, not the record",
            {"PS-005", "PS-009"}, _runtime(_ValuesOnHost)),
    _mutant("ps-resume-replays", "runtime",
            "resumes by reading the logged transcript and redoing every step",
            {"PS-006", "PS-008"}, _runtime(_ResumeReplays)),
    _mutant("ps-resume-skips", "runtime",
            "resumes after the first pending step, skipping work that was only intended",
            {"PS-007"}, _runtime(_ResumeSkips)),
    _mutant("ps-wall-clock-provenance", "runtime",
            "dates facts by the host's wall clock and drops their writer and evidence",
            {"PS-012"}, _runtime(_WallClockProvenance)),
    _mutant("ps-subject-not-key", "runtime",
            "files every remembered fact under a new key, so facts about a subject pile up",
            {"PS-015"}, _runtime(_SubjectNotKey)),
    _mutant("ps-forget-only-hides", "runtime",
            "answers forget requests without deleting anything",
            {"PS-017"}, _runtime(_ForgetOnlyHides)),
    _mutant("ps-untrusted-label-lost", "runtime",
            "recalls untrusted facts as established facts",
            {"PS-018"}, _runtime(_UntrustedLabelLost)),
    _mutant("ps-stale-claim-shown-as-fact", "runtime",
            "recalls an untrusted fact past its recheck date as an unverified fact, "
            "no longer a claim",
            {"PS-018"}, _runtime(_StaleClaimShownAsFact)),
    _mutant("ps-recheck-ignored", "runtime",
            "presents facts past their recheck date as current",
            {"PS-013"}, _runtime(_RecheckIgnored)),
    _mutant("ps-copied-as-concluded", "runtime",
            "stores quotations from tool results as the agent's conclusions",
            {"PS-019"}, _runtime(_CopiedAsConcluded)),
    _mutant("ps-instructions-stored", "runtime",
            "stores standing instructions ('always do X') as facts",
            {"PS-021"}, _runtime(_InstructionsStored)),
    _mutant("ps-confirmation-bypassed", "runtime",
            "writes durable facts without asking the confirmation hook",
            {"PS-020"}, _runtime(_ConfirmationBypassed)),
    _mutant("ps-no-eviction", "runtime",
            "lets durable knowledge grow past its cap",
            {"PS-016"}, _runtime(_NoEviction)),
    _mutant("ps-export-write-order", "runtime",
            "exports facts in write order, so the same state gives different text",
            {"PS-023"}, _runtime(_ExportInWriteOrder)),
    _mutant("ps-record-with-scratch", "runtime",
            "keeps a scratch field in the job's record, outside the named shape",
            {"PS-004"}, _runtime(_RecordWithScratch)),
    _mutant("ps-no-exchange-log", "runtime",
            "keeps no audit log of the steps' tool calls and results",
            {"PS-010"}, _runtime(_NoExchangeLog)),
    _mutant("ps-progress-from-log", "runtime",
            "takes a resumed job's progress from its logged transcript, so a lost log redoes work",
            {"PS-033"}, _runtime(_ProgressFromLog)),
    _mutant("ps-gates-working-state", "runtime",
            "asks the durable-write confirmation before every write of a job's record",
            {"PS-011"}, _runtime(_GatesWorkingState)),
    _mutant("ps-one-lifetime", "runtime",
            "gives every kind of fact the observation's 90-day lifetime",
            {"PS-014"}, _runtime(_OneLifetime)),
    _mutant("ps-observation-dropped", "runtime",
            "refuses an instruction and drops the observation that came with it",
            {"PS-022"}, _runtime(_ObservationDropped)),
    _mutant("ps-export-digest-line", "runtime",
            "heads the export with a digest line that changes with any fact",
            {"PS-024"}, _runtime(_ExportWithDigestLine)),
    _mutant("ps-export-encoded", "runtime",
            "exports the persisted state as base64 text",
            {"PS-025"}, _runtime(_ExportEncoded)),
    _mutant("ps-store-accumulates-facts", "store",
            "keeps every fact for a subject instead of superseding; get_fact answers the oldest",
            {"PS-015", "PS-027"}, _store(_AccumulatingFacts)),
    _mutant("ps-store-drops-provenance", "store",
            "stores facts without writer, evidence and date",
            {"PS-012", "PS-028"}, _store(_DropsProvenance)),
    _mutant("ps-store-forget-noop", "store",
            "answers forget without deleting anything",
            {"PS-017", "PS-029"}, _store(_ForgetDoesNothing)),
    _mutant("ps-store-cas-ignores-version", "store",
            "accepts working-state writes whatever version they expect",
            {"PS-026", "PS-032"}, _store(_CasIgnoresVersion)),
    _mutant("ps-store-shared-scope", "store",
            "keeps every scope's facts and working state in one shared scope",
            {"PS-030"}, _store(_SharedScope)),
    _mutant("ps-store-not-durable", "store",
            "keeps working state and facts in process memory while declaring durability",
            {"PS-031", "PS-009"}, _store(_NotDurable)),
]
"""Every persisted-state mutant; the mutant test checks each one's ``kills``."""
