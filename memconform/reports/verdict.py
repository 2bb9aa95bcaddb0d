"""From scenario outcomes to per-rule verdicts, classes and totals.

:func:`build_results` is the one place verdicts are decided. For each
catalogue rule, in catalogue order:

1. Scope. A rule is ``not-scored`` (with the reason) when a selection was
   stated and does not hold it, when its subject is not the run's subject (a
   ``store`` run scores store rules, a ``runtime`` run runtime rules, ``both``
   scores all), or when it is an ``untested`` MAY rule that no scenario ran.
2. Undeclared profile. A runtime rule of a profile the runtime does not
   declare (``profiles``) is ``unsupported``, its reason naming the profile:
   its scenarios are not run (the runtime is never called for a profile it
   does not declare), so it is never ``pass`` and never ``not-run``; a kit
   crash among scenarios that ran anyway stays a kit error. (Not when the
   runtime could not be built: what it declares is unknown.)
   Undeclared capability. (Not when the store could not be opened: the
   header's ``adapter_error`` says so, what it declares is unknown, and its
   capability rules are judged like the others, ``error``.) A rule whose
   capability the store does not declare is never ``pass``: only its own
   scenarios (those tagged with that capability) decide it, so a check that
   merely names it (a property run over every store) changes nothing, and the
   verdict is the same in every run.
   When they ran to a result anyway (``--memconform-measure-unclaimed``) the
   rule is ``informational`` and ``measured`` says what they showed; otherwise
   it is ``unsupported``. A kit crash among them is still a kit error.
3. Outcomes. Over the rule's scenarios (Gherkin ones first, then generated
   checks; the first of the deciding kind names the reason): any ``crashed``
   → ``error`` flagged as a kit error; else any ``error`` → ``error``; else
   any ``failed`` → ``fail`` for a MUST rule, ``warn`` for a SHOULD or MAY
   rule; else any ``inconclusive`` → ``inconclusive`` (claimed, but the kit
   could not exercise it: one such scenario outweighs any number that passed);
   else any ``passed`` → ``pass``; else any ``unsupported`` → ``unsupported``;
   else (no scenario, or all skipped) → ``not-run``, and the report is
   incomplete.
   A run that stopped early (``stopped_early``) shows ``pass`` only for a
   rule all of whose collected scenarios ran; a rule some of whose scenarios
   were cut off (or when what was due is not known) is ``inconclusive``.
4. Adapter. A ``pass`` of a rule that ``rests_on`` something the adapter of
   its subject (store or runtime) ``provides`` itself becomes
   ``adapter-provided``: the behaviour came from the adapter, not from the
   library judged. Other verdicts stay (a failure is a failure).
5. Baseline. A listed, unexpired rule whose verdict is ``fail`` or ``warn``
   becomes ``xfail``; one that passes becomes ``stale``; other verdicts are
   left alone (a baseline never hides an adapter error or a kit error).

Conformance classes are ``core`` plus one per capability; a rule belongs to
the class of the capability it needs (``core`` when none). Claimed classes
are ``core`` and the declared capabilities. A claimed class is achieved when
it has scored rules that ran and every such MUST rule passes (``unsupported``
ones excepted: they could not be judged). An ``inconclusive`` or
``adapter-provided`` MUST rule is judged and did not pass, so its class is
not achieved; ``informational`` rules belong to no claimed class and count
nowhere. When a stated selection left out some of the class's rules for the
run's subject, the class is at most ``partial``: a partial run never claims
a class. Runtime classes (per runtime profile, and per save policy for
``save-policy``) are claimed only for what the runtime declared; see
:mod:`memconform.reports.classes`. Nothing here reads the clock.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from memconform.catalogue import Catalogue, Rule
from memconform.contract import Capability
from memconform.excerpt import bounded, clip
from memconform.mutants import mutants_by_rule
from memconform.reports.baseline import Baseline, check_baseline
from memconform.reports.classes import (
    POLICY_PROFILE,
    SAVE_POLICIES,
    judge_class,
    runtime_classes,
    runtime_declaration,
)
from memconform.reports.exitcode import code_for
from memconform.reports.header import normalise_header, start_day
from memconform.reports.results import (
    BaselineUse,
    ClassResult,
    Footer,
    Results,
    RuleResult,
    ScenarioEvidence,
    json_safe,
    totals_of,
)
from memconform.reports.vocabulary import (
    EVIDENCE_OUTCOMES,
    MEASURED,
    OUTCOMES,
    Outcome,
    Verdict,
)

__all__ = ["CLASSES", "build_results", "normalise_header"]

CLASSES: tuple[str, ...] = ("core", *(c.value for c in Capability))
"""Every conformance class, in report order."""

# -- outcomes -------------------------------------------------------------------------


EVIDENCE_TEXT = 16_000
"""Characters any text of a scenario's evidence may have in the results (the
last resort: the kit bounds its evidence where it is made, see
:mod:`memconform.excerpt`, and this catches any path that did not)."""

CALL_TEXT = 2_000
"""Characters any text inside a recorded store call may have in the results."""


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return clip(value, EVIDENCE_TEXT)
    return clip(json.dumps(json_safe(value), sort_keys=True, ensure_ascii=False), EVIDENCE_TEXT)


def _evidence(outcome: Mapping[str, Any]) -> ScenarioEvidence:
    kind = outcome.get("outcome")
    message = _text(outcome.get("message")) or ""
    if kind not in OUTCOMES:
        message = f"unknown outcome {kind!r} recorded by the kit. {message}".strip()
        kind = Outcome.CRASHED
    raw_calls = outcome.get("store_calls") or []
    calls = list(raw_calls) if isinstance(raw_calls, list | tuple) else [raw_calls]
    kept = (tuple(bounded(c, CALL_TEXT) for c in json_safe(calls))
            if kind in EVIDENCE_OUTCOMES else ())
    raw_gherkin = outcome.get("gherkin") or []
    gherkin = (tuple(clip(str(line), EVIDENCE_TEXT) for line in raw_gherkin)
               if kind in EVIDENCE_OUTCOMES else ())
    return ScenarioEvidence(
        nodeid=clip(str(outcome.get("nodeid", "")), EVIDENCE_TEXT),
        scenario=clip(str(outcome.get("scenario", outcome.get("nodeid", ""))), EVIDENCE_TEXT),
        feature=_text(outcome.get("feature")),
        outcome=Outcome(kind),
        message=message,
        failing_step=_text(outcome.get("failing_step")),
        expected=_text(outcome.get("expected")),
        observed=_text(outcome.get("observed")),
        store_calls=kept,
        store_call_count=len(calls),
        gherkin=gherkin,
    )


def _evidence_order(s: ScenarioEvidence) -> tuple[bool, str, str, str, str]:
    """Gherkin scenarios before generated checks (a readable scenario heads the
    evidence and names the reason), then by feature, node id and outcome."""
    return (s.generated, s.feature or "", s.nodeid, s.outcome, s.message)


def _first(scenarios: Sequence[ScenarioEvidence], outcome: Outcome) -> ScenarioEvidence:
    return next(s for s in scenarios if s.outcome == outcome)


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


_Reason = Callable[[Rule, ScenarioEvidence, "Counter[Outcome]", int], str]
"""Says why a rule got its verdict: from the rule, the first scenario with the
deciding outcome, the count of each outcome among the rule's scenarios and
their number."""


def _kit_crashed(
    rule: Rule, s: ScenarioEvidence, counts: Counter[Outcome], n: int
) -> str:
    return f"the kit crashed in “{s.scenario}”: {_one_line(s.message)}"


def _adapter_broke(
    rule: Rule, s: ScenarioEvidence, counts: Counter[Outcome], n: int
) -> str:
    return f"the adapter broke the contract in “{s.scenario}”: {_one_line(s.message)}"


def _broken(rule: Rule, s: ScenarioEvidence, counts: Counter[Outcome], n: int) -> str:
    what = _one_line(s.message.split("\n", 1)[0]) if s.message else "a check failed"
    where = f"{counts[Outcome.FAILED]} of {n} scenarios; first “{s.scenario}”"
    return f"{rule.level} broken in {where}: {what}"


def _not_exercised(
    rule: Rule, s: ScenarioEvidence, counts: Counter[Outcome], n: int
) -> str:
    why = _one_line(s.message) or "the kit could not exercise the rule"
    where = f"{counts[Outcome.INCONCLUSIVE]} of {n} scenarios; first “{s.scenario}”"
    return f"claimed, but not exercised in {where}: {why}"


def _passed(
    rule: Rule, s: ScenarioEvidence, counts: Counter[Outcome], n: int
) -> str:
    unsupported = counts[Outcome.UNSUPPORTED]
    extra = f" ({unsupported} unsupported)" if unsupported else ""
    plural = "" if counts[Outcome.PASSED] == 1 else "s"
    return f"{counts[Outcome.PASSED]} scenario{plural} passed{extra}"


def _unsupported(
    rule: Rule, s: ScenarioEvidence, counts: Counter[Outcome], n: int
) -> str:
    return _one_line(s.message) or "needs a capability the store declares absent"


def _all_skipped(
    rule: Rule, s: ScenarioEvidence, counts: Counter[Outcome], n: int
) -> str:
    return f"every scenario was skipped: {_one_line(s.message)}"


@dataclass(frozen=True)
class Precedence:
    """One row of :data:`PRECEDENCE`: when a scored rule's scenarios include
    ``outcome`` (and none of an earlier row's), the rule's verdict is
    ``verdict`` for a MUST rule and ``below_must`` (when given) for a SHOULD
    or MAY rule, ``reason`` says why, and ``kit_error`` flags the kit's own fault."""

    outcome: Outcome
    verdict: Verdict
    reason: _Reason
    kit_error: bool = False
    below_must: Verdict | None = None

    def decide(
        self, rule: Rule, scenarios: Sequence[ScenarioEvidence], counts: Counter[Outcome]
    ) -> tuple[Verdict, str, bool]:
        """(verdict, reason, kit_error) of ``rule`` decided by this row."""
        verdict = self.verdict
        if rule.level != "MUST" and self.below_must is not None:
            verdict = self.below_must
        why = self.reason(rule, _first(scenarios, self.outcome), counts, len(scenarios))
        return verdict, why, self.kit_error


PRECEDENCE: tuple[Precedence, ...] = (
    Precedence(Outcome.CRASHED, Verdict.ERROR, _kit_crashed, kit_error=True),
    Precedence(Outcome.ERROR, Verdict.ERROR, _adapter_broke),
    Precedence(Outcome.FAILED, Verdict.FAIL, _broken, below_must=Verdict.WARN),
    Precedence(Outcome.INCONCLUSIVE, Verdict.INCONCLUSIVE, _not_exercised),
    Precedence(Outcome.PASSED, Verdict.PASS, _passed),
    Precedence(Outcome.UNSUPPORTED, Verdict.UNSUPPORTED, _unsupported),
    Precedence(Outcome.SKIPPED, Verdict.NOT_RUN, _all_skipped),
)
"""How a scored rule's scenario outcomes become its verdict: the first row
whose outcome any of the scenarios has decides.

The order runs from what says least about the library judged to what says
most, so nothing can hide a worse finding. A kit crash comes first: when the
kit itself broke, nothing else the run says about the rule can be trusted,
and it is flagged as the kit's error. An adapter error is next: a broken
contract means the library was not judged through it. Then a failure: one
scenario that shows the rule broken decides it, however many others passed
(``fail`` for a MUST rule, ``warn`` for a SHOULD or MAY one). Then
``inconclusive``: a pass needs the rule exercised wherever it is claimed, so
one scenario the kit could not exercise outweighs any number that passed.
Then ``pass``. ``unsupported`` only when nothing passed: a scenario needing a
capability the store declares absent says nothing against a pass elsewhere.
Skipped scenarios come last: a rule whose scenarios were all skipped was not
run, and the report is incomplete (as it is when no scenario ran at all)."""


def _judge(rule: Rule, scenarios: Sequence[ScenarioEvidence]) -> tuple[Verdict, str, bool]:
    """(verdict, reason, kit_error) from a scored rule's scenarios, by :data:`PRECEDENCE`."""
    counts = Counter(s.outcome for s in scenarios)
    for row in PRECEDENCE:
        if counts[row.outcome]:
            return row.decide(rule, scenarios, counts)
    return Verdict.NOT_RUN, "no scenario ran for this rule", False


def _provided(head: dict[str, Any], outcomes: Sequence[Mapping[str, Any]]) -> dict[str, set[str]]:
    """What the store and the runtime adapters said they supply themselves: the
    header's ``provides`` and what each scenario recorded, together. The union
    is written back into the header, so the report shows it."""
    provided: dict[str, set[str]] = {
        "store": set(head["store"]["provides"]),
        "runtime": set(head["runtime"]["provides"]),
    }
    for outcome in outcomes:
        recorded = outcome.get("provided")
        if isinstance(recorded, Mapping):
            for part, names in recorded.items():
                if part in provided and isinstance(names, list | tuple):
                    provided[part] |= {str(n) for n in names}
    head["store"]["provides"] = sorted(provided["store"])
    head["runtime"]["provides"] = sorted(provided["runtime"])
    return provided


def _adapter_provided(
    rule: Rule, verdict: Verdict, reason: str, provided: Mapping[str, set[str]]
) -> tuple[Verdict, str]:
    """``adapter-provided`` instead of ``pass`` when the rule rests on something
    the adapter of its subject supplies itself (never a pass for the library);
    any other verdict is left as it is (a failure is a failure wherever it came
    from)."""
    supplied = [p for p in rule.rests_on if p in provided.get(rule.subject, ())]
    if verdict != Verdict.PASS or not supplied:
        return verdict, reason
    what = ", ".join(supplied)
    return Verdict.ADAPTER_PROVIDED, (
        f"passes only through the {rule.subject} adapter: the rule rests on {what}, "
        f"which the adapter provides itself, so the library judged was not shown to "
        f"keep it ({reason})"
    )


def _unclaimed(
    rule: Rule, own: Sequence[ScenarioEvidence]
) -> tuple[Verdict, str, bool, Verdict | None]:
    """(verdict, reason, kit_error, measured) of a rule whose capability the store
    does not declare: never ``pass``, and the same in every run.

    Only the rule's own scenarios count, those tagged with its capability
    (``own``): a check that does not need the capability (a property run over
    every store, say) may name the rule, but says nothing about a promise the
    store does not make. When they ran to a result anyway, the rule is
    ``informational`` with what was ``measured``; a kit crash stays an error of
    the kit; otherwise it is ``unsupported``.
    """
    declared = f"the store does not declare the capability {str(rule.capability)!r}"
    verdict, reason, kit_error = _judge(rule, own)
    if kit_error:
        return Verdict.ERROR, reason, True, None
    if verdict in MEASURED:
        return (
            Verdict.INFORMATIONAL,
            f"not claimed ({declared}), measured anyway and not counted: {verdict}: {reason}",
            False,
            verdict,
        )
    if verdict == Verdict.UNSUPPORTED:
        return Verdict.UNSUPPORTED, reason, False, None
    return Verdict.UNSUPPORTED, declared, False, None


_STORE_CAPABILITIES = frozenset(c.value for c in Capability)


def _unclaimed_needs(needs: Iterable[str], claimed: set[str]) -> set[str]:
    """The store capabilities a scenario needs that the store does not claim:
    such a scenario ran only under ``--memconform-measure-unclaimed``, and its
    outcome, a measure of a promise not made, decides no rule (a rule of that
    capability is judged by stage 2 on its own scenarios)."""
    return {n for n in needs if n in _STORE_CAPABILITIES and n not in claimed}


def _undeclared_profile(
    rule: Rule, declares: Mapping[str, Any] | None, unopened: bool
) -> str | None:
    """Why a runtime rule is ``unsupported`` when the runtime does not declare
    its profile (``None`` when it does, when no runtime was judged, or when the
    runtime could not be built: then nothing it declares is known)."""
    if declares is None or unopened or rule.subject != "runtime":
        return None
    profiles = [str(p) for p in declares.get("profiles") or ()]
    if rule.profile in profiles:
        return None
    has = ", ".join(profiles) or "none"
    return f"the runtime does not declare the {rule.profile} profile (its profiles: {has})"


def _cut_short(
    rule: Rule,
    ran: set[str],
    reason: str,
    stopped: str,
    collected: Mapping[str, Iterable[str]] | None,
) -> tuple[Verdict, str]:
    """A passing rule of a run that stopped early (``--maxfail``/``-x``, the
    deadline, an interrupt): ``pass`` only when every scenario due for it ran
    (``collected``), else ``inconclusive``; when what was due is not known,
    nothing can show the rule whole, so it is ``inconclusive`` too. ``ran``:
    the node ids of every scenario that ended (whatever rules it reported)."""
    if collected is None:
        return Verdict.INCONCLUSIVE, (
            f"the run stopped before it could be shown that all of this rule's scenarios "
            f"ran ({stopped}); those that ran passed: {reason}"
        )
    due = set(collected.get(rule.id, ()))
    missing = due - ran
    if not missing:
        return Verdict.PASS, reason
    return Verdict.INCONCLUSIVE, (
        f"the run stopped before all of this rule's scenarios ran ({stopped}): "
        f"{len(due) - len(missing)} of {len(due)} ran and passed, {len(missing)} did not run"
    )


def _scope(
    rule: Rule, subject: str, selected: set[str] | None, has_outcomes: bool
) -> str | None:
    """Why ``rule`` is not scored in this run (``None`` when it is)."""
    if selected is not None and rule.id not in selected:
        return "not selected for this run"
    if subject not in ("both", rule.subject):
        return f"a {rule.subject} rule; this run judged a {subject}"
    if rule.untested and not has_outcomes:
        return f"untested by design: {rule.untested}"
    return None


def _rerun_prefix(header: Mapping[str, Any]) -> str:
    """``memconform run`` with the options naming what was judged; a rule's
    re-run command appends ``--rule ID``."""
    parts = ["memconform", "run"]
    subject = header["subject"]
    url = header["store"]["url"]
    runtime = header["runtime"]["identity"]
    if subject == "runtime" and runtime:
        parts += ["--runtime", runtime]
    elif url and "<" not in url:
        parts += ["--store", url]
    if header["mutant"]:
        parts += ["--mutant", header["mutant"]]
    return shlex.join(parts)


def _apply_baseline(
    verdict: Verdict, reason: str, rule: Rule, baseline: Baseline | None, day: date | None
) -> tuple[Verdict, str, BaselineUse | None]:
    entry = None if baseline is None else baseline.get(rule.id)
    if entry is None:
        return verdict, reason, None
    expires = None if entry.expires is None else entry.expires.isoformat()

    def use(status: str) -> BaselineUse:
        return BaselineUse(entry.rule, entry.reason, expires, entry.issue, status)

    if entry.expired_on(day):
        note = f"{reason} (the baseline entry expired on {expires} and no longer counts)"
        return verdict, note, use("expired")
    if verdict in (Verdict.FAIL, Verdict.WARN):
        why = f"known failure in the baseline: {entry.reason} — {reason}"
        return Verdict.XFAIL, why, use("applied")
    if verdict == Verdict.PASS:
        why = f"listed in the baseline but passes now: remove the entry ({reason})"
        return Verdict.STALE, why, use("stale")
    return verdict, reason, use("not-applied")


def _classes(
    rules: Sequence[RuleResult], claimed: set[str], unselected: set[str]
) -> tuple[ClassResult, ...]:
    out = []
    for name in CLASSES:
        members = [r for r in rules if r.conformance_class == name]
        left_out = any(r.id in unselected for r in members)
        pairs: list[tuple[str, str]] = [(r.level, r.verdict) for r in members]
        out.append(judge_class(name, name in claimed, pairs, left_out))
    return tuple(out)


_Entry = tuple[ScenarioEvidence, frozenset[str], frozenset[str]]
"""One scenario of a rule: its evidence, the capabilities it needs and the save
policies it ran."""


@dataclass
class _Run:
    """What every rule of one run is judged against, gathered once from the
    header and the outcomes (stage 0 of :func:`build_results`)."""

    head: dict[str, Any]
    by_rule: dict[str, list[_Entry]]
    unknown_rules: set[str]
    provided: dict[str, set[str]]
    declares: Mapping[str, Any] | None
    ran: set[str]
    claimed: set[str]
    unopened: bool
    selected: set[str] | None
    day: date | None
    rerun_prefix: str
    baseline: Baseline | None
    collected: Mapping[str, Iterable[str]] | None


@dataclass(frozen=True)
class _Decision:
    """A rule's verdict with what the report shows beside it."""

    verdict: Verdict
    reason: str
    scenarios: tuple[ScenarioEvidence, ...]
    kit_error: bool = False
    baseline: BaselineUse | None = None
    rerun: str | None = None
    measured: Verdict | None = None
    per_policy: dict[str, str] | None = None


def _by_rule(
    outcomes: Sequence[Mapping[str, Any]], known: Iterable[str]
) -> tuple[dict[str, list[_Entry]], set[str]]:
    """Each outcome's evidence under every rule it names (a rule named twice by
    one record counts once), and the rule ids the catalogue does not hold."""
    catalogue_ids = set(known)
    by_rule: dict[str, list[_Entry]] = {}
    unknown: set[str] = set()
    for outcome in outcomes:
        evidence = _evidence(outcome)
        needs = frozenset(str(c) for c in outcome.get("needs") or ())
        policies = frozenset(str(p) for p in outcome.get("policies") or ())
        for raw_id in dict.fromkeys(outcome.get("rules") or ()):
            rule_id = str(raw_id)
            if rule_id not in catalogue_ids:
                unknown.add(rule_id)
                continue
            by_rule.setdefault(rule_id, []).append((evidence, needs, policies))
    return by_rule, unknown


def _selected(head: Mapping[str, Any], catalogue: Catalogue) -> set[str] | None:
    """The rule ids a stated selection holds (``None``: no selection, every rule)."""
    selection = head["selection"]
    if selection is None:
        return None
    selected = set(selection["rules"])
    if selection["profiles"]:  # select() with no profiles would mean every rule
        selected |= {r.id for r in catalogue.select(profiles=selection["profiles"])}
    return selected


def _gather(
    outcomes: list[dict[str, Any]],
    catalogue: Catalogue,
    head: dict[str, Any],
    baseline: Baseline | None,
    collected: Mapping[str, Iterable[str]] | None,
) -> _Run:
    """Stage 0: the outcomes by rule and what the header and outcomes say about
    the subject (what its adapters provide, what the runtime declares, whether
    it could be opened at all)."""
    by_rule, unknown = _by_rule(outcomes, catalogue.ids)
    provided = _provided(head, outcomes)
    declares = None if head["subject"] == "store" else runtime_declaration(head["runtime"],
                                                                             outcomes)
    if declares is not None:
        head["runtime"]["declares"] = declares
    return _Run(
        head=head,
        by_rule=by_rule,
        unknown_rules=unknown,
        provided=provided,
        declares=declares,
        ran={str(o.get("nodeid", "")) for o in outcomes},
        claimed={"core", *head["store"]["capabilities"]},
        # a store that could not be opened (or a runtime that could not be built)
        # declared nothing the kit could read: its capability rules are not
        # unclaimed but unjudged, the adapter's error like every other rule
        unopened=bool(head["extra"].get("adapter_error")),
        selected=_selected(head, catalogue),
        day=start_day(head),
        rerun_prefix=_rerun_prefix(head),
        baseline=baseline,
        collected=collected,
    )


def _outcomes_stage(
    rule: Rule, run: _Run, chosen: Sequence[ScenarioEvidence]
) -> tuple[Verdict, str, bool, BaselineUse | None]:
    """Stages 3 to 5 for a scored rule: its outcomes (a run that stopped early
    passes only a rule it showed whole), then the adapter, then the baseline."""
    verdict, reason, kit_error = _judge(rule, chosen)
    stopped = run.head["stopped_early"]
    if stopped and verdict == Verdict.PASS:
        verdict, reason = _cut_short(rule, run.ran, reason, stopped, run.collected)
    verdict, reason = _adapter_provided(rule, verdict, reason, run.provided)
    verdict, reason, use = _apply_baseline(verdict, reason, rule, run.baseline, run.day)
    return verdict, reason, kit_error, use


def _per_policy(rule: Rule, run: _Run, entries: Sequence[_Entry]) -> dict[str, str]:
    """A save-policy rule's verdict under each policy: judged the same way as
    the rule, from the scenarios of that policy and those naming none;
    ``not-scored`` for a policy none of its scenarios concerns."""
    out: dict[str, str] = {}
    for policy in SAVE_POLICIES:
        chosen = [s for s, _, pols in entries if not pols or policy in pols]
        out[policy] = (_outcomes_stage(rule, run, tuple(chosen))[0] if chosen
                       else Verdict.NOT_SCORED)
    return out


def _decide(rule: Rule, run: _Run) -> _Decision:
    """One rule through the stages of :func:`build_results`."""
    entries = sorted(run.by_rule.get(rule.id, ()), key=lambda e: _evidence_order(e[0]))
    scenarios = tuple(e[0] for e in entries)
    excluded = _scope(rule, run.head["subject"], run.selected, bool(scenarios))
    if excluded is not None:  # 1. scope
        return _Decision(Verdict.NOT_SCORED, excluded, scenarios)
    rerun = f"{run.rerun_prefix} --rule {shlex.quote(rule.id)}"
    undeclared = _undeclared_profile(rule, run.declares, run.unopened)
    if undeclared is not None:  # 2. undeclared profile
        verdict, reason, kit_error = _judge(rule, scenarios)
        if not kit_error:
            verdict, reason = Verdict.UNSUPPORTED, undeclared
        return _Decision(verdict, reason, scenarios, kit_error, rerun=rerun)
    if rule.capability is not None and rule.capability not in run.claimed and not run.unopened:
        own = tuple(s for s, needs, _ in entries if rule.capability in needs)
        verdict, reason, kit_error, measured = _unclaimed(rule, own)  # 2. undeclared capability
        return _Decision(verdict, reason, own, kit_error, rerun=rerun, measured=measured)
    if not run.unopened:  # a row of an unclaimed promise, measured anyway, decides nothing
        scenarios = tuple(s for s, needs, _ in entries
                          if not _unclaimed_needs(needs, run.claimed) or s.outcome == "unsupported")
    verdict, reason, kit_error, use = _outcomes_stage(rule, run, scenarios)  # 3. to 5.
    per_policy = None
    if run.declares is not None and rule.profile == POLICY_PROFILE and entries:
        per_policy = _per_policy(rule, run, entries)
    stopped = run.head["stopped_early"]
    if verdict == Verdict.NOT_RUN and stopped and not scenarios:
        reason = f"not reached: the run stopped early ({stopped})"
    return _Decision(verdict, reason, scenarios, kit_error, use, rerun, per_policy=per_policy)


def _rule_result(rule: Rule, decision: _Decision, killers: Mapping[str, tuple[str, ...]]
                 ) -> RuleResult:
    return RuleResult(
        id=rule.id,
        level=rule.level,
        profile=rule.profile,
        subject=rule.subject,
        capability=rule.capability,
        source_document=rule.source_document,
        source_section=rule.source_section,
        text=rule.text,
        decision=rule.decision,
        untested=rule.untested,
        rests_on=rule.rests_on,
        verdict=decision.verdict,
        reason=decision.reason,
        kit_error=decision.kit_error,
        baseline=decision.baseline,
        scenarios=decision.scenarios,
        rerun=decision.rerun,
        mutants=killers.get(rule.id, ()),
        measured=decision.measured,
    )


def _footer(results: Sequence[RuleResult], run: _Run) -> Footer:
    """Totals, completeness and the exit code of the judged rules."""
    # only a rule judged by its outcomes can be not-run: the other stages
    # never give it
    not_run = [r.id for r in results if r.verdict == Verdict.NOT_RUN]
    reasons = _incomplete_reasons(not_run, run.unknown_rules, run.head["stopped_early"])
    complete = not reasons
    kit_error = bool(run.unknown_rules)
    scored = sum(1 for r in results
                 if r.verdict not in (Verdict.NOT_SCORED, Verdict.INFORMATIONAL))
    return Footer(
        totals=totals_of(results),
        rules=len(results),
        scored=scored,
        complete=complete,
        reason="; ".join(reasons) or None,
        kit_error=kit_error,
        unknown_rules=tuple(sorted(run.unknown_rules)),
        exit_code=code_for(results, kit_error, complete),
    )


def build_results(
    outcomes: list[dict[str, Any]],
    catalogue: Catalogue,
    header: dict[str, Any],
    baseline: Baseline | None = None,
    *,
    collected: Mapping[str, Iterable[str]] | None = None,
) -> Results:
    """Judge every catalogue rule from the scenario ``outcomes``.

    ``outcomes`` are the records written by ``--memconform-outcomes``;
    ``header`` is described in :func:`normalise_header`. Raises
    :class:`~memconform.reports.baseline.BaselineError` when the baseline names
    a rule the catalogue does not hold (a typo would otherwise hide nothing and
    say nothing). ``collected`` (the node ids due for each rule) matters only
    when the run stopped early: see :func:`_cut_short`.

    The stages: gather the run (:func:`_gather`), decide each rule
    (:func:`_decide`: scope, undeclared profile or capability, outcomes,
    adapter, baseline), then the classes and the footer.
    """
    head = normalise_header(header, catalogue)
    if baseline is not None:
        check_baseline(baseline, catalogue)
    run = _gather(outcomes, catalogue, head, baseline, collected)
    killers = mutants_by_rule()
    decisions = [(rule, _decide(rule, run)) for rule in catalogue]
    results = tuple(_rule_result(rule, d, killers) for rule, d in decisions)
    per_policy = {rule.id: d.per_policy for rule, d in decisions if d.per_policy is not None}
    unselected = {
        r.id for r in catalogue
        if run.selected is not None and r.id not in run.selected
        and head["subject"] in ("both", r.subject)
    }
    return Results(
        head, results, _classes(results, run.claimed, unselected),
        _baseline_summary(baseline, results, run.day), _footer(results, run),
        runtime_classes=runtime_classes(results, per_policy, run.declares, unselected),
    )


def _baseline_summary(
    baseline: Baseline | None, results: Iterable[RuleResult], day: date | None
) -> dict[str, Any] | None:
    if baseline is None:
        return None
    used = {r.id: r.baseline for r in results if r.baseline is not None}
    entries = []
    for entry in baseline.entries:
        use = used.get(entry.rule)
        if use is None:  # the rule was not scored in this run
            expires = None if entry.expires is None else entry.expires.isoformat()
            status = "expired" if entry.expired_on(day) else "not-applied"
            use = BaselineUse(entry.rule, entry.reason, expires, entry.issue, status)
        entries.append(use.to_json())
    return {"source": baseline.source, "entries": entries}


def _incomplete_reasons(
    not_run: Sequence[str], unknown: set[str], stopped_early: str | None
) -> list[str]:
    reasons = []
    if stopped_early:
        reasons.append(f"the run stopped early: {stopped_early}")
    if not_run:
        shown = ", ".join(not_run[:10]) + (", …" if len(not_run) > 10 else "")
        reasons.append(f"scored rules without any outcome: {len(not_run)} ({shown})")
    if unknown:
        reasons.append(
            "outcomes name rules the catalogue does not hold: " + ", ".join(sorted(unknown))
        )
    return reasons
