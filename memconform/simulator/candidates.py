"""The reference agent package of document 003: candidates, memory and a summarizer.

The ``candidates`` profile models an agent package answering requests from a
generation service. A request carries one or more inputs (independent
episodes); each input is ``(input_id, instruction, memory)`` and asks for ``N``
candidates. For each candidate the package returns a final decision, a
*complete replacement* memory and the ``internal_steps`` it ran; or an error
with the steps it got through.

The package is stateless between requests: everything an interaction needs is
read from the supplied memory, and a fresh package instance given a returned
memory continues exactly where the old one would have.

Its memory schema is the full-history one:

- ``history``: a list of ``{"role": ..., "content": ...}`` messages;
- ``summary``: text standing for the part of the conversation summarized away
  (``null`` when there is none);
- ``memory_list``: a list of notes, carried over unchanged;
- any other key is accepted initial state and comes back unchanged.

An empty memory (absent, ``null`` or ``{}``) starts a new interaction. A memory
whose known keys have the wrong shape is incompatible: every candidate of that
input gets an ``incompatible-memory`` error and no model is called.

Per input the package (the reference summarizing design):

1. renders the commander prompt (summary, history, the current instruction);
2. when that prompt is longer than ``summary_threshold`` characters (strictly)
   and the history is not empty, calls the ``summarizer`` once with the previous
   summary and the history, never the current instruction;
3. on a valid (non-blank) summary, replaces ``summary`` and clears ``history``,
   then renders the commander prompt again (no second length check);
4. samples each candidate with one ``commander`` call on that prompt, copying the
   shared base memory and appending only that candidate's exchange.

A failed or blank summary gives every candidate of the input a
``summary-failed`` error and the commander is never called. A commander failure
gives that candidate alone a ``commander-failed`` error; the other candidates
are unaffected and keep the shared summary in their memories.

Script (``profile = "candidates"``, see ``spec/schemas/script-candidates.schema.json``)::

    {"package": {"summary_threshold": 5000, "order": "request" | "reverse"},
     "requests": [{"id": "r1",
                   "inputs": [{"input_id": "ep-1", "instruction": "Say hello.",
                               "candidates": 2, "memory": {...},
                               "memory_from": {"request": "r0", "input": 0, "candidate": 1},
                               "tools": ["search"], "attributes": {...},
                               "coaching": [{"component": "commander", "candidate": 1,
                                             "output": "..."}]}]}],
     "model": {"summarizer": [...], "commander": [...]}}

``memory_from`` (instead of ``memory``) continues a trajectory with the memory an
earlier candidate returned. Nothing in the script asks for a new package
instance: the kit itself answers a scenario's "fresh instance" requests in a
fresh process (see :mod:`memconform.steps.candidates`). ``order = "reverse"``
makes the package compute inputs and candidates back to front; answers still
follow the request's order.

Every model call goes through ``env.model(component, request)`` with
``request = {"request", "input_id", "input", "candidate", "prompt",
"input_elements"}`` (``candidate`` is ``null`` for the shared summarizer call);
the fake model's scripted steps are consumed in call order. A coached call does
not reach the model: the script supplies its output and the package emits a
``coaching`` event with the same fields.

Observation (``spec/schemas/observation-candidates.schema.json``)::

    {"package": {...}, "responses": [{"request": "r1", "inputs": [
        {"input_id": "ep-1", "candidates": [
            {"status": "ok", "decision": {...}, "memory": {...}, "internal_steps": [...]},
            {"status": "error", "error": {"kind", "component", "type", "message"},
             "internal_steps": [...]}]}]}]}
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memconform.harness.environment import Environment, ScriptedFailure, ScriptError
from memconform.values import JSONValue, freeze_json

__all__ = [
    "DEFAULT_SUMMARY_THRESHOLD",
    "ORDERS",
    "Call",
    "Entry",
    "Executor",
    "IncompatibleMemory",
    "InputSpec",
    "MemorySource",
    "Package",
    "PackageConfig",
    "Prompt",
    "RequestSpec",
    "Turn",
    "execute",
    "load_memory",
    "parse_decision",
    "parse_script",
    "render_commander_prompt",
    "render_summarizer_prompt",
]

DEFAULT_SUMMARY_THRESHOLD = 5000
"""Characters (not tokens) the commander prompt may have before history is summarized."""

ORDERS = ("request", "reverse")
"""The orders in which the package may compute inputs and candidates."""

COMPONENTS = ("summarizer", "commander")
SUMMARIZER_TASK = "Write a new summary of the conversation above."


# -- the script ----------------------------------------------------------------------


@dataclass(frozen=True)
class PackageConfig:
    """How the package is set up: the summary threshold and the compute order."""

    summary_threshold: int = DEFAULT_SUMMARY_THRESHOLD
    order: str = "request"

    def to_json(self) -> dict[str, JSONValue]:
        """Plain JSON form."""
        return {"summary_threshold": self.summary_threshold, "order": self.order}


@dataclass(frozen=True)
class MemorySource:
    """The memory returned by candidate ``candidate`` of input ``input`` of an
    earlier request ``request``."""

    request: str
    input: int
    candidate: int


@dataclass(frozen=True)
class InputSpec:
    """One input of a request as the script gives it."""

    input_id: str
    instruction: str
    candidates: int
    memory: JSONValue = None
    memory_from: MemorySource | None = None
    tools: tuple[str, ...] = ()
    attributes: Mapping[str, JSONValue] = field(default_factory=dict)
    coaching: Mapping[tuple[str, int | None], str] = field(default_factory=dict)
    where: str = "requests[0].inputs[0]"


@dataclass(frozen=True)
class RequestSpec:
    """One request: its id and its inputs."""

    id: str
    inputs: tuple[InputSpec, ...]


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScriptError(f"{where}: expected an object")
    return value


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ScriptError(f"{where}.{key}: expected a non-empty string")
    return value


def _count(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ScriptError(f"{where}: expected an integer >= {minimum}")
    return value


def _parse_config(raw: Any) -> PackageConfig:
    data = _object({} if raw is None else raw, "package")
    for key in data:
        if key not in ("summary_threshold", "order"):
            raise ScriptError(f"package.{key}: unknown setting")
    threshold = _count(
        data.get("summary_threshold", DEFAULT_SUMMARY_THRESHOLD), "package.summary_threshold", 0
    )
    order = data.get("order", "request")
    if order not in ORDERS:
        raise ScriptError(f"package.order: must be one of {', '.join(ORDERS)}, got {order!r}")
    return PackageConfig(threshold, str(order))


def _parse_coaching(raw: Any, where: str, candidates: int) -> dict[tuple[str, int | None], str]:
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise ScriptError(f"{where}: expected a list")
    coaching: dict[tuple[str, int | None], str] = {}
    for n, item in enumerate(raw):
        at = f"{where}[{n}]"
        entry = _object(item, at)
        component = entry.get("component")
        if component not in COMPONENTS:
            raise ScriptError(f"{at}.component: must be one of {', '.join(COMPONENTS)}")
        output = entry.get("output")
        if not isinstance(output, str):
            raise ScriptError(f"{at}.output: expected a string")
        candidate: int | None = None
        if component == "commander":
            candidate = _count(entry.get("candidate"), f"{at}.candidate", 0)
            if candidate >= candidates:
                raise ScriptError(f"{at}.candidate: the input asks for {candidates} candidates")
        elif entry.get("candidate") is not None:
            raise ScriptError(f"{at}.candidate: the summarizer call is shared by all candidates")
        if (component, candidate) in coaching:
            raise ScriptError(f"{at}: this call is already coached")
        coaching[(component, candidate)] = output
    return coaching


def _parse_source(raw: Any, where: str) -> MemorySource:
    data = _object(raw, where)
    return MemorySource(
        _text(data, "request", where),
        _count(data.get("input", 0), f"{where}.input", 0),
        _count(data.get("candidate"), f"{where}.candidate", 0),
    )


def _parse_input(raw: Any, where: str) -> InputSpec:
    data = _object(raw, where)
    known = {
        "input_id", "instruction", "candidates", "memory", "memory_from", "tools",
        "attributes", "coaching",
    }
    for key in data:
        if key not in known:
            raise ScriptError(f"{where}.{key}: unknown field")
    candidates = _count(data.get("candidates", 1), f"{where}.candidates", 1)
    if "memory" in data and "memory_from" in data:
        raise ScriptError(f"{where}.memory_from: give either memory or memory_from, not both")
    source = None
    if "memory_from" in data:
        source = _parse_source(data["memory_from"], f"{where}.memory_from")
    tools = data.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        raise ScriptError(f"{where}.tools: expected a list of tool names")
    attributes = _object(data.get("attributes", {}), f"{where}.attributes")
    try:
        memory = freeze_json(data.get("memory"))
        attributes = freeze_json(attributes)
    except TypeError as exc:
        raise ScriptError(f"{where}: {exc}") from None
    return InputSpec(
        input_id=_text(data, "input_id", where),
        instruction=_text(data, "instruction", where),
        candidates=candidates,
        memory=memory,
        memory_from=source,
        tools=tuple(tools),
        attributes=attributes,
        coaching=_parse_coaching(data.get("coaching"), f"{where}.coaching", candidates),
        where=where,
    )


def parse_script(script: Mapping[str, Any]) -> tuple[PackageConfig, tuple[RequestSpec, ...]]:
    """Read the profile's part of ``script``; raises :class:`ScriptError` naming the field.

    A ``memory_from`` must point to an earlier request, an existing input and a
    candidate that input asked for.
    """
    config = _parse_config(script.get("package"))
    raw_requests = script.get("requests")
    if not isinstance(raw_requests, list) or not raw_requests:
        raise ScriptError("requests: expected a non-empty list")
    requests: list[RequestSpec] = []
    shapes: dict[str, list[int]] = {}
    for r, raw in enumerate(raw_requests):
        where = f"requests[{r}]"
        data = _object(raw, where)
        for key in data:
            if key not in ("id", "inputs"):
                raise ScriptError(f"{where}.{key}: unknown field")
        request_id = _text(data, "id", where)
        if request_id in shapes:
            raise ScriptError(f"{where}.id: duplicate request id {request_id!r}")
        raw_inputs = data.get("inputs")
        if not isinstance(raw_inputs, list) or not raw_inputs:
            raise ScriptError(f"{where}.inputs: expected a non-empty list")
        inputs = tuple(
            _parse_input(item, f"{where}.inputs[{i}]") for i, item in enumerate(raw_inputs)
        )
        for item in inputs:
            source = item.memory_from
            if source is None:
                continue
            at = f"{item.where}.memory_from"
            if source.request not in shapes:
                raise ScriptError(f"{at}.request: no earlier request {source.request!r}")
            counts = shapes[source.request]
            if source.input >= len(counts):
                raise ScriptError(
                    f"{at}.input: request {source.request!r} has {len(counts)} inputs"
                )
            if source.candidate >= counts[source.input]:
                raise ScriptError(
                    f"{at}.candidate: that input asked for {counts[source.input]} candidates"
                )
        shapes[request_id] = [item.candidates for item in inputs]
        requests.append(RequestSpec(request_id, inputs))
    return config, tuple(requests)


# -- memory, prompts and decisions -----------------------------------------------------


class IncompatibleMemory(Exception):
    """The supplied memory does not fit the package's schema; ``key`` names where."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"memory.{key}: {problem}" if key != "memory" else f"memory: {problem}")
        self.key = key
        self.problem = problem


def load_memory(raw: JSONValue) -> dict[str, JSONValue]:
    """A private, normalised copy of the supplied memory.

    ``None`` and ``{}`` give a new interaction. Known keys are checked
    (``history`` a list of role/content messages, ``summary`` text or ``null``,
    ``memory_list`` a list) and filled in when absent; every other key is kept
    unchanged. Raises :class:`IncompatibleMemory` naming the offending key.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise IncompatibleMemory("memory", f"expected an object, got {type(raw).__name__}")
    memory: dict[str, JSONValue] = copy.deepcopy(dict(raw))
    history = memory.get("history", [])
    if not isinstance(history, list):
        raise IncompatibleMemory(
            "history", f"expected a list of messages, got {type(history).__name__}"
        )
    for n, message in enumerate(history):
        if not (
            isinstance(message, Mapping)
            and isinstance(message.get("role"), str)
            and isinstance(message.get("content"), str)
        ):
            raise IncompatibleMemory(
                f"history[{n}]", "expected an object with text role and content"
            )
    summary = memory.get("summary")
    if summary is not None and not isinstance(summary, str):
        raise IncompatibleMemory("summary", f"expected text or null, got {type(summary).__name__}")
    notes = memory.get("memory_list", [])
    if not isinstance(notes, list):
        raise IncompatibleMemory("memory_list", f"expected a list, got {type(notes).__name__}")
    memory["history"] = history
    memory["summary"] = summary
    memory["memory_list"] = notes
    return memory


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt (``text``) and the structured elements it was built from."""

    text: str
    elements: dict[str, JSONValue]


def _lines(messages: Sequence[Mapping[str, JSONValue]]) -> list[str]:
    return [f"{m['role']}: {m['content']}" for m in messages]


def render_commander_prompt(
    memory: Mapping[str, JSONValue],
    instruction: str,
    tools: Sequence[str] = (),
    attributes: Mapping[str, JSONValue] | None = None,
) -> Prompt:
    """The commander prompt: optional ``tools:``, ``attributes:`` and ``summary:``
    lines, one ``role: content`` line per history message, then
    ``user: <instruction>`` and ``assistant:``; lines joined by newlines.

    With an empty memory and no tools this is ``user: Say hello.\\nassistant:``.
    """
    history = list(memory.get("history") or [])
    summary = memory.get("summary") or None
    lines: list[str] = []
    elements: dict[str, JSONValue] = {}
    if tools:
        lines.append("tools: " + ", ".join(tools))
        elements["tools"] = list(tools)
    if attributes:
        lines.append("attributes: " + json.dumps(attributes, sort_keys=True, separators=(",", ":")))
        elements["attributes"] = freeze_json(dict(attributes))
    if summary:
        lines.append(f"summary: {summary}")
        elements["summary"] = summary
    messages = [*history, {"role": "user", "content": instruction}]
    lines.extend(_lines(messages))
    lines.append("assistant:")
    elements["messages"] = freeze_json(messages)
    return Prompt("\n".join(lines), elements)


def render_summarizer_prompt(memory: Mapping[str, JSONValue]) -> Prompt:
    """The summarizer prompt: the previous summary (if any) and the history, then
    the task line. It never contains the current instruction."""
    history = list(memory.get("history") or [])
    summary = memory.get("summary") or None
    lines = [f"summary: {summary}"] if summary else []
    lines.extend(_lines(history))
    lines.append(SUMMARIZER_TASK)
    elements: dict[str, JSONValue] = {
        "previous_summary": summary,
        "messages": freeze_json(history),
    }
    return Prompt("\n".join(lines), elements)


def parse_decision(output: str) -> dict[str, JSONValue]:
    """The final decision in a commander output: the output itself when it is a
    JSON object, else ``{"say": output, "action": {}}``."""
    try:
        value = json.loads(output)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return freeze_json(value)  # type: ignore[no-any-return]
    return {"say": output, "action": {}}


# -- the package ----------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One input being answered: the request it came in and its resolved memory."""

    request: str
    index: int
    spec: InputSpec
    memory: JSONValue

    def model_request(self, candidate: int | None, prompt: Prompt) -> dict[str, JSONValue]:
        """What a model call for this input is shown (the timeline records it)."""
        return {
            "request": self.request,
            "input_id": self.spec.input_id,
            "input": self.index,
            "candidate": candidate,
            "prompt": prompt.text,
            "input_elements": freeze_json(prompt.elements),
        }


@dataclass
class Call:
    """The result of one component call: its ``step`` record and its ``output``
    (``None`` when it failed; then ``step["error"]`` says why)."""

    step: dict[str, JSONValue]
    output: str | None


Entry = dict[str, JSONValue]


class Package:
    """One instance of the reference agent package.

    The methods are the package's parts; each states its contract. An instance
    holds only its configuration and the environment: no interaction state
    survives from one input to the next.
    """

    def __init__(self, config: PackageConfig, env: Environment) -> None:
        self.config = config
        self.env = env

    # ordering

    def processing_order(self, count: int) -> list[int]:
        """The order in which ``count`` inputs or candidates are computed."""
        indices = list(range(count))
        return indices[::-1] if self.config.order == "reverse" else indices

    def arrange(self, computed: list[tuple[int, Any]]) -> list[Any]:
        """Answers in request order, whatever order they were computed in."""
        return [answer for _, answer in sorted(computed, key=lambda pair: pair[0])]

    # requests and inputs

    def answer(self, turns: Sequence[Turn]) -> list[list[Entry]]:
        """One list of candidate entries per input, in the request's order."""
        computed = [(i, self.answer_input(turns[i])) for i in self.processing_order(len(turns))]
        return self.arrange(computed)

    def answer_input(self, turn: Turn) -> list[Entry]:
        """The candidate entries of one input, in candidate order."""
        count = turn.spec.candidates
        try:
            memory = self.load_memory(turn)
        except IncompatibleMemory as exc:
            error = {
                "kind": "incompatible-memory",
                "component": None,
                "type": "IncompatibleMemory",
                "message": str(exc),
                "key": exc.key,
            }
            return [self.error_entry(error, []) for _ in range(count)]
        prompt = self.commander_prompt(memory, turn)
        shared: list[dict[str, JSONValue]] = []
        if self.needs_summary(prompt, memory):
            call = self.summarize(memory, turn)
            shared.append(call.step)
            if call.output is None:
                return self.summary_failed(turn, memory, shared)
            memory = self.apply_summary(memory, call.output)
            prompt = self.commander_prompt(memory, turn)
        computed = [
            (k, self.sample_candidate(turn, k, memory, prompt, shared))
            for k in self.processing_order(count)
        ]
        return self.arrange(computed)

    # memory

    def load_memory(self, turn: Turn) -> dict[str, JSONValue]:
        """The supplied memory, copied and checked (see :func:`load_memory`)."""
        return load_memory(turn.memory)

    def candidate_memory(
        self, base: Mapping[str, JSONValue], instruction: str, output: str
    ) -> dict[str, JSONValue]:
        """A complete replacement memory for one candidate: a deep copy of the
        shared base memory with this candidate's exchange appended."""
        memory = copy.deepcopy(dict(base))
        history = memory["history"]
        assert isinstance(history, list)
        history.append({"role": "user", "content": instruction})
        history.append({"role": "assistant", "content": output})
        return memory

    # summarizing

    def commander_prompt(self, memory: Mapping[str, JSONValue], turn: Turn) -> Prompt:
        """The commander prompt for this input (see :func:`render_commander_prompt`)."""
        return render_commander_prompt(
            memory, turn.spec.instruction, turn.spec.tools, turn.spec.attributes
        )

    def needs_summary(self, prompt: Prompt, memory: Mapping[str, JSONValue]) -> bool:
        """Summarize when the prompt is strictly longer than the threshold and
        there is history to summarize."""
        return len(prompt.text) > self.config.summary_threshold and bool(memory["history"])

    def summarizer_prompt(self, memory: Mapping[str, JSONValue], turn: Turn) -> Prompt:
        """What the summarizer is shown: previous summary and history only."""
        return render_summarizer_prompt(memory)

    def summarize(self, memory: Mapping[str, JSONValue], turn: Turn) -> Call:
        """One summarizer call for the input; a blank summary counts as failed."""
        call = self.call("summarizer", turn, None, self.summarizer_prompt(memory, turn))
        if call.output is not None and not call.output.strip():
            call.step["error"] = {
                "type": "InvalidSummary",
                "message": "the summarizer returned a blank summary",
            }
            call.output = None
        return call

    def summary_failed(
        self,
        turn: Turn,
        memory: Mapping[str, JSONValue],
        shared: Sequence[dict[str, JSONValue]],
    ) -> list[Entry]:
        """A failed summary: every candidate gets the error and the summarizer's
        record; the commander is never called."""
        error = self.component_error("summary-failed", shared[-1])
        return [self.error_entry(error, shared) for _ in range(turn.spec.candidates)]

    def apply_summary(self, memory: Mapping[str, JSONValue], summary: str) -> dict[str, JSONValue]:
        """The base memory after a valid summary: ``summary`` replaced, ``history`` cleared."""
        updated = copy.deepcopy(dict(memory))
        updated["summary"] = summary
        updated["history"] = []
        return updated

    # candidates

    def sample_candidate(
        self,
        turn: Turn,
        candidate: int,
        memory: Mapping[str, JSONValue],
        prompt: Prompt,
        shared: Sequence[dict[str, JSONValue]],
    ) -> Entry:
        """One candidate: a commander call on the shared prompt; its memory is the
        base memory plus its own exchange. The shared steps come first."""
        call = self.call("commander", turn, candidate, prompt)
        steps = [*copy.deepcopy(list(shared)), call.step]
        if call.output is None:
            return self.error_entry(self.component_error("commander-failed", call.step), steps)
        return {
            "status": "ok",
            "decision": parse_decision(call.output),
            "memory": self.candidate_memory(memory, turn.spec.instruction, call.output),
            "internal_steps": self.number_steps(steps),
        }

    # component calls and records

    def call(self, component: str, turn: Turn, candidate: int | None, prompt: Prompt) -> Call:
        """Run ``component`` (coached when the script coaches it, else the model)
        and record the step, failed or not."""
        step: dict[str, JSONValue] = {
            "id": None,
            "component": component,
            "origin": "model",
            "full_prompt": prompt.text,
            "input_elements": freeze_json(prompt.elements),
            "output_raw": None,
        }
        request = turn.model_request(candidate, prompt)
        coached = turn.spec.coaching.get((component, candidate))
        if coached is not None:
            step["origin"] = "coaching"
            self.env.emit("coaching", component=component, output=coached, **request)
            output: str = coached
        else:
            try:
                reply = self.env.model(component, request)
            except ScriptedFailure as failure:
                step["error"] = {"type": failure.type_name, "message": str(failure)}
                return Call(step, None)
            output = str(reply["reply"])
        step["output_raw"] = output
        return Call(step, output)

    def number_steps(self, steps: list[dict[str, JSONValue]]) -> list[dict[str, JSONValue]]:
        """Give each step of one candidate its id, ``step-0``, ``step-1``, … in
        execution order."""
        return [{**step, "id": f"step-{n}"} for n, step in enumerate(steps)]

    def component_error(self, kind: str, step: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
        """A candidate error caused by the component of ``step``."""
        cause = step.get("error")
        assert isinstance(cause, Mapping)
        return {
            "kind": kind,
            "component": step["component"],
            "type": cause["type"],
            "message": cause["message"],
        }

    def error_entry(
        self, error: Mapping[str, JSONValue], steps: Sequence[dict[str, JSONValue]]
    ) -> Entry:
        """A failed candidate: its error and every step it ran, no decision, no memory."""
        return {
            "status": "error",
            "error": freeze_json(dict(error)),
            "internal_steps": self.number_steps(copy.deepcopy(list(steps))),
        }


# -- the service around the package ---------------------------------------------------------


class Executor:
    """Plays the generation service: sends each request to a package instance and
    keeps each answer exactly as it was sent (a JSON snapshot).

    ``package_type`` builds the one instance that answers every request.
    """

    def __init__(self, package_type: type[Package] = Package) -> None:
        self.package_type = package_type

    def run(self, script: Mapping[str, Any], env: Environment) -> dict[str, JSONValue]:
        """Execute the script; return ``{"package": ..., "responses": [...]}``."""
        config, requests = parse_script(script)
        package = self.package_type(config, env)
        sent: dict[str, list[list[Entry]]] = {}
        responses: list[JSONValue] = []
        for request in requests:
            turns = [
                Turn(request.id, i, spec, self._memory(spec, sent))
                for i, spec in enumerate(request.inputs)
            ]
            answers = freeze_json(package.answer(turns))
            sent[request.id] = answers
            responses.append(
                {
                    "request": request.id,
                    "inputs": [
                        {"input_id": self._input_id(request, i), "candidates": answer}
                        for i, answer in enumerate(answers)
                    ],
                }
            )
        return {"package": config.to_json(), "responses": responses}

    @staticmethod
    def _input_id(request: RequestSpec, index: int) -> str | None:
        return request.inputs[index].input_id if index < len(request.inputs) else None

    @staticmethod
    def _memory(spec: InputSpec, sent: Mapping[str, list[list[Entry]]]) -> JSONValue:
        source = spec.memory_from
        if source is None:
            return copy.deepcopy(spec.memory)
        answers = sent[source.request]
        where = f"{spec.where}.memory_from"
        if source.input >= len(answers) or source.candidate >= len(answers[source.input]):
            raise ScriptError(f"{where}: request {source.request!r} sent no such candidate")
        entry = answers[source.input][source.candidate]
        if not isinstance(entry, Mapping) or "memory" not in entry:
            raise ScriptError(
                f"{where}: candidate {source.candidate} of input {source.input} of request "
                f"{source.request!r} returned no memory"
            )
        return copy.deepcopy(entry["memory"])


def execute(script: Mapping[str, Any], env: Environment) -> dict[str, JSONValue]:
    """The simulator's executor for the ``candidates`` profile (see the module doc)."""
    return Executor().run(script, env)
