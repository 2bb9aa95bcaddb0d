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
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from memconform.adapters.contract import Capability
from memconform.catalogue import Catalogue, Rule
from memconform.mutants import mutants_by_rule
from memconform.reports.baseline import Baseline, check_baseline
from memconform.reports.classes import (
    POLICY_PROFILE,
    SAVE_POLICIES,
    judge_class,
    runtime_classes,
    runtime_declaration,
)
from memconform.reports.escaping import redact_identity
from memconform.reports.exitcode import code_for
from memconform.reports.results import (
    EVIDENCE_OUTCOMES,
    MEASURED,
    OUTCOMES,
    BaselineUse,
    ClassResult,
    Footer,
    Results,
    RuleResult,
    ScenarioEvidence,
    json_safe,
    totals_of,
)

__all__ = ["CLASSES", "build_results", "normalise_header"]

CLASSES: tuple[str, ...] = ("core", *(c.value for c in Capability))
"""Every conformance class, in report order."""

_HEADER_KEYS = {
    "kit", "kit_version", "catalogue", "subject", "store", "store_url", "store_type",
    "store_version", "capabilities", "store_provides", "runtime", "runtime_version",
    "runtime_provides", "runtime_declares", "mutant", "seed",
    "python", "os", "environment", "started", "finished", "selection", "certify", "mode",
    "stopped_early",
}


# -- header ---------------------------------------------------------------------------


def _opt_text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _selection(raw: Any, catalogue: Catalogue) -> dict[str, list[str]] | None:
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        profiles = sorted({str(p) for p in raw.get("profiles") or ()})
        ids = {str(r) for r in raw.get("rules") or ()}
    elif isinstance(raw, str):
        profiles, ids = [], {raw}
    else:
        profiles, ids = [], {str(r) for r in raw}
    order = {r.id: n for n, r in enumerate(catalogue)}
    return {"profiles": profiles, "rules": sorted(ids, key=lambda i: (order.get(i, len(order)), i))}


def _declares(raw: Any) -> dict[str, Any]:
    """``{"declares": raw}`` when the header says what the runtime declares
    (a mapping), else nothing: the outcome records may say it instead."""
    return {"declares": json_safe(raw)} if isinstance(raw, Mapping) else {}


def normalise_header(header: Mapping[str, Any], catalogue: Catalogue) -> dict[str, Any]:
    """The header as results files carry it, from what the command line gives.

    Accepts ``kit`` (``{"name", "version"}``) or ``kit_version``; ``store`` as a
    URL or ``{"url", "type", "version", "capabilities", "provides"}`` with
    ``store_type``, ``store_version``, ``capabilities`` and ``store_provides``
    beside it; ``runtime`` as an identity or ``{"identity", "version",
    "provides", "declares"}`` (or ``runtime_version``, ``runtime_provides``,
    ``runtime_declares``: what the runtime declares, when it was built before
    any scenario ran);
    ``python``/``os`` or ``environment``;
    ``started``/``finished`` ISO times; ``selection`` as ``None``, a list of
    rule ids or ``{"profiles", "rules"}``; ``certify`` or ``mode``; ``seed``;
    ``mutant``; ``stopped_early`` (why the run ended before its end, if so).
    The catalogue version, hash and size come from ``catalogue`` itself. The
    store URL is redacted again. Other keys are kept under ``extra``.
    """
    subject = header.get("subject", "both")
    if subject not in ("store", "runtime", "both"):
        raise ValueError(f"header subject must be store, runtime or both, not {subject!r}")
    kit = header.get("kit")
    kit_version = kit.get("version") if isinstance(kit, Mapping) else header.get("kit_version")
    store = header.get("store")
    store_info: Mapping[str, Any] = store if isinstance(store, Mapping) else {}
    url = store_info.get("url") if store_info else (store or header.get("store_url"))
    capabilities = store_info.get("capabilities", header.get("capabilities")) or ()
    runtime = header.get("runtime")
    runtime_info: Mapping[str, Any] = runtime if isinstance(runtime, Mapping) else {}
    environment = header.get("environment")
    env: Mapping[str, Any] = environment if isinstance(environment, Mapping) else {}
    mode = header.get("mode") or ("certify" if header.get("certify") else "run")
    extra = {k: json_safe(v) for k, v in header.items() if k not in _HEADER_KEYS}
    seed = header.get("seed")
    return {
        "kit": {"name": "memconform", "version": _opt_text(kit_version)},
        "catalogue": {
            "version": catalogue.version,
            "hash": catalogue.digest,
            "rules": len(catalogue),
        },
        "subject": subject,
        "store": {
            "url": None if url is None else redact_identity(str(url)),
            "type": _opt_text(store_info.get("type", header.get("store_type"))),
            "version": _opt_text(store_info.get("version", header.get("store_version"))),
            "capabilities": sorted({str(c) for c in capabilities}),
            "provides": sorted(
                {str(p) for p in store_info.get("provides", header.get("store_provides")) or ()}
            ),
        },
        "runtime": {
            **_declares(runtime_info.get("declares", header.get("runtime_declares"))),
            "identity": _opt_text(runtime_info.get("identity") if runtime_info else runtime),
            "version": _opt_text(runtime_info.get("version", header.get("runtime_version"))),
            "provides": sorted(
                {str(p) for p in runtime_info.get("provides", header.get("runtime_provides"))
                 or ()}
            ),
        },
        "mutant": _opt_text(header.get("mutant")),
        "seed": seed if isinstance(seed, int) and not isinstance(seed, bool) else _opt_text(seed),
        "environment": {
            "python": _opt_text(env.get("python", header.get("python"))),
            "os": _opt_text(env.get("os", header.get("os"))),
        },
        "started": _opt_text(header.get("started")),
        "finished": _opt_text(header.get("finished")),
        "selection": _selection(header.get("selection"), catalogue),
        "mode": mode if mode in ("certify", "quick") else "run",
        "stopped_early": _opt_text(header.get("stopped_early")),
        "extra": extra,
    }


def _start_day(header: Mapping[str, Any]) -> date | None:
    started = header.get("started")
    if not started:
        return None
    try:
        return datetime.fromisoformat(str(started).replace("Z", "+00:00")).date()
    except ValueError:
        try:
            return date.fromisoformat(str(started)[:10])
        except ValueError:
            return None


# -- outcomes -------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(json_safe(value), sort_keys=True, ensure_ascii=False)


def _evidence(outcome: Mapping[str, Any]) -> ScenarioEvidence:
    kind = outcome.get("outcome")
    message = _text(outcome.get("message")) or ""
    if kind not in OUTCOMES:
        message = f"unknown outcome {kind!r} recorded by the kit. {message}".strip()
        kind = "crashed"
    raw_calls = outcome.get("store_calls") or []
    calls = list(raw_calls) if isinstance(raw_calls, list | tuple) else [raw_calls]
    kept = tuple(json_safe(calls)) if kind in EVIDENCE_OUTCOMES else ()
    raw_gherkin = outcome.get("gherkin") or []
    gherkin = tuple(str(line) for line in raw_gherkin) if kind in EVIDENCE_OUTCOMES else ()
    return ScenarioEvidence(
        nodeid=str(outcome.get("nodeid", "")),
        scenario=str(outcome.get("scenario", outcome.get("nodeid", ""))),
        feature=_text(outcome.get("feature")),
        outcome=str(kind),
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


def _first(scenarios: Sequence[ScenarioEvidence], outcome: str) -> ScenarioEvidence:
    return next(s for s in scenarios if s.outcome == outcome)


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _judge(rule: Rule, scenarios: Sequence[ScenarioEvidence]) -> tuple[str, str, bool]:
    """(verdict, reason, kit_error) from a scored rule's scenarios."""
    counts = Counter(s.outcome for s in scenarios)
    n = len(scenarios)
    if counts["crashed"]:
        s = _first(scenarios, "crashed")
        return "error", f"the kit crashed in “{s.scenario}”: {_one_line(s.message)}", True
    if counts["error"]:
        s = _first(scenarios, "error")
        what = _one_line(s.message)
        return "error", f"the adapter broke the contract in “{s.scenario}”: {what}", False
    if counts["failed"]:
        s = _first(scenarios, "failed")
        broken = "MUST" if rule.level == "MUST" else rule.level
        verdict = "fail" if rule.level == "MUST" else "warn"
        what = _one_line(s.message.split("\n", 1)[0]) if s.message else "a check failed"
        where = f"{counts['failed']} of {n} scenarios; first “{s.scenario}”"
        return verdict, f"{broken} broken in {where}: {what}", False
    if counts["inconclusive"]:
        s = _first(scenarios, "inconclusive")
        why = _one_line(s.message) or "the kit could not exercise the rule"
        where = f"{counts['inconclusive']} of {n} scenarios; first “{s.scenario}”"
        return "inconclusive", f"claimed, but not exercised in {where}: {why}", False
    if counts["passed"]:
        extra = f" ({counts['unsupported']} unsupported)" if counts["unsupported"] else ""
        plural = "" if counts["passed"] == 1 else "s"
        return "pass", f"{counts['passed']} scenario{plural} passed{extra}", False
    if counts["unsupported"]:
        s = _first(scenarios, "unsupported")
        why = _one_line(s.message) or "needs a capability the store declares absent"
        return "unsupported", why, False
    if counts["skipped"]:
        s = _first(scenarios, "skipped")
        return "not-run", f"every scenario was skipped: {_one_line(s.message)}", False
    return "not-run", "no scenario ran for this rule", False


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
    rule: Rule, verdict: str, reason: str, provided: Mapping[str, set[str]]
) -> tuple[str, str]:
    """``adapter-provided`` instead of ``pass`` when the rule rests on something
    the adapter of its subject supplies itself (never a pass for the library);
    any other verdict is left as it is (a failure is a failure wherever it came
    from)."""
    supplied = [p for p in rule.rests_on if p in provided.get(rule.subject, ())]
    if verdict != "pass" or not supplied:
        return verdict, reason
    what = ", ".join(supplied)
    return "adapter-provided", (
        f"passes only through the {rule.subject} adapter: the rule rests on {what}, "
        f"which the adapter provides itself, so the library judged was not shown to "
        f"keep it ({reason})"
    )


def _unclaimed(
    rule: Rule, own: Sequence[ScenarioEvidence]
) -> tuple[str, str, bool, str | None]:
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
        return "error", reason, True, None
    if verdict in MEASURED:
        return (
            "informational",
            f"not claimed ({declared}), measured anyway and not counted: {verdict}: {reason}",
            False,
            verdict,
        )
    if verdict == "unsupported":
        return "unsupported", reason, False, None
    return "unsupported", declared, False, None


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
) -> tuple[str, str]:
    """A passing rule of a run that stopped early (``--maxfail``/``-x``, the
    deadline, an interrupt): ``pass`` only when every scenario due for it ran
    (``collected``), else ``inconclusive``; when what was due is not known,
    nothing can show the rule whole, so it is ``inconclusive`` too. ``ran``:
    the node ids of every scenario that ended (whatever rules it reported)."""
    if collected is None:
        return "inconclusive", (
            f"the run stopped before it could be shown that all of this rule's scenarios "
            f"ran ({stopped}); those that ran passed: {reason}"
        )
    due = set(collected.get(rule.id, ()))
    missing = due - ran
    if not missing:
        return "pass", reason
    return "inconclusive", (
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
    verdict: str, reason: str, rule: Rule, baseline: Baseline | None, day: date | None
) -> tuple[str, str, BaselineUse | None]:
    entry = None if baseline is None else baseline.get(rule.id)
    if entry is None:
        return verdict, reason, None
    expires = None if entry.expires is None else entry.expires.isoformat()

    def use(status: str) -> BaselineUse:
        return BaselineUse(entry.rule, entry.reason, expires, entry.issue, status)

    if entry.expired_on(day):
        note = f"{reason} (the baseline entry expired on {expires} and no longer counts)"
        return verdict, note, use("expired")
    if verdict in ("fail", "warn"):
        return "xfail", f"known failure in the baseline: {entry.reason} — {reason}", use("applied")
    if verdict == "pass":
        why = f"listed in the baseline but passes now: remove the entry ({reason})"
        return "stale", why, use("stale")
    return verdict, reason, use("not-applied")


def _classes(
    rules: Sequence[RuleResult], claimed: set[str], unselected: set[str]
) -> tuple[ClassResult, ...]:
    out = []
    for name in CLASSES:
        members = [r for r in rules if r.conformance_class == name]
        left_out = any(r.id in unselected for r in members)
        pairs = [(r.level, r.verdict) for r in members]
        out.append(judge_class(name, name in claimed, pairs, left_out))
    return tuple(out)


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
    """
    head = normalise_header(header, catalogue)
    if baseline is not None:
        check_baseline(baseline, catalogue)
    known = catalogue.ids
    by_rule: dict[str, list[tuple[ScenarioEvidence, frozenset[str], frozenset[str]]]] = {}
    unknown_rules: set[str] = set()
    for outcome in outcomes:
        evidence = _evidence(outcome)
        needs = frozenset(str(c) for c in outcome.get("needs") or ())
        policies = frozenset(str(p) for p in outcome.get("policies") or ())
        for raw_id in dict.fromkeys(outcome.get("rules") or ()):
            rule_id = str(raw_id)
            if rule_id not in known:
                unknown_rules.add(rule_id)
                continue
            by_rule.setdefault(rule_id, []).append((evidence, needs, policies))
    provided = _provided(head, outcomes)
    declares = None if head["subject"] == "store" else runtime_declaration(head["runtime"],
                                                                             outcomes)
    if declares is not None:
        head["runtime"]["declares"] = declares
    per_policy: dict[str, dict[str, str]] = {}
    ran = {str(o.get("nodeid", "")) for o in outcomes}
    claimed = {"core", *head["store"]["capabilities"]}
    # a store that could not be opened (or a runtime that could not be built)
    # declared nothing the kit could read: its capability rules are not
    # unclaimed but unjudged, the adapter's error like every other rule
    unopened = bool(head["extra"].get("adapter_error"))

    selection = head["selection"]
    selected: set[str] | None = None
    if selection is not None:
        selected = set(selection["rules"])
        if selection["profiles"]:  # select() with no profiles would mean every rule
            selected |= {r.id for r in catalogue.select(profiles=selection["profiles"])}
    day = _start_day(head)
    rerun_prefix = _rerun_prefix(head)
    killers = mutants_by_rule()
    results: list[RuleResult] = []
    not_run: list[str] = []
    for rule in catalogue:
        entries = sorted(by_rule.get(rule.id, ()), key=lambda e: _evidence_order(e[0]))
        scenarios = tuple(e[0] for e in entries)
        excluded = _scope(rule, head["subject"], selected, bool(scenarios))
        kit_error = False
        use: BaselineUse | None = None
        rerun: str | None = None
        measured: str | None = None
        undeclared = _undeclared_profile(rule, declares, unopened)
        if excluded is not None:
            verdict, reason = "not-scored", excluded
        elif undeclared is not None:
            verdict, reason, kit_error = _judge(rule, scenarios)
            if not kit_error:
                verdict, reason = "unsupported", undeclared
            rerun = f"{rerun_prefix} --rule {shlex.quote(rule.id)}"
        elif rule.capability is not None and rule.capability not in claimed and not unopened:
            scenarios = tuple(s for s, needs, _ in entries if rule.capability in needs)
            verdict, reason, kit_error, measured = _unclaimed(rule, scenarios)
            rerun = f"{rerun_prefix} --rule {shlex.quote(rule.id)}"
        else:
            def decide(chosen: Sequence[ScenarioEvidence], rule: Rule = rule) -> tuple[
                    str, str, bool, BaselineUse | None]:
                verdict, reason, kit_error = _judge(rule, chosen)
                if head["stopped_early"] and verdict == "pass":
                    verdict, reason = _cut_short(rule, ran, reason, head["stopped_early"],
                                                 collected)
                verdict, reason = _adapter_provided(rule, verdict, reason, provided)
                verdict, reason, use = _apply_baseline(verdict, reason, rule, baseline, day)
                return verdict, reason, kit_error, use

            verdict, reason, kit_error, use = decide(scenarios)
            if declares is not None and rule.profile == POLICY_PROFILE and entries:
                per_policy[rule.id] = _per_policy(entries, decide)
            rerun = f"{rerun_prefix} --rule {shlex.quote(rule.id)}"
            if verdict == "not-run":
                not_run.append(rule.id)
                if head["stopped_early"] and not scenarios:
                    reason = f"not reached: the run stopped early ({head['stopped_early']})"
        results.append(
            RuleResult(
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
                verdict=verdict,
                reason=reason,
                kit_error=kit_error,
                baseline=use,
                scenarios=scenarios,
                rerun=rerun,
                mutants=killers.get(rule.id, ()),
                measured=measured,
            )
        )
    baseline_data = _baseline_summary(baseline, results, day)
    unselected = {
        r.id for r in catalogue
        if selected is not None and r.id not in selected
        and head["subject"] in ("both", r.subject)
    }
    classes = _classes(results, claimed, unselected)
    runtime = runtime_classes(results, per_policy, declares, unselected)
    reasons = _incomplete_reasons(not_run, unknown_rules, head["stopped_early"])
    complete = not reasons
    kit_error = bool(unknown_rules)
    scored = sum(1 for r in results if r.verdict not in ("not-scored", "informational"))
    footer = Footer(
        totals=totals_of(results),
        rules=len(results),
        scored=scored,
        complete=complete,
        reason="; ".join(reasons) or None,
        kit_error=kit_error,
        unknown_rules=tuple(sorted(unknown_rules)),
        exit_code=code_for(results, kit_error, complete),
    )
    return Results(head, tuple(results), classes, baseline_data, footer,
                   runtime_classes=runtime)


def _per_policy(
    entries: Sequence[tuple[ScenarioEvidence, frozenset[str], frozenset[str]]],
    decide: Any,
) -> dict[str, str]:
    """A save-policy rule's verdict under each policy: judged the same way as
    the rule, from the scenarios of that policy and those naming none;
    ``not-scored`` for a policy none of its scenarios concerns."""
    out: dict[str, str] = {}
    for policy in SAVE_POLICIES:
        chosen = [s for s, _, pols in entries if not pols or policy in pols]
        out[policy] = decide(tuple(chosen))[0] if chosen else "not-scored"
    return out


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
