"""Deliberately broken strict-write runtimes and commit-flag stores.

Each runtime mutant is the reference executor with one :class:`Behaviour` or
:class:`DigestRules` switch turned the wrong way (or the ``eddi-snapshot``
variant, which differs from the document on purpose); each store mutant wraps a
working store and breaks one commit-flag promise. ``kills`` lists the rules the
strict-write features must reject the mutant under.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memconform.harness.environment import Environment
from memconform.harness.wrapper import StoreWrapper
from memconform.mutants import Mutant
from memconform.simulator.digest import SECRET_FAMILIES, SEED_RULES, digest_text
from memconform.simulator.runtime import Simulator
from memconform.simulator.secret_filter import SEED_FAMILIES
from memconform.simulator.strict_write import SEED, TASK_ERRORS_KEY, Behaviour, Executor, run
from memconform.values import JSONValue, Message

__all__ = [
    "MUTANTS",
    "BrokenStrictWrite",
    "CallerOnlyRedaction",
    "FlagLosingStore",
    "SetCommittedIgnoringStore",
]

PROFILE = "strict-write"


class BrokenStrictWrite(Simulator):
    """The simulator, except that strict-write scripts run with ``behaviour``."""

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__()
        self.behaviour = behaviour

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """Strict-write scripts run broken; every other profile runs as usual."""
        if script.get("profile") == PROFILE:
            return run(script, env, self.behaviour)
        return super().execute(script, env)


class _CallerOnlyRedaction(Executor):
    """Redacts the caller's copy and the stream event, but the digest it stores in
    memory (and so every later model request) is built without the secret filter."""

    _unfiltered: str | None = None

    def fail_task(self, turn: Any, task: Any, error: Mapping[str, Any], *args: Any) -> None:
        self._unfiltered = digest_text(task.id, error, replace(SEED_RULES, secret_filter=False))
        try:
            super().fail_task(turn, task, error, *args)
        finally:
            self._unfiltered = None

    def _write(self, step: int, task: str | None, kind: str, key: str, op: str,
               value: JSONValue = None, *args: Any, **kwargs: Any) -> Message:
        if key == TASK_ERRORS_KEY and isinstance(value, Mapping) and self._unfiltered:
            value = {**value, "text": self._unfiltered}
        return super()._write(step, task, kind, key, op, value, *args, **kwargs)


class _BrokenExecutorRuntime(Simulator):
    """The simulator, except that strict-write scripts run on :attr:`executor`."""

    executor: type[Executor] = Executor

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """Strict-write scripts run broken; every other profile runs as usual."""
        if script.get("profile") == PROFILE:
            return self.executor(script, env).run()
        return super().execute(script, env)


class CallerOnlyRedaction(_BrokenExecutorRuntime):
    """The simulator, except that strict-write scripts redact for the caller only."""

    executor = _CallerOnlyRedaction


class _RecommitsAtTurnEnd(Executor):
    """Once a turn that went on past a failure ends (not in ERROR), a "commit the
    step" pass marks everything the turn wrote committed again, the failed
    task's hidden writes and raw error included."""

    def _run_turn(self, number: int, text: str, streaming: bool) -> dict[str, JSONValue]:
        start = len(self._log)
        out = super()._run_turn(number, text, streaming)
        hidden = [m.id for m in self._log[start:] if not m.committed]
        if hidden and out.get("state") != "ERROR":
            self._set_committed(hidden, True)
        return out


class RecommitsAtTurnEnd(_BrokenExecutorRuntime):
    """The simulator, except that strict-write turns re-commit what they hid."""

    executor = _RecommitsAtTurnEnd


class SetCommittedIgnoringStore(StoreWrapper):
    """Accepts ``set_committed`` and changes nothing: uncommitted data stays visible."""

    def set_committed(self, thread_id: str, message_ids: Sequence[str], committed: bool) -> None:
        """Does nothing."""


class FlagLosingStore(StoreWrapper):
    """Keeps the flag and filters on it, but every message it returns reads as
    committed: the flag is lost on the way out."""

    def messages(
        self, thread_id: str, limit: int | None = None, *, include_uncommitted: bool = False
    ) -> list[Message]:
        """Read as the wrapped store does, then report every message as committed."""
        read = self.inner.messages(
            thread_id, limit, include_uncommitted=include_uncommitted
        )
        return [replace(m, committed=True) for m in read]


def _runtime(name: str, doc: str, kills: set[str], **switches: Any) -> Mutant:
    behaviour = replace(SEED, **switches)
    return Mutant(
        name=name, kind="runtime", doc=doc, kills=frozenset(kills),
        build=lambda: BrokenStrictWrite(behaviour), profile=PROFILE,
    )


def _digest(name: str, doc: str, kills: set[str], **switches: Any) -> Mutant:
    return _runtime(name, doc, kills, digest_rules=replace(SEED_RULES, **switches))


_FILTER_GAPS: dict[str, str] = {
    "sk-key": "sk- and sk-ant- keys",
    "unquoted-value": "unquoted values under secret-named keys",
    "double-quoted-value": "double-quoted values under secret-named keys",
    "escaped-json": "values in JSON escaped inside a string",
    "key-case": "key names that are not lower case",
    "single-quoted-value": "apostrophe-quoted values (Python repr, YAML, libpq)",
    "unquoted-phrase": "free text after `key:` past its first word",
    "key-name-variant": "secret words inside longer key names, or spaced and dotted",
    "lookalike-key-name": "key names with lookalike or invisible characters",
    "url-userinfo": "the password of user:password@host",
    "provider-key": "provider API keys known by their prefix",
    "jwt": "JSON Web Tokens",
    "private-key-block": "PEM private key blocks",
    "basic-auth-pair": "Basic user:password pairs without a header name",
    "error-type": "secrets in the error type that stands in for the reason",
}
"""Each family of the secret filter (but ``bearer``, which has its mutant already)
and what a filter without it lets through."""


def _filter_gap(family: str, what: str) -> Mutant:
    rule = "SW-019" if family in SEED_FAMILIES else "SW-031"
    return _digest(f"sw-filter-misses-{family}", f"The digest's secret filter misses {what}.",
                   {rule}, secret_families=SECRET_FAMILIES - {family})


MUTANTS: list[Mutant] = [
    Mutant(
        name="sw-eddi-snapshot",
        kind="runtime",
        doc="The EDDI snapshot: keep_all applies nothing, rollback by key, raw digests, "
        "no caller entry by default, no continueOnFailure.",
        kills=frozenset({
            "SW-003", "SW-007", "SW-008", "SW-010", "SW-013", "SW-016", "SW-018", "SW-019",
            "SW-020", "SW-021", "SW-022", "SW-023", "SW-024", "SW-026", "SW-027", "SW-030",
        }),
        build=lambda: Simulator(variant="eddi-snapshot"),
        profile=PROFILE,
    ),
    _runtime("sw-strict-when-disabled", "Applies strict write even while `enabled` is false.",
             {"SW-001", "SW-002", "SW-014", "SW-017"}, honour_enabled=False),
    _runtime("sw-view-includes-uncommitted",
             "Builds the model's view from every stored message, uncommitted ones included.",
             {"SW-006"}, view_committed_only=False),
    _runtime("sw-rollback-misses-in-place-changes",
             "Rollback leaves the failed task's in-place changes (data and output) committed.",
             {"SW-007", "SW-008"}, rollback_in_place_changes=False),
    _runtime("sw-rollback-misses-appended-items",
             "Rollback leaves items the failed task appended to an existing output key.",
             {"SW-008"}, rollback_appended_items=False),
    _runtime("sw-overbroad-rollback",
             "Rollback also uncommits what earlier tasks of the step wrote.",
             {"SW-007", "SW-030"}, rollback_only_failed_task=False),
    _runtime("sw-digest-rolled-back",
             "Injects the digest before the rollback, which then hides it.",
             {"SW-001", "SW-009", "SW-027", "SW-029"}, digest_after_rollback=False),
    _runtime("sw-keep-all-without-action", "keep_all emits no task_failed action.",
             {"SW-010", "SW-013"}, keep_all_action=False),
    _runtime("sw-task-ids-with-scheme",
             "Puts eddi://<name> into the digest's taskId and the action name.",
             {"SW-010", "SW-011"}, bare_task_ids=False),
    _runtime("sw-exclude-all-reports-task-errors",
             "exclude_all still gives the caller a taskErrors entry and a stream event.",
             {"SW-012"}, exclude_all_silent=False),
    _runtime("sw-default-mode-feeds-task-errors",
             "Without strict write, stores the caller's taskErrors entry in memory (model view).",
             {"SW-002", "SW-014", "SW-017"}, caller_only_by_default=False),
    _runtime("sw-swallows-store-refusal",
             "Takes a memory write the store refused as written and ends the turn READY.",
             {"SW-033"}, swallow_store_refusals=True),
    _runtime("sw-swallows-streamed-store-refusal",
             "Takes a memory write the store refused as written while the turn streams, "
             "and ends that turn READY.",
             {"SW-033"}, swallow_streamed_store_refusals=True),
    _runtime("sw-store-refusal-as-task-failure",
             "Fails the task whose memory write the store refused like any error, so "
             "continueOnFailure runs the rest of the pipeline and the turn ends READY.",
             {"SW-033"}, refusal_as_task_failure=True),
    _runtime("sw-swallows-commit-refusal",
             "Takes a set_committed the store refused as done and runs the remaining tasks.",
             {"SW-043"}, swallow_commit_refusals=True),
    _runtime("sw-continue-by-default",
             "Runs the remaining tasks after every failure, as if continueOnFailure were on.",
             {"SW-002", "SW-015", "SW-029"}, continue_by_default=True),
    _runtime("sw-continue-past-shutdown",
             "continueOnFailure also continues past a graceful-shutdown interrupt.",
             {"SW-028"}, stop_at_shutdown=False),
    _runtime("sw-late-digest",
             "Injects digests only after the pipeline ends, too late for later tasks.",
             {"SW-027"}, digest_in_same_turn=False),
    _runtime("sw-failed-turn-discarded",
             "Uncommits the whole step of a turn that ended in ERROR.",
             {"SW-009", "SW-029"}, persist_failed_turn=False),
    _runtime("sw-failed-model-benched",
             "A model task that failed sits out the next turn: only the fallback answers.",
             {"SW-037"}, rerun_failed_model=False),
    _runtime("sw-stream-event-raw-reason",
             "The streaming task_failed event carries the raw message instead of the reason.",
             {"SW-024"}, stream_clean_reason=False),
    _runtime("sw-failed-turn-replies",
             "A turn that ends in ERROR replies with the end-user notice instead of nothing.",
             {"SW-015"}, empty_reply_on_error=False),
    _runtime("sw-end-user-sees-reason",
             "Shows end users the digest text instead of a generic notice.",
             {"SW-025"}, generic_end_user_notice=False),
    Mutant(
        name="sw-caller-only-redaction",
        kind="runtime",
        doc="Redacts the caller's copy and the stream event, but stores the unredacted "
        "digest in memory, so the next model request gets the secret too.",
        kills=frozenset({"SW-019", "SW-031"}),
        build=CallerOnlyRedaction,
        profile=PROFILE,
    ),
    Mutant(
        name="sw-recommits-at-turn-end",
        kind="runtime",
        doc="A turn that went on past a failure (continueOnFailure) ends with a pass that "
        "commits everything the turn wrote, the failed task's hidden writes included.",
        kills=frozenset({"SW-007", "SW-008"}),
        build=RecommitsAtTurnEnd,
        profile=PROFILE,
    ),
    _digest("sw-digest-keeps-bearer", "The digest's secret filter misses Bearer tokens.",
            {"SW-019", "SW-024"}, secret_families=SECRET_FAMILIES - {"bearer"}),
    *(_filter_gap(family, what) for family, what in _FILTER_GAPS.items()),
    _digest("sw-digest-body-message-keys-only",
            "Reduces a provider body from `message` and `error.message` only: a body "
            "giving `detail`, `errors[0]` or a plain `error` text is kept whole.",
            {"SW-018"}, body_shapes=False),
    _digest("sw-digest-keeps-urls", "The digest keeps URLs.", {"SW-020"}, urls=False),
    _digest("sw-digest-keeps-stack-frames", "The digest keeps stack frames.",
            {"SW-021"}, stack_frames=False),
    _digest("sw-digest-cut-in-bytes",
             "The digest is cut at 200 UTF-8 bytes, not 200 characters.",
             {"SW-022"}, cut_in_bytes=True),
    _digest("sw-digest-over-200",
            "Caps the reason at 200 characters instead of the whole text.",
            {"SW-022"}, cap_whole_text=False),
    _digest("sw-digest-cut-before-redaction",
            "Cuts the digest text first and redacts afterwards.",
            {"SW-023"}, redact_before_cut=False),
    Mutant(
        name="sw-store-ignores-set-committed",
        kind="store",
        doc="set_committed changes nothing: uncommitted data stays visible.",
        kills=frozenset({"SW-004", "SW-005", "SW-006", "SW-007", "SW-008"}),
        build=SetCommittedIgnoringStore,
        profile=PROFILE,
    ),
    Mutant(
        name="sw-store-loses-committed-flag-on-read",
        kind="store",
        doc="Reads report every message as committed, even the hidden ones.",
        kills=frozenset({"SW-004", "SW-005", "SW-007"}),
        build=FlagLosingStore,
        profile=PROFILE,
    ),
]
