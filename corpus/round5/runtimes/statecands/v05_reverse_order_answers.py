"""v05: under ``order = "reverse"`` the answers come back in the order they were computed.

The bug: answers are collected in a dict keyed by position and returned as
``list(computed.values())``, on the belief that the dict is "by index". Dicts
keep insertion order, so when the package computes back to front (the
``reverse`` setting, used to balance load), inputs and candidates are answered
last-first and each answer lands under the wrong input or candidate.

Why a team ships it: with the default order the insertion order is the index
order and every test passes; the setting is an operations knob nobody tests.

Breaks CA-021 (answers follow the request's order) and, when the inputs of a
request ask for different numbers of candidates, CA-001 (an input gets another
input's count of answers).
"""

from __future__ import annotations

from corpus.round5.runtimes.statecands.base import CandidatesPackage, StateCandsRuntime


class InsertionOrderPackage(CandidatesPackage):
    def in_request_order(self, computed):
        return list(computed.values())  # BUG: insertion order is the compute order


class ReverseOrderAnswersRuntime(StateCandsRuntime):
    package_class = InsertionOrderPackage


def make() -> ReverseOrderAnswersRuntime:
    return ReverseOrderAnswersRuntime()
