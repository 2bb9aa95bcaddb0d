"""Deliberately broken runtimes and stores for the ``turns`` profile.

Each runtime mutant is the reference :class:`~memconform.simulator.turns.TurnsRuntime`
with exactly one seam replaced; each store mutant wraps a working store and
breaks one promise about turn records or windows. ``kills`` lists the rules
whose scenarios must reject the mutant.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from memconform.contract import Capability
from memconform.harness.environment import Environment
from memconform.harness.wrapper import StoreWrapper
from memconform.mutants import Mutant
from memconform.simulator.runtime import Simulator
from memconform.simulator.turns import TurnsRuntime, TurnState
from memconform.values import JSONValue, Message, TurnRecord

__all__ = ["MUTANTS", "BrokenTurnsRuntime"]


class BrokenTurnsRuntime:
    """A runtime that runs ``turns`` scripts with a broken executor and every other
    profile with the reference simulator."""

    def __init__(self, executor: type[TurnsRuntime]) -> None:
        self.executor = executor
        self._reference = Simulator()

    @property
    def profiles(self) -> frozenset[str]:
        """Every profile (only ``turns`` is broken)."""
        return self._reference.profiles

    def execute(self, script: Mapping[str, Any], env: Environment) -> Mapping[str, JSONValue]:
        """Run ``script``; ``turns`` scripts go to the broken executor."""
        if script.get("profile") != "turns":
            return self._reference.execute(script, env)
        return self.executor(script, env).run()


# -- what a turn stores ------------------------------------------------------------------


class _AnswerForUnfinishedRoot(TurnsRuntime):
    def _stores_assistant_message(self, turn: TurnState) -> bool:
        if turn.kind != "root" or turn.outcome == "refused":
            return False
        if turn.reply is None:
            said = [str(e.get("text")) for e in turn.transcript if e.get("role") == "assistant"]
            turn.reply = said[-1] if said else "partial"
        return True


class _AnswerWithoutPayload(TurnsRuntime):
    def _persist_assistant_message(self, turn: TurnState) -> None:
        turn.payload = None
        said = [str(e.get("text")) for e in turn.transcript if e.get("role") == "assistant"]
        turn.reply = said[0] if said else turn.reply
        super()._persist_assistant_message(turn)


class _ChildStoresMessages(TurnsRuntime):
    def _stores_user_message(self, turn: TurnState) -> bool:
        return turn.spec.envelope is not None

    def _stores_assistant_message(self, turn: TurnState) -> bool:
        return turn.outcome == "completed"


class _BriefRootStoresUser(TurnsRuntime):
    def _stores_user_message(self, turn: TurnState) -> bool:
        return turn.kind == "root"

    def _persist_user_message(self, turn: TurnState) -> None:
        if turn.spec.envelope is not None:
            super()._persist_user_message(turn)
            return
        message = Message(self.env.ids.next("msg"), "user", turn.spec.brief_text,
                          turn_id=turn.turn_id)
        self.env.store.append(self.config.thread, [message])


class _UserBeforeAdmission(TurnsRuntime):
    def _admits(self, turn: TurnState) -> bool:
        if TurnsRuntime._stores_user_message(self, turn):
            self._persist_user_message(turn)
        return turn.spec.admit

    def _stores_user_message(self, turn: TurnState) -> bool:
        return False


class _UserStoredAtSettle(TurnsRuntime):
    def _stores_user_message(self, turn: TurnState) -> bool:
        return False

    def _on_settle(self, turn: TurnState) -> None:
        if TurnsRuntime._stores_user_message(self, turn) and turn.refused_at != "admission":
            self._persist_user_message(turn)


class _UserOnlyWithAnswer(TurnsRuntime):
    def _stores_user_message(self, turn: TurnState) -> bool:
        return False

    def _on_settle(self, turn: TurnState) -> None:
        if TurnsRuntime._stores_user_message(self, turn) and turn.outcome == "completed":
            self._persist_user_message(turn)


class _PartialOutputHidden(TurnsRuntime):
    def _emit_output(self, turn: TurnState, step: int, text: str) -> None:
        pending = self.__dict__.setdefault("_pending", {})
        pending.setdefault(turn.turn_id, []).append((step, text))

    def _on_settle(self, turn: TurnState) -> None:
        pending = self.__dict__.setdefault("_pending", {})
        outputs = pending.pop(turn.turn_id, [])
        if turn.outcome == "completed":
            for step, text in outputs:
                super()._emit_output(turn, step, text)


class _FitCheckSkipped(TurnsRuntime):
    def _over_budget(self, view: Mapping[str, Any]) -> bool:
        return False


class _BudgetInBytes(TurnsRuntime):
    """Measures the context in UTF-8 bytes instead of characters."""

    def _over_budget(self, view: Mapping[str, Any]) -> bool:
        budget = self.config.context_budget
        if budget is None:
            return False
        size = len(str(view.get("brief", "")).encode("utf-8"))
        size += sum(len(str(h.get("text", "")).encode("utf-8")) for h in view.get("history", []))
        size += sum(
            len(json.dumps(s.get("value"), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False).encode("utf-8"))
            for s in view.get("state", [])
        )
        return size > budget


class _NoOpenEvents(TurnsRuntime):
    def _emit(self, name: str, **data: JSONValue) -> None:
        if name != "turn.opened":
            super()._emit(name, **data)


class _ExportWithoutOutput(TurnsRuntime):
    def export_events(self) -> list[dict[str, JSONValue]]:
        return [e for e in super().export_events() if e.get("name") != "turn.output"]


class _RecordAsMessage(TurnsRuntime):
    def _append_record(self, record: TurnRecord) -> None:
        super()._append_record(record)
        summary = Message(self.env.ids.next("msg"), "system",
                          f"turn {record.turn_id} settled {record.outcome}",
                          turn_id=record.turn_id)
        self.env.store.append(self.config.thread, [summary])


# -- state ---------------------------------------------------------------------------


class _InvalidUpdateApplied(TurnsRuntime):
    def _apply_update(self, turn: TurnState, args: Mapping[str, Any]) -> dict[str, JSONValue]:
        block = str(args.get("block"))
        current = self.env.store.read_state(self.config.scope, block)
        entry = self.env.store.write_state(
            self.config.scope, block, args.get("value"),
            None if current is None else current.version,
        )
        return {"ok": True, "block": block, "version": entry.version}


class _StateRolledBack(TurnsRuntime):
    def _apply_update(self, turn: TurnState, args: Mapping[str, Any]) -> dict[str, JSONValue]:
        block = str(args.get("block"))
        before = self.env.store.read_state(self.config.scope, block)
        result = super()._apply_update(turn, args)
        if result.get("ok"):
            undo = self.__dict__.setdefault("_undo", {})
            undo.setdefault(turn.turn_id, []).append(
                (block, None if before is None else before.value)
            )
        return result

    def _on_settle(self, turn: TurnState) -> None:
        undo = self.__dict__.setdefault("_undo", {}).pop(turn.turn_id, [])
        if turn.outcome == "completed":
            return
        for block, value in reversed(undo):
            current = self.env.store.read_state(self.config.scope, block)
            self.env.store.write_state(
                self.config.scope, block, value, None if current is None else current.version
            )


class _AllBlocksRendered(TurnsRuntime):
    def _state_views(self, turn: TurnState) -> list[dict[str, JSONValue]]:
        views: list[dict[str, JSONValue]] = []
        for block in self.config.blocks:
            entry = self.env.store.read_state(self.config.scope, block)
            if entry is not None:
                views.append({"block": block, "value": entry.value})
        return views


# -- records ---------------------------------------------------------------------------


class _NoRecordForRefused(TurnsRuntime):
    def _append_record(self, record: TurnRecord) -> None:
        if record.outcome != "refused":
            super()._append_record(record)


class _ChildUsageFolded(TurnsRuntime):
    def _on_child_settled(self, parent: TurnState, child: TurnState) -> None:
        super()._on_child_settled(parent, child)
        for key, value in child.usage.items():
            old = parent.usage.get(key, 0)
            if isinstance(value, int) and isinstance(old, int):
                parent.usage[key] = old + value


class _RecordWithoutParentAndFallbacks(TurnsRuntime):
    def _make_record(self, turn: TurnState) -> TurnRecord:
        record = super()._make_record(turn)
        return dataclasses.replace(record, parent_turn_id=None, fallbacks=(), timing={})


class _ContinuesFromNotRecorded(TurnsRuntime):
    def _make_record(self, turn: TurnState) -> TurnRecord:
        return dataclasses.replace(super()._make_record(turn), continues_from=None)


class _CounterNeverRestarts(TurnsRuntime):
    """Carries its counter over a restart: a new process starts counting after
    the turn records the store already holds for the thread."""

    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        super().__init__(script, env)
        if env.store.has(Capability.TURN_RECORDS):
            self.counter = len(env.store.records(self.config.thread))


class _GeneratorIgnored(TurnsRuntime):
    def _next_turn_id(self) -> str:
        self.counter += 1
        return f"T{self.counter}"


# -- the next turn's context ----------------------------------------------------------------


class _WindowOfPairs(TurnsRuntime):
    def _select_history(self, turn: TurnState) -> list[Message]:
        window = self.config.history_window
        if window == 0:
            return []
        return self.env.store.messages(self.config.thread, 2 * window)


class _WindowWithoutCurrent(TurnsRuntime):
    def _select_history(self, turn: TurnState) -> list[Message]:
        window = self.config.history_window
        if window == 0:
            return []
        stored = self.env.store.messages(self.config.thread, window + 1)
        earlier = [m for m in stored if not (m.role == "user" and m.turn_id == turn.turn_id)]
        return earlier[-window:]


class _DefaultWindowTen(TurnsRuntime):
    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        super().__init__(script, env)
        config = script.get("config") or {}
        if "history_window" not in config:
            self.config = dataclasses.replace(self.config, history_window=10)


class _ZeroWindowShowsAll(TurnsRuntime):
    def _select_history(self, turn: TurnState) -> list[Message]:
        window = self.config.history_window
        return self.env.store.messages(self.config.thread, window or None)


class _NegativeWindowMeansAll(TurnsRuntime):
    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        config = dict(script.get("config") or {})
        negative = isinstance(config.get("history_window"), int) and config["history_window"] < 0
        if negative:
            config.pop("history_window")
        super().__init__({**script, "config": config}, env)
        if negative:
            self.config = dataclasses.replace(self.config, history_window=10**6)


class _HistoryFromProcessMemory(TurnsRuntime):
    """Keeps what it appended in a list and builds every window from that list."""

    def __init__(self, script: Mapping[str, Any], env: Environment) -> None:
        super().__init__(script, env)
        self._mine: list[Message] = []

    def _persist_user_message(self, turn: TurnState) -> None:
        super()._persist_user_message(turn)
        envelope = turn.spec.envelope or {}
        text = str(envelope.get("text", turn.spec.brief_text))
        self._mine.append(Message(f"mine-{len(self._mine)}", "user", text))

    def _persist_assistant_message(self, turn: TurnState) -> None:
        super()._persist_assistant_message(turn)
        self._mine.append(Message(f"mine-{len(self._mine)}", "assistant", turn.reply or ""))

    def _select_history(self, turn: TurnState) -> list[Message]:
        window = self._window()
        return self._mine[-window:] if window else []


class _PartsReplayed(TurnsRuntime):
    def _render_history(self, messages: Sequence[Message]) -> list[dict[str, JSONValue]]:
        return [{"role": m.role, "text": m.text, "parts": list(m.parts)} for m in messages]


class _InheritToolResults(TurnsRuntime):
    def _initial_transcript(self, turn: TurnState) -> list[dict[str, JSONValue]]:
        if not self.settled:
            return []
        return [e for e in self.settled[-1].transcript if e.get("role") == "tool"]


class _ContinuesFromRestores(TurnsRuntime):
    def _earlier(self, turn: TurnState) -> TurnState | None:
        for earlier in self.settled:
            if earlier.turn_id == turn.continues_from:
                return earlier
        return None

    def _initial_transcript(self, turn: TurnState) -> list[dict[str, JSONValue]]:
        earlier = self._earlier(turn)
        return [] if earlier is None else list(earlier.transcript)

    def _initial_tier(self, turn: TurnState) -> int:
        earlier = self._earlier(turn)
        return 0 if earlier is None else min(earlier.tier_index, len(turn.tiers) - 1)


class _TierCarriedOver(TurnsRuntime):
    def _initial_tier(self, turn: TurnState) -> int:
        roots = [t for t in self.settled if t.kind == "root" and t.tiers == turn.tiers]
        if not roots:
            return 0
        return min(roots[-1].tier_index, len(turn.tiers) - 1)


# -- stores ------------------------------------------------------------------------------


class _RecordsDropChildUsage(StoreWrapper):
    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        kept: list[TurnRecord] = self.inner.records(thread_id)
        return [
            dataclasses.replace(r, usage={}) if r.parent_turn_id is not None else r for r in kept
        ]


class _RecordsOfEveryThread(StoreWrapper):
    def records(self, thread_id: str | None = None) -> list[TurnRecord]:
        everything: list[TurnRecord] = self.inner.records(None)
        return everything


class _WindowOfOldest(StoreWrapper):
    def messages(self, thread_id: str, limit: int | None = None, **kwargs: Any) -> list[Message]:
        stored: list[Message] = self.inner.messages(thread_id, None, **kwargs)
        return stored if limit is None else stored[:limit]


def _runtime(name: str, doc: str, kills: set[str], executor: type[TurnsRuntime]) -> Mutant:
    return Mutant(
        name=name, kind="runtime", doc=doc, kills=frozenset(kills),
        build=lambda: BrokenTurnsRuntime(executor), profile="turns",
    )


def _store(name: str, doc: str, kills: set[str], wrapper: type[StoreWrapper]) -> Mutant:
    return Mutant(name=name, kind="store", doc=doc, kills=frozenset(kills), build=wrapper,
                  profile="turns")


MUTANTS: list[Mutant] = [
    _runtime("turns-answer-for-unfinished-root",
             "stores the partial output of a failed, cut, stopped or truncated root as an answer",
             {"TU-005"}, _AnswerForUnfinishedRoot),
    _runtime("turns-answer-without-payload",
             "stores the first reply of a completed root, without its payload part",
             {"TU-004"}, _AnswerWithoutPayload),
    _runtime("turns-child-stores-messages",
             "lets child turns append user and assistant messages",
             {"TU-007", "TU-032"}, _ChildStoresMessages),
    _runtime("turns-brief-root-stores-user",
             "stores the brief of a brief-only root as a user message",
             {"TU-002"}, _BriefRootStoresUser),
    _runtime("turns-user-before-admission",
             "stores the user message before admission, so refused turns keep one",
             {"TU-003"}, _UserBeforeAdmission),
    _runtime("turns-user-stored-at-settle",
             "stores the user message when the turn settles instead of before assembly",
             {"TU-001", "TU-021"}, _UserStoredAtSettle),
    _runtime("turns-user-only-with-answer",
             "stores the user message only together with a completed answer",
             {"TU-001", "TU-013"}, _UserOnlyWithAnswer),
    _runtime("turns-partial-output-hidden",
             "emits output events only for turns that complete",
             {"TU-006"}, _PartialOutputHidden),
    _runtime("turns-fit-check-skipped",
             "runs turns whose context is over the budget",
             {"TU-014"}, _FitCheckSkipped),
    _runtime("turns-budget-in-bytes",
             "measures the context for the fit check in UTF-8 bytes, not characters",
             {"TU-014"}, _BudgetInBytes),
    _runtime("turns-no-open-events",
             "emits no event when a turn opens",
             {"TU-015"}, _NoOpenEvents),
    _runtime("turns-export-without-output",
             "leaves the output events (partial output included) out of its event export",
             {"TU-033"}, _ExportWithoutOutput),
    _runtime("turns-record-as-message",
             "also writes each turn record into the conversation as a system message",
             {"TU-032"}, _RecordAsMessage),
    _runtime("turns-invalid-update-applied",
             "writes block updates without validation, overriding stale versions",
             {"TU-008"}, _InvalidUpdateApplied),
    _runtime("turns-state-rolled-back",
             "undoes a turn's state updates when it does not complete",
             {"TU-009"}, _StateRolledBack),
    _runtime("turns-all-blocks-rendered",
             "renders every declared block, not only those the agent reads",
             {"TU-024"}, _AllBlocksRendered),
    _runtime("turns-no-record-for-refused",
             "appends no turn record for refused turns",
             {"TU-010"}, _NoRecordForRefused),
    _runtime("turns-child-usage-folded",
             "adds each child's usage to its parent's totals",
             {"TU-012"}, _ChildUsageFolded),
    _runtime("turns-record-without-parent-and-fallbacks",
             "records no parent turn, no fallback history and no timing",
             {"TU-011"}, _RecordWithoutParentAndFallbacks),
    _runtime("turns-continues-from-not-recorded",
             "drops continuesFrom from the turn record",
             {"TU-026"}, _ContinuesFromNotRecorded),
    _runtime("turns-counter-never-restarts",
             "keeps counting turn ids across a runtime restart",
             {"TU-027"}, _CounterNeverRestarts),
    _runtime("turns-generator-ignored",
             "uses the counter even when an id generator is configured",
             {"TU-028"}, _GeneratorIgnored),
    _runtime("turns-window-of-pairs",
             "selects N user-assistant pairs instead of N messages",
             {"TU-016"}, _WindowOfPairs),
    _runtime("turns-history-from-process-memory",
             "builds each window from the messages it appended itself, never from the store",
             {"TU-016", "TU-017"}, _HistoryFromProcessMemory),
    _runtime("turns-window-without-current-message",
             "fills the window with earlier messages, leaving out the current user message",
             {"TU-021"}, _WindowWithoutCurrent),
    _runtime("turns-default-window-ten",
             "shows ten stored messages when no window is configured",
             {"TU-017"}, _DefaultWindowTen),
    _runtime("turns-zero-window-shows-all",
             "reads a window of zero as the whole history",
             {"TU-018"}, _ZeroWindowShowsAll),
    _runtime("turns-negative-window-means-all",
             "accepts a negative window and shows the whole history",
             {"TU-019"}, _NegativeWindowMeansAll),
    _runtime("turns-parts-replayed",
             "replays the structured parts of stored messages into the history",
             {"TU-020"}, _PartsReplayed),
    _runtime("turns-inherit-tool-results",
             "starts each turn with the previous turn's tool results",
             {"TU-022"}, _InheritToolResults),
    _runtime("turns-continues-from-restores",
             "restores the earlier turn's transcript and tier for continuesFrom",
             {"TU-025"}, _ContinuesFromRestores),
    _runtime("turns-tier-carried-over",
             "starts each turn at the tier the previous turn ended on",
             {"TU-023"}, _TierCarriedOver),
    _store("turns-store-records-drop-child-usage",
           "a store whose records() loses the usage of child records",
           {"TU-029", "TU-012"}, _RecordsDropChildUsage),
    _store("turns-store-records-every-thread",
           "a store whose records(thread) returns the records of every thread",
           {"TU-030"}, _RecordsOfEveryThread),
    _store("turns-store-window-oldest",
           "a store whose messages(limit=N) returns the oldest N messages",
           {"TU-031", "TU-016"}, _WindowOfOldest),
]
