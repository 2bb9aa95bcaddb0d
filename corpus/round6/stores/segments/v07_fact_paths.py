"""Variant 07: facts are keyed by the path ``<scope>/<subject>`` and listed by prefix.

The bug: the fact log's fold keeps one flat dictionary keyed by
``scope + "/" + subject`` (a layout the team also uses for exports), and
``facts(scope)`` lists the keys starting with ``scope + "/"``. A scope that is
a path prefix of another scope (``user`` and ``user/42``, ``team`` and
``team/eu``) therefore lists the other's facts, and ``(scope "a", subject
"b/c")`` and ``(scope "a/b", subject "c")`` are one key: putting one
supersedes the other, and forgetting one forgets the other.

The situation that shows it: two scopes where one is the other followed by a
slash, or a subject holding a slash. Scopes and subjects without ``/`` are
unaffected.

Why a team would ship it: scopes looked like identifiers, a prefix scan is
how every key-value store lists "a folder", and the isolation tests use scopes
``a`` and ``b``.

Rules broken: ST-031, PS-030, ST-035.
"""

from __future__ import annotations

from typing import Any

from corpus.round6.stores.segments import base
from memconform.values import Fact


def fact_key(scope: str, subject: str) -> str:
    # --- the bug ---
    # one flat namespace: scope and subject joined by a slash
    return f"{scope}/{subject}"


class PathFactFold(base.Fold):
    def __init__(self) -> None:
        self.paths: dict[str, dict[str, Any]] = {}
        self.dead = 0

    def apply(self, txn: base.Txn) -> None:
        for record, _ in txn:
            if record["k"] == "p":
                key = fact_key(record["scope"], record["fact"]["subject"])
                if key in self.paths:
                    self.dead += 1
                self.paths[key] = record["fact"]
            elif record["k"] == "x":
                self.paths.pop(fact_key(record["scope"], record["subject"]), None)
                self.dead += 2
            else:
                raise ValueError(f"unknown record kind {record['k']!r}")

    def compacted(self) -> list[list[dict[str, Any]]]:
        out = []
        for key, fact in self.paths.items():
            scope = key[: len(key) - len(fact["subject"]) - 1]
            out.append([{"k": "p", "scope": scope, "fact": fact}])
        return out


class FactPathsStore(base.SegmentStore):
    fact_fold = PathFactFold

    def _paths(self) -> dict[str, dict[str, Any]]:
        fold = self._facts.refresh()
        assert isinstance(fold, PathFactFold)
        return fold.paths

    def get_fact(self, scope: str, subject: str) -> Fact | None:
        with self._facts.mutex:
            data = self._paths().get(fact_key(scope, subject))
            return None if data is None else base._decoded(Fact.from_json, data, "fact")

    def facts(self, scope: str) -> list[Fact]:
        prefix = scope + "/"
        with self._facts.mutex:
            found = sorted(
                (key[len(prefix) :], data)
                for key, data in self._paths().items()
                if key.startswith(prefix)
            )
            return [base._decoded(Fact.from_json, data, "fact") for _, data in found]

    def put_fact(self, scope: str, fact: Fact) -> None:
        base.check_text(f"fact {fact.subject!r}", fact.statement)
        data = base.frame({"k": "p", "scope": scope, "fact": fact.to_json()}, "fact")
        with self._facts.writing() as log:
            log.commit([data])
            fold = log.fold
            assert isinstance(fold, PathFactFold)
            if fold.dead >= base.KEYED_DEAD:
                log.compact()

    def forget(self, scope: str, subject: str) -> bool:
        with self._facts.writing() as log:
            fold = log.fold
            assert isinstance(fold, PathFactFold)
            if fact_key(scope, subject) not in fold.paths:
                return False
            log.commit([base.frame({"k": "x", "scope": scope, "subject": subject})])
            if fold.dead >= base.KEYED_DEAD:
                log.compact()
            return True


def make(
    path: str, segment_bytes: str | None = None, compact_after: str | None = None
) -> FactPathsStore:
    return FactPathsStore(
        path,
        segment_bytes=int(segment_bytes) if segment_bytes else base.SEGMENT_BYTES,
        compact_after=int(compact_after) if compact_after else base.COMPACT_AFTER,
    )
