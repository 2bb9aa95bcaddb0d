"""What the steps of the ``candidates`` profile (document 003) share: the
script under construction (:class:`CandidatesScript`, the
``candidates_script`` fixture), the run and its timeline readers
(:class:`CandidatesRun`), and the phrase patterns that address inputs
(``input "ep-1" of request "r1"``) and candidates (``candidate 0 of …``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from memconform.steps.common import Mismatch
from memconform.values import JSONValue

__all__ = [
    "CANDIDATE", "FOR", "INPUT", "SENDS", "CandidatesRun", "CandidatesScript", "candidates_script",
]

INPUT = r'input "(?P<iid>[^"]+)" of request "(?P<rid>[^"]+)"'
CANDIDATE = r"candidate (?P<k>\d+) of " + INPUT
SENDS = r'candidates request "(?P<rid>[^"]+)" sends input "(?P<iid>[^"]+)" with '
FOR = r'instruction "(?P<text>[^"]*)" and (?P<n>\d+) candidates?'


def split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def json_value(text: str, what: str) -> JSONValue:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{what}: not JSON: {exc}") from None


def show(value: JSONValue) -> str:
    return json.dumps(value, indent=1, sort_keys=True)


# -- the script under construction ------------------------------------------------------


@dataclass
class CandidatesScript:
    """A ``candidates`` script being built by the Given steps."""

    package: dict[str, JSONValue] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    model: dict[str, list[dict[str, JSONValue]]] = field(default_factory=dict)
    fresh: set[str] = field(default_factory=set)
    """Requests the kit answers in a fresh process (never part of the script)."""

    def request(self, rid: str) -> dict[str, Any]:
        """The request ``rid``, created (empty) on first mention."""
        for request in self.requests:
            if request["id"] == rid:
                return request
        request = {"id": rid, "inputs": []}
        self.requests.append(request)
        return request

    def add_input(self, rid: str, item: dict[str, Any]) -> None:
        """Add one input to request ``rid``."""
        self.request(rid)["inputs"].append(item)

    def input(self, rid: str, iid: str) -> dict[str, Any]:
        """The input ``iid`` of request ``rid`` (the first with that id)."""
        inputs: list[dict[str, Any]] = self.request(rid)["inputs"]
        for item in inputs:
            if item["input_id"] == iid:
                return item
        raise ValueError(f"the scenario sends no input {iid!r} in request {rid!r}")

    def input_index(self, rid: str, iid: str) -> int:
        """The position of input ``iid`` in request ``rid``."""
        inputs: list[dict[str, Any]] = self.request(rid)["inputs"]
        return inputs.index(self.input(rid, iid))

    def script_calls(self, component: str, steps: Sequence[dict[str, JSONValue]]) -> None:
        """Append scripted steps for ``component`` (consumed in call order)."""
        self.model.setdefault(component, []).extend(steps)

    def to_script(self) -> dict[str, Any]:
        """The script as JSON data."""
        script: dict[str, Any] = {
            "profile": "candidates",
            "requests": copy.deepcopy(self.requests),
            "model": copy.deepcopy(self.model),
        }
        if self.package:
            script["package"] = dict(self.package)
        return script


@dataclass
class CandidatesRun:
    """One answered script: the script, the supplied memories as they were before
    the runtime saw them, and the observation."""

    script: dict[str, Any]
    supplied: dict[str, Any]
    observation: dict[str, JSONValue]

    # answers

    def inputs(self, rid: str) -> list[dict[str, Any]]:
        """The answers to request ``rid``, one per input, as returned."""
        for response in self.observation.get("responses") or []:
            if response.get("request") == rid:
                return list(response.get("inputs") or [])
        raise Mismatch(f"answers to request {rid!r}", "a response", "no response to it")

    def candidates(self, rid: str, iid: str) -> list[dict[str, Any]]:
        """The candidate answers to input ``iid`` of request ``rid``."""
        for answer in self.inputs(rid):
            if answer.get("input_id") == iid:
                return list(answer.get("candidates") or [])
        raise Mismatch(
            f"answer to input {iid!r} of request {rid!r}",
            "an answer for that input",
            f"answers for {[a.get('input_id') for a in self.inputs(rid)]}",
        )

    def candidate(self, rid: str, iid: str, k: int) -> dict[str, Any]:
        """Candidate ``k``'s answer to input ``iid`` of request ``rid``."""
        answers = self.candidates(rid, iid)
        if k >= len(answers):
            raise Mismatch(
                f"candidate {k} of input {iid!r} of request {rid!r}",
                f"at least {k + 1} candidate answers",
                f"{len(answers)} candidate answers",
            )
        return answers[k]

    def memory(self, rid: str, iid: str, k: int) -> dict[str, Any]:
        """The memory candidate ``k`` returned; a Mismatch when it returned none."""
        answer = self.candidate(rid, iid, k)
        memory = answer.get("memory")
        if not isinstance(memory, dict):
            raise Mismatch(
                f"memory of candidate {k} of input {iid!r} of request {rid!r}",
                "a returned memory",
                show(answer),
            )
        return memory

    # what the kit observed

    def calls(
        self, component: str, rid: str, iid: str, candidate: int | str | None = "any"
    ) -> list[dict[str, Any]]:
        """Timeline model calls (and coached calls) of ``component`` for one input,
        optionally for one ``candidate`` (``None``: the shared call)."""
        found = []
        for entry in self.observation.get("timeline") or []:
            is_model = entry.get("kind") == "model" and entry.get("name") == component
            is_coached = (
                entry.get("kind") == "event"
                and entry.get("name") == "coaching"
                and entry.get("component") == component
            )
            if not (is_model or is_coached):
                continue
            request = request_of(entry)
            if request.get("request") != rid or request.get("input_id") != iid:
                continue
            if candidate != "any" and request.get("candidate") != candidate:
                continue
            found.append(entry)
        return found

    def commander_call(self, rid: str, iid: str, k: int) -> dict[str, Any]:
        """The one commander call (or coached call) the timeline shows for candidate ``k``."""
        calls = self.calls("commander", rid, iid, k)
        if len(calls) != 1:
            raise Mismatch(
                f"commander calls for candidate {k} of input {iid!r} of request {rid!r}",
                "exactly one",
                f"{len(calls)}",
            )
        return calls[0]

    def commander_prompt(self, rid: str, iid: str, k: int) -> str:
        """The prompt the timeline shows the commander received for candidate ``k``."""
        return str(request_of(self.commander_call(rid, iid, k)).get("prompt"))


def request_of(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    request = entry.get("request") if entry.get("kind") == "model" else entry
    return request if isinstance(request, Mapping) else {}


def output_of(entry: Mapping[str, Any]) -> str | None:
    if entry.get("kind") == "event":
        return str(entry.get("output"))
    response = entry.get("response")
    if isinstance(response, Mapping):
        return str(response.get("reply"))
    return None


@pytest.fixture
def candidates_script() -> CandidatesScript:
    """The script this scenario builds."""
    return CandidatesScript()
