"""v10: a fact past its recheck date loses its untrusted label when recalled.

The bug: ``present`` labels a fact with one label, chosen by an ``if`` /
``elif`` chain that asks about staleness first: a fact past its recheck date
is shown as an unverified *fact*, and only a current fact is asked whether it
is untrusted. An untrusted fact copied from a tool result is therefore shown
to the model as a claim while it is current, and as an (unverified) fact once
its recheck date has passed.

The situation that shows it: an untrusted fact (copied from a web page, or
explicitly ``trust: untrusted``) remembered, the clock advanced past its
recheck date, then recalled: ``shown_as`` is ``fact`` and the text no longer
says whose claim it is.

Why a team would ship it: the prompt template had room for one badge per
fact and "unverified" seemed the stronger warning; the poisoning tests
recalled right after remembering.

Rules broken: PS-018.
"""

from __future__ import annotations

from corpus.round6.runtimes.graphstate.base import GraphStateRuntime, JobMachine
from memconform.values import Fact, JSONValue


class OneBadgeMachine(JobMachine):
    def present(self, fact: Fact) -> dict[str, JSONValue]:
        status = "unverified" if self.stale(fact) else "current"
        # --- the bug ---
        if status == "unverified":
            shown_as, badge = "fact", f"unverified: due for recheck since {fact.recheck_at}"
        elif fact.trust == "untrusted":
            shown_as = "claim"
            badge = f"claim from {fact.source}, untrusted, not an established fact"
        else:
            shown_as, badge = "fact", ""
        origin = (f"copied from {fact.source}" if fact.origin == "copied"
                  else f"concluded by {fact.writer}")
        notes = "; ".join(n for n in (badge, origin) if n)
        return {"subject": fact.subject, "statement": fact.statement, "status": status,
                "trust": fact.trust, "origin": fact.origin, "source": fact.source,
                "shown_as": shown_as, "text": f"{fact.subject}: {fact.statement} ({notes})"}


class Runtime(GraphStateRuntime):
    job_machine = OneBadgeMachine


def make() -> Runtime:
    return Runtime()
